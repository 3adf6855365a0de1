// SPDX-License-Identifier: MIT
/*
 * perf sched latency's bookkeeping (6.1's rules, so the same file gives the
 * same table: see docs/sonde-sched.1), without its lists of atoms: only a
 * task's last atom matters for what it reports, so each task keeps that
 * atom's state (sleeping, waiting for a CPU since a time, running) next to
 * its totals.  Tasks are found by tid through a u32 map into one array;
 * CPUs keep the time of their last switch and who runs there, for the
 * runtime of captures without sched_stat_runtime.
 */
#include <sonde/schedlat.h>
#include <sonde/tool.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/u32map.h>

enum tstate { T_SLEEPING, T_WAIT_CPU, T_RUNNING, T_IGNORE };

struct task {
	struct sonde_schedlat_row row;
	enum tstate state;
	uint64_t sched_out, wake_up;
};

struct cpu {
	uint64_t last_switch;
	uint32_t curr;
	bool known;
};

struct sonde_schedlat {
	const struct sonde_tp_decoder *tp;
	const struct sonde_tp_event *sw, *wakeup, *wakeup_new, *runtime;
	struct sonde_u32map index;
	struct task *tasks;
	size_t n, cap;
	struct cpu *cpus;
	size_t ncpus;
	struct sonde_schedlat_row *out;
};

int sonde_schedlat_new(struct sonde_schedlat **out, const struct sonde_tp_decoder *tp)
{
	struct sonde_schedlat *sl;
	const struct sonde_tp_event *sw = sonde_tp_find_name(tp, "sched", "sched_switch");

	if (!sw)
		return -ENOENT;
	if (!(sl = calloc(1, sizeof(*sl))))
		return -ENOMEM;
	sl->tp = tp;
	sl->sw = sw;
	/* perf sched latency (6.1) handles sched_wakeup and sched_wakeup_new, not
	 * sched_waking (only its timehist does), so neither does sonde: the same
	 * file gives the same table. */
	sl->wakeup = sonde_tp_find_name(tp, "sched", "sched_wakeup");
	sl->wakeup_new = sonde_tp_find_name(tp, "sched", "sched_wakeup_new");
	sl->runtime = sonde_tp_find_name(tp, "sched", "sched_stat_runtime");
	sonde_u32map_init(&sl->index);
	*out = sl;
	return 0;
}

void sonde_schedlat_free(struct sonde_schedlat *sl)
{
	if (!sl)
		return;
	sonde_u32map_fini(&sl->index);
	free(sl->tasks);
	free(sl->cpus);
	free(sl->out);
	free(sl);
}

/* The task @tid, made on first sight in @initial state at @t. */
static struct task *task_of(struct sonde_schedlat *sl, uint32_t tid, bool *isnew)
{
	uint32_t i;

	*isnew = false;
	if (sonde_u32map_get(&sl->index, tid, &i))
		return &sl->tasks[i];
	if (sl->n == sl->cap) {
		size_t cap = sl->cap ? sl->cap * 2 : 64;
		struct task *v = realloc(sl->tasks, cap * sizeof(*v));

		if (!v)
			return NULL;
		sl->tasks = v;
		sl->cap = cap;
	}
	if (sonde_u32map_put(&sl->index, tid, (uint32_t)sl->n))
		return NULL;
	memset(&sl->tasks[sl->n], 0, sizeof(sl->tasks[0]));
	sl->tasks[sl->n].row.tid = tid;
	sl->tasks[sl->n].row.merged = 1;
	*isnew = true;
	return &sl->tasks[sl->n++];
}

/* A new atom: switched out (or first seen) at @t; runnable ones wait from then. */
static void sched_out(struct task *k, bool runnable, uint64_t t)
{
	k->sched_out = t;
	k->state = runnable ? T_WAIT_CPU : T_SLEEPING;
	if (runnable)
		k->wake_up = t;
}

static void sched_in(struct task *k, uint64_t t)
{
	uint64_t d;

	if (k->state != T_WAIT_CPU)
		return;
	if (t < k->wake_up) {
		k->state = T_IGNORE;
		return;
	}
	k->state = T_RUNNING;
	d = t - k->wake_up;
	k->row.total_delay += d;
	if (d > k->row.max_delay) {
		k->row.max_delay = d;
		k->row.max_start = k->wake_up;
		k->row.max_end = t;
	}
	k->row.switches++;
}

static struct cpu *cpu_of(struct sonde_schedlat *sl, uint32_t cpu)
{
	if (cpu >= 65536)
		return NULL;
	if (cpu >= sl->ncpus) {
		size_t n = cpu + 1u;
		struct cpu *v = realloc(sl->cpus, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + sl->ncpus, 0, (n - sl->ncpus) * sizeof(*v));
		sl->cpus = v;
		sl->ncpus = n;
	}
	return &sl->cpus[cpu];
}

