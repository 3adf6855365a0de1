// SPDX-License-Identifier: MIT
/*
 * The stop signals and the workload's exit code, one way for every
 * command that runs a workload (record, stat, trace; record --target maps
 * the remote workload's status the same way).
 *
 * The handlers only set flags: SIGINT, SIGTERM (and SIGHUP where asked)
 * record which signal asked us to stop, SIGCHLD that a child ended.  The
 * commands' wait loops read and clear them, pass the stop on to their
 * workload, and finish their output before exiting.  Like the shell, a
 * workload killed by signal N makes sonde exit with 128 + N.
 */
#include "cli.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

volatile sig_atomic_t cli_stop_signal, cli_child_exited;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		cli_child_exited = 1;
	else
		cli_stop_signal = sig;
}

void cli_catch_stop_signals(bool hup)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hup)
		sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
}

int cli_workload_exit_code(int status)
{
	if (status < 0)
		return EXIT_OK;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAIL;
}
