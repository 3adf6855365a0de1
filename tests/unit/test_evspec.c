// SPDX-License-Identifier: MIT
/*
 * Unit tests of the event-spec parser (src/core/evspec.c, evnames.c,
 * pmu.c, suggest.c).  Everything runs against fake sysfs and tracefs
 * trees built in a temporary folder, so the PMU syntax, including an Arm
 * armv8_pmuv3_0 PMU, is tested on any machine.  Expected attrs follow what
 * perf 6.1 builds for the same spec (perf stat -vv -e SPEC shows them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <linux/hw_breakpoint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/evspec.h>
#include <sonde/pmu.h>
#include <sonde/strlist.h>

#include "fake_tree.h"
#include "suggest.h"

/* The fake trees, built once for every test. */
static char *sysfs, *tracefs;
static struct sonde_roots roots, no_tracefs;

#define PMU(name, file) "bus/event_source/devices/" name "/" file

static void build_sysfs(const char *root)
{
	/* An x86-like core PMU. */
	assert_int_equal(fake_tree_write(root, PMU("cpu", "type"), "4\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "cpus"), "0-3\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "format/event"), "config:0-7\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "format/umask"), "config:8-15\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "format/edge"), "config:18\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "format/inv"), "config:23\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "format/cmask"), "config:24-31\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "format/ldlat"), "config1:0-15\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "format/frontend"), "config2:0-23\n"), 0);
	assert_int_equal(
	    fake_tree_write(root, PMU("cpu", "events/mem-loads"), "event=0xcd,umask=0x1,ldlat=3\n"),
	    0);
	assert_int_equal(fake_tree_write(root, PMU("cpu", "events/mem-loads.unit"), "B\n"), 0);
	assert_int_equal(
	    fake_tree_write(root, PMU("cpu", "events/needs-mask"), "event=0x2e,umask=?\n"), 0);
	assert_int_equal(
	    fake_tree_write(root, PMU("cpu", "events/topdown.slots"), "event=0x00,umask=0x4\n"), 0);

	/* The Arm PMU of a Cortex-A machine, as its kernel describes it. */
	assert_int_equal(fake_tree_write(root, PMU("armv8_pmuv3_0", "type"), "10\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("armv8_pmuv3_0", "cpus"), "0-5\n"), 0);
	assert_int_equal(
	    fake_tree_write(root, PMU("armv8_pmuv3_0", "format/event"), "config:0-15\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("armv8_pmuv3_0", "format/long"), "config1:0\n"),
			 0);
	assert_int_equal(
	    fake_tree_write(root, PMU("armv8_pmuv3_0", "events/l1d_cache_refill"), "event=0x03\n"),
	    0);
	assert_int_equal(
	    fake_tree_write(root, PMU("armv8_pmuv3_0", "events/cpu_cycles"), "event=0x0011\n"), 0);
	assert_int_equal(
	    fake_tree_write(root, PMU("armv8_pmuv3_0", "events/cpu_cycles.scale"), "1\n"), 0);

	/* A PMU whose one term is spread over several ranges and words. */
	assert_int_equal(fake_tree_write(root, PMU("spread", "type"), "11\n"), 0);
	assert_int_equal(
	    fake_tree_write(root, PMU("spread", "format/ev"), "config:0-3,8-11,60-63\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("spread", "format/bit"), "config:5\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("spread", "format/hi"), "config1:32-63\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("spread", "format/whole"), "config2:0-63\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("spread", "format/bad"), "config:7-3\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("spread", "format/badword"), "config9:0-3\n"),
			 0);
	assert_int_equal(fake_tree_write(root, PMU("spread", "format/junk"), "config:0-3x\n"), 0);

	/* Software-side PMUs every kernel has. */
	assert_int_equal(fake_tree_write(root, PMU("software", "type"), "1\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("tracepoint", "type"), "2\n"), 0);
	assert_int_equal(fake_tree_write(root, PMU("breakpoint", "type"), "5\n"), 0);
}

static void tp(const char *root, const char *sys, const char *ev, int id)
{
	char path[256];

	snprintf(path, sizeof(path), "events/%s/%s/format", sys, ev);
	assert_int_equal(fake_tree_printf(root, path, "name: %s\nID: %d\n", ev, id), 0);
	if (id >= 0) {
		snprintf(path, sizeof(path), "events/%s/%s/id", sys, ev);
		assert_int_equal(fake_tree_printf(root, path, "%d\n", id), 0);
	}
}

static void build_tracefs(const char *root)
{
	assert_int_equal(fake_tree_write(root, "events/enable", "0\n"), 0);
	assert_int_equal(fake_tree_write(root, "events/header_page", "x\n"), 0);
	tp(root, "sched", "sched_switch", 316);
	tp(root, "sched", "sched_wakeup", 317);
	tp(root, "sched", "sched_wakeup_new", 318);
	tp(root, "sched", "sched_waking", 319);
	tp(root, "sched", "sched_process_exit", 320);
	assert_int_equal(fake_tree_write(root, "events/sched/enable", "0\n"), 0);
	assert_int_equal(fake_tree_write(root, "events/sched/filter", "none\n"), 0);
	tp(root, "kmem", "kmalloc", 400);
	tp(root, "kmem", "kfree", 401);
	tp(root, "kmem", "mm_page_alloc", 402);
	tp(root, "syscalls", "sys_enter_getppid", 500);
	tp(root, "syscalls", "sys_exit_getppid", 501);
	tp(root, "syscalls", "sys_enter_getpid", 502);
	tp(root, "raw_syscalls", "sys_enter", 600);
	/* ftrace's internal formats have no id and can't be opened. */
	tp(root, "ftrace", "function", 1);
	tp(root, "ftrace", "bprint", -1);
}

static int setup(void **state)
{
	(void)state;
	sysfs = fake_tree_new();
	tracefs = fake_tree_new();
	if (!sysfs || !tracefs)
		return -1;
	build_sysfs(sysfs);
	build_tracefs(tracefs);
	roots.sysfs = sysfs;
	roots.tracefs = tracefs;
	no_tracefs.sysfs = sysfs;
	no_tracefs.tracefs = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fake_tree_remove(sysfs);
	fake_tree_remove(tracefs);
	return 0;
}

/* Parses @spec into a fresh list that must hold @n events. */
static void parse_ok(struct sonde_evlist *l, const char *spec, size_t n)
{
	int r;

	sonde_evlist_init(l);
	r = sonde_evlist_parse(l, spec, &roots);
	if (r)
		fail_msg("'%s' failed: %s", spec, l->err.text);
	if (l->n != n)
		fail_msg("'%s' gave %zu events, expected %zu", spec, l->n, n);
}

/* Parses @spec, which must fail with @err, leave the list as it was and
 * explain itself with a message containing @text (if not NULL). */
static void parse_fails(const char *spec, int err, const char *text)
{
	struct sonde_evlist l;
	int r;

	sonde_evlist_init(&l);
	assert_int_equal(sonde_evlist_parse(&l, "cs", &roots), 0);
	r = sonde_evlist_parse(&l, spec, &roots);
	if (r != err)
		fail_msg("'%s' returned %d, expected %d (%s)", spec, r, err, l.err.text);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.events[0].name, "cs");
	if (!strstr(l.err.text, spec))
		fail_msg("message for '%s' doesn't quote it: %s", spec, l.err.text);
	if (text && !strstr(l.err.text, text))
		fail_msg("message for '%s' lacks \"%s\": %s", spec, text, l.err.text);
	sonde_evlist_fini(&l);
}

static void test_named_events(void **state)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t config;
		enum sonde_event_kind kind;
	} cases[] = {
	    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, SONDE_EV_HARDWARE},
	    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, SONDE_EV_HARDWARE},
	    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, SONDE_EV_HARDWARE},
	    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	     SONDE_EV_HARDWARE},
	    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, SONDE_EV_HARDWARE},
	    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, SONDE_EV_HARDWARE},
	    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	     SONDE_EV_HARDWARE},
	    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, SONDE_EV_HARDWARE},
	    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, SONDE_EV_HARDWARE},
	    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	     SONDE_EV_HARDWARE},
	    {"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	     SONDE_EV_HARDWARE},
	    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, SONDE_EV_HARDWARE},
	    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, SONDE_EV_SOFTWARE},
	    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, SONDE_EV_SOFTWARE},
	    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, SONDE_EV_SOFTWARE},
	    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, SONDE_EV_SOFTWARE},
	    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	     SONDE_EV_SOFTWARE},
	    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, SONDE_EV_SOFTWARE},
	    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, SONDE_EV_SOFTWARE},
	    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, SONDE_EV_SOFTWARE},
	    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, SONDE_EV_SOFTWARE},
	    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, SONDE_EV_SOFTWARE},
	    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	     SONDE_EV_SOFTWARE},
	    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
	     SONDE_EV_SOFTWARE},
	    {"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, SONDE_EV_SOFTWARE},
	    {"bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, SONDE_EV_SOFTWARE},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sonde_evlist l;
		const struct sonde_event *e;

		parse_ok(&l, cases[i].name, 1);
		e = &l.events[0];
		assert_string_equal(e->name, cases[i].name);
		assert_int_equal(e->kind, cases[i].kind);
		assert_int_equal(e->attr.type, cases[i].type);
		assert_int_equal(e->attr.config, cases[i].config);
		assert_int_equal(e->attr.size, sizeof(e->attr));
		/* perf's event_attr_init(): host only, every level counted. */
		assert_int_equal(e->attr.exclude_guest, 1);
		assert_int_equal(e->attr.exclude_user | e->attr.exclude_kernel | e->attr.exclude_hv,
				 0);
		assert_int_equal(e->leader, 0);
		assert_int_equal(e->flags, 0);
		sonde_evlist_fini(&l);
	}
}

