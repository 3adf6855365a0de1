/* SPDX-License-Identifier: MIT */
/*
 * The one wait of every command that runs or watches tasks (record and the
 * agent's capture, stat, trace): ppoll() over the caller's descriptors, the
 * workload's pidfd and the attached tasks' pidfds, with an optional timeout,
 * and the caller's stop signals unblocked only inside ppoll() so none slips
 * between a check and the wait.  Each call reports what woke it as a set of
 * SONDE_WAIT_* bits; the caller decides what each means for it (forward the
 * signal, print an interval, drain its rings).  libc only; it never prints.
 *
 * Usage: block the stop signals and SIGCHLD, install handlers that set the
 * flags, then sonde_wait_init(), a loop of sonde_wait_until(), and
 * sonde_wait_fini().
 */
#ifndef SONDE_WAIT_H
#define SONDE_WAIT_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <sonde/workload.h>

/* What woke a wait (bits: several can come together). */
enum sonde_wait_event {
	SONDE_WAIT_READY = 1 << 0,  /* a caller's descriptor has revents */
	SONDE_WAIT_EXITED = 1 << 1, /* the workload ended and was reaped: w->status, w->ru */
	SONDE_WAIT_GONE = 1 << 2,   /* every attached task watched has exited */
	SONDE_WAIT_TICK = 1 << 3,   /* the caller's timeout passed */
	SONDE_WAIT_SIGNAL = 1 << 4, /* a stop signal arrived: w->signal (the flag is cleared) */
};

struct sonde_wait_opts {
	/* The workload (a started child), or NULL; reaped here, so its pid
	 * becomes -1 once EXITED was reported. */
	struct sonde_workload *wl;
	/* Attached tasks to watch (processes, threads); borrowed during init. */
	const pid_t *pids;
	size_t npids;
	const pid_t *tids;
	size_t ntids;
	/* Signals: blocked by the caller, unblocked (this mask) only in ppoll(). */
	const sigset_t *waitmask;	     /* NULL: the current mask */
	volatile sig_atomic_t *stop_signal;  /* set by the caller's handler; NULL: none */
	volatile sig_atomic_t *child_exited; /* set on SIGCHLD; NULL: pidfd only */
};

struct sonde_wait {
	struct sonde_wait_opts o;
	int wl_pidfd;  /* the workload's pidfd, or -1 */
	int *task_fds; /* owned: pidfds of the attached tasks that had one */
	bool *gone;    /* per task_fds: it exited */
	size_t ntasks, alive;
	struct pollfd *pfd; /* owned: the set handed to ppoll() */
	size_t pfd_cap;
	int status;	  /* the workload's wait status once EXITED, else -1 */
	struct rusage ru; /* its resource use (wait4) */
	int signal;	  /* the stop signal of the last SIGNAL */
};

/**
 * sonde_wait_init() - open the pidfds of @o's workload and attached tasks
 *
 * A task whose pidfd can't open (gone already, or a kernel without
 * pidfd_open) is not watched; a workload without a pidfd is polled with
 * a non-blocking reap at least every 100 ms (or on SIGCHLD).
 * Return: 0 or -ENOMEM.  Always sonde_wait_fini() afterwards.
 */
int sonde_wait_init(struct sonde_wait *w, const struct sonde_wait_opts *o);

/**
 * sonde_wait_until() - wait for the next thing that needs the caller
 * @fds: the caller's descriptors (their revents are set on return), or NULL
 * @nfds: how many
 * @timeout_ns: the longest wait in nanoseconds (0: just look), or < 0: none
 *
 * Pending events (a stop signal flagged, a workload already ended, every
 * task gone) are reported without waiting.  After a ppoll() that found a
 * ready descriptor, pending stop signals are let through to their
 * handlers (sonde_signals_deliver()): busy descriptors would otherwise
 * keep them pending.
 * Return: the SONDE_WAIT_* bits that apply (0: woken for nothing the
 * caller needs, call again), or a negative -errno from ppoll().
 */
int sonde_wait_until(struct sonde_wait *w, struct pollfd *fds, size_t nfds, int64_t timeout_ns);

/* Closes the pidfds and frees the sets.  Safe after any sonde_wait_init(). */
void sonde_wait_fini(struct sonde_wait *w);

#endif
