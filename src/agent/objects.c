// SPDX-License-Identifier: MIT
/*
 * The objects a capture named, and their build ids served by identity.
 *
 * The host asks for the build ids of the objects that got samples after
 * the capture, by name.  A name is only a name: by then it may point at
 * another file (an upgrade, or a symlink swapped in by someone who wants
 * the agent to read what they choose).  So each name keeps the identity
 * its MMAP2 record gave (the kernel's major, minor and inode of the mapped
 * file), or, for records without one (a build-id MMAP2 whose id the kernel
 * couldn't read, an old MMAP), the identity lstat() sees when the agent
 * first sends the name, during the capture.  A request opens the name
 * with O_NOFOLLOW | O_NONBLOCK (no symlink, no FIFO to hang on), checks
 * fstat()'s device and inode against the kept ones, and reads the build id
 * through /proc/self/fd, i.e. from exactly the file it checked.  Caveat:
 * on overlayfs the kernel records the underlying file's device, so such
 * objects are refused rather than trusted.
 */
#include "objects.h"

#include <sonde/hash.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAX_OBJECTS 65536u

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

void agent_objects_clear(struct agent_objects *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slot[i].name);
	free(set->slot);
	*set = (struct agent_objects){0};
}

static struct agent_object *find(const struct agent_objects *set, const char *name)
{
	if (!set->cap)
		return NULL;
	for (size_t i = sonde_fnv1a_str(name) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slot[i].name)
			return NULL;
		if (!strcmp(set->slot[i].name, name))
			return &set->slot[i];
	}
}

const struct agent_object *agent_objects_find(const struct agent_objects *set, const char *name)
{
	return find(set, name);
}

static int grow(struct agent_objects *set)
{
	struct agent_objects bigger = {.cap = set->cap ? set->cap * 2 : 256};

	if (!(bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot))))
		return -ENOMEM;
	for (size_t i = 0; i < set->cap; i++)
		if (set->slot[i].name) {
			size_t k = sonde_fnv1a_str(set->slot[i].name) & (bigger.cap - 1);

			while (bigger.slot[k].name)
				k = (k + 1) & (bigger.cap - 1);
			bigger.slot[k] = set->slot[i];
			bigger.n++;
		}
	free(set->slot);
	*set = bigger;
	return 0;
}

/* @id: the record's identity, or NULL to take the file's as it is now. */
static void add(struct agent_objects *set, const char *name, const struct agent_object *id)
{
	struct agent_object *o = find(set, name);
	struct stat st;

	if (!o) {
		if (set->n >= MAX_OBJECTS || ((set->n + 1) * 2 > set->cap && grow(set) < 0))
			return;
		size_t i = sonde_fnv1a_str(name) & (set->cap - 1);

		while (set->slot[i].name)
			i = (i + 1) & (set->cap - 1);
		o = &set->slot[i];
		if (!(o->name = strdup(name)))
			return;
		set->n++;
	}
	/* The first identity seen stays: that is the file the capture mapped. */
	if (o->known)
		return;
	if (id) {
		o->maj = id->maj;
		o->min = id->min;
		o->ino = id->ino;
		o->known = true;
	} else if (name[0] == '/' && lstat(name, &st) == 0 && S_ISREG(st.st_mode)) {
		o->maj = major(st.st_dev);
		o->min = minor(st.st_dev);
		o->ino = st.st_ino;
		o->known = true;
	}
}

void agent_objects_note(struct agent_objects *set, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct perf_event_header) <= len) {
		const struct perf_event_header *h = (const void *)(buf + off);
		const uint8_t *r = buf + off;
		size_t at = h->type == PERF_RECORD_MMAP	   ? 40
			    : h->type == PERF_RECORD_MMAP2 ? 72
							   : 0;

		if (h->size < sizeof(*h) || h->size > len - off)
			return;
		if (at && at < h->size && memchr(r + at, '\0', h->size - at)) {
			struct agent_object id = {0};
			bool has = h->type == PERF_RECORD_MMAP2 &&
				   !(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);

			/* MMAP2: u32 maj at 40, u32 min at 44, u64 ino at 48. */
			if (has) {
				memcpy(&id.maj, r + 40, 4);
				memcpy(&id.min, r + 44, 4);
				memcpy(&id.ino, r + 48, 8);
			}
			add(set, (const char *)r + at, has ? &id : NULL);
		}
		off += h->size;
	}
}

int agent_object_build_id(const struct agent_object *o, const char *path,
			  uint8_t id[SONDE_BUILD_ID_MAX])
{
	char self[64];
	struct stat st;
	int fd, r;

	if (!o->known)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || major(st.st_dev) != o->maj || minor(st.st_dev) != o->min ||
		 st.st_ino != o->ino)
		r = -ESTALE;
	else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		r = sonde_build_id_of_file(self, id);
	}
	close(fd);
	return r;
}
