// SPDX-License-Identifier: MIT
/*
 * perf stat's derived metrics, computed and not printed: a count goes in
 * with the counts of the other events of the same run, the metric comes out
 * as a value and perf's unit text.  The ratios follow perf's choices:
 * task-clock (or cpu-clock) over the elapsed time gives CPUs utilized,
 * cycles over the clock GHz, instructions over cycles insn per cycle,
 * branch and cache misses (and each cache event's misses) a % of their
 * accesses, and everything else a rate per second of task time, scaled to
 * K, M or G.  An event whose base was not counted falls back to the rate.
 */
#include <sonde/stat_metrics.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

void sonde_stat_count_add(struct sonde_stat_count *c, double value, uint64_t enabled,
			  uint64_t running)
{
	double delta = value - c->value;

	c->nruns++;
	c->value += delta / c->nruns;
	c->m2 += delta * (value - c->value);
	c->counted = true;
	c->enabled = enabled;
	c->running = running;
}

double sonde_stat_noise_pct(const struct sonde_stat_count *c)
{
	double sd;

	if (c->nruns < 2 || c->value == 0)
		return 0;
	sd = sqrt(c->m2 / (c->nruns - 1)) / sqrt(c->nruns);
	return 100.0 * sd / fabs(c->value);
}

static bool is_sw(const struct sonde_event *e, uint64_t config)
{
	return e->attr.type == PERF_TYPE_SOFTWARE && e->attr.config == config;
}

bool sonde_stat_is_clock(const struct sonde_event *e)
{
	return is_sw(e, PERF_COUNT_SW_TASK_CLOCK) || is_sw(e, PERF_COUNT_SW_CPU_CLOCK);
}

/* The first counted event of that type and config: the base of a ratio. */
static const struct sonde_stat_count *find(const struct sonde_stat_count *counts, size_t n,
					   uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < n; i++)
		if (counts[i].counted && counts[i].ev->attr.type == type &&
		    counts[i].ev->attr.config == config)
			return &counts[i];
	return NULL;
}

static const struct sonde_stat_count *find_clock(const struct sonde_stat_count *counts, size_t n)
{
	const struct sonde_stat_count *c =
	    find(counts, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);

	return c ? c : find(counts, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
}

static const char *const cache_label[] = {"L1-dcache",	"L1-icache",	"LL-cache",  "dTLB cache",
					  "iTLB cache", "branch cache", "node cache"};

/* @value as a percentage of @base (0 when the base is 0). */
static void percent_of(struct sonde_stat_metric *m, double value,
		       const struct sonde_stat_count *base)
{
	m->value = base->value > 0 ? 100.0 * value / base->value : 0;
	m->percent = true;
}

/* The ratios of hardware events to their bases.  Return: true when set. */
static bool hw_ratio(const struct sonde_stat_count *c, const struct sonde_stat_count *counts,
		     size_t n, const struct sonde_stat_count *clock, struct sonde_stat_metric *m)
{
	const struct sonde_stat_count *base;

	switch (c->ev->attr.config) {
	case PERF_COUNT_HW_CPU_CYCLES:
		if (!clock)
			return false;
		m->value = clock->value > 0 ? c->value / clock->value : 0;
		snprintf(m->unit, sizeof(m->unit), "GHz");
		return true;
	case PERF_COUNT_HW_INSTRUCTIONS:
		base = find(counts, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		if (!base)
			return false;
		m->value = base->value > 0 ? c->value / base->value : 0;
		snprintf(m->unit, sizeof(m->unit), "insn per cycle");
		return true;
	case PERF_COUNT_HW_BRANCH_MISSES:
		base = find(counts, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
		if (!base)
			return false;
		percent_of(m, c->value, base);
		snprintf(m->unit, sizeof(m->unit), "of all branches");
		return true;
	case PERF_COUNT_HW_CACHE_MISSES:
		base = find(counts, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES);
		if (!base)
			return false;
		percent_of(m, c->value, base);
		snprintf(m->unit, sizeof(m->unit), "of all cache refs");
		return true;
	}
	return false;
}

void sonde_stat_metric(const struct sonde_stat_count *counts, size_t n, size_t i, double elapsed_ns,
		       struct sonde_stat_metric *m)
{
	const struct sonde_stat_count *c = &counts[i], *clock = find_clock(counts, n), *base;
	const struct sonde_event *e = c->ev;
	double secs = (clock ? clock->value : elapsed_ns) / 1e9;

	memset(m, 0, sizeof(*m));
	if (!c->counted)
		return;
	m->valid = true;
	if (sonde_stat_is_clock(e)) {
		m->value = elapsed_ns > 0 ? c->value / elapsed_ns : 0;
		snprintf(m->unit, sizeof(m->unit), "CPUs utilized");
		return;
	}
	if (e->attr.type == PERF_TYPE_HARDWARE && hw_ratio(c, counts, n, clock, m))
		return;
	/* A cache event's misses (result 1) over its accesses (result 0). */
	if (e->attr.type == PERF_TYPE_HW_CACHE && (e->attr.config >> 16) == 1) {
		unsigned int cache = e->attr.config & 0xff;

		base = find(counts, n, PERF_TYPE_HW_CACHE, e->attr.config & 0xffff);
		if (base && cache < sizeof(cache_label) / sizeof(cache_label[0])) {
			percent_of(m, c->value, base);
			snprintf(m->unit, sizeof(m->unit), "of all %s accesses",
				 cache_label[cache]);
			return;
		}
	}
	/* Everything else: a rate per second of (task) time. */
	m->value = secs > 0 ? c->value / secs : 0;
	if (m->value >= 1e9) {
		m->value /= 1e9;
		snprintf(m->unit, sizeof(m->unit), "G/sec");
	} else if (m->value >= 1e6) {
		m->value /= 1e6;
		snprintf(m->unit, sizeof(m->unit), "M/sec");
	} else if (m->value >= 1e3) {
		m->value /= 1e3;
		snprintf(m->unit, sizeof(m->unit), "K/sec");
	} else {
		snprintf(m->unit, sizeof(m->unit), "/sec");
	}
}
