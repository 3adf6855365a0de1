// SPDX-License-Identifier: MIT
/*
 * The time-ordered walk (src/format/pd_ordered.c) over captures written
 * with pd_gen.h: perf's round rule (at each FINISHED_ROUND, deliver what
 * is no later than the newest time seen before the previous round),
 * records older than what was delivered, records without a time, a file
 * without rounds, and the arena compaction for records the reader cannot
 * keep (zstd and pipe mode).  Every sample's ip encodes its time, so a
 * record whose bytes were moved wrongly shows up as a mismatch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/pd_ordered.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pd_gen.h"

#define MARK 0xffffu /* the "time" logged for a marker record */
#define IP_OF(t) (0x400000ull + (t)*16)

struct log {
	uint64_t v[16384];
	uint32_t cpu[16384]; /* of samples */
	size_t n;
	bool bad_ip;
};

static int on_record(void *ctx, const struct sonde_pd_record *rec, const struct sonde_pd_event *ev)
{
	struct log *l = ctx;

	if (l->n == sizeof(l->v) / sizeof(l->v[0]))
		return -ENOSPC;
	if (rec->type == SONDE_PD_RECORD_FINISHED_INIT) {
		l->v[l->n++] = MARK;
	} else if (rec->type == PERF_RECORD_SAMPLE) {
		l->cpu[l->n] = ev->sample.cpu;
		l->v[l->n++] = ev->sample.time;
		l->bad_ip |= ev->sample.ip != IP_OF(ev->sample.time);
	} else if (rec->type == PERF_RECORD_COMM) {
		l->v[l->n++] = ev->sample.time; /* the trailer's */
	}
	return 0;
}

static char dir[] = "/tmp/sonde-ordered-XXXXXX";

static const char *path_of(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void sample(struct sonde_pd_writer *w, uint64_t t, uint32_t cpu)
{
	struct pdg_buf b;

	pdg_sample(&b, PERF_RECORD_MISC_USER, 7, 7, t, cpu, IP_OF(t), 1, NULL, 0);
	assert_int_equal(pdg_write(w, &b), 0);
}

/* FINISHED_ROUND, then a record perf made itself (delivered where it is). */
static void round_mark(struct sonde_pd_writer *w)
{
	struct pdg_buf b;

	pdg_round(&b);
	assert_int_equal(pdg_write(w, &b), 0);
	pdg_hdr(&b, SONDE_PD_RECORD_FINISHED_INIT, 0);
	pdg_end(&b);
	assert_int_equal(pdg_write(w, &b), 0);
}

static void walk(const char *name, struct log *l, struct sonde_pd_walk_stats *st)
{
	struct sonde_pd_reader *r;
	struct sonde_errmsg em;

	memset(l, 0, sizeof(*l));
	if (sonde_pd_reader_open(&r, path_of(name), &em))
		fail_msg("%s", em.text);
	assert_int_equal(sonde_pd_walk_ordered(r, on_record, l, NULL, NULL, st), 0);
	sonde_pd_reader_close(r);
	assert_false(l->bad_ip);
}

static void close_writer(struct sonde_pd_writer *w)
{
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);
}

/*
 * Two CPUs, the second one's records a round late:
 *   round 1: 10 30 | round 2: 20 40 | round 3: 5
 * Round 1's end delivers nothing (nothing is older than the round before
 * it); round 2's delivers up to 30, the newest time of round 1, sorted:
 * 10 20 30; round 3's up to 40: 5 (older than 30: out of order) and 40.
 */
static void check_rounds(enum pdg_mode mode)
{
	static const uint64_t want[] = {MARK, 10, 20, 30, MARK, 5, 40, MARK};
	struct sonde_pd_walk_stats st;
	struct sonde_pd_writer *w = pdg_writer_open(path_of("rounds.data"), mode);
	static struct log l;

	assert_non_null(w);
	sample(w, 10, 0);
	sample(w, 30, 0);
	round_mark(w);
	sample(w, 20, 1);
	sample(w, 40, 0);
	round_mark(w);
	sample(w, 5, 1);
	round_mark(w);
	close_writer(w);

	walk("rounds.data", &l, &st);
	assert_int_equal(l.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i] != want[i])
			fail_msg("mode %d: item %zu is %llu, want %llu", mode, i,
				 (unsigned long long)l.v[i], (unsigned long long)want[i]);
	assert_int_equal(st.samples, 5);
	assert_int_equal(st.out_of_order, 1);
	assert_int_equal(st.undecodable, 0);
	/* 5 samples, 3 rounds, 3 markers (a pipe adds its header records) */
	if (mode == PDG_PIPE)
		assert_true(st.records > 11);
	else
		assert_int_equal(st.records, 11);
}

static void test_rounds_file(void **state)
{
	(void)state;
	check_rounds(PDG_FILE);
}

static void test_rounds_zstd(void **state)
{
	(void)state;
	if (!sonde_pd_writer_can_compress())
		skip();
	check_rounds(PDG_ZSTD);
}

static void test_rounds_pipe(void **state)
{
	(void)state;
	check_rounds(PDG_PIPE);
}

