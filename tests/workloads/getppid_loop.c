// SPDX-License-Identifier: MIT
/*
 * getppid_loop N [SECONDS]: makes exactly N getppid() system calls, then
 * (when SECONDS is given) sleeps so a test can attach to it first:
 * it waits SECONDS, makes its N calls, and waits SECONDS again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	double pause = argc > 2 ? atof(argv[2]) : 0;

	if (pause > 0)
		nap(pause);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	if (pause > 0)
		nap(pause);
	return 0;
}
