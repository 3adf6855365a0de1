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

/**
 * sonde_strlist_init() - start an empty list
 * @l: caller's storage
 */
void sonde_strlist_init(struct sonde_strlist *l);
/**
 * sonde_strlist_fini() - free every string and the array
 * @l: the list; empty again afterwards, ready for reuse
 */
void sonde_strlist_fini(struct sonde_strlist *l);
/* Appends a copy of @s.  Return: 0 or -ENOMEM. */
int sonde_strlist_add(struct sonde_strlist *l, const char *s);
/**
 * sonde_strlist_sort() - sort the strings in strcmp() order
 * @l: the list
 */
void sonde_strlist_sort(struct sonde_strlist *l);
/**
 * sonde_strlist_contains() - whether a string is in the list
 * @l: the list
 * @s: the string looked for (compared with strcmp(), linear time)
 * Return: true when an entry equals @s.
 */
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
