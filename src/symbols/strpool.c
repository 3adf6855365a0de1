// SPDX-License-Identifier: MIT
/*
 * The string arena of a symtab: every symbol name, file name and path the
 * symbol layer lends out lives here until sonde_symtab_free(), so lookups
 * hand out const pointers and never allocate.  Strings are appended to
 * 64 KB chunks (larger strings get a chunk of their own); chunks never
 * move.  sonde_strpool_intern() adds a set (open addressing, FNV-1a) so the
 * thousands of repeats of a source file name or an inlined function share
 * one copy; symbol names are unique per object and skip the set.
 *
 * The search log (struct slog) is here too: a growing message that can't
 * fail (it truncates when memory runs out).
 */
#include "symbols_internal.h"

#include <sonde/hash.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (64 * 1024)

struct strpool_chunk {
	struct strpool_chunk *next;
	size_t used, cap;
	char data[];
};

void sonde_strpool_fini(struct strpool *p)
{
	struct strpool_chunk *c, *n;

	for (c = p->chunks; c; c = n) {
		n = c->next;
		free(c);
	}
	free(p->set);
	memset(p, 0, sizeof(*p));
}

const char *sonde_strpool_add(struct strpool *p, const char *s, size_t len)
{
	struct strpool_chunk *c = p->chunks;
	char *out;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > CHUNK_SIZE / 4 ? len + 1 : CHUNK_SIZE;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		if (cap == CHUNK_SIZE || !p->chunks) {
			c->next = p->chunks;
			p->chunks = c;
		} else { /* a big string: keep filling the current chunk after it */
			c->next = p->chunks->next;
			p->chunks->next = c;
		}
	}
	out = c->data + c->used;
	memcpy(out, s, len);
	out[len] = '\0';
	c->used += len + 1;
	return out;
}

static int set_grow(struct strpool *p)
{
	size_t cap = p->set_cap ? p->set_cap * 2 : 1024, i, j;
	const char **v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->set_cap; i++) {
		if (!p->set[i])
			continue;
		for (j = sonde_fnv1a_str(p->set[i]) & (cap - 1); v[j]; j = (j + 1) & (cap - 1))
			;
		v[j] = p->set[i];
	}
	free(p->set);
	p->set = v;
	p->set_cap = cap;
	return 0;
}

const char *sonde_strpool_intern(struct strpool *p, const char *s)
{
	size_t i;

	if (!s)
		return NULL;
	if ((p->set_n + 1) * 2 > p->set_cap && set_grow(p) < 0)
		return NULL;
	for (i = sonde_fnv1a_str(s) & (p->set_cap - 1); p->set[i]; i = (i + 1) & (p->set_cap - 1))
		if (!strcmp(p->set[i], s))
			return p->set[i];
	p->set[i] = sonde_strpool_add(p, s, strlen(s));
	if (p->set[i])
		p->set_n++;
	return p->set[i];
}

void sonde_slog_add(struct slog *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = l->cap - l->len;

		if (l->p) {
			va_start(ap, fmt);
			n = vsnprintf(l->p + l->len, room, fmt, ap);
			va_end(ap);
			if (n < 0)
				return;
			if ((size_t)n < room) {
				l->len += (size_t)n;
				return;
			}
		}
		size_t cap = l->cap ? l->cap * 2 : 256;
		char *np;

		if (cap > (1u << 20))
			return; /* keep what we have: the log is best effort */
		np = realloc(l->p, cap);
		if (!np)
			return;
		if (!l->p)
			np[0] = '\0';
		l->p = np;
		l->cap = cap;
	}
}

void sonde_slog_fini(struct slog *l)
{
	free(l->p);
	memset(l, 0, sizeof(*l));
}
