/* SPDX-License-Identifier: MIT */
/*
 * What `sonde stat` computes from counts, apart from printing them: the
 * per-event result over one or several runs (mean and variation, Welford)
 * and perf's derived metrics ("shadow stats"): CPUs utilized for a clock,
 * GHz for cycles, insn per cycle, misses as a % of their accesses, and a
 * rate per second of task time for everything else.  Pure computation over
 * the counts and the events' attrs; libc only.
 */
#ifndef SONDE_STAT_METRICS_H
#define SONDE_STAT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/evspec.h>

/* One event's result: a single reading, or the mean over -r runs. */
struct sonde_stat_count {
	const struct sonde_event *ev; /* borrowed */
	int err;		      /* <0: not supported here */
	bool counted;		      /* ran at least once */
	double value;		      /* scaled count (mean over runs) */
	double m2;		      /* sum of squared deviations (Welford), for -r */
	int nruns;		      /* runs that counted it */
	uint64_t enabled, running;    /* of the last reading */
};

/* A derived metric, as perf shows it beside a count. */
struct sonde_stat_metric {
	bool valid;   /* there is one */
	bool percent; /* value is a percentage */
	double value;
	char unit[48]; /* "GHz", "insn per cycle", "of all branches", "M/sec", ... */
};

/**
 * sonde_stat_count_add() - add one run's reading to @c
 * @value: the scaled count of the run
 *
 * Welford's running mean and variance; @enabled and @running are kept as
 * the last reading's.
 */
void sonde_stat_count_add(struct sonde_stat_count *c, double value, uint64_t enabled,
			  uint64_t running);

/**
 * sonde_stat_noise_pct() - the standard deviation of @c's mean as a
 * percentage of the mean (perf's "+- x%")
 * Return: 0 with fewer than two runs or a zero mean.
 */
double sonde_stat_noise_pct(const struct sonde_stat_count *c);

/* Whether @e is task-clock or cpu-clock (counted in ns, shown in msec). */
bool sonde_stat_is_clock(const struct sonde_event *e);

/**
 * sonde_stat_metric() - perf's derived metric of @counts[@i]
 * @counts: every event's count (the bases of the ratios are looked up here)
 * @elapsed_ns: the wall time the counts cover (CPUs utilized; rates when
 *		no clock event was counted)
 * @m: set; m->valid is false when @counts[@i] never counted
 */
void sonde_stat_metric(const struct sonde_stat_count *counts, size_t n, size_t i, double elapsed_ns,
		       struct sonde_stat_metric *m);

#endif
