// SPDX-License-Identifier: MIT
/*
 * inline_hot [SECONDS]: nearly all of its time is in churn(), a loop that
 * is always inlined into outer(): samples land in inlined code, so call
 * graphs with --inline show "churn (inlined)" under outer.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long churn(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

__attribute__((noinline)) void outer(void)
{
	sink = churn(sink);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);

	while (now() < end)
		outer();
	return 0;
}
