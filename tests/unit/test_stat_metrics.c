// SPDX-License-Identifier: MIT
/*
 * perf stat's derived metrics (sonde_stat_metric()) and the mean over runs
 * (sonde_stat_count_add(), sonde_stat_noise_pct()), from exact counts to
 * exact values and perf's unit texts.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sonde/stat_metrics.h>

#define SW(c)                                                                                      \
	{                                                                                          \
		.attr = {.type = PERF_TYPE_SOFTWARE, .config = (c) }                               \
	}
#define HW(c)                                                                                      \
	{                                                                                          \
		.attr = {.type = PERF_TYPE_HARDWARE, .config = (c) }                               \
	}
#define CACHE(c)                                                                                   \
	{                                                                                          \
		.attr = {.type = PERF_TYPE_HW_CACHE, .config = (c) }                               \
	}

enum { CLOCK, CYCLES, INSNS, BRANCHES, BMISS, CMISS, L1LOADS, L1MISS, CS, FAULTS, NEVER, N };

static const struct sonde_event events[N] = {
    [CLOCK] = SW(PERF_COUNT_SW_TASK_CLOCK),
    [CYCLES] = HW(PERF_COUNT_HW_CPU_CYCLES),
    [INSNS] = HW(PERF_COUNT_HW_INSTRUCTIONS),
    [BRANCHES] = HW(PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
    [BMISS] = HW(PERF_COUNT_HW_BRANCH_MISSES),
    [CMISS] = HW(PERF_COUNT_HW_CACHE_MISSES),
    /* L1-dcache, read, access (result 0) and miss (result 1). */
    [L1LOADS] = CACHE(0 | (0 << 8) | (0ULL << 16)),
    [L1MISS] = CACHE(0 | (0 << 8) | (1ULL << 16)),
    [CS] = SW(PERF_COUNT_SW_CONTEXT_SWITCHES),
    [FAULTS] = SW(PERF_COUNT_SW_PAGE_FAULTS),
    [NEVER] = HW(PERF_COUNT_HW_BUS_CYCLES),
};

static const double values[N] = {
    [CLOCK] = 2e9, /* 2 s of task time in 1 s */
    [CYCLES] = 3e9,  [INSNS] = 6e9,  [BRANCHES] = 1e9, [BMISS] = 1e7,	[CMISS] = 1e7,
    [L1LOADS] = 8e6, [L1MISS] = 2e6, [CS] = 300,       [FAULTS] = 4000,
};

static void fill(struct sonde_stat_count *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c[i] = (struct sonde_stat_count){.ev = &events[i]};
		if (i != NEVER)
			sonde_stat_count_add(&c[i], values[i], 100, 100);
	}
}

static void check(const struct sonde_stat_count *c, size_t n, size_t i, double elapsed_ns,
		  double value, const char *unit, bool percent)
{
	struct sonde_stat_metric m;

	sonde_stat_metric(c, n, i, elapsed_ns, &m);
	assert_true(m.valid);
	assert_float_equal(m.value, value, 1e-9);
	assert_string_equal(m.unit, unit);
	assert_int_equal(m.percent, percent);
}

static void test_metrics(void **state)
{
	struct sonde_stat_count c[N];
	struct sonde_stat_metric m;

	(void)state;
	fill(c, N);
	check(c, N, CLOCK, 1e9, 2.0, "CPUs utilized", false);
	check(c, N, CYCLES, 1e9, 1.5, "GHz", false);
	check(c, N, INSNS, 1e9, 2.0, "insn per cycle", false);
	/* Rates per second of task time (2 s), not of the elapsed 1 s. */
	check(c, N, BRANCHES, 1e9, 500.0, "M/sec", false);
	check(c, N, BMISS, 1e9, 1.0, "of all branches", true);
	/* No cache-references counted: a rate instead of a ratio. */
	check(c, N, CMISS, 1e9, 5.0, "M/sec", false);
	check(c, N, L1LOADS, 1e9, 4.0, "M/sec", false);
	check(c, N, L1MISS, 1e9, 25.0, "of all L1-dcache accesses", true);
	check(c, N, CS, 1e9, 150.0, "/sec", false);
	check(c, N, FAULTS, 1e9, 2.0, "K/sec", false);
	sonde_stat_metric(c, N, NEVER, 1e9, &m);
	assert_false(m.valid);
	assert_string_equal(m.unit, "");
}

static void test_metrics_without_bases(void **state)
{
	static const struct sonde_event cpu_clock = SW(PERF_COUNT_SW_CPU_CLOCK);
	struct sonde_stat_count c[N];

	(void)state;
	fill(c, N);
	/* Without a clock, cycles are a rate over the elapsed time. */
	c[CLOCK].counted = false;
	check(c, N, CYCLES, 1e9, 3.0, "G/sec", false);
	check(c, N, CS, 1e9, 300.0, "/sec", false);
	/* Without cycles, instructions too. */
	c[CYCLES].counted = false;
	check(c, N, INSNS, 2e9, 3.0, "G/sec", false);
	/* A base that counted nothing gives 0, not a division by zero. */
	fill(c, N);
	c[CYCLES].value = 0;
	check(c, N, INSNS, 1e9, 0.0, "insn per cycle", false);
	c[BRANCHES].value = 0;
	check(c, N, BMISS, 1e9, 0.0, "of all branches", true);
	check(c, N, CLOCK, 0, 0.0, "CPUs utilized", false);
	/* cpu-clock is a clock too (system wide). */
	c[CYCLES].value = 3e9;
	c[CLOCK].ev = &cpu_clock;
	assert_true(sonde_stat_is_clock(&cpu_clock));
	assert_false(sonde_stat_is_clock(&events[CS]));
	check(c, N, CLOCK, 4e9, 0.5, "CPUs utilized", false);
	check(c, N, CYCLES, 1e9, 1.5, "GHz", false);
}

static void test_mean_over_runs(void **state)
{
	struct sonde_stat_count c = {.ev = &events[CS]};

	(void)state;
	assert_float_equal(sonde_stat_noise_pct(&c), 0, 0);
	sonde_stat_count_add(&c, 1, 10, 10);
	assert_float_equal(sonde_stat_noise_pct(&c), 0, 0); /* one run: no variation */
	sonde_stat_count_add(&c, 2, 10, 10);
	sonde_stat_count_add(&c, 3, 10, 10);
	sonde_stat_count_add(&c, 4, 20, 5);
	assert_true(c.counted);
	assert_int_equal(c.nruns, 4);
	assert_float_equal(c.value, 2.5, 1e-12);
	assert_float_equal(c.m2, 5.0, 1e-12);
	/* sd of the mean: sqrt(5 / 3) / sqrt(4), as a % of 2.5 */
	assert_float_equal(sonde_stat_noise_pct(&c), 100.0 * sqrt(5.0 / 3) / 2 / 2.5, 1e-9);
	assert_int_equal(c.enabled, 20); /* the last reading's */
	assert_int_equal(c.running, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_metrics),
	    cmocka_unit_test(test_metrics_without_bases),
	    cmocka_unit_test(test_mean_over_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
