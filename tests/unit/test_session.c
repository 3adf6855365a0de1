// SPDX-License-Identifier: MIT
/*
 * The session pass (src/profile/session.c) and the tool table
 * (include/sonde/tool.h) over a capture written with pd_gen.h.
 *
 * The capture, in file order: the kernel's MMAP2 (t 5), COMM "work" of
 * pid 100 (t 10), MMAP2 of a library for 100 (t 12), FORK of thread 101
 * in 100 (t 20), samples of 100 on CPU 0 (t 100) and of 101 on CPU 1
 * (t 200), a FINISHED_ROUND, a LOST of 7 (t 250), a sample of 100 on
 * CPU 1 (t 300), the EXIT of 101 (t 350), a second FINISHED_ROUND.  Every
 * expected sequence below follows from that list and perf's round rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/session.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pd_gen.h"

#define KBASE 0xffffffff81000000ull
#define LIB 0x500000ull

static char path[] = "/tmp/sonde-session-XXXXXX";

static void put(struct sonde_pd_writer *w, const struct pdg_buf *b)
{
	assert_int_equal(pdg_write(w, b), 0);
}

static void sample(struct sonde_pd_writer *w, uint32_t pid, uint32_t tid, uint64_t t, uint32_t cpu)
{
	uint64_t chain[] = {PERF_CONTEXT_USER, LIB + 0x40};
	struct pdg_buf b;

	pdg_sample(&b, PERF_RECORD_MISC_USER, pid, tid, t, cpu, LIB + 0x40, 1000, chain, 2);
	put(w, &b);
}

static int write_capture(void)
{
	struct sonde_pd_writer *w = pdg_writer_open(path, PDG_FILE);
	struct pdg_buf b;

	if (!w)
		return -1;
	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_OSRELEASE, "0.0.0-sonde-unit");
	pdg_mmap2(&b, UINT32_MAX, KBASE, 0x1000000, KBASE, 0, "[kernel.kallsyms]_text", 5);
	put(w, &b);
	pdg_comm(&b, 100, 100, "work", true, 10);
	put(w, &b);
	pdg_mmap2(&b, 100, LIB, 0x1000, 0, 77, "/nonexistent/lib.so", 12);
	put(w, &b);
	pdg_task(&b, PERF_RECORD_FORK, 100, 100, 101, 100, 20);
	put(w, &b);
	sample(w, 100, 100, 100, 0);
	sample(w, 100, 101, 200, 1);
	pdg_round(&b);
	put(w, &b);
	pdg_hdr(&b, PERF_RECORD_LOST, 0);
	pdg_put64(&b, PDG_SAMPLE_ID);
	pdg_put64(&b, 7);
	pdg_trailer(&b, 100, 100, 250);
	pdg_end(&b);
	put(w, &b);
	sample(w, 100, 100, 300, 1);
	pdg_task(&b, PERF_RECORD_EXIT, 100, 100, 101, 100, 350);
	put(w, &b);
	pdg_round(&b);
	put(w, &b);
	return sonde_pd_writer_close(w, NULL);
}

/* A tool that writes down what it is handed, in order. */
struct log {
	char text[512];
	int fail_at; /* the sample that returns -EIO (1-based), 0: none */
	int samples;
};

static void note(struct log *l, const char *fmt, ...)
{
	size_t n = strlen(l->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->text + n, sizeof(l->text) - n, fmt, ap);
	va_end(ap);
}

static int on_begin(void *ctx, struct sonde_session *ses)
{
	note(ctx, "begin(%zu)", ses->nevents);
	return 0;
}

static int on_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	struct log *l = ctx;

	(void)ses;
	note(l, " S%u/%u@%llu:%s", ts->s->tid, ts->s->cpu, (unsigned long long)ts->s->time,
	     sonde_machine_str(ses->machine, ts->thread->comm));
	return ++l->samples == l->fail_at ? -EIO : 0;
}

static int on_mmap(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		   const struct sonde_pd_event *ev)
{
	(void)ses;
	(void)rec;
	note(ctx, " M%d", (int)ev->mmap.pid);
	return 0;
}

static int on_comm(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		   const struct sonde_pd_event *ev)
{
	(void)ses;
	(void)rec;
	note(ctx, " C%u:%s", ev->comm.tid, ev->comm.comm);
	return 0;
}

static int on_task(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		   const struct sonde_pd_event *ev)
{
	(void)ses;
	note(ctx, " %c%u", rec->type == PERF_RECORD_FORK ? 'F' : 'E', ev->fork.tid);
	return 0;
}

static int on_lost(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		   const struct sonde_pd_event *ev)
{
	(void)ses;
	(void)rec;
	note(ctx, " L%llu", (unsigned long long)ev->lost.lost);
	return 0;
}

static int on_round(void *ctx, struct sonde_session *ses)
{
	(void)ses;
	note(ctx, " R");
	return 0;
}

static int on_end(void *ctx, struct sonde_session *ses)
{
	(void)ses;
	note(ctx, " end");
	return 0;
}

static const struct sonde_tool log_tool = {
    .name = "log",
    .begin = on_begin,
    .sample = on_sample,
    .mmap = on_mmap,
    .comm = on_comm,
    .fork = on_task,
    .exit = on_task,
    .lost = on_lost,
    .finished_round = on_round,
    .end = on_end,
};

