/* SPDX-License-Identifier: MIT */
/*
 * The objects a capture named (the agent program only): the files of the
 * MMAP records sent, each with the identity (device, inode) it had then,
 * so a later BUILDID request is answered from that file or not at all.
 * See objects.c.
 */
#ifndef SONDE_AGENT_OBJECTS_H
#define SONDE_AGENT_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/buildid.h>

struct agent_object {
	char *name; /* owned */
	bool known; /* maj/min/ino below are the file's */
	uint32_t maj, min;
	uint64_t ino;
};

/* An open-addressing set keyed by name. */
struct agent_objects {
	struct agent_object *slot;
	size_t cap, n;
};

void agent_objects_clear(struct agent_objects *set);

/* Remembers the objects of the MMAP and MMAP2 records in @buf (whole
 * records, the target's byte order). */
void agent_objects_note(struct agent_objects *set, const uint8_t *buf, size_t len);

/* Borrowed until the next clear; NULL when the capture named no such file. */
const struct agent_object *agent_objects_find(const struct agent_objects *set, const char *name);

/**
 * agent_object_build_id() - the build id of @o, read through @path
 * @path: where to find it now (its name, or its name under /proc/PID/root)
 *
 * The file at @path is opened without following a final symlink and read
 * only when it is a regular file with @o's device and inode.
 * Return: the id's length, -ESTALE when @path is another file now, -ENOENT
 * when @o's identity is unknown, or another negative code.
 */
int agent_object_build_id(const struct agent_object *o, const char *path,
			  uint8_t id[SONDE_BUILD_ID_MAX]);

#endif
