// SPDX-License-Identifier: MIT
/*
 * The pieces of the workload wait loops that capture, trace and stat
 * share: a pidfd that polls readable when the workload ends, and the
 * non-blocking reap that takes its status (and rusage) once; and the one
 * wait over them (sonde_wait_until()), each wake-up reported exactly.
 */
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <sonde/wait.h>
#include <sonde/workload.h>

static void run(char *const argv[], struct sonde_workload *w, int *pidfd)
{
	assert_int_equal(sonde_workload_prepare(w, argv), 0);
	*pidfd = sonde_pidfd_open(w->pid, false);
	assert_true(*pidfd >= 0);
	assert_int_equal(sonde_workload_start(w), 0);
}

static void test_reaped_once(void **state)
{
	char *argv[] = {"sh", "-c", "exit 7", NULL};
	struct sonde_workload w;
	struct pollfd pfd;
	struct rusage ru;
	int status = -1;

	(void)state;
	run(argv, &w, &pfd.fd);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 10000), 1); /* readable at its end */
	assert_true(sonde_workload_reaped(&w, &status, &ru));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	assert_int_equal(w.pid, -1);
	status = -1;
	assert_false(sonde_workload_reaped(&w, &status, NULL)); /* nothing left */
	assert_int_equal(status, -1);
	close(pfd.fd);
}

static void test_running_is_left_alone(void **state)
{
	char *argv[] = {"sleep", "10", NULL};
	struct sonde_workload w;
	int pidfd, status = -1;
	struct pollfd pfd;

	(void)state;
	run(argv, &w, &pidfd);
	assert_false(sonde_workload_reaped(&w, &status, NULL));
	assert_int_equal(status, -1); /* still "running" for the caller */
	assert_true(w.pid > 0);
	pfd = (struct pollfd){.fd = pidfd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 0), 0);
	status = sonde_workload_end(&w, SIGTERM, 5000, NULL);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	close(pidfd);
	/* No such process: no pidfd, thread or not. */
	assert_true(sonde_pidfd_open(0x7ffffff0, false) < 0);
	assert_true(sonde_pidfd_open(0x7ffffff0, true) < 0);
	/* A thread's pidfd (or the process's, before Linux 6.9). */
	pidfd = sonde_pidfd_open(getpid(), true);
	assert_true(pidfd >= 0);
	close(pidfd);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A helper child: sleeps @ms, then writes a byte to @fd (>= 0) or signals
 * its parent with @sig (> 0), and exits. */
static pid_t later(int ms, int fd, int sig)
{
	pid_t parent = getpid(), pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000};

		nanosleep(&d, NULL);
		if (fd >= 0 && write(fd, "x", 1) != 1)
			_exit(1);
		if (sig > 0)
			kill(parent, sig);
		_exit(0);
	}
	return pid;
}