/* Runs the pass with two logging tools; returns its result. */
static int run(struct sonde_session_opts *o, struct log *a, struct log *b,
	       struct sonde_session **ses)
{
	struct sonde_tool_slot slots[] = {{&log_tool, a}, {&log_tool, b}};
	struct sonde_pd_reader *r;
	struct sonde_errmsg em;
	int ret;

	o->sym.no_proc_kallsyms = true;
	o->no_unwind = true;
	assert_int_equal(sonde_pd_reader_open(&r, path, &em), 0);
	*ses = NULL;
	ret = sonde_session_run(ses, r, o, slots, 2, &em);
	sonde_pd_reader_close(r);
	return ret;
}

static void test_two_tools_one_pass(void **state)
{
	struct sonde_session_opts o = {0};
	struct log a = {.fail_at = 0}, b = {.fail_at = 0};
	struct sonde_session *ses;

	(void)state;
	assert_int_equal(run(&o, &a, &b, &ses), 0);
	/* The kernel's MMAP2 has pid -1. */
	/* perf's round rule: the first round releases nothing (nothing was
	 * older than a round before it), the second what is no later than
	 * the newest time before the first (200); the end the rest. */
	assert_string_equal(a.text, "begin(1) R M-1 C100:work M100 F101 S100/0@100:work "
				    "S101/1@200:work R L7 S100/1@300:work E101 end");
	assert_string_equal(b.text, a.text);
	assert_int_equal(ses->lost, 7);
	assert_int_equal(ses->lost_chunks, 1);
	assert_int_equal(ses->filtered_out, 0);
	assert_int_equal(ses->walk.samples, 3);
	sonde_session_free(ses);
}

static void test_filters_before_tools(void **state)
{
	const uint32_t tids[] = {101}, pids[] = {100};
	const char *const comms[] = {"work"}, *const nocomm[] = {"other"};
	const char *const events[] = {"cpu-clock"}, *const noevent[] = {"cycles"};
	int one[] = {1};
	struct sonde_cpulist cpu1 = {one, 1};
	struct {
		struct sonde_sample_filter f;
		const char *samples;
		uint64_t out;
	} cases[] = {
	    {{.tids = tids, .ntids = 1}, " S101/1@200:work", 2},
	    {{.pids = pids, .npids = 1, .comms = comms, .ncomms = 1},
	     " S100/0@100:work S101/1@200:work S100/1@300:work",
	     0},
	    {{.comms = nocomm, .ncomms = 1}, "", 3},
	    {{.cpus = &cpu1}, " S101/1@200:work S100/1@300:work", 1},
	    {{.has_time = true, .time_start = 200, .time_end = 300},
	     " S101/1@200:work S100/1@300:work",
	     1},
	    {{.has_time = true, .time_start = 101, .time_end = 299}, " S101/1@200:work", 2},
	    {{.events = events, .nevents = 1},
	     " S100/0@100:work S101/1@200:work S100/1@300:work",
	     0},
	    {{.events = noevent, .nevents = 1}, "", 3},
	};

	struct sonde_session_opts none = {0};
	struct log all = {.fail_at = 0}, all2 = {.fail_at = 0};
	struct sonde_session *ses0;

	(void)state;
	assert_int_equal(run(&none, &all, &all2, &ses0), 0);
	sonde_session_free(ses0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sonde_session_opts o = {.filter = cases[i].f};
		struct log a = {.fail_at = 0}, b = {.fail_at = 0};
		struct sonde_session *ses;
		char want[512];

		assert_int_equal(run(&o, &a, &b, &ses), 0);
		/* Side-band records reach every tool; only the samples are
		 * filtered: the unfiltered log without the samples left out. */
		want[0] = '\0';
		for (const char *p = all.text; *p;) {
			size_t len = strcspn(p + 1, " ") + 1;

			if (p[1] != 'S' ||
			    memmem(cases[i].samples, strlen(cases[i].samples), p, len))
				strncat(want, p, len);
			p += len;
		}
		assert_string_equal(a.text, want);
		assert_int_equal(ses->filtered_out, cases[i].out);
		assert_int_equal((uint64_t)a.samples, 3 - cases[i].out);
		assert_string_equal(b.text, a.text);
		sonde_session_free(ses);
	}
}

static void test_tool_error_stops_the_pass(void **state)
{
	struct sonde_session_opts o = {0};
	struct log a = {.fail_at = 2}, b = {.fail_at = 0};
	struct sonde_session *ses;

	(void)state;
	assert_int_equal(run(&o, &a, &b, &ses), -EIO);
	assert_null(ses);
	/* The first tool failed on the second sample: the second tool never saw it. */
	assert_string_equal(a.text, "begin(1) R M-1 C100:work M100 F101 S100/0@100:work "
				    "S101/1@200:work");
	assert_string_equal(b.text, "begin(1) R M-1 C100:work M100 F101 S100/0@100:work");
}

static int setup(void **state)
{
	(void)state;
	return pdg_capture_file(path, write_capture);
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_tools_one_pass),
	    cmocka_unit_test(test_filters_before_tools),
	    cmocka_unit_test(test_tool_error_stops_the_pass),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
