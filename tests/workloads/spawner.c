// SPDX-License-Identifier: MIT
/*
 * spawner SECONDS [MS]: forks children without pause for SECONDS; each
 * child burns MS milliseconds of CPU (default 20) and exits without
 * exec'ing, so a child forked while a system-wide capture starts is known
 * to the capture only through its FORK record or /proc: the start-up race
 * of `record -a` shows as samples of a process with no COMM.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, ms = argc > 2 ? atof(argv[2]) : 20;
	double end = now() + secs;
	int live = 0;

	while (now() < end) {
		pid_t pid = fork();

		if (pid == 0) {
			double stop = now() + ms / 1000;

			while (now() < stop)
				sink = sink * 6364136223846793005ul + 1;
			_exit(0);
		}
		if (pid > 0)
			live++;
		/* Two children at a time: new forks all along, the CPUs not swamped. */
		while (live >= 2 && wait(NULL) > 0)
			live--;
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
