// SPDX-License-Identifier: MIT
/*
 * Golden outputs of src/output: the views the CLI prints (report --stdio
 * with several sort keys, --children, -g caller/callee; report --json; the
 * JSON block of --html; script) over one small capture written with
 * pd_gen.h, compared byte for byte with the files in tests/unit/golden/.
 * SONDE_UPDATE_GOLDEN=1 rewrites those files instead; a rewritten file is
 * reviewed by hand against the numbers below before it is committed.
 *
 * The capture (times in ns from 1 s; both events cpu-clock and
 * page-faults share sample_type IDENTIFIER|IP|TID|TIME|CPU|PERIOD|CALLCHAIN):
 *
 *   kernel symbols from the capture's kallsyms: f +0x100, g +0x200,
 *   caller +0x300, entry +0x400 (release "0.0.0-sonde-unit": no vmlinux)
 *   pid 100 "work", thread 101 renamed "worker"; libw.so at 0x7f0000000000
 *   pid 200 "other"; lib.so at 0x500000 (both objects missing: unresolved
 *   addresses, shown as file offsets)
 *   a LOST record: 3 events of cpu-clock
 *
 *   cpu-clock (5 samples, period 10000):
 *     1 work/100  [k] f+1  <- caller <- entry | libw 0x100 <- libw 0x200   1000
 *     2 work/100  [k] g+2  <- caller <- entry | libw 0x100 <- libw 0x200   1000
 *     3 worker/101 [k] f+3 <- entry | libw 0x200                           1000
 *     4 work/100  [.] libw 0x100 <- libw 0x200                             2000
 *     5 other/200 [.] lib.so 0x40                                          5000
 *   page-faults (2 samples, period 4):
 *     6 work/100  [.] libw 0x100 <- libw 0x200                                1
 *     7 other/200 [.] lib.so 0x40                                             3
 *
 * So, self by symbol, cpu-clock: lib.so 0x40 50%, f 20% (10% work, 10%
 * worker), libw 0x100 20%, g 10%; page-faults: lib.so 0x40 75%, libw 0x100
 * 25%.  Inclusive (children): entry 30% (samples 1-3), caller 20%, libw
 * 0x200 50% (samples 1-4), libw 0x100 40% (1, 2, 4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/annotate.h>
#include <sonde/report.h>
#include <sonde/report_print.h>
#include <sonde/script_print.h>
#include <sonde/session.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden.h"
#include "pd_gen.h"
#include "report_render.h"

#define KBASE 0xffffffff81000000ull
#define F (KBASE + 0x100)
#define G (KBASE + 0x200)
#define CALLER (KBASE + 0x300)
#define ENTRY (KBASE + 0x400)
#define LIBW 0x7f0000000000ull
#define LIB 0x500000ull
#define T0 1000000000ull
#define PF_ID 2002ull

static const char kallsyms[] = "ffffffff81000000 T _text\n"
			       "ffffffff81000100 T f\n"
			       "ffffffff81000200 T g\n"
			       "ffffffff81000300 t caller\n"
			       "ffffffff81000400 T entry\n"
			       "ffffffff81000500 T _etext\n";

static char file_path[] = "/tmp/sonde-golden-XXXXXX";
static char zstd_path[] = "/tmp/sonde-golden-zstd-XXXXXX";
static char pipe_path[] = "/tmp/sonde-golden-pipe-XXXXXX";
static const char *path = file_path; /* the capture the views read */
static enum pdg_mode write_mode;

/* ---- the capture ------------------------------------------------------- */

static void put(struct sonde_pd_writer *w, const struct pdg_buf *b)
{
	assert_int_equal(pdg_write(w, b), 0);
}

/* A kernel sample of pid 100 at @ip, called from @mid (0: none), entry, then libw's @uip. */
static void kernel_sample(struct sonde_pd_writer *w, uint32_t tid, uint64_t t, uint32_t cpu,
			  uint64_t ip, uint64_t mid, uint64_t uip)
{
	uint64_t chain[8];
	size_t n = 0;
	struct pdg_buf b;

	chain[n++] = PERF_CONTEXT_KERNEL;
	chain[n++] = ip;
	if (mid)
		chain[n++] = mid;
	chain[n++] = ENTRY + 0x8;
	chain[n++] = PERF_CONTEXT_USER;
	chain[n++] = uip;
	if (uip == LIBW + 0x100)
		chain[n++] = LIBW + 0x200;
	pdg_sample(&b, PERF_RECORD_MISC_KERNEL, 100, tid, T0 + t, cpu, ip, 1000, chain, n);
	put(w, &b);
}

