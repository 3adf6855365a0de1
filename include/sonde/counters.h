/* SPDX-License-Identifier: MIT */
/*
 * Counting events: one perf_event fd per event per task or CPU, read as
 * {value, time enabled, time running} and summed per event.  This is the
 * engine of `sonde stat`; sampling lives in the record engine.
 */
#ifndef SONDE_COUNTERS_H
#define SONDE_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <sonde/cpulist.h>
#include <sonde/error.h>
#include <sonde/evspec.h>

/* What to count.  Borrowed arrays. */
struct sonde_target {
	pid_t workload;	   /* >0: a gated workload, counted from its exec on */
	const pid_t *pids; /* -p: processes, every thread they have */
	size_t npids;
	const pid_t *tids; /* -t: single threads */
	size_t ntids;
	const struct sonde_cpulist *cpus; /* set: count per CPU, system wide */
	const char *procfs;		  /* "/proc" */
};

/**
 * sonde_target_tasks() - the tasks of @t: the workload, every thread of
 * each process, each thread; none for a system-wide target
 * Return: 0 with *tasks new (free()), or -ESRCH with @err naming the
 * missing process.
 */
int sonde_target_tasks(const struct sonde_target *t, pid_t **tasks, size_t *n,
		       struct sonde_errmsg *err);

struct sonde_counter {
	const struct sonde_event *ev; /* borrowed from the event list */
	int *fds;		      /* owned: one per task or CPU, -1 where it did not open */
	size_t nfds;
	int err;			  /* 0, or why the event can't be counted here (-errno) */
	bool user_only;			  /* fell back to user space (sonde_event_fallback_user) */
	uint64_t value, enabled, running; /* sums at the last read */
};

struct sonde_counters {
	struct sonde_counter *c; /* owned: one per event, in list order */
	size_t n;
	size_t nslots;			  /* tasks or CPUs counted */
	const struct sonde_event *failed; /* borrowed: the event that stopped opening, or NULL */
	int failed_err;			  /* its -errno */
	struct sonde_errmsg err;
};

/**
 * sonde_counters_open() - open every event of @l on @t, disabled
 *
 * An event the machine lacks (no PMU, unknown config) is kept with ->err set
 * so it can be shown as <not supported>; a failure that stops counting
 * altogether (permissions, a target that does not exist) is returned.
 * Return: 0 or a negative code, with cs->err describing it.
 */
int sonde_counters_open(struct sonde_counters *cs, const struct sonde_evlist *l,
			const struct sonde_target *t);
/* Starts counting (not needed for a workload: its counters start at exec). */
int sonde_counters_enable(struct sonde_counters *cs);
/**
 * sonde_counters_disable() - stop every group counting (their values are kept)
 * @cs: the open counters
 * Return: 0, or -errno of the first ioctl that failed (message in cs->err).
 */
int sonde_counters_disable(struct sonde_counters *cs);
/* Reads every counter into its value/enabled/running sums. */
int sonde_counters_read(struct sonde_counters *cs);
/**
 * sonde_counters_close() - close every counter fd and free the slots
 * @cs: the counters; empty afterwards, the event list untouched
 */
void sonde_counters_close(struct sonde_counters *cs);

/* Scales a multiplexed count by enabled/running.  Return: false when the
 * counter never ran. */
bool sonde_counter_scaled(const struct sonde_counter *c, double *value);

#endif
