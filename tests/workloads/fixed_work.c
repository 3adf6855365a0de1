// SPDX-License-Identifier: MIT
/*
 * fixed_work [ITERATIONS]: does a fixed amount of CPU work (default
 * 200000000 iterations of an LCG step) and prints on stdout the wall time
 * in seconds that the work took, measured inside the process with
 * CLOCK_MONOTONIC around the work only (not start-up or exit).  A recorder's
 * in-process slowdown is that time under the recorder over the plain one.
 *
 * The work is split 60/30/10 between hot_fn, warm_fn and cool_fn, which run
 * at the bottom of a call chain several frames deep
 * (main > run > stage_a > stage_b > stage_c > hot_fn/warm_fn/cool_fn), so
 * call-graph recording has real stacks to walk.  Built with frame pointers;
 * fixed_work-nofp is the same without them, for --call-graph dwarf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* One chunk of work: CHUNK iterations in ten units of which the three
 * leaves take 6, 3 and 1. */
#define CHUNK 100000ul
#define UNIT (CHUNK / 10)

static inline void work(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

__attribute__((noinline)) void hot_fn(void)
{
	work(6 * UNIT);
}

__attribute__((noinline)) void warm_fn(void)
{
	work(3 * UNIT);
}

__attribute__((noinline)) void cool_fn(void)
{
	work(1 * UNIT);
}

__attribute__((noinline)) void stage_c(void)
{
	hot_fn();
	warm_fn();
	cool_fn();
	__asm__ volatile("" ::: "memory"); /* keep the calls from being tail calls */
}

__attribute__((noinline)) void stage_b(void)
{
	stage_c();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void stage_a(void)
{
	stage_b();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void run(unsigned long chunks)
{
	for (unsigned long c = 0; c < chunks; c++)
		stage_a();
	__asm__ volatile("" ::: "memory");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000000ul;
	unsigned long chunks = (iters + CHUNK - 1) / CHUNK;
	double t0, t1;

	t0 = now();
	run(chunks);
	t1 = now();
	printf("%.6f\n", t1 - t0);
	return 0;
}
