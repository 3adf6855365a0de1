/* SPDX-License-Identifier: MIT */
/*
 * One sampling capture from start to end, shared by `sonde record` (records
 * go to a local perf.data writer) and `sonde-agent` (records go to a socket):
 * the optional workload held at its gate, the events and rings
 * (struct sonde_record), the synthesized state of what already runs, and
 * the loop that waits for the rings, the workload, signals and the caller's
 * own descriptors (the agent's connection), drains the rings into a sink
 * and ends every pass with FINISHED_ROUND.  Every way out goes through the
 * same end: disable, reap, final drain.  libc only; it never prints.
 */
#ifndef SONDE_CAPTURE_H
#define SONDE_CAPTURE_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>

#include <sonde/record.h>
#include <sonde/ring.h>
#include <sonde/synth.h>
#include <sonde/workload.h>

#define SONDE_CAPTURE_MAX_EXTRA 4

struct sonde_capture_opts {
	struct sonde_record_opts rec; /* events, target (cpus set), sampling; borrowed */
	char *const *argv;	      /* workload to run, or NULL; borrowed */
	sonde_ring_sink sink;	      /* receives every record: drained runs, FINISHED_ROUND */
	void *sink_ctx;
	/* Signals: blocked by the caller, unblocked (this mask) only while waiting. */
	const sigset_t *waitmask;	     /* NULL: the current mask */
	volatile sig_atomic_t *stop_signal;  /* set by the caller's handler; NULL: none */
	volatile sig_atomic_t *child_exited; /* set on SIGCHLD; NULL: pidfd only */
	/* The caller's descriptors, polled with the rings.  on_extra() runs after
	 * a wait in which one of them is ready; non-zero stops the capture. */
	struct pollfd extra[SONDE_CAPTURE_MAX_EXTRA];
	size_t nextra;
	int (*on_extra)(void *ctx, struct pollfd *extra, size_t n);
	/* After each drain (pass): non-zero stops the capture (size caps). */
	int (*on_pass)(void *ctx);
	void *ctx;
	int poll_timeout_ms;   /* 0: wait for events only */
	unsigned int delay_ms; /* perf's --delay: the events start this long after
				* the workload (or the capture) started */
};

enum sonde_capture_end {
	SONDE_CAPTURE_WORKLOAD_EXITED,
	SONDE_CAPTURE_SIGNALED, /* a stop signal: forwarded to the workload */
	SONDE_CAPTURE_TARGETS_GONE,
	SONDE_CAPTURE_STOPPED, /* on_extra() or on_pass() asked */
	SONDE_CAPTURE_SINK_ERROR,
	SONDE_CAPTURE_POLL_ERROR,
};

struct sonde_capture {
	struct sonde_capture_opts o;
	struct sonde_record *rec; /* owned */
	struct sonde_workload wl;
	int status; /* workload wait status, -1 if none */
	enum sonde_capture_end end;
	int sink_err;		/* the sink's error when end is SINK_ERROR */
	bool started;		/* the workload exec'd */
	bool kernel_map_hidden; /* no kernel MMAP could be synthesized (kptr_restrict) */
	uint64_t enable_at;	/* --delay: CLOCK_MONOTONIC ms when the events start, 0: started */
	struct sonde_errmsg err;
};

/**
 * sonde_capture_open() - fork the workload (held at its gate), open events
 * and rings, disabled
 * Return: 0, or a negative code with c->err set; on an event that can't
 * open, c->rec is set with rec->failed for the caller to explain.  Always
 * sonde_capture_close() afterwards.
 */
int sonde_capture_open(struct sonde_capture *c, const struct sonde_capture_opts *o);

/**
 * sonde_capture_synthesize() - records of what runs already: kernel and
 * module maps, every process with -a, the attached ones with -p/-t.
 * With -a the side-band event is enabled first, so nothing forked while
 * /proc is read goes unrecorded.
 * Return: 0 or -errno (an emit error); hidden kernel addresses set
 * c->kernel_map_hidden and are not an error.
 */
int sonde_capture_synthesize(struct sonde_capture *c, sonde_emit_fn emit, void *ctx);

/**
 * sonde_capture_run() - start the workload, enable, drain until the end,
 * disable, reap the workload and drain what is left
 * Return: 0 (c->end says why it ended), or the workload's -errno from exec
 * (c->err says so).
 */
int sonde_capture_run(struct sonde_capture *c);

/* Kills (SIGKILL) and reaps a workload still running, closes the events.
 * Safe on a zeroed or partly opened capture. */
void sonde_capture_close(struct sonde_capture *c);

#endif