/* No round at all: sorted whole at the end; a record without a time
 * (time 0, as synthesized state has) goes ahead of every later time. */
static void test_no_rounds(void **state)
{
	struct sonde_pd_walk_stats st;
	struct sonde_pd_writer *w = pdg_writer_open(path_of("norounds.data"), PDG_FILE);
	static struct log l;
	struct pdg_buf b;

	(void)state;
	assert_non_null(w);
	sample(w, 50, 0);
	pdg_comm(&b, 7, 7, "late", false, 0);
	assert_int_equal(pdg_write(w, &b), 0);
	sample(w, 30, 1);
	sample(w, 40, 0);
	close_writer(w);
	walk("norounds.data", &l, &st);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.v[0], 0);
	assert_int_equal(l.v[1], 30);
	assert_int_equal(l.v[2], 40);
	assert_int_equal(l.v[3], 50);
	assert_int_equal(st.out_of_order, 0);
}

/*
 * Equal times keep the file's order, within a round and across rounds:
 *   round 1: 10/cpu0 20/cpu0 | round 2: 10/cpu1 20/cpu1 20/cpu2 | 20/cpu3
 * Round 2's end delivers up to 20: 10/0 10/1 20/0 20/1 20/2; the end of
 * the file 20/3 (no later than what was delivered: not out of order).
 */
static void test_equal_times(void **state)
{
	static const uint64_t want[] = {MARK, 10, 10, 20, 20, 20, MARK, 20};
	static const uint32_t want_cpu[] = {0, 0, 1, 0, 1, 2, 0, 3};
	struct sonde_pd_walk_stats st;
	struct sonde_pd_writer *w = pdg_writer_open(path_of("equal.data"), PDG_FILE);
	static struct log l;

	(void)state;
	assert_non_null(w);
	sample(w, 10, 0);
	sample(w, 20, 0);
	round_mark(w);
	sample(w, 10, 1);
	sample(w, 20, 1);
	sample(w, 20, 2);
	round_mark(w);
	sample(w, 20, 3);
	close_writer(w);

	walk("equal.data", &l, &st);
	assert_int_equal(l.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i] != want[i] || (want[i] != MARK && l.cpu[i] != want_cpu[i]))
			fail_msg("item %zu is %llu/cpu%u, want %llu/cpu%u", i,
				 (unsigned long long)l.v[i], l.cpu[i], (unsigned long long)want[i],
				 want_cpu[i]);
	assert_int_equal(st.out_of_order, 0);
}

/*
 * Many rounds of many records (more than the arena's first 64 KiB), the
 * second CPU's half of each round a round late, so every flush leaves
 * records behind and the arena is compacted with records left in it.
 * Everything comes out in time order, every record intact.
 */
static void check_many(enum pdg_mode mode)
{
	enum { ROUNDS = 6, PER = 1200 };
	struct sonde_pd_walk_stats st;
	struct sonde_pd_writer *w = pdg_writer_open(path_of("many.data"), mode);
	static struct log l;
	size_t nsamples = 0;

	assert_non_null(w);
	for (uint64_t r = 0; r < ROUNDS; r++) {
		for (uint64_t i = 0; i < PER; i++) {
			/* even times: this round's CPU 0; odd: CPU 1's of the round before */
			sample(w, 2 * (r * PER + i) + 2, 0);
			if (r) {
				sample(w, 2 * ((r - 1) * PER + i) + 3, 1);
				nsamples++;
			}
			nsamples++;
		}
		round_mark(w);
	}
	for (uint64_t i = 0; i < PER; i++, nsamples++)
		sample(w, 2 * ((ROUNDS - 1) * PER + i) + 3, 1);
	close_writer(w);

	walk("many.data", &l, &st);
	assert_int_equal(st.samples, nsamples);
	assert_int_equal(st.out_of_order, 0);
	{
		uint64_t prev = 0;
		size_t n = 0;

		for (size_t i = 0; i < l.n; i++) {
			if (l.v[i] == MARK)
				continue;
			if (l.v[i] != prev + 1 && !(prev == 0 && l.v[i] == 2))
				fail_msg("mode %d: time %llu after %llu", mode,
					 (unsigned long long)l.v[i], (unsigned long long)prev);
			prev = l.v[i];
			n++;
		}
		assert_int_equal(n, nsamples);
	}
}

static void test_many_file(void **state)
{
	(void)state;
	check_many(PDG_FILE);
}

static void test_many_zstd(void **state)
{
	(void)state;
	if (!sonde_pd_writer_can_compress())
		skip();
	check_many(PDG_ZSTD);
}

static void test_many_pipe(void **state)
{
	(void)state;
	check_many(PDG_PIPE);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	static const char *const names[] = {"rounds.data", "norounds.data", "many.data",
					    "equal.data"};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(path_of(names[i]));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rounds_file), cmocka_unit_test(test_rounds_zstd),
	    cmocka_unit_test(test_rounds_pipe), cmocka_unit_test(test_no_rounds),
	    cmocka_unit_test(test_many_file),	cmocka_unit_test(test_many_zstd),
	    cmocka_unit_test(test_many_pipe),	cmocka_unit_test(test_equal_times),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
