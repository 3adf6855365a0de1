// SPDX-License-Identifier: MIT
/*
 * The workload wait (include/sonde/wait.h): one ppoll() over the caller's
 * descriptors followed by the pidfds of the workload and of the attached
 * tasks, with the caller's signal mask.  Before and after each ppoll() the
 * flags its signal handlers set are turned into events, so a stop signal
 * or SIGCHLD that arrived at any point is reported by the next call at the
 * latest and never waits behind a ppoll() without a timeout.
 *
 * The workload is reaped here (wait4, with its rusage for stat), once: a
 * readable pidfd means it ended, so that reap may block; otherwise (a
 * SIGCHLD, or no pidfd on an old kernel) it does not.
 */
#include <sonde/wait.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/signals.h>

/* Without a pidfd and without SIGCHLD, a workload's end is looked for this often. */
#define NO_PIDFD_POLL_NS (100 * 1000000LL)

int sonde_wait_init(struct sonde_wait *w, const struct sonde_wait_opts *o)
{
	size_t n = o->npids + o->ntids;

	memset(w, 0, sizeof(*w));
	w->o = *o;
	w->wl_pidfd = -1;
	w->status = -1;
	if (o->wl && o->wl->pid > 0)
		w->wl_pidfd = sonde_pidfd_open(o->wl->pid, false);
	if (!n)
		return 0;
	w->task_fds = calloc(n, sizeof(*w->task_fds));
	w->gone = calloc(n, sizeof(*w->gone));
	if (!w->task_fds || !w->gone)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool thread = i >= o->npids;
		int fd = sonde_pidfd_open(thread ? o->tids[i - o->npids] : o->pids[i], thread);

		if (fd >= 0)
			w->task_fds[w->ntasks++] = fd;
	}
	w->alive = w->ntasks;
	return 0;
}

static bool workload_running(const struct sonde_wait *w)
{
	return w->o.wl && w->o.wl->pid > 0;
}

/* Reaps the workload if it ended (waits for it when @block). */
static int reap(struct sonde_wait *w, bool block)
{
	struct sonde_workload *wl = w->o.wl;
	int st;
	pid_t r;

	do
		r = wait4(wl->pid, &st, block ? 0 : WNOHANG, &w->ru);
	while (r < 0 && errno == EINTR);
	if (r != wl->pid)
		return 0;
	w->status = st;
	wl->pid = -1;
	return SONDE_WAIT_EXITED;
}

/* What the handlers' flags and the tasks' state say, without waiting. */
static int pending(struct sonde_wait *w)
{
	int ev = 0;

	if (w->o.stop_signal && *w->o.stop_signal) {
		w->signal = *w->o.stop_signal;
		*w->o.stop_signal = 0;
		ev |= SONDE_WAIT_SIGNAL;
	}
	if (workload_running(w) && ((w->o.child_exited && *w->o.child_exited) || w->wl_pidfd < 0)) {
		if (w->o.child_exited)
			*w->o.child_exited = 0;
		ev |= reap(w, false);
	}
	if (w->ntasks && !w->alive)
		ev |= SONDE_WAIT_GONE;
	return ev;
}

static int grow(struct sonde_wait *w, size_t n)
{
	struct pollfd *p;

	if (n <= w->pfd_cap)
		return 0;
	p = realloc(w->pfd, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	w->pfd = p;
	w->pfd_cap = n;
	return 0;
}

int sonde_wait_until(struct sonde_wait *w, struct pollfd *fds, size_t nfds, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;
	size_t n = nfds, wl_at = SIZE_MAX, tasks_at;
	bool capped = false;
	int ev = pending(w), pr;

	if (ev)
		return ev;
	if (grow(w, nfds + 1 + w->ntasks) < 0)
		return -ENOMEM;
	if (nfds)
		memcpy(w->pfd, fds, nfds * sizeof(*fds));
	if (workload_running(w) && w->wl_pidfd >= 0) {
		w->pfd[n] = (struct pollfd){.fd = w->wl_pidfd, .events = POLLIN};
		wl_at = n++;
	}
	tasks_at = n;
	for (size_t i = 0; i < w->ntasks; i++)
		if (!w->gone[i])
			w->pfd[n++] = (struct pollfd){.fd = w->task_fds[i], .events = POLLIN};
	for (size_t i = 0; i < n; i++)
		w->pfd[i].revents = 0;
	/* A workload nothing will announce: look for its end now and then. */
	if (workload_running(w) && w->wl_pidfd < 0 && !w->o.child_exited &&
	    (timeout_ns < 0 || timeout_ns > NO_PIDFD_POLL_NS)) {
		timeout_ns = NO_PIDFD_POLL_NS;
		capped = true;
	}
	if (timeout_ns >= 0) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000);
		ts.tv_nsec = (long)(timeout_ns % 1000000000);
		tsp = &ts;
	}
	pr = ppoll(w->pfd, n, tsp, w->o.waitmask);
	if (pr < 0 && errno != EINTR)
		return -errno;
	for (size_t i = 0; i < nfds; i++) {
		fds[i].revents = pr > 0 ? w->pfd[i].revents : 0;
		if (fds[i].revents)
			ev |= SONDE_WAIT_READY;
	}
	if (pr == 0 && !capped)
		ev |= SONDE_WAIT_TICK;
	if (pr > 0) {
		/* Busy descriptors never let ppoll() deliver a stop signal. */
		sonde_signals_deliver(w->o.waitmask);
		if (wl_at != SIZE_MAX && w->pfd[wl_at].revents)
			ev |= reap(w, true);
		for (size_t i = 0, k = tasks_at; i < w->ntasks; i++) {
			if (w->gone[i])
				continue;
			if (w->pfd[k++].revents) {
				w->gone[i] = true;
				w->alive--;
			}
		}
	}
	return ev | pending(w);
}

void sonde_wait_fini(struct sonde_wait *w)
{
	if (w->wl_pidfd >= 0)
		close(w->wl_pidfd);
	for (size_t i = 0; i < w->ntasks; i++)
		close(w->task_fds[i]);
	free(w->task_fds);
	free(w->gone);
	free(w->pfd);
	w->wl_pidfd = -1;
	w->task_fds = NULL;
	w->gone = NULL;
	w->pfd = NULL;
	w->ntasks = w->alive = w->pfd_cap = 0;
}