static int on_switch(struct sonde_schedlat *sl, const void *raw, size_t size, uint64_t t,
		     uint32_t cpu)
{
	int64_t prev, next, state;
	struct task *out, *in;
	struct cpu *c = cpu_of(sl, cpu);
	bool isnew;

	if (sonde_tp_field_int(sl->tp, sl->sw, "prev_pid", raw, size, &prev) ||
	    sonde_tp_field_int(sl->tp, sl->sw, "next_pid", raw, size, &next) ||
	    sonde_tp_field_int(sl->tp, sl->sw, "prev_state", raw, size, &state))
		return 0;
	if (!c)
		return -ENOMEM;
	if (!(out = task_of(sl, (uint32_t)prev, &isnew)))
		return -ENOMEM;
	/* Without sched_stat_runtime: the time since the switch-in on this CPU. */
	if (!sl->runtime && c->known && c->curr == (uint32_t)prev && t >= c->last_switch)
		out->row.runtime += t - c->last_switch;
	/*
	 * Runnable (waiting for a CPU from now) only in state R, 0: perf
	 * sched latency's rule, which makes its Switches "switch-ins after a
	 * wakeup or a yield".  perf 6.1 turns prev_state into a letter by
	 * indexing "RSDTtZXxKWP" with the raw value, so a preempted task (R+,
	 * TASK_REPORT_MAX 0x100) is not 'R': it waits for no wakeup, and its
	 * next switch-in is not a switch.
	 */
	sched_out(out, state == 0, t);
	if (!(in = task_of(sl, (uint32_t)next, &isnew)))
		return -ENOMEM;
	if (isnew)
		sched_out(in, true, t);
	sched_in(in, t);
	c->known = true;
	c->curr = (uint32_t)next;
	c->last_switch = t;
	return 0;
}

static int on_wakeup(struct sonde_schedlat *sl, const struct sonde_tp_event *ev, const void *raw,
		     size_t size, uint64_t t)
{
	int64_t pid;
	struct task *k;
	bool isnew;

	if (sonde_tp_field_int(sl->tp, ev, "pid", raw, size, &pid))
		return 0;
	if (!(k = task_of(sl, (uint32_t)pid, &isnew)))
		return -ENOMEM;
	if (isnew)
		sched_out(k, false, t);
	/* A wakeup of a task still on a run queue changes nothing. */
	if (k->state != T_SLEEPING || k->sched_out > t)
		return 0;
	k->state = T_WAIT_CPU;
	k->wake_up = t;
	return 0;
}

static int on_runtime(struct sonde_schedlat *sl, const void *raw, size_t size, uint64_t t)
{
	int64_t pid, runtime;
	struct task *k;
	bool isnew;

	if (sonde_tp_field_int(sl->tp, sl->runtime, "pid", raw, size, &pid) ||
	    sonde_tp_field_int(sl->tp, sl->runtime, "runtime", raw, size, &runtime))
		return 0;
	if (!(k = task_of(sl, (uint32_t)pid, &isnew)))
		return -ENOMEM;
	if (isnew)
		sched_out(k, true, t);
	k->row.runtime += (uint64_t)runtime;
	return 0;
}

int sonde_schedlat_add(struct sonde_schedlat *sl, const void *raw, size_t size, uint64_t time,
		       uint32_t cpu)
{
	const struct sonde_tp_event *ev = sonde_tp_find_raw(sl->tp, raw, size);

	if (!ev)
		return 0;
	if (ev == sl->sw)
		return on_switch(sl, raw, size, time, cpu);
	if (ev == sl->wakeup || ev == sl->wakeup_new)
		return on_wakeup(sl, ev, raw, size, time);
	if (ev == sl->runtime)
		return on_runtime(sl, raw, size, time);
	return 0;
}

static int by_delay(const void *a, const void *b)
{
	const struct sonde_schedlat_row *x = a, *y = b;
	uint64_t ax = x->switches ? x->total_delay / x->switches : 0;
	uint64_t ay = y->switches ? y->total_delay / y->switches : 0;

	if (ax != ay)
		return ax > ay ? -1 : 1;
	if (x->max_delay != y->max_delay)
		return x->max_delay > y->max_delay ? -1 : 1;
	if (x->switches != y->switches)
		return x->switches > y->switches ? -1 : 1;
	if (x->runtime != y->runtime)
		return x->runtime > y->runtime ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void merge_into(struct sonde_schedlat_row *to, const struct sonde_schedlat_row *r)
{
	to->merged += r->merged;
	to->runtime += r->runtime;
	to->switches += r->switches;
	to->total_delay += r->total_delay;
	if (r->max_delay > to->max_delay) {
		to->max_delay = r->max_delay;
		to->max_start = r->max_start;
		to->max_end = r->max_end;
	}
}

size_t sonde_schedlat_rows(struct sonde_schedlat *sl, uint32_t (*comm)(void *ctx, uint32_t tid),
			   void *ctx, bool merge, const struct sonde_schedlat_row **rows)
{
	struct sonde_u32map by_comm;
	size_t n = 0;

	free(sl->out);
	*rows = sl->out = calloc(sl->n ? sl->n : 1, sizeof(*sl->out));
	if (!sl->out)
		return 0;
	sonde_u32map_init(&by_comm);
	for (size_t i = 0; i < sl->n; i++) {
		struct sonde_schedlat_row r = sl->tasks[i].row;
		uint32_t at;

		if (r.tid == 0)
			continue; /* the idle task */
		r.comm = comm(ctx, r.tid);
		if (merge && sonde_u32map_get(&by_comm, r.comm, &at)) {
			merge_into(&sl->out[at], &r);
			continue;
		}
		if (merge && sonde_u32map_put(&by_comm, r.comm, (uint32_t)n))
			merge = false; /* out of memory: one row per task */
		sl->out[n++] = r;
	}
	sonde_u32map_fini(&by_comm);
	/* perf leaves out what never waited for a CPU */
	for (size_t i = 0; i < n;)
		if (!sl->out[i].switches)
			sl->out[i] = sl->out[--n];
		else
			i++;
	qsort(sl->out, n, sizeof(*sl->out), by_delay);
	return n;
}

/* The schedlat tool: every raw sample of the pass, in time order. */
static int tool_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	(void)ses;
	if (!ts->s->raw)
		return 0;
	return sonde_schedlat_add(ctx, ts->s->raw, ts->s->raw_size, ts->s->time, ts->s->cpu);
}

const struct sonde_tool sonde_schedlat_tool = {
    .name = "schedlat",
    .sample = tool_sample,
};
