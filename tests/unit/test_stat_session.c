// SPDX-License-Identifier: MIT
/*
 * The stat session (sonde_stat_run()) on real software counters of a real
 * workload: runs and their means, the workload's exit status, an exec
 * failure, and -I intervals through the callback.  Skipped where
 * perf_event_open is not allowed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <sonde/stat_session.h>

struct calls {
	int open, start, intervals;
	double last_since;
	bool monotonic, covered;
	double clock_ns; /* task-clock summed over the intervals */
};

static void on_open(void *ctx, const struct sonde_counters *cs)
{
	struct calls *c = ctx;

	assert_int_equal(cs->n, 2);
	c->open++;
}

static void on_start(void *ctx)
{
	((struct calls *)ctx)->start++;
}

static void on_interval(void *ctx, const struct sonde_stat_interval *iv)
{
	struct calls *c = ctx;

	assert_int_equal(iv->n, 2);
	c->intervals++;
	c->monotonic &= iv->since_start_s > c->last_since;
	c->covered &= iv->covered_ns > 0;
	c->last_since = iv->since_start_s;
	if (iv->counts[0].counted)
		c->clock_ns += iv->counts[0].value;
}

static struct sonde_evlist l;

static int run(struct sonde_stat *s, char *const *argv, int repeat, long interval_ms,
	       struct calls *c)
{
	static const struct sonde_roots roots = {.sysfs = "/sys"};
	int r;

	sonde_evlist_init(&l);
	assert_int_equal(sonde_evlist_parse(&l, "task-clock,page-faults", &roots), 0);
	memset(c, 0, sizeof(*c));
	c->monotonic = c->covered = true;
	r = sonde_stat_run(s, &(struct sonde_stat_opts){.events = &l,
							.target = {.procfs = "/proc"},
							.argv = argv,
							.repeat = repeat,
							.interval_ms = interval_ms,
							.on_open = on_open,
							.on_start = on_start,
							.on_interval = on_interval,
							.ctx = c});
	/* Not an error of the session: this machine counts nothing. */
	if (r < 0 && s->failed == SONDE_STAT_OPEN) {
		sonde_stat_fini(s);
		sonde_evlist_fini(&l);
		skip();
	}
	return r;
}

static void test_runs_and_means(void **state)
{
	char *argv[] = {"sh", "-c", "exit 5", NULL};
	struct sonde_stat s;
	struct calls c;

	(void)state;
	assert_int_equal(run(&s, argv, 3, 0, &c), 0);
	assert_int_equal(s.runs, 3);
	assert_int_equal(c.open, 3);
	assert_int_equal(c.start, 3);
	assert_int_equal(c.intervals, 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.counts[0].ev->name, "task-clock");
	assert_int_equal(s.counts[0].nruns, 3);
	assert_true(s.counts[0].counted && s.counts[0].value > 0);
	assert_int_equal(s.counts[1].nruns, 3);
	assert_true(s.counts[1].value >= 1); /* an exec faults pages in */
	assert_true(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 5);
	assert_false(s.stopped_by_signal);
	assert_true(s.elapsed_mean_s > 0);
	/* The task's own time is within the wall time of its run. */
	assert_true(s.counts[0].value / 1e9 <= s.elapsed_mean_s * 3);
	sonde_stat_fini(&s);
	sonde_evlist_fini(&l);
}

static void test_exec_failure(void **state)
{
	char *argv[] = {"/nonexistent/sonde-test", NULL};
	struct sonde_stat s;
	struct calls c;

	(void)state;
	assert_true(run(&s, argv, 1, 0, &c) < 0);
	assert_int_equal(s.failed, SONDE_STAT_EXEC);
	assert_string_equal(s.err.text,
			    "can't run '/nonexistent/sonde-test': No such file or directory");
	assert_int_equal(s.runs, 0);
	assert_int_equal(c.start, 0);
	sonde_stat_fini(&s);
	sonde_evlist_fini(&l);
}

static void test_intervals(void **state)
{
	char *argv[] = {"sleep", "0.3", NULL};
	struct sonde_stat s;
	struct calls c;

	(void)state;
	assert_int_equal(run(&s, argv, 1, 20, &c), 0);
	assert_int_equal(s.runs, 1);
	/* Ticks every 20 ms of 300: at least one and the tail, each later than the one before. */
	assert_true(c.intervals >= 2);
	assert_true(c.monotonic);
	assert_true(c.covered);
	assert_true(c.clock_ns > 0);
	/* With -I the counts go to the callback, not to the means. */
	assert_false(s.counts[0].counted);
	assert_true(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 0);
	sonde_stat_fini(&s);
	sonde_evlist_fini(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runs_and_means),
	    cmocka_unit_test(test_exec_failure),
	    cmocka_unit_test(test_intervals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
