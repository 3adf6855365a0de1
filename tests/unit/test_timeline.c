// SPDX-License-Identifier: MIT
/*
 * The timeline (src/profile/timeline.c): one trie of whole stacks and
 * time bins keyed by (bin, leaf, thread, cpu,
 * event).  Frames are made by hand with fake symbols: the timeline only
 * compares their pointers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>

#include <cmocka.h>

#include <sonde/timeline.h>

static const struct sonde_symbol sym_main = {.name = "main"};
static const struct sonde_symbol sym_hot = {.name = "hot"};
static const struct sonde_symbol sym_warm = {.name = "warm"};

/* Leaf first, as the report pass hands frames over. */
static int add(struct sonde_timeline *tl, uint64_t time, uint32_t tid, uint32_t ev,
	       const struct sonde_symbol *leaf, uint64_t addr)
{
	struct sonde_frame f[2] = {{.sym = leaf, .addr = addr}, {.sym = &sym_main, .addr = 0x10}};
	struct sonde_tl_sample s = {
	    .time = time, .cpu = tid % 2, .pid = 1, .tid = tid, .event = ev, .period = 10};

	return sonde_timeline_add(tl, &s, f, 2);
}

static const char *node_name(struct sonde_timeline *tl, size_t i)
{
	uint32_t parent, func;

	sonde_timeline_node(tl, i, &parent, &func);
	return sonde_timeline_func(tl, func)->sym->name;
}

static void test_trie(void **state)
{
	struct sonde_timeline *tl;
	uint32_t parent, func;
	uint64_t first, last;

	(void)state;
	assert_int_equal(sonde_timeline_new(&tl, 2), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(add(tl, 1000 + i * 100, 7, 0, &sym_hot, 0x20 + (i & 1)), 0);
	assert_int_equal(add(tl, 1600, 8, 1, &sym_warm, 0x30), 0);
	assert_int_equal(sonde_timeline_nr_samples(tl), 7);
	sonde_timeline_span(tl, &first, &last);
	assert_int_equal(first, 1000);
	assert_int_equal(last, 1600);
	/* root, main, main>hot, main>warm: main shared, parents before children. */
	assert_int_equal(sonde_timeline_nr_nodes(tl), 4);
	assert_int_equal(sonde_timeline_nr_funcs(tl), 3);
	sonde_timeline_node(tl, 0, &parent, &func);
	assert_int_equal(parent, UINT32_MAX);
	sonde_timeline_node(tl, 1, &parent, &func);
	assert_int_equal(parent, 0);
	assert_string_equal(node_name(tl, 1), "main");
	for (size_t i = 2; i < 4; i++) {
		sonde_timeline_node(tl, i, &parent, &func);
		assert_int_equal(parent, 1);
	}
	assert_int_equal(sonde_timeline_nr_threads(tl), 2);
	assert_int_equal(sonde_timeline_thread(tl, 0)->samples, 6);
	sonde_timeline_free(tl);
}

static void test_bins(void **state)
{
	struct sonde_timeline *tl;
	struct sonde_tl_cell *c;
	size_t n;
	uint64_t samples = 0;

	(void)state;
	assert_int_equal(sonde_timeline_new(&tl, 2), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(add(tl, 1000 + i * 100, 7, 0, &sym_hot, 0x20), 0);
	assert_int_equal(add(tl, 1600, 8, 1, &sym_warm, 0x30), 0);
	/* Two bins over [1000, 1601): 1000..1300 in bin 0, 1400..1600 in bin 1. */
	assert_int_equal(sonde_timeline_bins(tl, 2, &c, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].bin, 0);
	assert_int_equal(c[0].samples, 4);
	assert_int_equal(c[0].period, 40);
	assert_int_equal(c[1].bin, 1);
	assert_int_equal(c[1].samples, 2);
	assert_int_equal(c[2].bin, 1);
	assert_int_equal(c[2].event, 1);
	assert_int_equal(c[2].thread, 1);
	assert_int_equal(c[2].cpu, 0);
	for (size_t i = 0; i < n; i++)
		samples += c[i].samples;
	assert_int_equal(samples, 7);
	free(c);
	/* One bin: one cell per (leaf, thread, cpu, event). */
	assert_int_equal(sonde_timeline_bins(tl, 1, &c, &n), 0);
	assert_int_equal(n, 2);
	free(c);
	sonde_timeline_free(tl);
}

static void test_many_stacks_grow_tables(void **state)
{
	struct sonde_timeline *tl;
	struct sonde_frame f[3];
	struct sonde_tl_sample s = {.time = 1, .event = 0, .period = 1};

	(void)state;
	assert_int_equal(sonde_timeline_new(&tl, 1), 0);
	/* Unresolved frames are told apart by address: 5000 distinct leaves. */
	for (uint64_t i = 0; i < 5000; i++) {
		f[0] = (struct sonde_frame){.addr = 0x1000 + i};
		f[1] = (struct sonde_frame){.sym = &sym_hot};
		f[2] = (struct sonde_frame){.sym = &sym_main};
		s.time = i;
		s.tid = (uint32_t)(i % 3);
		assert_int_equal(sonde_timeline_add(tl, &s, f, 3), 0);
	}
	assert_int_equal(sonde_timeline_nr_nodes(tl), 1 + 2 + 5000);
	assert_int_equal(sonde_timeline_nr_funcs(tl), 2 + 5000);
	assert_int_equal(sonde_timeline_nr_threads(tl), 3);
	assert_int_equal(sonde_timeline_add(tl, &s, f, 0), -EINVAL);
	sonde_timeline_free(tl);
}

/* A capture with no samples: no cells, and nothing handed to qsort (UBSan checks). */
static void test_no_samples(void **state)
{
	struct sonde_timeline *tl;
	struct sonde_tl_cell *c = NULL;
	size_t n = 1;

	(void)state;
	assert_int_equal(sonde_timeline_new(&tl, 1), 0);
	assert_int_equal(sonde_timeline_nr_samples(tl), 0);
	assert_int_equal(sonde_timeline_bins(tl, 10, &c, &n), 0);
	assert_int_equal(n, 0);
	free(c);
	sonde_timeline_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trie),
	    cmocka_unit_test(test_bins),
	    cmocka_unit_test(test_many_stacks_grow_tables),
	    cmocka_unit_test(test_no_samples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
