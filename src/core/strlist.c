// SPDX-License-Identifier: MIT
/*
 * Growable list of owned strings: the one container for names read from
 * directories and files (tracefs systems and events, PMUs, glob matches).
 * sonde_strlist_add() copies its argument, so callers may pass stack
 * buffers; the array doubles from 16 entries; _fini frees every string.
 * Sorting and lookup are linear or qsort: the lists are tens to a few
 * thousand names, read once per command.
 */
#include <sonde/strlist.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sonde_strlist_init(struct sonde_strlist *l)
{
	memset(l, 0, sizeof(*l));
}

void sonde_strlist_fini(struct sonde_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int sonde_strlist_add(struct sonde_strlist *l, const char *s)
{
	char *copy;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	l->v[l->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sonde_strlist_sort(struct sonde_strlist *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
}

bool sonde_strlist_contains(const struct sonde_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}
