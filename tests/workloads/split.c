// SPDX-License-Identifier: MIT
/*
 * split [SECONDS]: burns CPU for about SECONDS (default 1) in three
 * functions with a known 60/30/10 split of the work: hot_fn, warm_fn and
 * cool_fn each run the same inner loop for 6, 3 and 1 units per round.
 * Built with frame pointers; split-nofp is the same without them.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#define WORK(units)                                                                                \
	do {                                                                                       \
		unsigned long x = sink;                                                            \
		for (unsigned long i = 0; i < (units) * 20000ul; i++)                              \
			x = x * 6364136223846793005ul + 1442695040888963407ul;                     \
		sink = x;                                                                          \
	} while (0)

__attribute__((noinline)) void hot_fn(void)
{
	WORK(6);
}

__attribute__((noinline)) void warm_fn(void)
{
	WORK(3);
}

__attribute__((noinline)) void cool_fn(void)
{
	WORK(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end = now() + secs;

	while (now() < end) {
		for (int i = 0; i < 10; i++) {
			hot_fn();
			warm_fn();
			cool_fn();
		}
	}
	return 0;
}
