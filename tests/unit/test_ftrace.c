// SPDX-License-Identifier: MIT
/*
 * Unit tests of the ftrace session that need no kernel: the stats parser,
 * tracing_cpumask text, event globs, and the top-level undo stack run
 * against a fake tracefs of plain files (writes there just replace or
 * append text, so a restore must give back the exact old contents).  The
 * whole run (sonde_ftrace_session_*: setup, live or recording reader,
 * stats, restore) is checked on a snapshot of every file of the tree:
 * exactly the expected files change, and all of them come back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/ftrace.h>
#include <sonde/ftrace_session.h>
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

/* --- the whole session on a fake tracefs --------------------------------------------------- */

/* Every file of a tree as "relpath=contents", sorted: a tree's state to compare. */
static struct sonde_strlist *snap_out;
static size_t snap_root_len;

static int snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char *text = NULL, *line = NULL;

	if (flag != FTW_F)
		return 0;
	assert_int_equal(sonde_read_all(path, &text, NULL), 0);
	assert_true(asprintf(&line, "%s=%s", path + snap_root_len, text) > 0);
	assert_int_equal(sonde_strlist_add(snap_out, line), 0);
	free(line);
	free(text);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void snapshot(const char *root, struct sonde_strlist *out)
{
	sonde_strlist_init(out);
	snap_out = out;
	snap_root_len = strlen(root) + 1;
	assert_int_equal(nftw(root, snap_one, 16, FTW_PHYS), 0);
	qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

/* The relative paths whose contents differ between two snapshots, as "a b c". */
static void changed(const struct sonde_strlist *a, const struct sonde_strlist *b, char *buf,
		    size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		size_t name = strcspn(a->v[i], "=");

		assert_int_equal(strncmp(a->v[i], b->v[i], name + 1), 0);
		if (strcmp(a->v[i], b->v[i]))
			used += (size_t)snprintf(buf + used, len - used, "%s%.*s", used ? " " : "",
						 (int)name, a->v[i]);
	}
}

#define LIVE_TEXT "  getppid-41 [000] sys_getppid()\n  x-42 [001] y\n"

static char *session_tracefs(void)
{
	char *root = fake_tracefs();

	fake_tree_write(root, "trace_pipe", LIVE_TEXT);
	fake_tree_write(root, "per_cpu/cpu0/stats", "entries: 0\noverrun: 3\nread events: 5\n");
	fake_tree_write(root, "per_cpu/cpu1/stats", "entries: 1\nread events: 7\n");
	fake_tree_write(root, "per_cpu/cpu0/trace_pipe_raw", "PAGE-OF-CPU0");
	fake_tree_write(root, "per_cpu/cpu1/trace_pipe_raw", "PAGE-OF-CPU1");
	return root;
}

struct got_text {
	char buf[256];
	size_t len;
	int calls;
};

static int collect(void *ctx, const char *buf, size_t len)
{
	struct got_text *g = ctx;

	assert_true(g->len + len < sizeof(g->buf));
	memcpy(g->buf + g->len, buf, len);
	g->len += len;
	g->calls++;
	return 0;
}

/* Live at the top level: the files written are exactly these, the text arrives, all restored. */
static void test_session_live(void **state)
{
	char *root = session_tracefs();
	struct sonde_ftrace_event ev[] = {{"syscalls:sys_enter_getppid", "common_pid > 1"}};
	pid_t pids[] = {41};
	int cpus[] = {0, 1};
	struct got_text got = {.len = 0};
	struct sonde_ftrace_session_config cfg = {
	    .ftrace = {.tracefs = root,
		       .top_level = true,
		       .events = ev,
		       .nevents = 1,
		       .pids = pids,
		       .npids = 1,
		       .buffer_kb = 64,
		       .cpumask = "2"},
	    .cpus = cpus,
	    .ncpus = 2,
	    .on_text = collect,
	    .ctx = &got,
	};
	struct sonde_ftrace_session *s;
	struct sonde_ftrace_session_stats st;
	struct sonde_errmsg err = {{0}};
	struct sonde_strlist before, during, after;
	char diff[1024];
	bool cut;

	snapshot(root, &before);
	assert_int_equal(sonde_ftrace_session_open(&cfg, &s, &err), 0);
	assert_int_equal(sonde_ftrace_session_fd(s), -1);
	assert_int_equal(sonde_ftrace_session_start(s, &err), 0);
	assert_true(sonde_ftrace_session_fd(s) >= 0);
	snapshot(root, &during);
	changed(&before, &during, diff, sizeof(diff));
	assert_string_equal(diff, "buffer_size_kb events/syscalls/sys_enter_getppid/enable "
				  "events/syscalls/sys_enter_getppid/filter options/event-fork "
				  "set_event_pid tracing_cpumask tracing_on");
	expect(root, "tracing_on", "1");
	/* A chunk is read whole whatever the budget; then the pipe is empty. */
	assert_int_equal(sonde_ftrace_session_pump(s, 10), strlen(LIVE_TEXT));
	assert_int_equal(got.calls, 1);
	assert_int_equal(got.len, strlen(LIVE_TEXT));
	assert_int_equal(memcmp(got.buf, LIVE_TEXT, got.len), 0);
	assert_int_equal(sonde_ftrace_session_pump(s, 1 << 20), 0);
	assert_int_equal(sonde_ftrace_session_stop(s), 0);
	expect(root, "tracing_on", "0");
	assert_int_equal(sonde_ftrace_session_drain(s, 5, &cut, &err), 0);
	assert_false(cut);
	assert_int_equal(sonde_ftrace_session_close(s, &st, &err), 0);
	assert_int_equal(st.ncpus, 2);
	assert_true(st.have[0] && st.have[1]);
	assert_int_equal(st.cpu[0].overrun, 3);
	assert_int_equal(st.read, 12);
	assert_string_equal(st.text[1], "entries: 1\nread events: 7\n");
	sonde_ftrace_session_stats_fini(&st);
	/* Every file as it was, in the kernel's terms: a filter "none" comes back as "0",
	 * buffer_size_kb "7 (expanded: 1408)" as "7" (what the kernel takes). */
	snapshot(root, &after);
	changed(&before, &after, diff, sizeof(diff));
	assert_string_equal(diff, "buffer_size_kb events/syscalls/sys_enter_getppid/filter");
	expect(root, "events/syscalls/sys_enter_getppid/filter", "0");
	expect(root, "buffer_size_kb", "7");
	sonde_strlist_fini(&before);
	sonde_strlist_fini(&during);
	sonde_strlist_fini(&after);
	fake_tree_remove(root);
}

