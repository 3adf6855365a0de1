/* SPDX-License-Identifier: MIT */
/*
 * One `sonde stat` from start to end, without printing: for each run (-r)
 * the workload is forked and held at its gate, the counters opened on it
 * (or on the attached tasks or CPUs), the workload started, and the run
 * waits (sonde_wait_until()) for the workload's end, the tasks' end or a
 * stop signal, reading the counters at each -I tick.  The counts come back
 * as scaled per-event results (struct sonde_stat_count): the deltas of each
 * interval through a callback, the means over the runs in the struct.
 * libc only (perf_event layer), so the agent could run it.
 */
#ifndef SONDE_STAT_SESSION_H
#define SONDE_STAT_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>

#include <sonde/counters.h>
#include <sonde/error.h>
#include <sonde/evspec.h>
#include <sonde/stat_metrics.h>

/* The counts of one -I interval (or of the tail after the last tick). */
struct sonde_stat_interval {
	const struct sonde_stat_count *counts; /* borrowed: per event, this interval only */
	size_t n;
	double covered_ns;    /* wall time since the previous interval's end */
	double since_start_s; /* this interval's end, from the start of counting */
};

struct sonde_stat_opts {
	const struct sonde_evlist *events; /* borrowed */
	struct sonde_target target;	   /* pids, tids or cpus (borrowed); workload set here */
	char *const *argv;		   /* the workload, or NULL */
	int repeat;			   /* runs of argv (<= 1: one) */
	long interval_ms;		   /* > 0: on_interval() every interval_ms */
	/* Signals: blocked by the caller, unblocked (this mask) only while waiting. */
	const sigset_t *waitmask;
	volatile sig_atomic_t *stop_signal;  /* a stop: forwarded once to the workload */
	volatile sig_atomic_t *child_exited; /* set on SIGCHLD, or NULL */
	/* Each run's counters opened, before anything counts (the caller looks
	 * at the user-space fallbacks). */
	void (*on_open)(void *ctx, const struct sonde_counters *cs);
	/* Counting started (the workload exec'd). */
	void (*on_start)(void *ctx);
	void (*on_interval)(void *ctx, const struct sonde_stat_interval *iv);
	void *ctx;
};

/* Where a run failed (s->err says why). */
enum sonde_stat_failure {
	SONDE_STAT_OK,
	SONDE_STAT_SPAWN, /* the workload could not be forked */
	SONDE_STAT_OPEN,  /* the counters could not open: s->cs.failed, s->cs.failed_err */
	SONDE_STAT_EXEC,  /* the workload could not exec */
	SONDE_STAT_READ,  /* the counters could not be read */
	SONDE_STAT_NOMEM,
};

struct sonde_stat {
	struct sonde_stat_opts o;
	/* Per event, in list order: the means over the runs.  Without -I only
	 * (with -I the counts go to on_interval()). */
	struct sonde_stat_count *counts; /* owned */
	size_t n;
	int runs;		  /* runs completed */
	double elapsed_mean_s;	  /* wall time of a run, mean over the runs */
	double elapsed_m2;	  /* its sum of squared deviations (Welford) */
	int status;		  /* the last run's workload wait status, or -1 */
	struct rusage ru;	  /* its resource use */
	bool stopped_by_signal;	  /* a stop signal ended the last run */
	struct sonde_counters cs; /* the current run's (closed after it) */
	enum sonde_stat_failure failed;
	struct sonde_errmsg err;
};

/**
 * sonde_stat_run() - every run of @o, start to end
 *
 * Runs stop after the first one a stop signal ended.
 * Return: 0, or a negative code with s->failed and s->err saying where and
 * why.  Always sonde_stat_fini() afterwards.
 */
int sonde_stat_run(struct sonde_stat *s, const struct sonde_stat_opts *o);

/* The standard deviation of the mean elapsed time over the runs (0 for one). */
double sonde_stat_elapsed_sd(const struct sonde_stat *s);

/* Frees the counts (and closes counters left open).  Safe on a zeroed struct. */
void sonde_stat_fini(struct sonde_stat *s);

#endif
