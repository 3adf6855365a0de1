/* SPDX-License-Identifier: MIT */
/* `sonde stat` results and their printing (table, CSV, JSON) in perf's forms. */
#ifndef SONDE_CLI_STAT_H
#define SONDE_CLI_STAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sonde/evspec.h>

/* One event's result: a single reading, or the mean over -r runs. */
struct stat_row {
	const struct sonde_event *ev; /* borrowed */
	int err;                      /* <0: not supported here */
	bool counted;                 /* ran at least once */
	double value;                 /* scaled count (mean over runs) */
	double m2;                    /* sum of squared deviations (Welford), for -r */
	int nruns;                    /* runs that counted it */
	uint64_t enabled, running;    /* of the last reading */
};

enum stat_format { STAT_TABLE, STAT_CSV, STAT_JSON };

struct stat_printer {
	FILE *out;
	enum stat_format fmt;
	const char *sep;    /* CSV separator */
	int runs;           /* -r */
	bool system_wide;   /* use cpu-clock semantics */
};

/* Adds one run's reading to a row (Welford's running mean and variance). */
void stat_row_add(struct stat_row *row, double value, uint64_t enabled, uint64_t running);

void stat_print_header(const struct stat_printer *p, const char *target);
/* Prints every row; @interval >= 0 prefixes each line with that timestamp;
 * @elapsed_ns is the wall time the counts cover (for rates when no clock
 * event was counted). */
void stat_print_rows(const struct stat_printer *p, const struct stat_row *rows, size_t n,
		     double elapsed_ns, double interval);
void stat_print_interval_header(const struct stat_printer *p);
/* Elapsed time (mean and stddev over runs), and user/sys times when >= 0. */
void stat_print_footer(const struct stat_printer *p, double elapsed_s, double elapsed_sd,
		       double user_s, double sys_s);

#endif
