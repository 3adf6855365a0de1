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

#endif
