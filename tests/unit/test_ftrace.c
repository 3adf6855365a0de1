// SPDX-License-Identifier: MIT
/*
 * Unit tests of the ftrace session that need no kernel: the stats parser,
 * tracing_cpumask text, event globs, and the top-level undo stack run
 * against a fake tracefs of plain files (writes there just replace or
 * append text, so a restore must give back the exact old contents).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/fileio.h>
#include <sonde/ftrace.h>
#include <sonde/strlist.h>

#include "fake_tree.h"

static void test_stats(void **state)
{
	struct sonde_ftrace_stats st;
	const char *text = "entries: 12\noverrun: 1532\ncommit overrun: 2\nbytes: 4096\n"
			   "oldest event ts:  5310.424446\nnow ts:  5312.118911\n"
			   "dropped events: 7\nread events: 70112\nnew field: x\n";

	assert_int_equal(sonde_ftrace_stats_parse(text, &st), 0);
	assert_int_equal(st.entries, 12);
	assert_int_equal(st.overrun, 1532);
	assert_int_equal(st.commit_overrun, 2);
	assert_int_equal(st.bytes, 4096);
	assert_int_equal(st.dropped, 7);
	assert_int_equal(st.read, 70112);
	/* Missing fields stay 0; no trailing newline is fine. */
	assert_int_equal(sonde_ftrace_stats_parse("overrun: 3", &st), 0);
	assert_int_equal(st.overrun, 3);
	assert_int_equal(st.read, 0);
	assert_int_equal(sonde_ftrace_stats_parse("", &st), 0);
	assert_int_equal(sonde_ftrace_stats_parse("overrun: x\n", &st), SONDE_E_FORMAT);
	assert_int_equal(sonde_ftrace_stats_parse("overrun: 99999999999999999999\n", &st),
			 SONDE_E_FORMAT);
	assert_int_equal(sonde_ftrace_stats_parse("overrun:\n", &st), SONDE_E_FORMAT);
}

