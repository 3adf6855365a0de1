// SPDX-License-Identifier: MIT
/*
 * Workload spawning with a gate, as perf does: fork, wait on a pipe, exec.
 * A second close-on-exec pipe reports an exec failure back to the parent,
 * so "command not found" is an error the caller can explain, not a child
 * that silently exits 127.
 *
 * The child asks for SIGKILL when sonde dies (PR_SET_PDEATHSIG, kept across
 * exec): a sonde killed with SIGKILL can't stop its workload, which would
 * otherwise run on as an orphan (a busy loop, a flood of traced events).
 */
#include <sonde/workload.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void child(pid_t parent, int go, int ready, int err, char *const argv[])
{
	sigset_t none;
	char c;
	int e;

	const char *base = strrchr(argv[0], '/');

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	/* Named as the command already while it waits: ftrace saves a task's
	 * comm when it is switched out, and a short workload may never be
	 * switched out again after its exec, so trace_pipe would call it by
	 * our name. */
	prctl(PR_SET_NAME, base ? base + 1 : argv[0]);
	/* The parent may have died before the request: then nobody will stop us. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	/* Armed: the parent waits for this byte before it enables any event, so
	 * the getppid() above is never traced (a getppid count would be one
	 * over, whenever this child ran after the tracing began). */
	if (write(ready, "r", 1) != 1)
		_exit(127);
	close(ready);
	/* EOF without a byte means the parent gave up: don't run. */
	if (read(go, &c, 1) != 1)
		_exit(127);
	close(go);
	execvp(argv[0], argv);
	e = errno;
	if (write(err, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

int sonde_workload_prepare(struct sonde_workload *w, char *const argv[])
{
	int go[2] = {-1, -1}, ready[2] = {-1, -1}, err[2] = {-1, -1};
	pid_t parent = getpid();
	ssize_t r;
	char c;
	int e;

	w->pid = -1;
	w->go_fd = w->err_fd = -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    (w->pid = fork()) < 0) {
		e = errno;
		close_pair(go);
		close_pair(ready);
		close_pair(err);
		w->pid = -1;
		return -e;
	}
	if (w->pid == 0) {
		close(go[1]);
		close(ready[0]);
		close(err[0]);
		child(parent, go[0], ready[1], err[1], argv);
	}
	close(go[0]);
	close(ready[1]);
	close(err[1]);
	w->go_fd = go[1];
	w->err_fd = err[0];
	/* Until the child is armed (see child()); EOF means it could not be. */
	do
		r = read(ready[0], &c, 1);
	while (r < 0 && errno == EINTR);
	e = errno;
	close(ready[0]);
	if (r != 1) {
		sonde_workload_abort(w);
		return r < 0 ? -e : -ECHILD;
	}
	return 0;
}

int sonde_workload_start(struct sonde_workload *w)
{
	int child_errno = 0;
	ssize_t r;

	if (write(w->go_fd, "g", 1) != 1) {
		int e = errno;

		sonde_workload_abort(w);
		return -e;
	}
	close(w->go_fd);
	w->go_fd = -1;
	do
		r = read(w->err_fd, &child_errno, sizeof(child_errno));
	while (r < 0 && errno == EINTR);
	close(w->err_fd);
	w->err_fd = -1;
	if (r == (ssize_t)sizeof(child_errno)) {
		waitpid(w->pid, NULL, 0);
		w->pid = -1;
		return -child_errno;
	}
	return 0;
}

void sonde_workload_abort(struct sonde_workload *w)
{
	if (w->go_fd >= 0)
		close(w->go_fd);
	if (w->err_fd >= 0)
		close(w->err_fd);
	w->go_fd = w->err_fd = -1;
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		w->pid = -1;
	}
}

int sonde_workload_end(struct sonde_workload *w, int sig, int grace_ms, bool *killed)
{
	struct timespec step = {0, 10 * 1000 * 1000};
	int status = -1;

	if (killed)
		*killed = false;
	if (w->pid <= 0)
		return -1;
	if (sig > 0)
		kill(w->pid, sig);
	/* Polling with WNOHANG works whatever the caller does with SIGCHLD. */
	for (int waited = 0;; waited += 10) {
		pid_t r = waitpid(w->pid, &status, WNOHANG);

		if (r == w->pid || (r < 0 && errno != EINTR))
			break;
		if (waited >= grace_ms) {
			kill(w->pid, SIGKILL);
			if (killed)
				*killed = true;
			while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		nanosleep(&step, NULL);
	}
	w->pid = -1;
	return status;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

int sonde_pidfd_open(pid_t pid, bool thread)
{
	int fd = thread ? (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD) : -1;

	return fd >= 0 ? fd : (int)syscall(SYS_pidfd_open, pid, 0);
}

bool sonde_workload_reaped(struct sonde_workload *w, int *status, struct rusage *ru)
{
	int st;

	/* @status is left alone until there is one (capture keeps -1 for "running"). */
	if (w->pid <= 0 || wait4(w->pid, &st, WNOHANG, ru) != w->pid)
		return false;
	*status = st;
	w->pid = -1;
	return true;
}
