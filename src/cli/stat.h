/* SPDX-License-Identifier: MIT */
/* The printing of `sonde stat`'s counts (table, CSV, JSON) in perf's forms;
 * the counts and their metrics come from sonde/stat_metrics.h. */
#ifndef SONDE_CLI_STAT_H
#define SONDE_CLI_STAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sonde/stat_metrics.h>

enum stat_format { STAT_TABLE, STAT_CSV, STAT_JSON };

struct stat_printer {
	FILE *out;
	enum stat_format fmt;
	const char *sep;  /* CSV separator */
	int runs;	  /* -r */
	bool system_wide; /* use cpu-clock semantics */
};

void stat_print_header(const struct stat_printer *p, const char *target);
/* Prints every row; @interval >= 0 prefixes each line with that timestamp;
 * @elapsed_ns is the wall time the counts cover (for rates when no clock
 * event was counted). */
void stat_print_rows(const struct stat_printer *p, const struct sonde_stat_count *rows, size_t n,
		     double elapsed_ns, double interval);
void stat_print_interval_header(const struct stat_printer *p);
/* Elapsed time (mean and stddev over runs), and user/sys times when >= 0. */
void stat_print_footer(const struct stat_printer *p, double elapsed_s, double elapsed_sd,
		       double user_s, double sys_s);

#endif
