/* SPDX-License-Identifier: MIT */
/*
 * An ftrace session: a tracer, trace events and their filters, a pid
 * filter, buffer size and CPU mask, set up in a tracefs instance of its
 * own (instances/sonde-PID) or, for tracers that only run there (blk), in
 * the top-level instance.
 *
 * _create makes the instance (or, at the top level, saves every file it is
 * about to change) and applies the configuration with tracing off;
 * _start and _stop switch tracing_on; _destroy puts everything back: it
 * removes the instance, or writes the saved contents back to every
 * top-level file it changed, in reverse order, and it frees the session.
 * Callers block the termination signals around _create and _destroy so
 * that nothing interrupts a restore halfway.
 *
 * Reading the buffers is the caller's business: the live reader opens
 * trace_pipe through sonde_ftrace_path(); the recorder (below) splices
 * per_cpu/cpuN/trace_pipe_raw into files.  Plain file I/O and threads:
 * libc only, so the target agent links it too.
 */
#ifndef SONDE_FTRACE_H
#define SONDE_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sonde/error.h>

struct sonde_strlist;

/* One -e: a glob over "SYSTEM:EVENT" (or "SYSTEM", meaning all its events). */
struct sonde_ftrace_event {
	const char *glob;   /* borrowed */
	const char *filter; /* borrowed, or NULL */
};

struct sonde_ftrace_config {
	const char *tracefs;	      /* mounted tracefs */
	const char *sysfs;	      /* "/sys", for the blk tracer's per-device switch */
	const char *tracer;	      /* "function", "blk", ...; NULL or "nop": events only */
	bool top_level;		      /* use the top-level instance (blk needs it) */
	const char *const *functions; /* set_ftrace_filter globs */
	size_t nfunctions;
	const char *const *notrace; /* set_ftrace_notrace globs */
	size_t nnotrace;
	const struct sonde_ftrace_event *events;
	size_t nevents;
	const pid_t *pids; /* trace only these (and their children) */
	size_t npids;
	const char *const *devices; /* blk: block devices to trace ("vda") */
	size_t ndevices;
	unsigned int buffer_kb; /* per CPU; 0: the kernel's default */
	const char *cpumask;	/* tracing_cpumask text (hex), or NULL */
};

struct sonde_ftrace;

/**
 * sonde_ftrace_create() - set up a session, tracing off
 * @err: receives the reason on failure (the file, the kernel's answer)
 *
 * On failure everything done so far is undone.  Besides -errno, returns
 * SONDE_E_UNKNOWN_EVENT when a -e glob matches no event.  At the top level
 * it refuses with -EBUSY when someone else traces there (a tracer other
 * than nop, or events enabled), because it would take their buffer.
 * Return: 0 with *out new (destroy with sonde_ftrace_destroy()), or an error.
 */
int sonde_ftrace_create(const struct sonde_ftrace_config *cfg, struct sonde_ftrace **out,
			struct sonde_errmsg *err);

/* tracing_on = 1 / 0.  Return: 0 or -errno. */
int sonde_ftrace_start(struct sonde_ftrace *ft);
/**
 * sonde_ftrace_stop() - stop tracing: tracing_on = 0 in the session's instance
 * @ft: the session
 * Return: 0 or -errno.
 */
int sonde_ftrace_stop(struct sonde_ftrace *ft);

/**
 * sonde_ftrace_destroy() - restore and remove everything, free @ft
 * @err: receives what could not be restored, if anything
 *
 * Every step is tried even when one fails.  Return: 0, or the first error.
 */
int sonde_ftrace_destroy(struct sonde_ftrace *ft, struct sonde_errmsg *err);

/* Borrowed: the instance name, or NULL for the top level. */
const char *sonde_ftrace_instance(const struct sonde_ftrace *ft);

/* The path of @file in the session's instance.  Return: 0 or -ENAMETOOLONG. */
int sonde_ftrace_path(const struct sonde_ftrace *ft, const char *file, char *buf, size_t len);

/**
 * sonde_ftrace_match_events() - the events a glob names
 * @glob: "SYS:EVENT" or "SYS" (all its events), fnmatch globs
 * @out: receives "SYS:EVENT" names, sorted
 *
 * Return: 0 (possibly with no match) or -errno.
 */
int sonde_ftrace_match_events(const char *tracefs, const char *glob, struct sonde_strlist *out);

/**
 * sonde_ftrace_remove_stale() - remove instances left by dead sonde processes
 *
 * A sonde killed with SIGKILL can't clean up; the next one removes every
 * instances/sonde-PID whose PID no longer runs.  Return: how many went.
 */
int sonde_ftrace_remove_stale(const char *tracefs);

/* What per_cpu/cpuN/stats says.  Fields the kernel did not print stay 0. */
struct sonde_ftrace_stats {
	uint64_t entries;	 /* events in the buffer now */
	uint64_t overrun;	 /* events overwritten before being read */
	uint64_t commit_overrun; /* events lost inside a nested write */
	uint64_t bytes;		 /* bytes in the buffer now */
	uint64_t dropped;	 /* events refused because the buffer was full */
	uint64_t read;		 /* events read (consumed) so far */
};

/**
 * sonde_ftrace_stats_parse() - parse the text of per_cpu/cpuN/stats
 * @text: NUL-terminated contents ("entries: 0\noverrun: 3\n...")
 *
 * Unknown lines are skipped, so newer kernels' additions do no harm.
 * Return: 0, or SONDE_E_FORMAT when a known field has no number.
 */
int sonde_ftrace_stats_parse(const char *text, struct sonde_ftrace_stats *st);

/* Reads and parses CPU @cpu's stats of the session's instance.  Return: 0 or an error. */
int sonde_ftrace_cpu_stats(const struct sonde_ftrace *ft, int cpu, struct sonde_ftrace_stats *st);

/**
 * sonde_ftrace_cpumask() - tracing_cpumask text for a list of CPUs
 * @cpus: CPU numbers, any order
 * @buf: receives comma-separated 32-bit hex groups, highest first ("3", "1,00000000")
 *
 * Return: 0, -EINVAL for a negative CPU or one above 4095, -ENAMETOOLONG.
 */
int sonde_ftrace_cpumask(const int *cpus, size_t n, char *buf, size_t len);

/*
 * The recorder: one thread per CPU splices whole ring-buffer pages from
 * per_cpu/cpuN/trace_pipe_raw into a file, through a pipe, without
 * copying them through user space.  Stopping flushes what is left,
 * including the last partial page (read(), as splice moves whole pages).
 */
struct sonde_ftrace_recorder;

/**
 * sonde_ftrace_recorder_start() - start one reader thread per CPU
 * @cpus: the CPUs to read
 * @paths: per CPU, the file to write (created, truncated)
 *
 * Return: 0 with *out new (free with sonde_ftrace_recorder_stop()), or -errno.
 */
int sonde_ftrace_recorder_start(const struct sonde_ftrace *ft, const int *cpus,
				const char *const *paths, size_t n,
				struct sonde_ftrace_recorder **out, struct sonde_errmsg *err);

/**
 * sonde_ftrace_recorder_stop() - flush, join the threads, close, free
 * @bytes: receives the bytes written per CPU (n entries), or NULL
 *
 * Stop tracing first (sonde_ftrace_stop) so that the flush ends.
 * Return: 0, or the first thread's error (-errno).
 */
int sonde_ftrace_recorder_stop(struct sonde_ftrace_recorder *rec, uint64_t *bytes,
			       struct sonde_errmsg *err);

#endif