static void test_cpumask(void **state)
{
	char buf[64];
	int a[] = {0, 1}, b[] = {1}, c[] = {33, 0}, bad[] = {-1};

	assert_int_equal(sonde_ftrace_cpumask(a, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "3");
	assert_int_equal(sonde_ftrace_cpumask(b, 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2");
	assert_int_equal(sonde_ftrace_cpumask(c, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2,00000001");
	assert_int_equal(sonde_ftrace_cpumask(bad, 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sonde_ftrace_cpumask(c, 2, buf, 4), -ENAMETOOLONG);
}

static char *fake_tracefs(void)
{
	char *root = fake_tree_new();

	fake_tree_write(root, "current_tracer", "nop\n");
	fake_tree_write(root, "tracing_on", "1\n");
	fake_tree_write(root, "buffer_size_kb", "7 (expanded: 1408)\n");
	fake_tree_write(root, "tracing_cpumask", "3\n");
	fake_tree_write(root, "set_event", "");
	fake_tree_write(root, "set_event_pid", "");
	fake_tree_write(root, "options/event-fork", "0\n");
	fake_tree_write(root, "events/syscalls/sys_enter_getppid/enable", "0\n");
	fake_tree_write(root, "events/syscalls/sys_enter_getppid/filter", "none\n");
	fake_tree_write(root, "events/syscalls/sys_enter_write/enable", "0\n");
	fake_tree_write(root, "events/syscalls/sys_enter_write/filter", "none\n");
	fake_tree_write(root, "events/sched/sched_switch/enable", "0\n");
	fake_tree_write(root, "events/sched/sched_switch/filter", "none\n");
	fake_tree_mkdir(root, "instances");
	return root;
}

static void test_match_events(void **state)
{
	char *root = fake_tracefs();
	struct sonde_strlist l;

	sonde_strlist_init(&l);
	assert_int_equal(sonde_ftrace_match_events(root, "syscalls:sys_enter_*", &l), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0], "syscalls:sys_enter_getppid");
	sonde_strlist_fini(&l);
	sonde_strlist_init(&l);
	assert_int_equal(sonde_ftrace_match_events(root, "sched", &l), 0);
	assert_int_equal(l.n, 1);
	sonde_strlist_fini(&l);
	sonde_strlist_init(&l);
	assert_int_equal(sonde_ftrace_match_events(root, "nosuch:*", &l), 0);
	assert_int_equal(l.n, 0);
	sonde_strlist_fini(&l);
	fake_tree_remove(root);
}

static void expect(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX], *got = NULL;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(sonde_read_all(path, &got, NULL), 0);
	assert_string_equal(got, text);
	free(got);
}

/* The top level: every file changed is given back exactly. */
static void test_top_level_restore(void **state)
{
	char *root = fake_tracefs();
	struct sonde_ftrace_event ev[] = {{"syscalls:sys_enter_*", "common_pid > 1"},
					  {"sched:sched_switch", NULL}};
	pid_t pids[] = {41, 42};
	struct sonde_ftrace_config cfg = {
	    .tracefs = root,
	    .top_level = true,
	    .events = ev,
	    .nevents = 2,
	    .pids = pids,
	    .npids = 2,
	    .buffer_kb = 64,
	    .cpumask = "1",
	};
	struct sonde_ftrace *ft;
	struct sonde_errmsg err = {{0}};

	assert_int_equal(sonde_ftrace_create(&cfg, &ft, &err), 0);
	assert_null(sonde_ftrace_instance(ft));
	expect(root, "tracing_on", "0");
	expect(root, "buffer_size_kb", "64");
	expect(root, "set_event_pid", "4142");
	expect(root, "events/syscalls/sys_enter_write/filter", "common_pid > 1");
	expect(root, "events/sched/sched_switch/enable", "1");
	assert_int_equal(sonde_ftrace_start(ft), 0);
	assert_int_equal(sonde_ftrace_destroy(ft, &err), 0);
	expect(root, "tracing_on", "1\n");
	expect(root, "buffer_size_kb", "7");
	expect(root, "tracing_cpumask", "3\n");
	expect(root, "set_event_pid", "");
	expect(root, "options/event-fork", "0\n");
	expect(root, "events/syscalls/sys_enter_write/filter", "0");
	expect(root, "events/sched/sched_switch/enable", "0\n");
	fake_tree_remove(root);
}

/* A busy top level is refused, and a failing step undoes the earlier ones. */
static void test_top_level_busy_and_unknown(void **state)
{
	char *root = fake_tracefs();
	struct sonde_ftrace_event bad[] = {{"nosuch:event", NULL}};
	struct sonde_ftrace_config cfg = {
	    .tracefs = root, .top_level = true, .buffer_kb = 64, .events = bad, .nevents = 1};
	struct sonde_ftrace *ft;
	struct sonde_errmsg err = {{0}};

	assert_int_equal(sonde_ftrace_create(&cfg, &ft, &err), SONDE_E_UNKNOWN_EVENT);
	assert_non_null(strstr(err.text, "nosuch:event"));
	expect(root, "buffer_size_kb", "7");
	expect(root, "tracing_on", "1\n");
	fake_tree_write(root, "set_event", "sched:sched_wakeup\n");
	cfg.nevents = 0;
	assert_int_equal(sonde_ftrace_create(&cfg, &ft, &err), -EBUSY);
	fake_tree_write(root, "set_event", "");
	fake_tree_write(root, "current_tracer", "function\n");
	assert_int_equal(sonde_ftrace_create(&cfg, &ft, &err), -EBUSY);
	fake_tree_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stats),
	    cmocka_unit_test(test_cpumask),
	    cmocka_unit_test(test_match_events),
	    cmocka_unit_test(test_top_level_restore),
	    cmocka_unit_test(test_top_level_busy_and_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
