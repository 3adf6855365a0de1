/* SPDX-License-Identifier: MIT */
/*
 * The command a capture measures.  It is forked first and held at a gate
 * so that counters can be attached to its pid with enable_on_exec: they
 * then count from exec on, not sonde's own fork and setup.
 */
#ifndef SONDE_WORKLOAD_H
#define SONDE_WORKLOAD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct sonde_workload {
	pid_t pid;  /* the child, or -1 */
	int go_fd;  /* write end of the gate */
	int err_fd; /* read end: the child's exec errno, EOF when exec worked */
};

/**
 * sonde_workload_prepare() - fork @argv and hold it before exec
 *
 * The child gets the default disposition for every signal and an empty
 * signal mask, whatever the parent set, and dies with SIGKILL when the
 * caller does (PR_SET_PDEATHSIG, kept across exec).
 * Return: 0 or -errno.
 */
int sonde_workload_prepare(struct sonde_workload *w, char *const argv[]);

/**
 * sonde_workload_start() - let the child exec
 * Return: 0 once exec succeeded, or the child's -errno from execvp (the
 * child is reaped then).
 */
int sonde_workload_start(struct sonde_workload *w);

/* Kills and reaps a prepared child that will not be started. */
void sonde_workload_abort(struct sonde_workload *w);

/**
 * sonde_workload_end() - stop a started child within a bound
 * @sig: sent first (0: none, just wait)
 * @grace_ms: how long it may take to exit before SIGKILL
 * @killed: set when SIGKILL was needed, or NULL
 *
 * A capture that was asked to stop must end even when its workload
 * ignores the signal.  Return: the wait status, -1 if there was no child.
 */
int sonde_workload_end(struct sonde_workload *w, int sig, int grace_ms, bool *killed);

/**
 * sonde_pidfd_open() - a descriptor that polls readable when @pid exits
 * @thread: @pid is a thread: readable when that thread exits (PIDFD_THREAD,
 *	    Linux 6.9; older kernels give the process's pidfd instead)
 *
 * The wait loops (capture, trace, stat) poll these beside their other
 * descriptors, so a workload's end wakes them without SIGCHLD.
 * Return: new: close it; or -1 (no pidfd_open, or no such process).
 */
int sonde_pidfd_open(pid_t pid, bool thread);

/**
 * sonde_workload_reaped() - reap @w if it has ended, without blocking
 * @status: its wait status, when it ended
 * @ru: its resource usage (wait4), or NULL
 *
 * Return: true when the child was reaped (and @w->pid set to -1).
 */
bool sonde_workload_reaped(struct sonde_workload *w, int *status, struct rusage *ru);

#endif
