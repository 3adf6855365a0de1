// SPDX-License-Identifier: MIT
/*
 * stat output in the three forms perf users parse: the aligned table, CSV
 * (-x SEP: value,unit,event,[variance,]runtime,pcnt-running,metric,unit)
 * and JSON lines.  Derived metrics follow perf's choices: task-clock gives
 * CPUs utilized, cycles GHz, instructions insn per cycle, misses a % of
 * their accesses, and everything else a rate per second of task time.
 */
#include "stat.h"

#include <sonde/json.h>

#include <math.h>
#include <string.h>

void stat_row_add(struct stat_row *row, double value, uint64_t enabled, uint64_t running)
{
	double delta = value - row->value;

	row->nruns++;
	row->value += delta / row->nruns;
	row->m2 += delta * (value - row->value);
	row->counted = true;
	row->enabled = enabled;
	row->running = running;
}

/* Standard deviation of the mean, as a percentage of the mean. */
static double noise_pct(const struct stat_row *r)
{
	double sd;

	if (r->nruns < 2 || r->value == 0)
		return 0;
	sd = sqrt(r->m2 / (r->nruns - 1)) / sqrt(r->nruns);
	return 100.0 * sd / fabs(r->value);
}

static bool is_sw(const struct sonde_event *e, uint64_t config)
{
	return e->attr.type == PERF_TYPE_SOFTWARE && e->attr.config == config;
}

static bool is_clock(const struct sonde_event *e)
{
	return is_sw(e, PERF_COUNT_SW_TASK_CLOCK) || is_sw(e, PERF_COUNT_SW_CPU_CLOCK);
}

static const struct stat_row *find(const struct stat_row *rows, size_t n, uint32_t type,
				   uint64_t config)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].counted && rows[i].ev->attr.type == type &&
		    rows[i].ev->attr.config == config)
			return &rows[i];
	return NULL;
}