static void reap_helper(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_wait_workload_exits(void **state)
{
	char *argv[] = {"sh", "-c", "sleep 0.05; exit 3", NULL};
	struct sonde_workload wl;
	struct sonde_wait w;

	(void)state;
	assert_int_equal(sonde_workload_prepare(&wl, argv), 0);
	assert_int_equal(sonde_wait_init(&w, &(struct sonde_wait_opts){.wl = &wl}), 0);
	assert_true(w.wl_pidfd >= 0);
	assert_int_equal(sonde_workload_start(&wl), 0);
	/* No timeout: only the end wakes it. */
	assert_int_equal(sonde_wait_until(&w, NULL, 0, -1), SONDE_WAIT_EXITED);
	assert_true(WIFEXITED(w.status));
	assert_int_equal(WEXITSTATUS(w.status), 3);
	assert_int_equal(wl.pid, -1);
	/* Reaped once: the next wait only ticks. */
	assert_int_equal(sonde_wait_until(&w, NULL, 0, 1000000), SONDE_WAIT_TICK);
	sonde_wait_fini(&w);
}

static void test_wait_fd_ready(void **state)
{
	char *argv[] = {"sleep", "10", NULL};
	struct sonde_workload wl;
	struct sonde_wait w;
	struct pollfd fds[2];
	int p[2], q[2];
	pid_t helper;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(q), 0);
	assert_int_equal(sonde_workload_prepare(&wl, argv), 0);
	assert_int_equal(sonde_wait_init(&w, &(struct sonde_wait_opts){.wl = &wl}), 0);
	assert_int_equal(sonde_workload_start(&wl), 0);
	helper = later(50, p[1], 0);
	fds[0] = (struct pollfd){.fd = q[0], .events = POLLIN};
	fds[1] = (struct pollfd){.fd = p[0], .events = POLLIN};
	/* The second descriptor, and nothing else, woke it (the timeout is 10 s). */
	assert_int_equal(sonde_wait_until(&w, fds, 2, 10000000000LL), SONDE_WAIT_READY);
	assert_int_equal(fds[0].revents, 0);
	assert_int_equal(fds[1].revents, POLLIN);
	assert_true(wl.pid > 0);
	reap_helper(helper);
	assert_true(sonde_workload_end(&wl, SIGKILL, 1000, NULL) >= 0);
	sonde_wait_fini(&w);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

static void test_wait_tick(void **state)
{
	struct pollfd fd;
	struct sonde_wait w;
	double t0;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	fd = (struct pollfd){.fd = p[0], .events = POLLIN};
	assert_int_equal(sonde_wait_init(&w, &(struct sonde_wait_opts){0}), 0);
	t0 = now_ms();
	assert_int_equal(sonde_wait_until(&w, &fd, 1, 30 * 1000000LL), SONDE_WAIT_TICK);
	assert_true(now_ms() - t0 >= 29.9);
	assert_int_equal(fd.revents, 0);
	/* A zero timeout just looks. */
	assert_int_equal(sonde_wait_until(&w, NULL, 0, 0), SONDE_WAIT_TICK);
	sonde_wait_fini(&w);
	close(p[0]);
	close(p[1]);
}

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	stop_flag = sig;
}

static void test_wait_signal(void **state)
{
	struct sigaction sa = {.sa_handler = on_stop}, old;
	sigset_t block, waitmask;
	struct sonde_wait w;
	pid_t helper;

	(void)state;
	stop_flag = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	assert_int_equal(sonde_wait_init(&w, &(struct sonde_wait_opts){.waitmask = &waitmask,
								       .stop_signal = &stop_flag}),
			 0);
	helper = later(50, -1, SIGINT);
	/* Blocked outside the wait: delivered inside it, reported as SIGNAL. */
	assert_int_equal(sonde_wait_until(&w, NULL, 0, 10000000000LL), SONDE_WAIT_SIGNAL);
	assert_int_equal(w.signal, SIGINT);
	assert_int_equal(stop_flag, 0); /* consumed */
	reap_helper(helper);
	/* A signal that came before the call is reported without waiting. */
	kill(getpid(), SIGINT); /* pending: blocked */
	assert_int_equal(sonde_wait_until(&w, NULL, 0, 10000000000LL), SONDE_WAIT_SIGNAL);
	sonde_wait_fini(&w);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	sigaction(SIGINT, &old, NULL);
}

static void test_wait_tasks_gone(void **state)
{
	struct sonde_wait w;
	pid_t pids[2];
	int st, go[2];
	char c;

	(void)state;
	assert_int_equal(pipe(go), 0);
	pids[0] = later(20, -1, 0);
	/* The second one ends only when told: after the first wait. */
	pids[1] = fork();
	assert_true(pids[1] >= 0);
	if (pids[1] == 0) {
		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	assert_int_equal(sonde_wait_init(&w, &(struct sonde_wait_opts){.pids = pids, .npids = 2}),
			 0);
	assert_int_equal(w.ntasks, 2);
	/* The first one's end wakes it, but one is left: nothing to report. */
	assert_int_equal(sonde_wait_until(&w, NULL, 0, 10000000000LL), 0);
	assert_int_equal(w.alive, 1);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(sonde_wait_until(&w, NULL, 0, 10000000000LL), SONDE_WAIT_GONE);
	assert_int_equal(w.alive, 0);
	sonde_wait_fini(&w);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	close(go[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reaped_once),
	    cmocka_unit_test(test_running_is_left_alone),
	    cmocka_unit_test(test_wait_workload_exits),
	    cmocka_unit_test(test_wait_fd_ready),
	    cmocka_unit_test(test_wait_tick),
	    cmocka_unit_test(test_wait_signal),
	    cmocka_unit_test(test_wait_tasks_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
