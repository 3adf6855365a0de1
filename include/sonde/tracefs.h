/* SPDX-License-Identifier: MIT */
/*
 * tracefs control with plain file I/O (it runs on targets too): finding
 * or mounting tracefs, instances, and the files inside them.
 */
#ifndef SONDE_TRACEFS_H
#define SONDE_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>

/**
 * sonde_tracefs_find() - where tracefs is mounted
 * @mounts: the mount table to read ("/proc/mounts", or a fake one)
 * @buf: receives the mount point
 * @mount_if_missing: mount tracefs at /sys/kernel/tracing when none is mounted
 *
 * Falls back to debugfs's tracing folder when only debugfs is mounted.
 * Return: 0, or -ENOENT when there is none (and it could not be mounted).
 */
int sonde_tracefs_find(const char *mounts, char *buf, size_t len, bool mount_if_missing);

struct sonde_strlist;

/*
 * Instances.  @name NULL (or "") means the top-level instance, so the same
 * calls read and write files of either.  _create makes a kernel object
 * (mkdir instances/NAME) and _destroy removes it (rmdir): the kernel refuses
 * that with EBUSY while a file of the instance is still open.
 */

/**
 * sonde_tracefs_instance_path() - the path of @file in an instance
 * @tracefs: the tracefs mount point
 * @name: the instance, or NULL for the top level
 * @file: a file in it ("current_tracer"), or NULL for the instance folder
 *
 * Return: 0, or -EINVAL for a name holding '/' or a dot name, or -ENAMETOOLONG.
 */
int sonde_tracefs_instance_path(const char *tracefs, const char *name, const char *file, char *buf,
				size_t len);

/**
 * sonde_tracefs_instance_create() - create instance @name
 *
 * Return: 0, -EEXIST when it exists already (it is not ours to use or
 * remove), -ENOENT when tracefs has no instances folder, or another -errno.
 */
int sonde_tracefs_instance_create(const char *tracefs, const char *name);

/* Removes instance @name (never the top level).  Return: 0 or -errno. */
int sonde_tracefs_instance_destroy(const char *tracefs, const char *name);

/* Reads @file of an instance (trailing newline removed).  Return: bytes kept or -errno. */
int sonde_tracefs_instance_read(const char *tracefs, const char *name, const char *file, char *buf,
				size_t len);

/* Writes @text to @file of an instance.  Return: 0 or -errno (the kernel's refusal). */
int sonde_tracefs_instance_write(const char *tracefs, const char *name, const char *file,
				 const char *text);

/* Appends the names of all instances, sorted.  Return: 0 or -errno. */
int sonde_tracefs_instances(const char *tracefs, struct sonde_strlist *out);

/*
 * Splits a tracefs word list ("blk function [nop]", as available_tracers
 * and current_tracer print them) into @out, without brackets.
 * Return: 0 or -ENOMEM.
 */
int sonde_tracefs_split_words(const char *text, struct sonde_strlist *out);

#endif