static void user_sample(struct sonde_pd_writer *w, uint64_t id, uint32_t pid, uint64_t t,
			uint32_t cpu, uint64_t ip, uint64_t caller, uint64_t period)
{
	uint64_t chain[] = {PERF_CONTEXT_USER, ip, caller};
	struct pdg_buf b;

	pdg_sample_of(&b, id, PERF_RECORD_MISC_USER, pid, pid, T0 + t, cpu, ip, period, chain,
		      caller ? 3 : 2);
	put(w, &b);
}

static int write_capture(void)
{
	struct sonde_pd_writer *w = pdg_writer_open(path, write_mode);
	struct perf_event_attr a;
	uint64_t id = PF_ID;
	struct pdg_buf b;

	if (!w)
		return -1;
	pdg_attr_init(&a);
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = 1;
	a.freq = 0;
	a.comm = a.mmap = a.mmap2 = a.task = 0; /* side-band on the first event only */
	if (sonde_pd_writer_add_attr(w, &a, "page-faults", &id, 1) < 0)
		return -1;
	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_OSRELEASE, "0.0.0-sonde-unit");
	sonde_pd_writer_set_sonde_feature(w, SONDE_PD_SFEAT_KALLSYMS, kallsyms,
					  sizeof(kallsyms) - 1);
	pdg_mmap2(&b, UINT32_MAX, KBASE, 0x1000000, KBASE, 0, "[kernel.kallsyms]_text", 0);
	put(w, &b);
	pdg_comm(&b, 100, 100, "work", true, T0 + 10);
	put(w, &b);
	pdg_mmap2(&b, 100, LIBW, 0x2000, 0, 66, "/nonexistent/libw.so", T0 + 11);
	put(w, &b);
	pdg_comm(&b, 200, 200, "other", true, T0 + 12);
	put(w, &b);
	pdg_mmap2(&b, 200, LIB, 0x1000, 0, 77, "/nonexistent/lib.so", T0 + 13);
	put(w, &b);
	pdg_task(&b, PERF_RECORD_FORK, 100, 100, 101, 100, T0 + 14);
	put(w, &b);
	pdg_comm(&b, 100, 101, "worker", false, T0 + 15);
	put(w, &b);
	/* CPU 1's samples come before CPU 0's older ones: the round puts them in order. */
	kernel_sample(w, 101, 300000, 1, F + 3, 0, LIBW + 0x200);
	user_sample(w, PDG_SAMPLE_ID, 200, 500000, 1, LIB + 0x40, 0, 5000);
	kernel_sample(w, 100, 100000, 0, F + 1, CALLER + 0x10, LIBW + 0x100);
	kernel_sample(w, 100, 200000, 0, G + 2, CALLER + 0x10, LIBW + 0x100);
	user_sample(w, PF_ID, 100, 250000, 0, LIBW + 0x100, LIBW + 0x200, 1);
	pdg_round(&b);
	put(w, &b);
	pdg_lost(&b, PDG_SAMPLE_ID, 3, T0 + 350000);
	put(w, &b);
	user_sample(w, PDG_SAMPLE_ID, 100, 400000, 0, LIBW + 0x100, LIBW + 0x200, 2000);
	user_sample(w, PF_ID, 200, 600000, 1, LIB + 0x40, 0, 3);
	pdg_round(&b);
	put(w, &b);
	return sonde_pd_writer_close(w, NULL);
}

/*
 * Symbol options of every pass: a pipe carries none of sonde's own
 * features (see ARCHITECTURE.md, pipe mode), so the kernel symbols that a
 * file has in its kallsyms snapshot are given to the pipe's pass directly.
 */
