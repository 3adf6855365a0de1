// SPDX-License-Identifier: MIT
/*
 * Which events a report view shows together, in perf report's way: by
 * default one section per event, each with its own rows, and events with
 * no samples left out (perf's --skip-empty, on by default: the dummy
 * event of a system-wide perf capture, the tracepoints of `sched:*` that
 * never fired); with --group, one section with every event side by side.
 * All views (text, JSON, HTML) take their sections from here, so they
 * agree on what is shown.
 */
#include <sonde/report_print.h>

size_t sonde_report_section(const struct sonde_report *rep, const struct sonde_print_opts *o,
			    size_t s, size_t *evs)
{
	size_t n = 0, first = o->sort_event < rep->ses->nevents ? o->sort_event : 0;

	if (o->group) {
		if (s || !rep->ses->nevents)
			return 0;
		/* The ordering event leads, as perf's group leader does. */
		evs[n++] = first;
		for (size_t e = 0; e < rep->ses->nevents; e++)
			if (e != first)
				evs[n++] = e;
		return n;
	}
	for (size_t e = 0; e < rep->ses->nevents; e++) {
		if (o->one_event && e != first)
			continue;
		if (!sonde_profile_total(rep->profile, e).samples)
			continue;
		if (s-- == 0) {
			evs[0] = e;
			return 1;
		}
	}
	return 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

struct sonde_counts sonde_report_row_counts(const struct sonde_report *rep, size_t i, size_t e)
{
	return sonde_profile_opts(rep->profile)->children
		   ? sonde_profile_entry_total(rep->profile, i, e)
		   : sonde_profile_entry_self(rep->profile, i, e);
}

bool sonde_report_row_shown(const struct sonde_report *rep, const struct sonde_print_opts *o,
			    const size_t *evs, size_t nev, size_t i)
{
	struct sonde_counts t = sonde_profile_total(rep->profile, evs[0]);
	bool any = false;

	for (size_t k = 0; k < nev && !any; k++)
		any = sonde_report_row_counts(rep, i, evs[k]).samples != 0;
	return any &&
	       pct(sonde_report_row_counts(rep, i, evs[0]).period, t.period) >= o->percent_limit;
}
