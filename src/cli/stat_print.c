// SPDX-License-Identifier: MIT
/*
 * stat output in the three forms perf users parse: the aligned table, CSV
 * (-x SEP: value,unit,event,[variance,]runtime,pcnt-running,metric,unit)
 * and JSON lines.  The derived metrics beside each count (perf's choices:
 * CPUs utilized, GHz, insn per cycle, ...) are computed by the library
 * (sonde_stat_metric(), src/core/stat_metrics.c); only their layout is here.
 */
#include "stat.h"

#include <sonde/json.h>

#include <string.h>

static double pcnt_running(const struct sonde_stat_count *r)
{
	return r->enabled ? 100.0 * (double)r->running / (double)r->enabled : 100.0;
}

/* The count as perf shows it: msec for clocks, a whole number otherwise. */
static void format_value(const struct sonde_stat_count *r, char *buf, size_t len, const char **unit)
{
	*unit = "";
	if (r->err < 0)
		snprintf(buf, len, "<not supported>");
	else if (!r->counted)
		snprintf(buf, len, "<not counted>");
	else if (sonde_stat_is_clock(r->ev)) {
		snprintf(buf, len, "%.2f", r->value / 1e6);
		*unit = "msec";
	} else
		snprintf(buf, len, "%.0f", r->value);
}

static void print_table_row(const struct stat_printer *p, const struct sonde_stat_count *r,
			    const struct sonde_stat_metric *m, double interval)
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
	if (p->runs > 1 && sonde_stat_noise_pct(r) > 0)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  ( +- %5.2f%% )",
				sonde_stat_noise_pct(r));
	if (r->counted && r->running < r->enabled)
		snprintf(line + len, sizeof(line) - (size_t)len, "  (%.2f%%)", pcnt_running(r));
	fprintf(p->out, "%s\n", line);
}

static void print_csv_row(const struct stat_printer *p, const struct sonde_stat_count *r,
			  const struct sonde_stat_metric *m, double interval)
{
	const char *s = p->sep, *unit;
	char value[64];

	format_value(r, value, sizeof(value), &unit);
	if (interval >= 0)
		fprintf(p->out, "%.9f%s", interval, s);
	fprintf(p->out, "%s%s%s%s%s%s", value, s, unit, s, r->ev->name, s);
	if (p->runs > 1)
		fprintf(p->out, "%.2f%%%s", sonde_stat_noise_pct(r), s);
	fprintf(p->out, "%llu%s%.2f%s", (unsigned long long)r->running, s, pcnt_running(r), s);
	if (m->valid)
		fprintf(p->out, "%.3f%s%s", m->value, s, m->unit);
	else
		fprintf(p->out, "%s", s);
	fputc('\n', p->out);
}

/* One object per line, spaced and named as perf stat -j writes them. */
static void print_json_row(const struct stat_printer *p, const struct sonde_stat_count *r,
			   const struct sonde_stat_metric *m, double interval)
{
	const char *unit;
	char value[64];
	struct sonde_json js, *j = &js;

	format_value(r, value, sizeof(value), &unit);
	if (r->counted && r->err >= 0)
		snprintf(value, sizeof(value), "%f",
			 sonde_stat_is_clock(r->ev) ? r->value / 1e6 : r->value);
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
		sonde_json_double(j, sonde_stat_noise_pct(r), 2);
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

void stat_print_rows(const struct stat_printer *p, const struct sonde_stat_count *rows, size_t n,
		     double elapsed_ns, double interval)
{
	for (size_t i = 0; i < n; i++) {
		struct sonde_stat_metric m;

		sonde_stat_metric(rows, n, i, elapsed_ns, &m);
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
