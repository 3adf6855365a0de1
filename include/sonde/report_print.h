/* SPDX-License-Identifier: MIT */
/*
 * Text, JSON and HTML views of a report (sonde report --stdio / --json / --html).  They
 * read the finished model only.
 */
#ifndef SONDE_REPORT_PRINT_H
#define SONDE_REPORT_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include <sonde/annotate.h>
#include <sonde/report.h>

struct sonde_print_opts {
	size_t sort_event; /* the event whose overhead orders the rows */
	/* Sections, as perf report: one per event with samples by default;
	 * group: every event side by side in one (perf's --group). */
	bool group;
	bool one_event;		/* without group: only sort_event's section */
	double percent_limit;	/* hide rows below this overhead (percent) */
	double callchain_limit; /* hide call-graph branches below this (percent) */
	bool callchains;	/* print call graphs under the rows */
	bool show_samples;	/* a samples column per event */
	bool header;		/* the "# ..." lines */
	const char *file;	/* shown in the JSON */
	/* HTML only (required): the Code view's data, from an annotate
	 * accumulator attached to the report pass (sonde_annotate_attach()). */
	const struct sonde_annotate *annotate;
	const struct sonde_annotate_build_opts *annotate_build;
};

/* Return: 0, or -EIO when writing failed. */
int sonde_report_print_stdio(FILE *out, const struct sonde_report *rep,
			     const struct sonde_print_opts *o);
/**
 * sonde_report_print_json() - the report as one JSON document (--json)
 * @out: the stream
 * @rep: the built report
 * @o: what to show
 * Return: 0, or -EIO when writing failed.
 */
int sonde_report_print_json(FILE *out, const struct sonde_report *rep,
			    const struct sonde_print_opts *o);
/*
 * One self-contained HTML page (page embedded at build time, data as a
 * JSON block).  Needs a report built with opts.timeline and an annotate
 * accumulator in @o->annotate.
 * Return: 0, -EINVAL without either, -ENOMEM, or -EIO.
 */
int sonde_report_print_html(FILE *out, const struct sonde_report *rep,
			    const struct sonde_print_opts *o);

/**
 * sonde_report_section() - the events of section @s of a view
 * @evs: receives them (room for rep->ses->nevents); the first orders the rows,
 *	 the others are side by side after it
 * Return: how many, 0 when there is no section @s.
 */
size_t sonde_report_section(const struct sonde_report *rep, const struct sonde_print_opts *o,
			    size_t s, size_t *evs);

/* Entry @i's counts of event @e as the views show them: inclusive with children. */
struct sonde_counts sonde_report_row_counts(const struct sonde_report *rep, size_t i, size_t e);

/*
 * Whether entry @i is a row of the section of @evs: one of its events
 * counted it (side by side, perf shows a row only a later event has) and
 * the first event's share reaches the percent limit.
 */
bool sonde_report_row_shown(const struct sonde_report *rep, const struct sonde_print_opts *o,
			    const size_t *evs, size_t nev, size_t i);

/* Column text of an entry's key (shared by both views). */
/**
 * sonde_report_srcline_unknown() - a --sort srcline key without a source line,
 * as perf prints it: "symbol+offset" (decimal), else "object[hexaddr]".
 * Return: @buf.
 */
const char *sonde_report_srcline_unknown(const struct sonde_entry_key *k, char *buf, size_t len);
/**
 * sonde_report_dso_name() - an object's name as reports show it
 * @d: the object, or NULL
 * Return: its short name, or "[unknown]" for NULL (no map held the address).
 */
const char *sonde_report_dso_name(const struct sonde_dso *d);

#endif
