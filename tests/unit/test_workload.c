// SPDX-License-Identifier: MIT
/*
 * The pieces of the workload wait loops that capture, trace and stat
 * share: a pidfd that polls readable when the workload ends, and the
 * non-blocking reap that takes its status (and rusage) once.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reaped_once),
	    cmocka_unit_test(test_running_is_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
