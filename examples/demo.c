// SPDX-License-Identifier: MIT
/*
 * demo: a small program with known behaviour to try sonde on.
 * It spends about 60%, 30% and 10% of its CPU time in three functions
 * (hot_loop, warm_loop, cool_loop) and writes 100 blocks of 4 KiB to
 * /dev/null, so `sonde stat -e syscalls:sys_enter_write` counts 101 (the
 * blocks and its closing line) and a
 * profile shows the 60/30/10 split.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

/* Inlined, so the time is each loop's own (its hottest line is here, and a
 * frame-pointer call graph shows hot_loop <- main: a frameless leaf call
 * would hide its caller). */
static inline __attribute__((always_inline)) unsigned long spin(unsigned long iters,
								 unsigned long seed)
{
	unsigned long x = seed;

	for (unsigned long i = 0; i < iters; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

static __attribute__((noinline)) void hot_loop(unsigned long n)
{
	sink += spin(6 * n, 1);
}

static __attribute__((noinline)) void warm_loop(unsigned long n)
{
	sink += spin(3 * n, 2);
}

static __attribute__((noinline)) void cool_loop(unsigned long n)
{
	sink += spin(n, 3);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 10000000ul;
	char block[4096];
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0) {
		perror("/dev/null");
		return 1;
	}
	memset(block, 'x', sizeof(block));
	for (int i = 0; i < 100; i++) {
		hot_loop(n / 100);
		warm_loop(n / 100);
		cool_loop(n / 100);
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
			perror("write");
			return 1;
		}
	}
	close(fd);
	printf("demo: done (%lu)\n", (unsigned long)sink & 0xff);
	return 0;
}
