// SPDX-License-Identifier: MIT
/* crash [SECONDS]: burns CPU for SECONDS (default 0.3), then dies of SIGSEGV. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	*(volatile int *)(unsigned long)sink = 1; /* sink is never a valid address here */
	*(volatile int *)0 = 1;
	return 0;
}
