// SPDX-License-Identifier: MIT
/*
 * vdso_loop [N]: calls clock_gettime(CLOCK_MONOTONIC) N times (default
 * 20 million): nearly all of its time is in the vDSO's
 * __vdso_clock_gettime, which has no file on disk.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	struct timespec ts;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (unsigned long)ts.tv_nsec;
	}
	return 0;
}
