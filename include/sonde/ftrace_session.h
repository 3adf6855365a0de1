/* SPDX-License-Identifier: MIT */
/*
 * An ftrace run from setup to restore, what `sonde trace` drives: the
 * session (sonde/ftrace.h: instance, tracer, events, filters, pids, buffer
 * size, CPU mask) plus its reader, either live (the instance's trace_pipe,
 * text handed to a callback) or recording (one splice thread per CPU into
 * page files, sonde_ftrace_recorder_start()), and at the end the per-CPU
 * stats and the restore.
 *
 * The calls come in this order, and every exit path takes the last three:
 *   _open   create the session, tracing off (nothing to undo on failure)
 *   _start  open the reader, then tracing on
 *   _pump   (live) move what trace_pipe holds to the callback, bounded;
 *           poll sonde_ftrace_session_fd() to know when
 *   _stop   tracing off: from here what the buffers hold is finite
 *   _drain  (live) the rest of trace_pipe within a time bound; (recording)
 *           flush the last pages and join the threads
 *   _close  read per_cpu/cpuN/stats, restore the kernel's state (remove the
 *           instance or undo every top-level write), free
 * The caller owns the wait loop, the workload and the signals: it blocks
 * the termination signals from _open to _close so that a restore is never
 * cut halfway.  Libc only (file I/O and threads): the agent can link it.
 */
#ifndef SONDE_FTRACE_SESSION_H
#define SONDE_FTRACE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/error.h>
#include <sonde/ftrace.h>

struct sonde_ftrace_session_config {
	struct sonde_ftrace_config ftrace; /* what to trace (borrowed pointers) */
	const int *cpus;		   /* the CPUs read and counted: every online one */
	size_t ncpus;
	/*
	 * Recording: per CPU number (0..highest in @cpus), the page file the
	 * recorder fills.  NULL: live, trace_pipe's text goes to @on_text.
	 */
	const char *const *cpu_files;
	/* Live: called with each chunk of trace_pipe.  Return: 0, or -errno to stop the pump. */
	int (*on_text)(void *ctx, const char *buf, size_t len);
	void *ctx;
};

/* Per CPU number 0..ncpus-1, what per_cpu/cpuN/stats said at the end. */
struct sonde_ftrace_session_stats {
	int ncpus;			/* highest CPU read + 1 */
	struct sonde_ftrace_stats *cpu; /* owned, per CPU number */
	bool *have;			/* owned: whether cpu[c] was read */
	char **text;			/* owned: the stats text per CPU, or NULL */
	uint64_t read;			/* sum of "read events" over the CPUs read */
};

struct sonde_ftrace_session;

/**
 * sonde_ftrace_session_open() - set up the session, tracing off
 * @cfg: copied where kept; its pointers must outlive the session
 * @err: the reason on failure (the file, the kernel's answer)
 *
 * Return: 0 with *out new (close with sonde_ftrace_session_close()), or the
 * error of sonde_ftrace_create() with everything undone.
 */
int sonde_ftrace_session_open(const struct sonde_ftrace_session_config *cfg,
			      struct sonde_ftrace_session **out, struct sonde_errmsg *err);

/**
 * sonde_ftrace_session_start() - open the reader, then switch tracing on
 * @err: the reason on failure
 *
 * On failure the caller still stops, drains and closes.  Return: 0 or an error.
 */
int sonde_ftrace_session_start(struct sonde_ftrace_session *s, struct sonde_errmsg *err);

/* Borrowed: the live reader's descriptor (POLLIN when trace_pipe has text), or -1. */
int sonde_ftrace_session_fd(const struct sonde_ftrace_session *s);

/**
 * sonde_ftrace_session_pump() - hand what trace_pipe holds to the callback
 * @budget: stop after about this many bytes, so a flood can't hold the
 *          caller's loop away from its signals
 *
 * Return: bytes moved (0 when empty or not live), or the first -errno of
 * the read or of the callback.
 */
long sonde_ftrace_session_pump(struct sonde_ftrace_session *s, long budget);

/* tracing_on = 0 (once the session exists; harmless twice).  Return: 0 or -errno. */
int sonde_ftrace_session_stop(struct sonde_ftrace_session *s);

/**
 * sonde_ftrace_session_drain() - take what is left after the stop
 * @seconds: live: stop pumping after this long (the callback may be slow)
 * @cut: set when the live drain stopped at @seconds with text left
 * @err: the recorder's failure
 *
 * Live, a callback error just ends the drain.  Recording, the threads
 * flush, end and are joined.  Return: 0, or the recorder's first error.
 */
int sonde_ftrace_session_drain(struct sonde_ftrace_session *s, double seconds, bool *cut,
			       struct sonde_errmsg *err);

/**
 * sonde_ftrace_session_close() - read the stats, restore tracefs, free @s
 * @stats: receives the per-CPU stats (free with
 *         sonde_ftrace_session_stats_fini()), or NULL
 * @err: what could not be restored
 *
 * Drains first if the caller did not.  Every restore step is tried even
 * when one fails.  Return: 0, or the first restore error.
 */
int sonde_ftrace_session_close(struct sonde_ftrace_session *s,
			       struct sonde_ftrace_session_stats *stats, struct sonde_errmsg *err);

/* Frees what sonde_ftrace_session_close() put in @stats. */
void sonde_ftrace_session_stats_fini(struct sonde_ftrace_session_stats *stats);

#endif
