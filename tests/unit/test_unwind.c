// SPDX-License-Identifier: MIT
/*
 * Unwinder error handling, offline: samples made by hand from this very
 * process (its registers and a copy of its stack, its /proc/self/maps).
 * A whole copy unwinds to main; no registers, a truncated or garbage
 * stack, an unknown arch or a capture arch that does not match the files
 * give errors or short chains, never a crash (also run under ASan).
 */
#include <sonde/unwind.h>

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#if defined(__x86_64__)

/* perf_regs x86: bits of BP, SP, IP */
#define REG_BP 6
#define REG_SP 7
#define REG_IP 8
#define MASK ((1ull << REG_BP) | (1ull << REG_SP) | (1ull << REG_IP))

struct pmap {
	uint64_t start, end, pgoff;
	char path[256];
};
static struct pmap pmaps[256];
static size_t npmaps;
static uint64_t stack_end;

static void load_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	assert_non_null(f);
	npmaps = 0;
	while (fgets(line, sizeof(line), f) && npmaps < 256) {
		struct pmap *m = &pmaps[npmaps];
		char path[256] = "";

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %255s", &m->start,
			   &m->end, &m->pgoff, path) < 3)
			continue;
		if (!strcmp(path, "[stack]"))
			stack_end = m->end;
		snprintf(m->path, sizeof(m->path), "%s", path);
		npmaps++;
	}
	fclose(f);
}

static int find_map(void *ctx, uint32_t pid, uint64_t addr, struct sonde_unwind_map *out)
{
	int *calls = ctx;

	(*calls)++;
	for (size_t i = 0; i < npmaps; i++)
		if (addr >= pmaps[i].start && addr < pmaps[i].end && pmaps[i].path[0] == '/') {
			*out = (struct sonde_unwind_map){pmaps[i].start, pmaps[i].end,
							 pmaps[i].pgoff, pmaps[i].path};
			return 0;
		}
	return -ENOENT;
}

static uint64_t regs[3]; /* BP, SP, IP: low bit first */
static uint8_t stack_copy[16384];
static uint64_t stack_len;

/* Byte copy the stack as perf would (ASan would flag redzones in memcpy). */
__attribute__((no_sanitize_address)) static void copy_stack(uint64_t sp)
{
	const volatile uint8_t *p = (const volatile uint8_t *)sp;

	stack_len = stack_end - sp < sizeof(stack_copy) ? stack_end - sp : sizeof(stack_copy);
	for (uint64_t i = 0; i < stack_len; i++)
		stack_copy[i] = p[i];
}

/* Snapshots BP, SP and IP at a known instruction, then the stack above SP. */
__attribute__((noinline, no_sanitize_address)) static void capture(void)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	regs[0] = bp;
	regs[1] = sp;
	regs[2] = ip;
	copy_stack(sp);
}

