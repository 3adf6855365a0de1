// SPDX-License-Identifier: MIT
/*
 * The counting session behind `sonde stat` (include/sonde/stat_session.h).
 *
 * One run: fork the workload and hold it at its gate, open the counters
 * disabled (a workload's start at its exec through enable_on_exec; others
 * are enabled here), start it, then wait in sonde_wait_until() for the
 * workload's end, the attached tasks' end or a stop signal, with -I as the
 * wait's timeout.  Each tick reads every counter and hands the deltas from
 * the previous reading, scaled, to on_interval().  At the end the counters
 * are disabled and read once more: with -I the tail since the last tick
 * goes out as one more interval, otherwise the run's scaled counts are
 * added to the per-event means (Welford), as is the run's elapsed time.
 * A stop signal goes to the workload once; the run then ends with it.
 */
#include <sonde/stat_session.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sonde/wait.h>
#include <sonde/workload.h>

/* One run's state. */
struct run {
	struct sonde_stat *s;
	struct sonde_workload wl;
	uint64_t (*prev)[3]; /* value, enabled, running at the last tick */
	double t0, last;     /* CLOCK_MONOTONIC ns: counting began, the last tick */
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int fail(struct sonde_stat *s, enum sonde_stat_failure f, int code, const char *fmt,
		const char *arg)
{
	s->failed = f;
	return sonde_errmsg_set(&s->err, code, fmt, arg, sonde_strerror(code));
}

/* Whether any counter moved since the values in @prev (as last read). */
static bool counted_since(const struct sonde_counters *cs, uint64_t (*prev)[3])
{
	for (size_t i = 0; i < cs->n; i++)
		if (!cs->c[i].err && cs->c[i].value != prev[i][0])
			return true;
	return false;
}

/* The counts of the last interval (the deltas from r->prev) to on_interval(). */
static void interval(struct run *r)
{
	struct sonde_stat *s = r->s;
	struct sonde_counters *cs = &s->cs;
	struct sonde_stat_count *counts = calloc(cs->n ? cs->n : 1, sizeof(*counts));
	double now = now_ns();

	if (!counts || sonde_counters_read(cs) < 0) {
		free(counts);
		return;
	}
	for (size_t i = 0; i < cs->n; i++) {
		struct sonde_counter d = cs->c[i];
		double v;

		d.value -= r->prev[i][0];
		d.enabled -= r->prev[i][1];
		d.running -= r->prev[i][2];
		r->prev[i][0] = cs->c[i].value;
		r->prev[i][1] = cs->c[i].enabled;
		r->prev[i][2] = cs->c[i].running;
		counts[i].ev = d.ev;
		counts[i].err = d.err;
		counts[i].enabled = d.enabled;
		counts[i].running = d.running;
		if (!d.err && sonde_counter_scaled(&d, &v))
			sonde_stat_count_add(&counts[i], v, d.enabled, d.running);
	}
	if (s->o.on_interval)
		s->o.on_interval(
		    s->o.ctx, &(struct sonde_stat_interval){.counts = counts,
							    .n = cs->n,
							    .covered_ns = now - r->last,
							    .since_start_s = (now - r->t0) / 1e9});
	free(counts);
}

/* A run's final reading added to the means over the runs. */
static void add_run(struct sonde_stat *s)
{
	const struct sonde_counters *cs = &s->cs;

	for (size_t i = 0; i < cs->n && i < s->n; i++) {
		struct sonde_stat_count *c = &s->counts[i];
		double v;

		c->err = cs->c[i].err;
		if (!cs->c[i].err && sonde_counter_scaled(&cs->c[i], &v))
			sonde_stat_count_add(c, v, cs->c[i].enabled, cs->c[i].running);
		else {
			c->enabled = cs->c[i].enabled;
			c->running = cs->c[i].running;
		}
	}
}

/* Waits for the end of the run, reading the counters at each -I tick. */
static void wait_run(struct run *r, struct sonde_wait *w)
{
	struct sonde_stat *s = r->s;
	double deadline = r->t0 + (double)s->o.interval_ms * 1e6;

	for (;;) {
		int64_t timeout = -1;
		int ev;

		if (s->o.interval_ms > 0) {
			double left = deadline - now_ns();

			timeout = left > 0 ? (int64_t)left : 0;
		}
		ev = sonde_wait_until(w, NULL, 0, timeout);
		if (ev < 0)
			break;
		if (ev & SONDE_WAIT_SIGNAL) {
			/* Ctrl-C: the workload stops too, and the counts so far count. */
			if (r->wl.pid > 0 && !s->stopped_by_signal)
				kill(r->wl.pid, w->signal);
			s->stopped_by_signal = true;
			if (r->wl.pid <= 0 && !(ev & SONDE_WAIT_EXITED))
				break;
		}
		if (ev & SONDE_WAIT_EXITED) {
			s->status = w->status;
			s->ru = w->ru;
			break;
		}
		if (ev & SONDE_WAIT_GONE)
			break;
		if ((ev & SONDE_WAIT_TICK) && s->o.interval_ms > 0) {
			interval(r);
			r->last = now_ns();
			deadline += (double)s->o.interval_ms * 1e6;
		}
	}
}

/* Starts counting: the workload's exec, or the counters of attached targets. */
static int start(struct run *r, const struct sonde_target *t)
{
	struct sonde_stat *s = r->s;
	int e;

	if (r->wl.pid <= 0) {
		sonde_counters_enable(&s->cs);
		r->t0 = now_ns();
		return 0;
	}
	/* System wide, the CPUs count from before the exec. */
	if (t->cpus)
		sonde_counters_enable(&s->cs);
	r->t0 = now_ns();
	e = sonde_workload_start(&r->wl);
	if (e < 0)
		return fail(s, SONDE_STAT_EXEC, e, "can't run '%s': %s", s->o.argv[0]);
	return 0;
}

static int run_once(struct sonde_stat *s)
{
	const struct sonde_stat_opts *o = &s->o;
	struct run r = {.s = s, .wl = {.pid = -1, .go_fd = -1, .err_fd = -1}};
	struct sonde_target t = o->target;
	struct sonde_wait w = {.wl_pidfd = -1};
	double elapsed;
	int e;

	s->status = -1;
	s->stopped_by_signal = false;
	memset(&s->ru, 0, sizeof(s->ru));
	if (o->argv) {
		e = sonde_workload_prepare(&r.wl, o->argv);
		if (e < 0)
			return fail(s, SONDE_STAT_SPAWN, e, "can't start '%s': %s", o->argv[0]);
		t.workload = r.wl.pid;
	}
	e = sonde_counters_open(&s->cs, o->events, &t);
	if (e < 0) {
		s->failed = SONDE_STAT_OPEN;
		s->err = s->cs.err;
		sonde_workload_abort(&r.wl);
		return e;
	}
	if (o->on_open)
		o->on_open(o->ctx, &s->cs);
	r.prev = calloc(s->cs.n ? s->cs.n : 1, sizeof(*r.prev));
	/* The workload, or else the attached tasks: their end ends the run. */
	e = r.prev ? sonde_wait_init(&w,
				     &(struct sonde_wait_opts){
					 .wl = r.wl.pid > 0 ? &r.wl : NULL,
					 .pids = r.wl.pid > 0 ? NULL : t.pids,
					 .npids = r.wl.pid > 0 ? 0 : t.npids,
					 .tids = r.wl.pid > 0 ? NULL : t.tids,
					 .ntids = r.wl.pid > 0 ? 0 : t.ntids,
					 .waitmask = o->waitmask,
					 .stop_signal = o->stop_signal,
					 .child_exited = o->child_exited,
				     })
		   : -ENOMEM;
	if (e < 0) {
		s->failed = SONDE_STAT_NOMEM;
		sonde_errmsg_set(&s->err, e, "out of memory");
		sonde_workload_abort(&r.wl);
		goto out;
	}
	e = start(&r, &t);
	if (e < 0)
		goto out;
	r.last = r.t0;
	if (o->on_start)
		o->on_start(o->ctx);
	wait_run(&r, &w);
	elapsed = now_ns() - r.t0;
	sonde_counters_disable(&s->cs);
	e = sonde_counters_read(&s->cs);
	if (e < 0) {
		s->failed = SONDE_STAT_READ;
		s->err = s->cs.err;
		goto out;
	}
	if (o->interval_ms > 0) {
		/* The tail since the last tick, unless it is empty: a short tail
		 * that still counted goes out, or the intervals would not add up
		 * to what ran. */
		if (elapsed - (r.last - r.t0) > 1e6 || counted_since(&s->cs, r.prev))
			interval(&r);
	} else {
		add_run(s);
	}
	/* The elapsed time's mean and variation over the runs (Welford). */
	{
		double d = elapsed / 1e9 - s->elapsed_mean_s;

		s->elapsed_mean_s += d / (s->runs + 1);
		s->elapsed_m2 += d * (elapsed / 1e9 - s->elapsed_mean_s);
		s->runs++;
	}
out:
	sonde_wait_fini(&w);
	free(r.prev);
	sonde_counters_close(&s->cs);
	return e < 0 ? e : 0;
}

int sonde_stat_run(struct sonde_stat *s, const struct sonde_stat_opts *o)
{
	int repeat = o->repeat > 1 ? o->repeat : 1, e;

	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->status = -1;
	s->n = o->events->n;
	s->counts = calloc(s->n ? s->n : 1, sizeof(*s->counts));
	if (!s->counts) {
		s->failed = SONDE_STAT_NOMEM;
		return sonde_errmsg_set(&s->err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < s->n; i++)
		s->counts[i].ev = &o->events->events[i];
	for (int run = 0; run < repeat; run++) {
		e = run_once(s);
		if (e < 0)
			return e;
		if (s->stopped_by_signal)
			break;
	}
	return 0;
}

double sonde_stat_elapsed_sd(const struct sonde_stat *s)
{
	return s->runs > 1 ? sqrt(s->elapsed_m2 / (s->runs - 1)) / sqrt(s->runs) : 0;
}

void sonde_stat_fini(struct sonde_stat *s)
{
	sonde_counters_close(&s->cs);
	free(s->counts);
	s->counts = NULL;
	s->n = 0;
}