static void test_named_table(void **state)
{
	size_t n;
	const struct sonde_named_event *t = sonde_named_events(&n);

	(void)state;
	assert_true(n >= 20);
	for (size_t i = 0; i < n; i++) {
		assert_ptr_equal(sonde_named_event_find(t[i].name), &t[i]);
		if (t[i].alias)
			assert_ptr_equal(sonde_named_event_find(t[i].alias), &t[i]);
	}
	assert_null(sonde_named_event_find("cycle"));
	assert_null(sonde_named_event_find("CYCLES"));
}

static void test_cache_events(void **state)
{
	static const struct {
		const char *name;
		uint64_t config;
	} cases[] = {
	    {"L1-dcache-loads", 0x0},
	    {"L1-dcache-load-misses", 0x10000},
	    {"L1-dcache-stores", 0x100},
	    {"L1-dcache-store-misses", 0x10100},
	    {"L1-icache-load-misses", 0x10001},
	    {"LLC-loads", 0x2},
	    {"LLC-load-misses", 0x10002},
	    {"LLC-prefetch-misses", 0x10202},
	    {"dTLB-load-misses", 0x10003},
	    {"dTLB-stores", 0x103},
	    {"iTLB-load-misses", 0x10004},
	    {"branch-loads", 0x5},
	    {"branch-load-misses", 0x10005},
	    {"node-stores", 0x106},
	    /* Aliases, and perf's defaults: load, then refs; either order. */
	    {"l1d-loads", 0x0},
	    {"L1-data-read-miss", 0x10000},
	    {"L2-speculative-read-miss", 0x10202},
	    {"Data-TLB-write-access", 0x103},
	    {"L1-dcache-misses", 0x10000},
	    {"L1-dcache-misses-store", 0x10100},
	    {"L1-dcache", 0x0},
	    {"node", 0x6},
	};
	static const char *const bad[] = {
	    "iTLB-stores",	/* perf: iTLB has loads only */
	    "L1-icache-stores", /* L1-icache: loads and prefetches */
	    "branch-stores",	"L1-dcache-", "L1-dcache-load-load",
	    "L1-dcachex",	"L3-loads",   "LLC-loads-misses-x",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sonde_evlist l;

		parse_ok(&l, cases[i].name, 1);
		assert_int_equal(l.events[0].kind, SONDE_EV_CACHE);
		assert_int_equal(l.events[0].attr.type, PERF_TYPE_HW_CACHE);
		if (l.events[0].attr.config != cases[i].config)
			fail_msg("%s: config %#llx, expected %#llx", cases[i].name,
				 (unsigned long long)l.events[0].attr.config,
				 (unsigned long long)cases[i].config);
		sonde_evlist_fini(&l);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_fails(bad[i], SONDE_E_UNKNOWN_EVENT, NULL);
}

/* Every name the lister prints parses back to the same config. */
static void test_cache_names_round_trip(void **state)
{
	unsigned int listed = 0;

	(void)state;
	for (unsigned int i = 0; i < sonde_cache_event_count(); i++) {
		char name[64];
		uint64_t config, parsed;

		if (!sonde_cache_event_name(i, name, sizeof(name), &config))
			continue;
		listed++;
		assert_true(sonde_cache_event_parse(name, &parsed));
		assert_int_equal(parsed, config);
	}
	/* perf's valid ops: L1-dcache, LLC, dTLB, node all three, L1-icache load and
	 * prefetch, iTLB and branch load only: 16 ops x 2 results. */
	assert_int_equal(listed, 32);
}

static void test_raw(void **state)
{
	static const struct {
		const char *spec;
		uint64_t config;
	} cases[] = {
	    {"r1a8", 0x1a8}, {"r0", 0}, {"rABCDEF", 0xabcdef}, {"rffffffffffffffff", UINT64_MAX}};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sonde_evlist l;

		parse_ok(&l, cases[i].spec, 1);
		assert_int_equal(l.events[0].kind, SONDE_EV_RAW);
		assert_int_equal(l.events[0].attr.type, PERF_TYPE_RAW);
		assert_int_equal(l.events[0].attr.config, cases[i].config);
		sonde_evlist_fini(&l);
	}
	parse_fails("r", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("rZZ", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("r0x12", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("r1ffffffffffffffff", SONDE_E_UNKNOWN_EVENT, NULL);
}

/* Modifiers against what perf 6.1 puts in the attr for the same text. */
struct modcase {
	const char *spec;
	unsigned int eu, ek, eh, eH, eG, precise;
};

static void check_mods(const struct sonde_event *e, const struct modcase *c)
{
	const struct perf_event_attr *a = &e->attr;

	if (a->exclude_user != c->eu || a->exclude_kernel != c->ek || a->exclude_hv != c->eh ||
	    a->exclude_host != c->eH || a->exclude_guest != c->eG || a->precise_ip != c->precise)
		fail_msg("%s (%s): u%u k%u h%u H%u G%u p%u, expected u%u k%u h%u H%u G%u p%u",
			 c->spec, e->name, a->exclude_user, a->exclude_kernel, a->exclude_hv,
			 a->exclude_host, a->exclude_guest, a->precise_ip, c->eu, c->ek, c->eh,
			 c->eH, c->eG, c->precise);
}

static void test_modifiers(void **state)
{
	static const struct modcase cases[] = {
	    /* spec             eu ek eh eH eG p */
	    {"cpu-clock", 0, 0, 0, 0, 1, 0},
	    {"cpu-clock:u", 0, 1, 1, 0, 1, 0},
	    {"cpu-clock:k", 1, 0, 1, 0, 0, 0},
	    {"cpu-clock:h", 1, 1, 0, 0, 0, 0},
	    {"cpu-clock:uk", 0, 0, 1, 0, 1, 0},
	    {"cpu-clock:ku", 0, 0, 1, 0, 1, 0},
	    {"cpu-clock:ukh", 0, 0, 0, 0, 1, 0},
	    {"cpu-clock:G", 0, 0, 0, 1, 0, 0},
	    {"cpu-clock:H", 0, 0, 0, 0, 1, 0},
	    {"cpu-clock:GH", 0, 0, 0, 0, 0, 0},
	    {"cpu-clock:uG", 0, 1, 1, 1, 0, 0},
	    {"cpu-clock:Gu", 0, 1, 1, 1, 0, 0},
	    {"cpu-clock:kH", 1, 0, 1, 0, 1, 0},
	    {"cpu-clock:p", 0, 0, 0, 0, 1, 1},
	    {"cpu-clock:pp", 0, 0, 0, 0, 1, 2},
	    {"cpu-clock:ppp", 0, 0, 0, 0, 1, 3},
	    {"cpu-clock:kp", 1, 0, 1, 0, 1, 1},
	    {"cycles:upp", 0, 1, 1, 0, 1, 2},
	    {"cpu-clock:", 0, 0, 0, 0, 1, 0},
	    {"r1a8:k", 1, 0, 1, 0, 0, 0},
	    {"L1-dcache-load-misses:u", 0, 1, 1, 0, 1, 0},
	    {"sched:sched_switch:k", 1, 0, 1, 0, 0, 0},
	    {"cs/period=1000/u", 0, 1, 1, 0, 1, 0},
	    {"cs/period=1000/:u", 0, 1, 1, 0, 1, 0},
	    {"armv8_pmuv3_0/l1d_cache_refill/k", 1, 0, 1, 0, 0, 0},
	    {"mem:0x1000:u", 0, 1, 1, 0, 1, 0},
	    {"mem:0x1000:w:k", 1, 0, 1, 0, 0, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sonde_evlist l;
		bool mods;

		parse_ok(&l, cases[i].spec, 1);
		check_mods(&l.events[0], &cases[i]);
		mods = cases[i].eu || cases[i].ek || cases[i].eh;
		assert_int_equal(!!(l.events[0].flags & SONDE_EVF_MODS), mods);
		sonde_evlist_fini(&l);
	}
}

static void test_modifiers_other(void **state)
{
	struct sonde_evlist l;

	(void)state;
	parse_ok(&l, "cs:I,cs:D,cs:e,cs:uDIe", 4);
	assert_int_equal(l.events[0].attr.exclude_idle, 1);
	assert_int_equal(l.events[1].attr.pinned, 1);
	assert_int_equal(l.events[2].attr.exclusive, 1);
	assert_int_equal(l.events[3].attr.pinned & l.events[3].attr.exclusive &
			     l.events[3].attr.exclude_idle & l.events[3].attr.exclude_kernel,
			 1);
	assert_string_equal(l.events[3].name, "cs:uDIe");
	sonde_evlist_fini(&l);

	parse_fails("cs:uu", SONDE_E_PARSE, "repeated");
	parse_fails("cs:pppp", SONDE_E_PARSE, "precise");
	parse_fails("cs:q", SONDE_E_PARSE, "modifier");
	parse_fails("cs:u:k", SONDE_E_PARSE, "modifier");
	parse_fails("cs:P", SONDE_E_PARSE, "modifier");
	parse_fails("{cs}:x", SONDE_E_PARSE, "modifier");
	parse_fails("sched:sched_switch:x", SONDE_E_PARSE, "modifier");
	parse_fails("cs/period=1/x", SONDE_E_PARSE, "unexpected");
}

static void test_groups(void **state)
{
	struct sonde_evlist l;

	(void)state;
	parse_ok(&l, "cs,{cycles,instructions}:u,cpu-clock", 4);
	assert_int_equal(l.ngroups, 1);
	assert_int_equal(l.events[0].leader, 0);
	assert_int_equal(l.events[1].leader, 1);
	assert_int_equal(l.events[2].leader, 1);
	assert_int_equal(l.events[3].leader, 3);
	for (int i = 1; i <= 2; i++) {
		static const struct modcase u = {"{cycles,instructions}:u", 0, 1, 1, 0, 1, 0};

		check_mods(&l.events[i], &u);
	}
	assert_int_equal(l.events[0].attr.exclude_kernel, 0);
	assert_int_equal(l.events[3].attr.exclude_kernel, 0);
	/* A second call appends; leaders are indexes in the whole list. */
	assert_int_equal(sonde_evlist_parse(&l, "{cs,cpu-clock},{faults}", &roots), 0);
	assert_int_equal(l.n, 7);
	assert_int_equal(l.ngroups, 3);
	assert_int_equal(l.events[4].leader, 4);
	assert_int_equal(l.events[5].leader, 4);
	assert_int_equal(l.events[6].leader, 6);
	sonde_evlist_fini(&l);

	/* Group modifiers add to each member's own, as perf does. */
	{
		static const struct modcase want[] = {
		    {"{cs:u,cpu-clock}:k", 0, 0, 1, 0, 1, 0},
		    {"{cs:u,cpu-clock}:k", 1, 0, 1, 0, 1, 0},
		    {"{cs:k,cpu-clock}:u", 0, 0, 1, 0, 1, 0},
		    {"{cs:k,cpu-clock}:u", 0, 1, 1, 0, 1, 0},
		    {"{cs:p,cpu-clock:G}:p", 0, 0, 0, 0, 1, 2},
		    {"{cs:p,cpu-clock:G}:p", 0, 0, 0, 1, 0, 1},
		};
		for (size_t i = 0; i < 6; i += 2) {
			parse_ok(&l, want[i].spec, 2);
			check_mods(&l.events[0], &want[i]);
			check_mods(&l.events[1], &want[i + 1]);
			assert_int_equal(l.events[1].leader, 0);
			sonde_evlist_fini(&l);
		}
	}
	/* Pinned and exclusive go to the leader only. */
	parse_ok(&l, "{cs,cpu-clock}:De", 2);
	assert_int_equal(l.events[0].attr.pinned, 1);
	assert_int_equal(l.events[0].attr.exclusive, 1);
	assert_int_equal(l.events[1].attr.pinned, 0);
	assert_int_equal(l.events[1].attr.exclusive, 0);
	sonde_evlist_fini(&l);

	/* Members of any kind, including expanded globs and PMU terms with commas. */
	parse_ok(&l, "{cpu/event=0x3c,umask=0/,sched:sched_wak*,mem:0x10/8,cs}:k", 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(l.events[i].leader, 0);
		assert_int_equal(l.events[i].attr.exclude_user, 1);
	}
	assert_int_equal(l.events[0].attr.config, 0x3c);
	assert_int_equal(l.events[4].attr.bp_len, 8);
	sonde_evlist_fini(&l);

	parse_ok(&l, "{mem:0x1/8,cs},cs", 3);
	assert_int_equal(l.events[2].leader, 2);
	sonde_evlist_fini(&l);

	parse_fails("{cs,{cpu-clock}}", SONDE_E_PARSE, "nested");
	parse_fails("{}", SONDE_E_PARSE, "empty");
	parse_fails("{cs", SONDE_E_PARSE, "unmatched");
	parse_fails("cs}", SONDE_E_PARSE, "unmatched");
	parse_fails("{cs}}", SONDE_E_PARSE, "unmatched");
	parse_fails("{cs}x", SONDE_E_PARSE, "after a group");
	parse_fails("{cs,bogus}", SONDE_E_UNKNOWN_EVENT, "bogus");
}

/* A failure leaves the list, and its group count, as before the call. */
static void test_errors_leave_list(void **state)
{
	struct sonde_evlist l;

	(void)state;
	parse_ok(&l, "{cs,faults}", 2);
	assert_int_equal(
	    sonde_evlist_parse(&l, "cpu-clock,{task-clock,cycles},kmem:*,cylces", &roots),
	    SONDE_E_UNKNOWN_EVENT);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.ngroups, 1);
	assert_int_equal(sonde_evlist_parse(&l, "cpu-clock", &roots), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.events[2].leader, 2);
	sonde_evlist_fini(&l);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	parse_fails("", SONDE_E_PARSE, "empty");
	parse_fails(",cs", SONDE_E_PARSE, "empty");
	parse_fails("cs,", SONDE_E_PARSE, "empty");
	parse_fails("cs,,cs", SONDE_E_PARSE, "empty");
	parse_fails("cpu/event=1", SONDE_E_PARSE, "closing");
	parse_fails(":u", SONDE_E_PARSE, "system");
	parse_fails("sched:", SONDE_E_PARSE, "system");
}

static void test_terms(void **state)
{
	struct sonde_evlist l;
	const struct sonde_event *e;

	(void)state;
	parse_ok(&l, "cpu-clock/period=10000/,cs/freq=99/,task-clock/name=tc/,r1a8/period=0x10/",
		 4);
	e = &l.events[0];
	assert_string_equal(e->name, "cpu-clock/period=10000/");
	assert_int_equal(e->attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(e->attr.sample_period, 10000);
	assert_int_equal(e->attr.freq, 0);
	assert_int_equal(e->flags, SONDE_EVF_PERIOD);
	e = &l.events[1];
	assert_int_equal(e->attr.sample_freq, 99);
	assert_int_equal(e->attr.freq, 1);
	assert_int_equal(e->flags, SONDE_EVF_FREQ);
	e = &l.events[2];
	assert_string_equal(e->name, "tc");
	assert_int_equal(e->attr.config, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(e->flags, 0);
	e = &l.events[3];
	assert_int_equal(e->kind, SONDE_EV_RAW);
	assert_int_equal(e->attr.config, 0x1a8);
	assert_int_equal(e->attr.sample_period, 16);
	sonde_evlist_fini(&l);

	/* The last of period= and freq= wins. */
	parse_ok(&l, "cs/freq=10,period=5/,L1-dcache-load-misses/period=7/", 2);
	assert_int_equal(l.events[0].attr.freq, 0);
	assert_int_equal(l.events[0].attr.sample_period, 5);
	assert_int_equal(l.events[0].flags, SONDE_EVF_PERIOD);
	assert_int_equal(l.events[1].attr.config, 0x10000);
	assert_int_equal(l.events[1].attr.sample_period, 7);
	sonde_evlist_fini(&l);

	parse_fails("cs/period=0/", SONDE_E_PARSE, "period=0");
	parse_fails("cs/period=abc/", SONDE_E_PARSE, "period=abc");
	parse_fails("cs/period=/", SONDE_E_PARSE, NULL);
	parse_fails("cs/freq=1x/", SONDE_E_PARSE, NULL);
	parse_fails("cs/period=99999999999999999999999/", SONDE_E_PARSE, NULL);
	parse_fails("cs/umask=1/", SONDE_E_PARSE, "umask=1");
}

static void test_breakpoints(void **state)
{
	static const struct {
		const char *spec;
		uint64_t addr, len;
		unsigned int type;
	} cases[] = {
	    {"mem:0x1000", 0x1000, 4, HW_BREAKPOINT_RW},
	    {"mem:4096:r", 4096, 4, HW_BREAKPOINT_R},
	    {"mem:0x1000:w", 0x1000, 4, HW_BREAKPOINT_W},
	    {"mem:0x1000:rw", 0x1000, 4, HW_BREAKPOINT_RW},
	    {"mem:0x1000:wr", 0x1000, 4, HW_BREAKPOINT_RW},
	    {"mem:0x1000:x", 0x1000, sizeof(long), HW_BREAKPOINT_X},
	    {"mem:0x1000/1", 0x1000, 1, HW_BREAKPOINT_RW},
	    {"mem:0x1000/2:w", 0x1000, 2, HW_BREAKPOINT_W},
	    {"mem:0x1000/8:rw:u", 0x1000, 8, HW_BREAKPOINT_RW},
	    {"mem:0xffffffff81000000:x:k", 0xffffffff81000000ull, sizeof(long), HW_BREAKPOINT_X},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sonde_evlist l;
		const struct sonde_event *e;

		parse_ok(&l, cases[i].spec, 1);
		e = &l.events[0];
		assert_string_equal(e->name, cases[i].spec);
		assert_int_equal(e->kind, SONDE_EV_BREAKPOINT);
		assert_int_equal(e->attr.type, PERF_TYPE_BREAKPOINT);
		assert_int_equal(e->attr.bp_addr, cases[i].addr);
		assert_int_equal(e->attr.bp_len, cases[i].len);
		assert_int_equal(e->attr.bp_type, cases[i].type);
		assert_int_equal(e->attr.sample_period, 1);
		sonde_evlist_fini(&l);
	}
	parse_fails("mem:", SONDE_E_PARSE, "address");
	parse_fails("mem:zz", SONDE_E_PARSE, "address");
	parse_fails("mem:-1", SONDE_E_PARSE, "address");
	parse_fails("mem:0x1000/3", SONDE_E_PARSE, "length");
	parse_fails("mem:0x1000/", SONDE_E_PARSE, "length");
	parse_fails("mem:0x1000/16", SONDE_E_PARSE, "length");
	parse_fails("mem:0x1000:rx", SONDE_E_PARSE, "x with r or w");
	parse_fails("mem:0x1000:q", SONDE_E_PARSE, "access");
	parse_fails("mem:0x1000:rw:q", SONDE_E_PARSE, "access");
	parse_fails("mem:0x1000junk", SONDE_E_PARSE, "trailing");
	parse_fails("mem:99999999999999999999999", SONDE_E_PARSE, "address");
}

/* --- PMUs from the fake sysfs ------------------------------------------- */

static void test_pmu_arm(void **state)
{
	struct sonde_evlist l;
	const struct sonde_event *e;

	(void)state;
	parse_ok(&l, "armv8_pmuv3_0/l1d_cache_refill/", 1);
	e = &l.events[0];
	assert_string_equal(e->name, "armv8_pmuv3_0/l1d_cache_refill/");
	assert_int_equal(e->kind, SONDE_EV_PMU);
	assert_int_equal(e->attr.type, 10);
	assert_int_equal(e->attr.config, 0x03);
	assert_int_equal(e->attr.config1, 0);
	assert_int_equal(e->attr.exclude_guest, 1);
	sonde_evlist_fini(&l);

	parse_ok(&l,
		 "armv8_pmuv3_0/event=0x11/u,armv8_pmuv3_0/cpu_cycles,long/,"
		 "armv8_pmuv3_0/l1d_cache_refill,period=100000/:k,armv8_pmuv3_0/event=0xffff/",
		 4);
	assert_int_equal(l.events[0].attr.config, 0x11);
	assert_int_equal(l.events[0].attr.exclude_kernel, 1);
	assert_int_equal(l.events[1].attr.config, 0x11);
	assert_int_equal(l.events[1].attr.config1, 1);
	assert_int_equal(l.events[2].attr.config, 0x03);
	assert_int_equal(l.events[2].attr.sample_period, 100000);
	assert_int_equal(l.events[2].attr.exclude_user, 1);
	assert_int_equal(l.events[3].attr.config, 0xffff);
	sonde_evlist_fini(&l);

	parse_fails("armv8_pmuv3_0/event=0x10000/", -ERANGE, "too big");
	parse_fails("armv8_pmuv3_0/l1d_cache_refil/", SONDE_E_UNKNOWN_EVENT,
		    "'armv8_pmuv3_0/l1d_cache_refill/'");
	parse_fails("armv8_pmuv3_1/l1d_cache_refill/", SONDE_E_UNKNOWN_EVENT, "'armv8_pmuv3_0'");
	parse_fails("armv8_pmuv3_0/umask=1/", SONDE_E_UNKNOWN_EVENT, "its terms: event, long");
	/* .scale files describe an event; they are not events. */
	parse_fails("armv8_pmuv3_0/cpu_cycles.scale/", SONDE_E_UNKNOWN_EVENT, NULL);
}

static void test_pmu_terms(void **state)
{
	struct sonde_evlist l;

	(void)state;
	parse_ok(
	    &l,
	    "cpu/event=0x3c,umask=0x1/,cpu/event=0xc0,inv,cmask=2,edge=1/,"
	    "cpu/config=0x1234,config1=5,config2=6/,cpu/event=1,ldlat=0xffff,frontend=0x123456/",
	    4);
	assert_int_equal(l.events[0].attr.type, 4);
	assert_int_equal(l.events[0].attr.config, 0x13c);
	assert_int_equal(l.events[1].attr.config, 0xc0 | 1u << 23 | 2u << 24 | 1u << 18);
	assert_int_equal(l.events[2].attr.config, 0x1234);
	assert_int_equal(l.events[2].attr.config1, 5);
	assert_int_equal(l.events[2].attr.config2, 6);
	assert_int_equal(l.events[3].attr.config, 1);
	assert_int_equal(l.events[3].attr.config1, 0xffff);
	assert_int_equal(l.events[3].attr.config2, 0x123456);
	sonde_evlist_fini(&l);

	/* Named events spliced in place, refined by later terms. */
	parse_ok(&l, "cpu/mem-loads/,cpu/mem-loads,ldlat=30/pp,cpu/needs-mask,umask=0x2/", 3);
	assert_int_equal(l.events[0].attr.config, 0x1cd);
	assert_int_equal(l.events[0].attr.config1, 3);
	assert_int_equal(l.events[1].attr.config, 0x1cd);
	assert_int_equal(l.events[1].attr.config1, 30);
	assert_int_equal(l.events[1].attr.precise_ip, 2);
	assert_int_equal(l.events[2].attr.config, 0x22e);
	sonde_evlist_fini(&l);

	/* An event name with a dot that is not a .scale/.unit suffix. */
	parse_ok(&l, "cpu/topdown.slots/", 1);
	assert_int_equal(l.events[0].attr.config, 0x400);
	sonde_evlist_fini(&l);

	/* software/ is a PMU too (perf accepts software/config=3/). */
	parse_ok(&l, "software/config=3,name=sw3/", 1);
	assert_int_equal(l.events[0].attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(l.events[0].attr.config, 3);
	assert_string_equal(l.events[0].name, "sw3");
	sonde_evlist_fini(&l);

	parse_fails("cpu/needs-mask/", SONDE_E_PARSE, "needs a value");
	parse_fails("cpu/umask=0x100/", -ERANGE, "umask");
	parse_fails("cpu/event=zz/", SONDE_E_PARSE, "bad value");
	parse_fails("cpu/nosuch=1/", SONDE_E_UNKNOWN_EVENT, "no term 'nosuch'");
	parse_fails("cpu/mem-load/", SONDE_E_UNKNOWN_EVENT, "'cpu/mem-loads/'");
	parse_fails("cpu/../", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("../../bus/event_source/devices/cpu/event=1/", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("..//", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("nopmu/event=1/", SONDE_E_UNKNOWN_EVENT, "PMU 'nopmu'");
}

/* Format bit spreading: a value fills the ranges low bits first. */
static void test_pmu_format_spreading(void **state)
{
	struct sonde_evlist l;

	(void)state;
	/* ev = config:0-3,8-11,60-63: 0xabc -> c at 0, b at 8, a at 60. */
	parse_ok(&l,
		 "spread/ev=0xabc/,spread/ev=0xfff,bit/,spread/hi=0xdeadbeef/,"
		 "spread/whole=0xffffffffffffffff/,spread/bit=1,ev=0/",
		 5);
	assert_int_equal(l.events[0].attr.type, 11);
	assert_int_equal(l.events[0].attr.config, 0xc | 0xbull << 8 | 0xaull << 60);
	assert_int_equal(l.events[1].attr.config, 0xf000000000000f2full);
	assert_int_equal(l.events[2].attr.config1, 0xdeadbeefull << 32);
	assert_int_equal(l.events[3].attr.config2, UINT64_MAX);
	assert_int_equal(l.events[4].attr.config, 1u << 5);
	sonde_evlist_fini(&l);

	parse_fails("spread/ev=0x1000/", -ERANGE, "12 bits");
	parse_fails("spread/bit=2/", -ERANGE, NULL);
	parse_fails("spread/bad=1/", SONDE_E_FORMAT, "config:7-3");
	parse_fails("spread/badword=1/", SONDE_E_FORMAT, "config9");
	parse_fails("spread/junk=1/", SONDE_E_FORMAT, "0-3x");
}

static void test_pmu_helpers(void **state)
{
	struct sonde_strlist names;
	uint32_t type;
	char def[64];

	(void)state;
	sonde_strlist_init(&names);
	assert_int_equal(sonde_pmu_names(sysfs, &names), 0);
	assert_int_equal(names.n, 6);
	assert_string_equal(names.v[0], "armv8_pmuv3_0");
	sonde_strlist_fini(&names);

	sonde_strlist_init(&names);
	assert_int_equal(sonde_pmu_event_names(sysfs, "armv8_pmuv3_0", &names), 0);
	assert_int_equal(names.n, 2);
	assert_string_equal(names.v[0], "cpu_cycles");
	assert_string_equal(names.v[1], "l1d_cache_refill");
	sonde_strlist_fini(&names);

	sonde_strlist_init(&names);
	assert_int_equal(sonde_pmu_event_names(sysfs, "cpu", &names), 0);
	assert_int_equal(names.n, 3); /* mem-loads, needs-mask, topdown.slots */
	sonde_strlist_fini(&names);

	assert_int_equal(sonde_pmu_type(sysfs, "armv8_pmuv3_0", &type), 0);
	assert_int_equal(type, 10);
	assert_true(sonde_pmu_type(sysfs, "nope", &type) < 0);
	assert_true(sonde_pmu_is_cpu(sysfs, "armv8_pmuv3_0"));
	assert_true(sonde_pmu_is_cpu(sysfs, "cpu"));
	assert_false(sonde_pmu_is_cpu(sysfs, "software"));
	assert_true(sonde_pmu_has_term(sysfs, "cpu", "ldlat"));
	assert_false(sonde_pmu_has_term(sysfs, "cpu", "../type"));
	assert_true(sonde_pmu_event_terms(sysfs, "armv8_pmuv3_0", "l1d_cache_refill", def,
					  sizeof(def)) > 0);
	assert_string_equal(def, "event=0x03");
	assert_int_equal(sonde_pmu_event_terms(sysfs, "cpu", "..", def, sizeof(def)), -EINVAL);
}

/* --- tracepoints from the fake tracefs ---------------------------------- */

/* Event folders of @sys in readdir order: the order perf expands globs in. */
static void readdir_events(const char *sys, const char *glob, struct sonde_strlist *out)
{
	char path[512], id[1024];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/events/%s", tracefs, sys);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		FILE *f;

		snprintf(id, sizeof(id), "%s/%s/id", path, de->d_name);
		if (de->d_name[0] == '.' || fnmatch(glob, de->d_name, 0) || !(f = fopen(id, "r")))
			continue;
		fclose(f);
		snprintf(id, sizeof(id), "%s:%s", sys, de->d_name);
		assert_int_equal(sonde_strlist_add(out, id), 0);
	}
	closedir(d);
}

static void test_tracepoint(void **state)
{
	struct sonde_evlist l;
	const struct sonde_event *e;

	(void)state;
	parse_ok(&l, "sched:sched_switch,syscalls:sys_enter_getppid:u", 2);
	e = &l.events[0];
	assert_string_equal(e->name, "sched:sched_switch");
	assert_int_equal(e->kind, SONDE_EV_TRACEPOINT);
	assert_int_equal(e->attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(e->attr.config, 316);
	assert_int_equal(e->attr.sample_period, 1);
	assert_string_equal(e->tp_system, "sched");
	assert_string_equal(e->tp_event, "sched_switch");
	e = &l.events[1];
	/* perf names a tracepoint without its modifiers. */
	assert_string_equal(e->name, "syscalls:sys_enter_getppid");
	assert_int_equal(e->attr.config, 500);
	assert_int_equal(e->attr.exclude_kernel, 1);
	sonde_evlist_fini(&l);

	parse_fails("sched:sched_swich", SONDE_E_UNKNOWN_EVENT, "'sched:sched_switch'");
	parse_fails("syscalls:sys_enter_getppidd", SONDE_E_UNKNOWN_EVENT,
		    "'syscalls:sys_enter_getppid'");
	/* Right event, wrong system. */
	parse_fails("sys:sys_enter_getppid", SONDE_E_UNKNOWN_EVENT, "'syscalls:sys_enter_getppid'");
	parse_fails("ftrace:bprint", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("..:..", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("..:sched_switch", SONDE_E_UNKNOWN_EVENT, NULL);
	parse_fails("sched:../sched/sched_switch", SONDE_E_PARSE, NULL);

	sonde_evlist_init(&l);
	assert_int_equal(sonde_evlist_parse(&l, "sched:sched_switch", &no_tracefs),
			 SONDE_E_NO_TRACEFS);
	assert_int_equal(l.n, 0);
	assert_non_null(strstr(l.err.text, "tracefs"));
	sonde_evlist_fini(&l);
}

static void check_glob(const char *spec, const char *const *systems, const char *glob, size_t want)
{
	struct sonde_strlist expect;
	struct sonde_evlist l;

	sonde_strlist_init(&expect);
	for (size_t i = 0; systems[i]; i++)
		readdir_events(systems[i], glob, &expect);
	assert_int_equal(expect.n, want);
	parse_ok(&l, spec, want);
	for (size_t i = 0; i < want; i++) {
		if (strcmp(l.events[i].name, expect.v[i]))
			fail_msg("%s: event %zu is %s, readdir order has %s", spec, i,
				 l.events[i].name, expect.v[i]);
		assert_int_equal(l.events[i].leader, (int)i);
		assert_non_null(l.events[i].tp_system);
	}
	sonde_evlist_fini(&l);
	sonde_strlist_fini(&expect);
}

static void test_tracepoint_globs(void **state)
{
	static const char *const sched[] = {"sched", NULL};
	static const char *const kmem[] = {"kmem", NULL};
	static const char *const ftrace[] = {"ftrace", NULL};
	struct sonde_evlist l;

	(void)state;
	check_glob("sched:*", sched, "*", 5);
	check_glob("kmem:*", kmem, "*", 3);
	check_glob("sched:sched_wake*", sched, "sched_wake*", 2);
	check_glob("sched:sched_wak[ei]*", sched, "sched_wak[ei]*", 3);
	check_glob("sched:sched_wakeup?new", sched, "sched_wakeup?new", 1);
	/* Events without an id (ftrace:bprint) are left out. */
	check_glob("ftrace:*", ftrace, "*", 1);

	/* A system glob walks systems in readdir order too. */
	{
		struct sonde_strlist systems, expect;
		struct dirent *de;
		char path[512];
		DIR *d;

		sonde_strlist_init(&systems);
		sonde_strlist_init(&expect);
		snprintf(path, sizeof(path), "%s/events", tracefs);
		d = opendir(path);
		assert_non_null(d);
		while ((de = readdir(d)) != NULL)
			if (!fnmatch("*sys*", de->d_name, 0))
				sonde_strlist_add(&systems, de->d_name);
		closedir(d);
		for (size_t i = 0; i < systems.n; i++)
			readdir_events(systems.v[i], "sys_enter*", &expect);
		assert_int_equal(expect.n, 3);
		parse_ok(&l, "*sys*:sys_enter*", 3);
		for (size_t i = 0; i < 3; i++)
			assert_string_equal(l.events[i].name, expect.v[i]);
		sonde_evlist_fini(&l);
		sonde_strlist_fini(&systems);
		sonde_strlist_fini(&expect);
	}

	/* Modifiers apply to every expanded event; systems without a match are fine. */
	parse_ok(&l, "*:sched_switch:k", 1);
	assert_int_equal(l.events[0].attr.exclude_user, 1);
	sonde_evlist_fini(&l);
	parse_ok(&l, "sched:sched_wakeup*:u", 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(l.events[i].attr.exclude_kernel, 1);
		assert_int_equal(l.events[i].attr.exclude_user, 0);
	}
	sonde_evlist_fini(&l);

	parse_fails("sched:nomatch*", SONDE_E_UNKNOWN_EVENT, "no match");
	parse_fails("nosys*:*", SONDE_E_UNKNOWN_EVENT, "no match");
}

/* --- suggestions ----------------------------------------------------------- */

static void test_suggestions(void **state)
{
	(void)state;
	parse_fails("cylces", SONDE_E_UNKNOWN_EVENT, "did you mean 'cycles'");
	parse_fails("instrutions", SONDE_E_UNKNOWN_EVENT, "'instructions'");
	parse_fails("context-switchs", SONDE_E_UNKNOWN_EVENT, "'context-switches'");
	parse_fails("L1-dcache-load-mises", SONDE_E_UNKNOWN_EVENT, "'L1-dcache-load-misses'");
	parse_fails("cpu-clok", SONDE_E_UNKNOWN_EVENT, "'cpu-clock'");
	parse_fails("sched:sched_swich", SONDE_E_UNKNOWN_EVENT, "'sched:sched_switch'");
	parse_fails("armv8_pmuv3_0/l1d_cache_refil/", SONDE_E_UNKNOWN_EVENT,
		    "'armv8_pmuv3_0/l1d_cache_refill/'");
	parse_fails("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", SONDE_E_UNKNOWN_EVENT, "sonde list");
}

static void test_suggest_direct(void **state)
{
	char out[300];

	(void)state;
	assert_int_equal(sonde_edit_distance("cycles", "cycles"), 0);
	assert_int_equal(sonde_edit_distance("cylces", "cycles"), 2);
	assert_int_equal(sonde_edit_distance("", "abc"), 3);
	assert_int_equal(sonde_edit_distance("CYCLES", "cycles"), 0);
	sonde_suggest("cylces", &roots, out, sizeof(out));
	assert_true(!strncmp(out, "'cycles'", 8));
	sonde_suggest("qqqqqqqqqqqqqqqqqqqq", &roots, out, sizeof(out));
	assert_string_equal(out, "");
	sonde_suggest("cylces", NULL, out, sizeof(out));
	assert_true(!strncmp(out, "'cycles'", 8));
	/* Output is bounded by the buffer. */
	sonde_suggest("sched:sched_wakeu", &roots, out, 10);
	assert_true(strlen(out) < 10);
}

/* Spec text that must never crash or leak (found while fuzzing). */
static void test_odd_inputs(void **state)
{
	static const char *const odd[] = {
	    "/",     "//",    "///",	 "{",	     "}",	 "{}:u",    ":",	"::",
	    "mem:",  "mem:/", "mem::",	 "cs/",	     "cs//",	 "{cs/}",   "{/,}",	"r",
	    "{cs},", "*:*:*", "a:b:c:d", "cpu//x",   "cpu/,,/",	 "cpu/=/",  "cpu/=1/",	"cpu/a=/",
	    "  ",    "{ }",   "{,}",	 "cs:ppp:u", "\x01\x02", "sched:[", "sched:[!", "[:*",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		struct sonde_evlist l;

		sonde_evlist_init(&l);
		if (sonde_evlist_parse(&l, odd[i], &roots) < 0)
			assert_int_equal(l.n, 0);
		sonde_evlist_fini(&l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_named_events),
	    cmocka_unit_test(test_named_table),
	    cmocka_unit_test(test_cache_events),
	    cmocka_unit_test(test_cache_names_round_trip),
	    cmocka_unit_test(test_raw),
	    cmocka_unit_test(test_modifiers),
	    cmocka_unit_test(test_modifiers_other),
	    cmocka_unit_test(test_groups),
	    cmocka_unit_test(test_errors_leave_list),
	    cmocka_unit_test(test_syntax_errors),
	    cmocka_unit_test(test_terms),
	    cmocka_unit_test(test_breakpoints),
	    cmocka_unit_test(test_pmu_arm),
	    cmocka_unit_test(test_pmu_terms),
	    cmocka_unit_test(test_pmu_format_spreading),
	    cmocka_unit_test(test_pmu_helpers),
	    cmocka_unit_test(test_tracepoint),
	    cmocka_unit_test(test_tracepoint_globs),
	    cmocka_unit_test(test_suggestions),
	    cmocka_unit_test(test_suggest_direct),
	    cmocka_unit_test(test_odd_inputs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
