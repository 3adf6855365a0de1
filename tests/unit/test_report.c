// SPDX-License-Identifier: MIT
/*
 * The report pass (src/profile/report.c), the profile (profile.c) and the
 * text and JSON views (src/output) over a capture written with pd_gen.h.
 *
 * The capture's kernel symbols come from the kallsyms text it carries
 * (release "0.0.0-sonde-unit", so no vmlinux or /proc/kallsyms is used):
 * f at +0x100, g at +0x200, caller at +0x300.  Process "work" (pid 100)
 * has 3 samples in f and 1 in g, each called from caller, period 1000;
 * process "other" (pid 200) has 1 sample at 0x500000 in /nonexistent/lib.so
 * (unresolved), period 4000.  So, by period: f 3000, g 1000, the library
 * 4000 of 8000: 37.50%, 12.50%, 50.00%; with children caller has 50.00%
 * inclusive.  Every expected value below follows from these numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/report.h>
#include <sonde/report_print.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pd_gen.h"
#include "report_render.h"

#define KBASE 0xffffffff81000000ull
#define F (KBASE + 0x100)
#define G (KBASE + 0x200)
#define CALLER (KBASE + 0x300)
#define LIB 0x500000ull

static const char kallsyms[] = "ffffffff81000000 T _text\n"
			       "ffffffff81000100 T f\n"
			       "ffffffff81000200 T g\n"
			       "ffffffff81000300 t caller\n"
			       "ffffffff81000400 T _etext\n";

static char path[] = "/tmp/sonde-report-XXXXXX";

static void put(struct sonde_pd_writer *w, const struct pdg_buf *b)
{
	assert_int_equal(pdg_write(w, b), 0);
}

static void kernel_sample(struct sonde_pd_writer *w, uint64_t t, uint64_t ip)
{
	uint64_t chain[] = {PERF_CONTEXT_KERNEL, ip, CALLER + 0x10};
	struct pdg_buf b;

	pdg_sample(&b, PERF_RECORD_MISC_KERNEL, 100, 100, t, 0, ip, 1000, chain, 3);
	put(w, &b);
}

static int write_capture(void)
{
	struct sonde_pd_writer *w = pdg_writer_open(path, PDG_FILE);
	uint64_t lib_chain[] = {PERF_CONTEXT_USER, LIB + 0x40};
	struct pdg_buf b;

	if (!w)
		return -1;
	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_OSRELEASE, "0.0.0-sonde-unit");
	sonde_pd_writer_set_sonde_feature(w, SONDE_PD_SFEAT_KALLSYMS, kallsyms,
					  sizeof(kallsyms) - 1);
	pdg_mmap2(&b, UINT32_MAX, KBASE, 0x1000000, KBASE, 0, "[kernel.kallsyms]_text", 0);
	put(w, &b);
	pdg_comm(&b, 100, 100, "work", true, 10);
	put(w, &b);
	pdg_comm(&b, 200, 200, "other", true, 11);
	put(w, &b);
	pdg_mmap2(&b, 200, LIB, 0x1000, 0, 77, "/nonexistent/lib.so", 12);
	put(w, &b);
	kernel_sample(w, 100, F + 1);
	kernel_sample(w, 200, G + 2);
	kernel_sample(w, 300, F + 3);
	pdg_round(&b);
	put(w, &b);
	kernel_sample(w, 400, F + 5);
	pdg_sample(&b, PERF_RECORD_MISC_USER, 200, 200, 500, 1, LIB + 0x40, 4000, lib_chain, 2);
	put(w, &b);
	return sonde_pd_writer_close(w, NULL);
}

struct built {
	struct sonde_pd_reader *r;
	struct sonde_report *rep;
	struct sonde_report_opts o;
};

static void build(struct built *b, const char *keys, bool children)
{
	struct sonde_errmsg em;
	int n;

	memset(b, 0, sizeof(*b));
	b->o.ses.sym.no_proc_kallsyms = true;
	n = sonde_sort_keys_parse(keys, b->o.keys, SONDE_SORT_MAX);
	assert_true(n > 0);
	b->o.nkeys = (size_t)n;
	b->o.children = children;
	b->o.callchains = true;
	b->o.ses.inline_frames = -1;
	if (sonde_pd_reader_open(&b->r, path, &em) || sonde_report_build(&b->rep, b->r, &b->o, &em))
		fail_msg("%s", em.text);
}

static void unbuild(struct built *b)
{
	sonde_report_free(b->rep);
	sonde_pd_reader_close(b->r);
}

/* The entry named @sym (or the unresolved one at @addr). */
static size_t entry(const struct sonde_profile *p, const char *sym, uint64_t addr)
{
	for (size_t i = 0; i < sonde_profile_nr_entries(p); i++) {
		const struct sonde_entry_key *k = sonde_profile_entry_key(p, i);

		if (sym ? k->sym && !strcmp(k->sym->name, sym) : !k->sym && k->addr == addr)
			return i;
	}
	fail_msg("no entry %s", sym ? sym : "(address)");
	return SIZE_MAX;
}

