/* SPDX-License-Identifier: MIT */
/*
 * Closest valid event names for a misspelt one, internal to the event-spec
 * parser (evspec.c calls it when a name resolves to nothing and puts the
 * answer in its error message).  suggest.c gathers the candidates from the
 * same sources the parser reads (sysfs PMUs, tracefs) under @roots.
 */
#ifndef SONDE_CORE_SUGGEST_H
#define SONDE_CORE_SUGGEST_H

#include <stddef.h>

#include <sonde/evspec.h>

/* Edit distance (Levenshtein, case-insensitive) between @a and @b. */
unsigned int sonde_edit_distance(const char *a, const char *b);

/* Writes up to three close names, quoted and comma-separated, into @out
 * ("'cycles', 'cpu-cycles'"); an empty string when nothing is close. */
void sonde_suggest(const char *name, const struct sonde_roots *roots, char *out, size_t len);

#endif
