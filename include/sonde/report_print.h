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
	size_t sort_event;	/* the event whose overhead orders the rows */
	double percent_limit;	/* hide rows below this overhead (percent) */
	double callchain_limit; /* hide call-graph branches below this (percent) */
	bool callchains;	/* print call graphs under the rows */
	bool show_samples;	/* a samples column per event (always with several events) */
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

/* Column text of an entry's key (shared by both views). */
const char *sonde_report_dso_name(const struct sonde_dso *d);

#endif
