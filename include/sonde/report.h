/* SPDX-License-Identifier: MIT */
/*
 * Report: the profile views' model, built by one session pass (see
 * include/sonde/session.h) with the profile tool (entries, per-event
 * counts, call-path tries) and, for the HTML view, the timeline tool;
 * other tools can ride on the same pass (annotate's histograms).  Views
 * render from it and never re-read the file.
 */
#ifndef SONDE_REPORT_H
#define SONDE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/error.h>
#include <sonde/profile.h>
#include <sonde/session.h>
#include <sonde/timeline.h>
#include <sonde/tool.h>

struct sonde_report_opts {
	/* Symbols, filters, unwinding, inlines, progress: the pass's options.
	 * ses.callchains and ses.srcline are set from the fields below. */
	struct sonde_session_opts ses;
	enum sonde_sort_key keys[SONDE_SORT_MAX];
	size_t nkeys;
	bool children;	   /* inclusive totals (perf's --children) */
	bool callchains;   /* build call graphs (when the capture has chains) */
	bool caller_order; /* -G caller */
	bool timeline;	   /* also build the timeline (time-binned stacks): the HTML view */
	/* More tools in the same pass, called before the profile's (annotate). */
	const struct sonde_tool_slot *tools;
	size_t ntools;
};

struct sonde_report {
	struct sonde_session *ses;	 /* the pass: machine, symbols, events, counters */
	struct sonde_profile *profile;	 /* one column per event of ses */
	struct sonde_timeline *timeline; /* NULL unless opts.timeline */
};

/**
 * sonde_report_build() - read @r once into a report
 * @err: receives the message of a failure (with the file offset)
 * Return: 0 with *out new (free with sonde_report_free()), or an error.
 */
int sonde_report_build(struct sonde_report **out, struct sonde_pd_reader *r,
		       const struct sonde_report_opts *o, struct sonde_errmsg *err);
void sonde_report_free(struct sonde_report *rep);

/* The name a report shows for an entry's symbol: "hot_fn", or "0x1234". */
const char *sonde_report_sym_name(const struct sonde_entry_key *k, const struct sonde_frame *f,
				  char *buf, size_t len);

#endif