static void sym_opts(struct sonde_symtab_opts *so)
{
	so->no_proc_kallsyms = true;
	if (path == pipe_path) {
		so->kallsyms = kallsyms;
		so->kallsyms_len = sizeof(kallsyms) - 1;
	}
}

/* ---- report views ------------------------------------------------------- */

struct built {
	struct sonde_pd_reader *r;
	struct sonde_report *rep;
	struct sonde_report_opts o;
	struct sonde_annotate *an;
	struct sonde_tool_slot slot;
};

/* As cmd_report's run(): @graph -1 perf's default, 1 callee, 2 caller. */
static void build(struct built *b, const char *keys, bool children, int graph, bool html)
{
	struct sonde_errmsg em = {{0}};
	int n;

	memset(b, 0, sizeof(*b));
	sym_opts(&b->o.ses.sym);
	n = sonde_sort_keys_parse(keys, b->o.keys, SONDE_SORT_MAX);
	assert_true(n > 0);
	b->o.nkeys = (size_t)n;
	b->o.children = children;
	b->o.callchains = graph != 0;
	b->o.caller_order = graph == 2 || (graph < 0 && children);
	if (html) {
		struct sonde_annotate_opts ao = {0};

		b->o.timeline = true;
		b->o.callchains = false;
		assert_int_equal(sonde_annotate_new(&b->an, 2, &ao), 0);
		b->slot = (struct sonde_tool_slot){&sonde_annotate_tool, b->an};
		b->o.tools = &b->slot;
		b->o.ntools = 1;
	}
	if (sonde_pd_reader_open(&b->r, path, &em) || sonde_report_build(&b->rep, b->r, &b->o, &em))
		fail_msg("%s", em.text);
}

static void unbuild(struct built *b)
{
	sonde_annotate_free(b->an);
	sonde_report_free(b->rep);
	sonde_pd_reader_close(b->r);
}

/* A report printed as cmd_report prints it (header on, perf's limits). */
static void report_case(const char *name, report_view_fn fn, const char *keys, bool children,
			int graph, bool group)
{
	struct built b;
	struct sonde_print_opts po = {
	    .callchain_limit = 0.5, .header = true, .file = "golden.data"};
	char *out;

	build(&b, keys, children, graph, false);
	po.callchains = b.o.callchains;
	po.group = group;
	po.show_samples = group;
	out = render(fn, b.rep, &po);
	golden(name, out);
	free(out);
	unbuild(&b);
}

static void test_stdio_default(void **state)
{
	(void)state;
	report_case("report_comm_dso_sym.txt", sonde_report_print_stdio, "comm,dso,sym", false, 0,
		    false);
}

static void test_stdio_keys(void **state)
{
	(void)state;
	report_case("report_pid_sym.txt", sonde_report_print_stdio, "pid,sym", false, 0, false);
	report_case("report_dso.txt", sonde_report_print_stdio, "dso", false, 0, false);
	report_case("report_sym_group.txt", sonde_report_print_stdio, "sym", false, 0, true);
}

/* srcline without DWARF: perf's "sym+offset" (kernel), "object[offset]" (unresolved). */
static void test_stdio_srcline(void **state)
{
	(void)state;
	report_case("report_srcline.txt", sonde_report_print_stdio, "srcline", false, 0, false);
}

static void test_stdio_callee(void **state)
{
	(void)state;
	report_case("report_callee.txt", sonde_report_print_stdio, "comm,dso,sym", false, 1, false);
}

static void test_stdio_children_caller(void **state)
{
	(void)state;
	report_case("report_children_caller.txt", sonde_report_print_stdio, "comm,dso,sym", true,
		    -1, false);
	/* Ties of the inclusive period go by self (perf sorts by overhead_children, then
	 * overhead): lib.so's 0x40 (50% self) before libw's 0x200 (0% self). */
	report_case("report_sym_children.txt", sonde_report_print_stdio, "sym", true, 0, false);
}

static void test_json(void **state)
{
	(void)state;
	report_case("report.json", sonde_report_print_json, "comm,dso,sym", false, 0, false);
	report_case("report_children.json", sonde_report_print_json, "sym", true, -1, false);
}

