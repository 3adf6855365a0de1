/* SPDX-License-Identifier: MIT */
/*
 * The header of a capture as perf report --header / --header-only prints
 * it: the file's layout, then one block per feature section in feature
 * order (host, events with every attribute, PMU mappings, groups, sample
 * times, compression ...), then the missing features.  Host side.
 */
#ifndef SONDE_HEADER_PRINT_H
#define SONDE_HEADER_PRINT_H

#include <stdio.h>
#include <time.h>

struct sonde_pd_reader;

/**
 * sonde_header_print() - the "# ========" block of perf report --header
 * @out: where to write
 * @r: an open capture (a file, not a pipe)
 * @mtime: the file's modification time ("captured on", as perf shows it)
 *
 * Feature sections are outside data: one that does not parse prints
 * perf's "not available or unable to read" line instead of its values.
 * Topology, NUMA, cache and memory sections print perf's "info available,
 * use -I to display" line (sonde does not print their details).
 * Return: 0, or -EINVAL for a pipe capture (its features come as records).
 */
int sonde_header_print(FILE *out, struct sonde_pd_reader *r, time_t mtime);

#endif
