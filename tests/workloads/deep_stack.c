// SPDX-License-Identifier: MIT
/*
 * deep_stack [SECONDS]: burns CPU for about SECONDS (default 1) in leaf(),
 * called at the bottom of 24 nested calls to descend(), each frame holding
 * a 480-byte buffer: about 12 KB of stack between leaf and main.  A DWARF
 * stack copy of 8 KB cannot reach main from leaf; 16 KB can.  Built
 * without frame pointers, for --call-graph dwarf.
 */
#include <stdlib.h>
#include <time.h>

#define DEPTH 24

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(void)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 200000ul; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

/* The buffer is used after the call, so the frame stays (no tail call). */
__attribute__((noinline)) unsigned long descend(int depth)
{
	volatile char pad[480];

	pad[0] = (char)depth;
	pad[sizeof(pad) - 1] = 1;
	if (depth == 0)
		leaf();
	else
		descend(depth - 1);
	return (unsigned long)pad[0] + pad[sizeof(pad) - 1];
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
		sink += descend(DEPTH);
	return 0;
}
