/* SPDX-License-Identifier: MIT */
/* A growable list of owned strings: names read from sysfs and tracefs. */
#ifndef SONDE_STRLIST_H
#define SONDE_STRLIST_H

#include <stdbool.h>
#include <stddef.h>

struct sonde_strlist {
	char **v; /* owned strings */
	size_t n, cap;
};

void sonde_strlist_init(struct sonde_strlist *l);
void sonde_strlist_fini(struct sonde_strlist *l);
/* Appends a copy of @s.  Return: 0 or -ENOMEM. */
int sonde_strlist_add(struct sonde_strlist *l, const char *s);
void sonde_strlist_sort(struct sonde_strlist *l);
bool sonde_strlist_contains(const struct sonde_strlist *l, const char *s);

/**
 * sonde_suggest_among() - "did you mean" for a misspelt @name
 * @names: the @n valid names
 * @out: receives up to three close names, quoted and comma-separated
 *	 ("'report', 'record'"), or an empty string when none is close
 * @len: size of @out
 */
void sonde_suggest_among(const char *name, const char *const *names, size_t n, char *out,
			 size_t len);

#endif
