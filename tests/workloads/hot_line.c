// SPDX-License-Identifier: MIT
/*
 * hot_line [SECONDS]: burns CPU for about SECONDS (default 1) in
 * hot_loop_fn, whose time goes almost all to one source line: a 64-bit
 * division in the inner loop (the line marked HOT), each result feeding
 * the next.  The loop's other line calls the always-inlined mix(), so
 * its instructions belong to mix's source line.  Built with -g -O1 and
 * frame pointers; the annotate tests find the lines by their markers.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static volatile unsigned long divisor = 7;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x, unsigned long i)
{
	return x ^ (i << 3); /* MIX: inlined step */
}

__attribute__((noinline)) unsigned long hot_loop_fn(unsigned long n)
{
	unsigned long acc = sink, d = divisor;

	for (unsigned long i = 1; i <= n; i++) {
		acc = mix(acc, i);
		acc += acc / (d + (i & 1)); /* HOT: the division */
	}
	return acc;
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

	while (now() < end)
		sink = hot_loop_fn(100000);
	return 0;
}
