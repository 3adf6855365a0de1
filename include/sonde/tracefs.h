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

#endif