/* The --html page's data block: the JSON between the page's head and tail. */
static void test_html_data(void **state)
{
	static const char open[] = "<script type=\"application/json\" id=\"sonde-data\">";
	struct built b;
	struct sonde_annotate_build_opts abo = {.arch = "x86_64", .no_source = true};
	struct sonde_print_opts po = {
	    .callchain_limit = 0.5, .header = true, .file = "golden.data"};
	char *out, *s, *e;

	(void)state;
	build(&b, "dso,sym", true, -1, true);
	po.annotate = b.an;
	po.annotate_build = &abo;
	out = render(sonde_report_print_html, b.rep, &po);
	s = strstr(out, open);
	assert_non_null(s);
	s += sizeof(open) - 1;
	e = strstr(s, "</script>");
	assert_non_null(e);
	*e = '\0';
	golden("report_html_data.json", s);
	free(out);
	unbuild(&b);
}

/* ---- the profile's numbers per sort key --------------------------------- */

/*
 * The profile's rows in cpu-clock order as "key self(cpu) self(pf)
 * [total(cpu) total(pf)]; ...", each count samples/period, read through
 * the profile API (not a view), and the per-event totals.
 */
static void profile_case(const char *keys, bool children, const char *want)
{
	struct built b;
	const struct sonde_profile *p;
	size_t idx[32], n;
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	assert_non_null(f);
	build(&b, keys, children, 0, false);
	p = b.rep->profile;
	assert_int_equal(sonde_profile_total(p, 0).samples, 5);
	assert_int_equal(sonde_profile_total(p, 0).period, 10000);
	assert_int_equal(sonde_profile_total(p, 1).samples, 2);
	assert_int_equal(sonde_profile_total(p, 1).period, 4);
	n = sonde_profile_nr_entries(p);
	assert_true(n <= 32);
	sonde_profile_sort(p, 0, children, idx);
	for (size_t r = 0; r < n; r++) {
		const struct sonde_entry_key *k = sonde_profile_entry_key(p, idx[r]);
		char sym[64];

		for (size_t i = 0; i < b.o.nkeys; i++) {
			const char *sp = i ? "," : "";

			switch (b.o.keys[i]) {
			case SONDE_SORT_COMM:
				fprintf(f, "%s%s", sp,
					sonde_machine_str(b.rep->ses->machine, k->comm));
				break;
			case SONDE_SORT_PID:
				fprintf(f, "%s%u", sp, k->pid);
				break;
			case SONDE_SORT_DSO:
				fprintf(f, "%s%s", sp, sonde_report_dso_name(k->dso));
				break;
			default:
				fprintf(f, "%s%s", sp,
					sonde_report_sym_name(k, NULL, sym, sizeof(sym)));
				break;
			}
		}
		for (size_t e = 0; e < 2; e++) {
			struct sonde_counts c = sonde_profile_entry_self(p, idx[r], e);

			fprintf(f, " %" PRIu64 "/%" PRIu64, c.samples, c.period);
		}
		for (size_t e = 0; children && e < 2; e++) {
			struct sonde_counts c = sonde_profile_entry_total(p, idx[r], e);

			fprintf(f, " %" PRIu64 "/%" PRIu64, c.samples, c.period);
		}
		fputs("; ", f);
	}
	fclose(f);
	assert_string_equal(got, want);
	free(got);
	unbuild(&b);
}

/* Every number follows from the table in the file's comment. */
static void test_profile_keys(void **state)
{
	(void)state;
	profile_case("comm", false, "other 1/5000 1/3; work 3/4000 1/1; worker 1/1000 0/0; ");
	profile_case("pid", false, "200 1/5000 1/3; 100 3/4000 1/1; 101 1/1000 0/0; ");
	profile_case("dso", false,
		     "lib.so 1/5000 1/3; [kernel.kallsyms] 3/3000 0/0; libw.so 1/2000 1/1; ");
	/* f and libw's 0x100 tie at 2000: resolved symbols first, as perf's sort */
	profile_case("sym", false,
		     "0x0000000000000040 1/5000 1/3; f 2/2000 0/0; 0x0000000000000100 1/2000 1/1; "
		     "g 1/1000 0/0; ");
	/* a tie at 2000 inside work: object names ascending, '[' before 'l' */
	profile_case("comm,dso", false,
		     "other,lib.so 1/5000 1/3; work,[kernel.kallsyms] 2/2000 0/0; "
		     "work,libw.so 1/2000 1/1; worker,[kernel.kallsyms] 1/1000 0/0; ");
	/* inclusive: every frame of a chain once per sample */
	profile_case("dso", true,
		     "lib.so 1/5000 1/3 1/5000 1/3; libw.so 1/2000 1/1 4/5000 1/1; "
		     "[kernel.kallsyms] 3/3000 0/0 3/3000 0/0; ");
	profile_case("comm", true,
		     "other 1/5000 1/3 1/5000 1/3; work 3/4000 1/1 3/4000 1/1; "
		     "worker 1/1000 0/0 1/1000 0/0; ");
}