/* Recording: pages land in the page files per CPU number; a failed start still restores. */
static void test_session_record(void **state)
{
	char *root = session_tracefs();
	struct sonde_ftrace_event ev[] = {{"sched", NULL}};
	/* Not in CPU order: the page file of each is picked by CPU number. */
	int cpus[] = {1, 0};
	char f0[PATH_MAX], f1[PATH_MAX], f2[PATH_MAX], *text = NULL;
	const char *files[] = {f0, f1, f2};
	struct sonde_ftrace_session_config cfg = {
	    .ftrace = {.tracefs = root, .top_level = true, .events = ev, .nevents = 1},
	    .cpus = cpus,
	    .ncpus = 2,
	    .cpu_files = files,
	};
	struct sonde_ftrace_session *s;
	struct sonde_ftrace_session_stats st;
	struct sonde_errmsg err = {{0}};
	struct sonde_strlist before, after;
	char diff[1024];
	bool cut;

	snprintf(f0, sizeof(f0), "%s/../%s.cpu0", root, strrchr(root, '/') + 1);
	snprintf(f1, sizeof(f1), "%s/../%s.cpu1", root, strrchr(root, '/') + 1);
	snprintf(f2, sizeof(f2), "%s/../%s.cpu2", root, strrchr(root, '/') + 1);
	snapshot(root, &before);
	assert_int_equal(sonde_ftrace_session_open(&cfg, &s, &err), 0);
	assert_int_equal(sonde_ftrace_session_start(s, &err), 0);
	assert_int_equal(sonde_ftrace_session_fd(s), -1);
	assert_int_equal(sonde_ftrace_session_stop(s), 0);
	assert_int_equal(sonde_ftrace_session_drain(s, 5, &cut, &err), 0);
	assert_int_equal(sonde_ftrace_session_close(s, NULL, &err), 0);
	assert_int_equal(sonde_read_all(f0, &text, NULL), 0);
	assert_string_equal(text, "PAGE-OF-CPU0");
	free(text);
	assert_int_equal(sonde_read_all(f1, &text, NULL), 0);
	assert_string_equal(text, "PAGE-OF-CPU1");
	free(text);
	snapshot(root, &after);
	changed(&before, &after, diff, sizeof(diff));
	assert_string_equal(diff, "");
	sonde_strlist_fini(&after);

	/* A CPU without trace_pipe_raw: start fails, close still restores everything. */
	cpus[0] = 2;
	assert_int_equal(sonde_ftrace_session_open(&cfg, &s, &err), 0);
	assert_int_equal(sonde_ftrace_session_start(s, &err), -ENOENT);
	assert_non_null(strstr(err.text, "per_cpu/cpu2/trace_pipe_raw"));
	sonde_ftrace_session_stop(s);
	assert_int_equal(sonde_ftrace_session_close(s, &st, &err), 0);
	assert_int_equal(st.ncpus, 3);
	assert_false(st.have[2]);
	assert_true(st.have[0]);
	sonde_ftrace_session_stats_fini(&st);
	snapshot(root, &after);
	changed(&before, &after, diff, sizeof(diff));
	assert_string_equal(diff, "");
	assert_int_equal(access(f2, F_OK), -1);
	unlink(f0);
	unlink(f1);
	sonde_strlist_fini(&before);
	sonde_strlist_fini(&after);
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
	    cmocka_unit_test(test_session_live),
	    cmocka_unit_test(test_session_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