static const struct stat_row *find_clock(const struct stat_row *rows, size_t n)
{
	const struct stat_row *r = find(rows, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);

	return r ? r : find(rows, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
}

struct metric {
	double value;
	char unit[48];
	bool percent;
	bool valid;
};

static const char *const cache_label[] = {"L1-dcache", "L1-icache", "LL-cache", "dTLB cache",
					  "iTLB cache", "branch cache", "node cache"};

static void compute_metric(const struct stat_row *r, const struct stat_row *rows, size_t n,
			   double elapsed_ns, struct metric *m)
{
	const struct sonde_event *e = r->ev;
	const struct stat_row *clock = find_clock(rows, n), *base;
	double secs = (clock ? clock->value : elapsed_ns) / 1e9;

	memset(m, 0, sizeof(*m));
	if (!r->counted)
		return;
	m->valid = true;
	if (is_clock(e)) {
		m->value = elapsed_ns > 0 ? r->value / elapsed_ns : 0;
		snprintf(m->unit, sizeof(m->unit), "CPUs utilized");
		return;
	}
	if (e->attr.type == PERF_TYPE_HARDWARE) {
		switch (e->attr.config) {
		case PERF_COUNT_HW_CPU_CYCLES:
			if (!clock)
				break;
			m->value = clock->value > 0 ? r->value / clock->value : 0;
			snprintf(m->unit, sizeof(m->unit), "GHz");
			return;
		case PERF_COUNT_HW_INSTRUCTIONS:
			base = find(rows, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
			if (!base)
				break;
			m->value = base->value > 0 ? r->value / base->value : 0;
			snprintf(m->unit, sizeof(m->unit), "insn per cycle");
			return;
		case PERF_COUNT_HW_BRANCH_MISSES:
			base = find(rows, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
			if (!base)
				break;
			m->value = base->value > 0 ? 100.0 * r->value / base->value : 0;
			m->percent = true;
			snprintf(m->unit, sizeof(m->unit), "of all branches");
			return;
		case PERF_COUNT_HW_CACHE_MISSES:
			base = find(rows, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES);
			if (!base)
				break;
			m->value = base->value > 0 ? 100.0 * r->value / base->value : 0;
			m->percent = true;
			snprintf(m->unit, sizeof(m->unit), "of all cache refs");
			return;
		}
	}
	if (e->attr.type == PERF_TYPE_HW_CACHE && (e->attr.config >> 16) == 1) {
		unsigned int cache = e->attr.config & 0xff;

		base = find(rows, n, PERF_TYPE_HW_CACHE, e->attr.config & 0xffff);
		if (base && cache < sizeof(cache_label) / sizeof(cache_label[0])) {
			m->value = base->value > 0 ? 100.0 * r->value / base->value : 0;
			m->percent = true;
			snprintf(m->unit, sizeof(m->unit), "of all %s accesses", cache_label[cache]);
			return;
		}
	}
	/* Everything else: a rate per second of (task) time. */
	m->value = secs > 0 ? r->value / secs : 0;
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

static double pcnt_running(const struct stat_row *r)
{
	return r->enabled ? 100.0 * (double)r->running / (double)r->enabled : 100.0;
}

/* The count as perf shows it: msec for clocks, a whole number otherwise. */
static void format_value(const struct stat_row *r, char *buf, size_t len, const char **unit)
{
	*unit = "";
	if (r->err < 0)
		snprintf(buf, len, "<not supported>");
	else if (!r->counted)
		snprintf(buf, len, "<not counted>");
	else if (is_clock(r->ev)) {
		snprintf(buf, len, "%.2f", r->value / 1e6);
		*unit = "msec";
	} else
		snprintf(buf, len, "%.0f", r->value);
}

static void print_table_row(const struct stat_printer *p, const struct stat_row *r,
			    const struct metric *m, double interval)
{
	char value[64], line[512];
	const char *unit;
	int len;

	format_value(r, value, sizeof(value), &unit);
	if (interval >= 0)
		fprintf(p->out, "%16.9f ", interval);
	len = snprintf(line, sizeof(line), "%18s %-4s %-32s ", value, unit, r->ev->name);
	if (m->valid && m->percent)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "# %7.2f%% %-22s", m->value,
				m->unit);
	else if (m->valid)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "# %8.3f %-23s", m->value,
				m->unit);
	else
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%34s", "");
	if (p->runs > 1 && noise_pct(r) > 0)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  ( +- %5.2f%% )",
				noise_pct(r));
	if (r->counted && r->running < r->enabled)
		snprintf(line + len, sizeof(line) - (size_t)len, "  (%.2f%%)", pcnt_running(r));
	fprintf(p->out, "%s\n", line);
}

static void print_csv_row(const struct stat_printer *p, const struct stat_row *r,
			  const struct metric *m, double interval)
{
	const char *s = p->sep, *unit;
	char value[64];

	format_value(r, value, sizeof(value), &unit);
	if (interval >= 0)
		fprintf(p->out, "%.9f%s", interval, s);
	fprintf(p->out, "%s%s%s%s%s%s", value, s, unit, s, r->ev->name, s);
	if (p->runs > 1)
		fprintf(p->out, "%.2f%%%s", noise_pct(r), s);
	fprintf(p->out, "%llu%s%.2f%s", (unsigned long long)r->running, s, pcnt_running(r), s);
	if (m->valid)
		fprintf(p->out, "%.3f%s%s", m->value, s, m->unit);
	else
		fprintf(p->out, "%s", s);
	fputc('\n', p->out);
}

/* One object per line, spaced and named as perf stat -j writes them. */
static void print_json_row(const struct stat_printer *p, const struct stat_row *r,
			   const struct metric *m, double interval)
{
	const char *unit;
	char value[64];
	struct sonde_json js, *j = &js;

	format_value(r, value, sizeof(value), &unit);
	if (r->counted && r->err >= 0)
		snprintf(value, sizeof(value), "%f", is_clock(r->ev) ? r->value / 1e6 : r->value);
	sonde_json_init_file(j, p->out, SONDE_JSON_SPACED | SONDE_JSON_WIDE_COLON);
	sonde_json_obj_begin(j);
	if (interval >= 0) {
		sonde_json_key(j, "interval");
		sonde_json_double(j, interval, 9);
	}
	sonde_json_kstr(j, "counter-value", value);
	sonde_json_kstr(j, "unit", unit);
	sonde_json_kstr(j, "event", r->ev->name);
	if (p->runs > 1) {
		sonde_json_key(j, "variance");
		sonde_json_double(j, noise_pct(r), 2);
	}
	sonde_json_ku64(j, "event-runtime", r->running);
	sonde_json_key(j, "pcnt-running");
	sonde_json_double(j, pcnt_running(r), 2);
	if (m->valid) {
		sonde_json_key(j, "metric-value");
		sonde_json_double(j, m->value, 6);
		sonde_json_kstr(j, "metric-unit", m->unit);
	}
	sonde_json_obj_end(j);
	sonde_json_line_end(j);
}

void stat_print_header(const struct stat_printer *p, const char *target)
{
	if (p->fmt != STAT_TABLE)
		return;
	fprintf(p->out, "\n Performance counter stats for %s", target);
	if (p->runs > 1)
		fprintf(p->out, " (%d runs)", p->runs);
	fprintf(p->out, ":\n\n");
}

void stat_print_interval_header(const struct stat_printer *p)
{
	if (p->fmt == STAT_TABLE)
		fprintf(p->out, "#           time             counts unit events\n");
}

void stat_print_rows(const struct stat_printer *p, const struct stat_row *rows, size_t n,
		     double elapsed_ns, double interval)
{
	for (size_t i = 0; i < n; i++) {
		struct metric m;

		compute_metric(&rows[i], rows, n, elapsed_ns, &m);
		if (p->fmt == STAT_CSV)
			print_csv_row(p, &rows[i], &m, interval);
		else if (p->fmt == STAT_JSON)
			print_json_row(p, &rows[i], &m, interval);
		else
			print_table_row(p, &rows[i], &m, interval);
	}
}

void stat_print_footer(const struct stat_printer *p, double elapsed_s, double elapsed_sd,
		       double user_s, double sys_s)
{
	if (p->fmt != STAT_TABLE)
		return;
	if (p->runs > 1)
		fprintf(p->out, "\n %17.5f +- %.5f seconds time elapsed  ( +- %5.2f%% )\n\n",
			elapsed_s, elapsed_sd, elapsed_s > 0 ? 100.0 * elapsed_sd / elapsed_s : 0);
	else
		fprintf(p->out, "\n %17.9f seconds time elapsed\n\n", elapsed_s);
	if (user_s >= 0 && p->runs <= 1)
		fprintf(p->out, " %17.9f seconds user\n %17.9f seconds sys\n\n", user_s, sys_s);
}