/* ---- script ------------------------------------------------------------- */

struct script_run {
	struct sonde_script_print pr;
	bool json;
};

static int script_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *rs)
{
	struct script_run *sr = ctx;

	return sr->json ? sonde_script_print_json(&sr->pr, ses, rs)
			: sonde_script_print_text(&sr->pr, ses, rs);
}

static const struct sonde_tool script_tool = {.name = "golden-script", .sample = script_sample};

/* As cmd_script's run(): the event column as wide as the longest name. */
static void script_case(const char *name, bool json)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_session *ses = NULL;
	struct sonde_session_opts so = {0};
	struct sonde_errmsg em = {{0}};
	struct script_run sr = {.json = json};
	struct sonde_tool_slot slot = {&script_tool, &sr};
	char *buf = NULL;
	size_t len = 0;

	if (sonde_pd_reader_open(&r, path, &em))
		fail_msg("%s", em.text);
	for (size_t i = 0; i < sonde_pd_reader_nr_attrs(r); i++) {
		int n = (int)strlen(sonde_pd_reader_attr(r, i)->name);

		if (n > sr.pr.name_width)
			sr.pr.name_width = n;
	}
	sr.pr.out = open_memstream(&buf, &len);
	assert_non_null(sr.pr.out);
	sym_opts(&so.sym);
	so.callchains = true;
	if (sonde_session_run(&ses, r, &so, &slot, 1, &em))
		fail_msg("%s", em.text);
	fclose(sr.pr.out);
	golden(name, buf);
	free(buf);
	sonde_session_free(ses);
	sonde_pd_reader_close(r);
}

static void test_script(void **state)
{
	(void)state;
	script_case("script.txt", false);
	script_case("script.jsonl", true);
}

/*
 * The same capture compressed (-z) and as a pipe: the reader hands the
 * same records, so every view prints the same bytes.
 */
static void test_zstd_and_pipe(void **state)
{
	(void)state;
	path = pipe_path;
	test_stdio_children_caller(state);
	test_json(state);
	script_case("script.txt", false);
	if (sonde_pd_writer_can_compress()) {
		path = zstd_path;
		test_stdio_children_caller(state);
		test_json(state);
		script_case("script.txt", false);
	}
	path = file_path;
}

static int setup(void **state)
{
	(void)state;
	write_mode = PDG_ZSTD;
	path = zstd_path;
	if (sonde_pd_writer_can_compress() && pdg_capture_file(zstd_path, write_capture))
		return -1;
	write_mode = PDG_PIPE;
	path = pipe_path;
	if (pdg_capture_file(pipe_path, write_capture))
		return -1;
	write_mode = PDG_FILE;
	path = file_path;
	return pdg_capture_file(file_path, write_capture);
}

static int teardown(void **state)
{
	(void)state;
	if (sonde_pd_writer_can_compress())
		unlink(zstd_path);
	unlink(pipe_path);
	return unlink(file_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_profile_keys), cmocka_unit_test(test_stdio_default),
	    cmocka_unit_test(test_stdio_keys),	 cmocka_unit_test(test_stdio_srcline),
	    cmocka_unit_test(test_stdio_callee), cmocka_unit_test(test_stdio_children_caller),
	    cmocka_unit_test(test_json),	 cmocka_unit_test(test_html_data),
	    cmocka_unit_test(test_script),	 cmocka_unit_test(test_zstd_and_pipe),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