__attribute__((noinline)) static void outer(void)
{
	capture();
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

static struct sonde_unwind_sample sample(void)
{
	return (struct sonde_unwind_sample){
	    .pid = 1,
	    .tid = 1,
	    .abi = PERF_SAMPLE_REGS_ABI_64,
	    .regs_mask = MASK,
	    .regs = regs,
	    .nr_regs = 3,
	    .stack = stack_copy,
	    .stack_size = stack_len,
	    .arch = "x86_64",
	};
}

static int setup(void **state)
{
	load_maps();
	outer();
	return 0;
}

static bool in_fn(uint64_t ip, void (*fn)(void))
{
	/* within the first 256 bytes of the function: enough for these tiny ones */
	return ip >= (uint64_t)(uintptr_t)fn && ip < (uint64_t)(uintptr_t)fn + 256;
}

static void test_whole_stack(void **state)
{
	struct sonde_unwinder *u;
	struct sonde_unwind_sample s = sample();
	uint64_t ips[64];
	int calls = 0, n, n2;

	assert_int_equal(sonde_unwinder_new(&u, find_map, &calls), 0);
	n = sonde_unwind(u, &s, ips, 64);
	assert_true(n >= 3);
	assert_int_equal(ips[0], regs[2]);
	assert_true(in_fn(ips[1], outer));
	/* a second sample of the same process reports no module again */
	calls = 0;
	n2 = sonde_unwind(u, &s, ips, 64);
	assert_int_equal(n2, n);
	assert_int_equal(calls, 0);
	/* @max bounds the chain */
	assert_int_equal(sonde_unwind(u, &s, ips, 2), 2);
	assert_int_equal(sonde_unwind(u, &s, ips, 0), 0);
	/* after forget, the process starts over */
	sonde_unwinder_forget(u, 1);
	assert_int_equal(sonde_unwind(u, &s, ips, 64), n);
	sonde_unwinder_free(u);
}

static void test_no_registers(void **state)
{
	struct sonde_unwinder *u;
	struct sonde_unwind_sample s = sample();
	uint64_t ips[8];
	int calls = 0;

	assert_int_equal(sonde_unwinder_new(&u, find_map, &calls), 0);
	s.abi = PERF_SAMPLE_REGS_ABI_NONE;
	assert_int_equal(sonde_unwind(u, &s, ips, 8), -ENODATA);
	s = sample();
	s.regs = NULL;
	assert_int_equal(sonde_unwind(u, &s, ips, 8), -ENODATA);
	s = sample();
	s.nr_regs = 2; /* IP missing from the values */
	assert_int_equal(sonde_unwind(u, &s, ips, 8), -ENODATA);
	s = sample();
	s.regs_mask = 1ull << REG_IP; /* only IP: the ip alone */
	s.nr_regs = 1;
	s.regs = &regs[2];
	assert_int_equal(sonde_unwind(u, &s, ips, 8), 1);
	assert_int_equal(ips[0], regs[2]);
	s = sample();
	s.abi = PERF_SAMPLE_REGS_ABI_32;
	assert_int_equal(sonde_unwind(u, &s, ips, 8), -ENOTSUP);
	sonde_unwinder_free(u);
}

static void test_truncated_stack(void **state)
{
	struct sonde_unwinder *u;
	struct sonde_unwind_sample s = sample();
	uint64_t ips[64];
	int calls = 0, full, n;

	assert_int_equal(sonde_unwinder_new(&u, find_map, &calls), 0);
	full = sonde_unwind(u, &s, ips, 64);
	assert_true(full >= 3);
	for (uint64_t len = 0; len < 256; len += 3) {
		s.stack_size = len;
		n = sonde_unwind(u, &s, ips, 64);
		assert_true(n >= 1 && n <= full);
		assert_int_equal(ips[0], regs[2]);
	}
	s.stack = NULL;
	assert_int_equal(sonde_unwind(u, &s, ips, 64), 1);
	sonde_unwinder_free(u);
}

static void test_garbage_stack(void **state)
{
	static uint8_t junk[4096];
	struct sonde_unwinder *u;
	struct sonde_unwind_sample s = sample();
	uint64_t ips[128];
	int calls = 0, n;

	srand(1);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rand();
	assert_int_equal(sonde_unwinder_new(&u, find_map, &calls), 0);
	s.stack = junk;
	s.stack_size = sizeof(junk);
	n = sonde_unwind(u, &s, ips, 128);
	assert_true(n >= 1 && n <= 128);
	/* an ip in no mapping: the ip alone */
	regs[2] = 0x10;
	s = sample();
	n = sonde_unwind(u, &s, ips, 128);
	assert_true(n >= 1);
	assert_int_equal(ips[0], 0x10);
	sonde_unwinder_free(u);
	outer(); /* restore the real snapshot */
}

static void test_arch(void **state)
{
	struct sonde_unwinder *u;
	struct sonde_unwind_sample s = sample();
	uint64_t ips[8];
	int calls = 0;

	assert_int_equal(sonde_unwinder_new(&u, find_map, &calls), 0);
	s.arch = "mips";
	assert_int_equal(sonde_unwind(u, &s, ips, 8), -ENOTSUP);
	s.arch = "";
	assert_int_equal(sonde_unwind(u, &s, ips, 8), -ENOTSUP);
	/* an aarch64 capture whose files are x86_64: refused, not misread */
	s.arch = "aarch64";
	s.regs_mask = (1ull << 31) | (1ull << 32) | (1ull << 29); /* x29, SP, PC */
	assert_int_equal(sonde_unwind(u, &s, ips, 8), -ENOTSUP);
	s = sample();
	s.arch = NULL; /* host */
	assert_true(sonde_unwind(u, &s, ips, 8) >= 3);
	assert_int_equal(sonde_unwinder_new(&u, NULL, NULL), -EINVAL);
	sonde_unwinder_free(u);
	sonde_unwinder_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole_stack),
	    cmocka_unit_test(test_no_registers),
	    cmocka_unit_test(test_truncated_stack),
	    cmocka_unit_test(test_garbage_stack),
	    cmocka_unit_test(test_arch),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}

#else

int main(void)
{
	printf("1..0 # SKIP the hand-made samples are x86_64\n");
	return 0;
}

#endif
