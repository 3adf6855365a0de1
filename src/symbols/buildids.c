// SPDX-License-Identifier: MIT
/*
 * The capture's build-id table (HEADER_BUILD_ID): which build id the
 * recording machine saw for each path.
 *
 * perf's own captures carry build ids only here (its MMAP2 records name
 * files by dev/inode), and sonde's system-wide captures synthesize the
 * processes that existed before them the same way.  An object whose MMAP
 * has no build id takes the one the table gives its path, so it is the
 * same object as the mappings the kernel recorded with a build id, and its
 * file on this machine is checked against it (a rebuilt binary is
 * refused, never read with the wrong symbols).  A path the table names
 * with two different ids (a file replaced during a system-wide capture)
 * gives neither: the mappings keep their dev/inode identity instead.
 *
 * The table is an open-addressing hash by path; entries live in one array.
 */
#include "symbols_internal.h"

#include <sonde/hash.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct hdr_bid *slot_of(const struct sonde_symtab *st, const char *path)
{
	size_t j = sonde_fnv1a_str(path) & (st->hbids_cap - 1);

	for (; st->hbids[j].path; j = (j + 1) & (st->hbids_cap - 1))
		if (!strcmp(st->hbids[j].path, path))
			break;
	return &st->hbids[j];
}

static int grow(struct sonde_symtab *st)
{
	struct hdr_bid *old = st->hbids;
	size_t n = st->hbids_cap, cap = n ? n * 2 : 64;

	if (!(st->hbids = calloc(cap, sizeof(*st->hbids)))) {
		st->hbids = old;
		return -ENOMEM;
	}
	st->hbids_cap = cap;
	for (size_t i = 0; i < n; i++)
		if (old[i].path)
			*slot_of(st, old[i].path) = old[i];
	free(old);
	return 0;
}

int sonde_symtab_add_build_id(struct sonde_symtab *st, const char *path, const uint8_t *id,
			      size_t len)
{
	struct hdr_bid *e;

	if (!path || !path[0] || !len)
		return 0;
	if (len > SONDE_BUILD_ID_MAX)
		len = SONDE_BUILD_ID_MAX;
	if ((st->nr_hbids + 1) * 2 > st->hbids_cap && grow(st) < 0)
		return -ENOMEM;
	e = slot_of(st, path);
	if (e->path) {
		if (e->len != len || memcmp(e->id, id, len))
			e->ambiguous = true;
		return 0;
	}
	if (!(e->path = sonde_strpool_intern(&st->pool, path)))
		return -ENOMEM;
	memcpy(e->id, id, len);
	e->len = len;
	st->nr_hbids++;
	return 0;
}

const uint8_t *sonde_symtab_header_build_id(const struct sonde_symtab *st, const char *path,
					    size_t *len)
{
	const struct hdr_bid *e = st->hbids_cap ? slot_of(st, path) : NULL;

	*len = 0;
	if (!e || !e->path || e->ambiguous)
		return NULL;
	*len = e->len;
	return e->id;
}