static void test_profile(void **state)
{
	struct built b;
	const struct sonde_profile *p;
	struct sonde_counts c;
	size_t idx[8];

	(void)state;
	build(&b, "sym", false);
	p = b.rep->profile;
	assert_int_equal(b.rep->ses->nevents, 1);
	assert_int_equal(b.rep->ses->walk.samples, 5);
	c = sonde_profile_total(p, 0);
	assert_int_equal(c.samples, 5);
	assert_int_equal(c.period, 8000);
	/* f, g and the library's address; caller has no self samples */
	assert_int_equal(sonde_profile_nr_entries(p), 3);
	c = sonde_profile_entry_self(p, entry(p, "f", 0), 0);
	assert_int_equal(c.samples, 3);
	assert_int_equal(c.period, 3000);
	c = sonde_profile_entry_self(p, entry(p, "g", 0), 0);
	assert_int_equal(c.samples, 1);
	assert_int_equal(c.period, 1000);
	/* unresolved: the object's file offset, 0x40 */
	c = sonde_profile_entry_self(p, entry(p, NULL, 0x40), 0);
	assert_int_equal(c.samples, 1);
	assert_int_equal(c.period, 4000);
	sonde_profile_sort(p, 0, false, idx);
	assert_int_equal(idx[0], entry(p, NULL, 0x40));
	assert_int_equal(idx[1], entry(p, "f", 0));
	assert_int_equal(idx[2], entry(p, "g", 0));
	/* f's trie (callee order): f, called from caller, 3 samples each */
	{
		size_t root = sonde_profile_trie_root(p, entry(p, "f", 0));
		size_t leaf = sonde_profile_node_first_child(p, root), child;

		assert_true(leaf != SIZE_MAX);
		assert_string_equal(sonde_profile_node_frame(p, leaf)->sym->name, "f");
		assert_int_equal(sonde_profile_node_counts(p, leaf, 0).samples, 3);
		assert_int_equal(sonde_profile_node_next_sibling(p, leaf), SIZE_MAX);
		child = sonde_profile_node_first_child(p, leaf);
		assert_true(child != SIZE_MAX);
		assert_string_equal(sonde_profile_node_frame(p, child)->sym->name, "caller");
		assert_int_equal(sonde_profile_node_counts(p, child, 0).samples, 3);
		assert_int_equal(sonde_profile_node_next_sibling(p, child), SIZE_MAX);
	}
	unbuild(&b);
}

static void test_children(void **state)
{
	struct built b;
	const struct sonde_profile *p;
	size_t i;

	(void)state;
	build(&b, "comm,sym", true);
	p = b.rep->profile;
	i = entry(p, "caller", 0);
	assert_string_equal(
	    sonde_machine_str(b.rep->ses->machine, sonde_profile_entry_key(p, i)->comm), "work");
	assert_int_equal(sonde_profile_entry_self(p, i, 0).samples, 0);
	assert_int_equal(sonde_profile_entry_total(p, i, 0).samples, 4);
	assert_int_equal(sonde_profile_entry_total(p, i, 0).period, 4000);
	assert_int_equal(sonde_profile_entry_total(p, entry(p, "f", 0), 0).period, 3000);
	unbuild(&b);
}

/* The rows of the text view, perf's columns: overhead, command (as wide as
 * its "Command" heading), object, symbol. */
static void test_stdio(void **state)
{
	struct built b;
	struct sonde_print_opts po = {.header = false};
	char *out;

	(void)state;
	build(&b, "comm,dso,sym", false);
	out = render(sonde_report_print_stdio, b.rep, &po);
	{
		const char *lib =
		    strstr(out, "50.00%  other    lib.so             [.] 0x0000000000000040");
		const char *f = strstr(out, "37.50%  work     [kernel.kallsyms]  [k] f");
		const char *g = strstr(out, "12.50%  work     [kernel.kallsyms]  [k] g");

		if (!lib || !f || !g || !(lib < f && f < g))
			fail_msg("rows missing or out of order:\n%s", out);
	}
	free(out);
	unbuild(&b);
}

/* The JSON view's numbers for the same rows. */
static void test_json(void **state)
{
	struct built b;
	struct sonde_print_opts po = {.file = "x.data"};
	char *out;

	(void)state;
	build(&b, "sym", false);
	out = render(sonde_report_print_json, b.rep, &po);
	if (!strstr(out, "\"events\":[{\"name\":\"cpu-clock\",\"samples\":5,\"period\":8000}]") ||
	    !strstr(out, "\"rows\":[2,0,1]") ||
	    !strstr(out, "\"symbol\":\"0x0000000000000040\",\"kernel\":false,"
			 "\"self\":[{\"samples\":1,\"period\":4000,\"percent\":50.0000}]") ||
	    !strstr(out, "\"symbol\":\"f\",") ||
	    !strstr(out, "\"self\":[{\"samples\":3,\"period\":3000,\"percent\":37.5000}]") ||
	    !strstr(out, "\"symbol\":\"g\",") ||
	    !strstr(out, "\"self\":[{\"samples\":1,\"period\":1000,\"percent\":12.5000}]"))
		fail_msg("unexpected JSON:\n%s", out);
	free(out);
	unbuild(&b);
}

static int setup(void **state)
{
	(void)state;
	return pdg_capture_file(path, write_capture);
}

static int teardown(void **state)
{
	(void)state;
	return unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_profile),
	    cmocka_unit_test(test_children),
	    cmocka_unit_test(test_stdio),
	    cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
