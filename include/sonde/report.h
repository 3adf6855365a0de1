/* SPDX-License-Identifier: MIT */
/*
 * Report: one pass over a capture into the model every profile view
 * renders from: the machine (threads, maps), the symbol world, and the
 * profile (entries, per-event counts, call-path tries).  The pass is a
 * callback over the time-ordered record stream; views never re-read the
 * file.
 */
#ifndef SONDE_REPORT_H
#define SONDE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/error.h>
#include <sonde/machine.h>
#include <sonde/pd_ordered.h>
#include <sonde/perf_data.h>
#include <sonde/profile.h>
#include <sonde/symbols.h>
#include <sonde/timeline.h>

struct sonde_report;

/* One sample as a per-sample hook sees it; everything borrowed for the call. */
struct sonde_report_sample {
	const struct sonde_pd_record *rec;
	const struct sonde_pd_sample *s;
	const struct sonde_thread *thread; /* comm as of the sample's time */
	size_t event;			   /* index into sonde_report.events */
	const struct sonde_frame *frames;  /* leaf first: the call chain (and unwound user
					    * frames), or the sample's ip alone */
	const uint64_t *ips;		   /* [nframes] the addresses as recorded */
	size_t nframes;
	bool chain; /* frames came from a call chain or unwinding */
};

/* Return: 0 to go on, or a negative error that stops the pass. */
typedef int (*sonde_report_sample_fn)(void *ctx, const struct sonde_report *rep,
				      const struct sonde_report_sample *rs);

struct sonde_report_opts {
	/* Where symbols come from; the capture's kallsyms, modules and release
	 * are added by sonde_report_build() when these leave them unset. */
	struct sonde_symtab_opts sym;
	enum sonde_sort_key keys[SONDE_SORT_MAX];
	size_t nkeys;
	bool children;	   /* inclusive totals (perf's --children) */
	bool callchains;   /* build call graphs (when the capture has chains) */
	bool caller_order; /* -G caller */
	bool no_unwind;	   /* ignore saved user stacks (--call-graph dwarf captures) */
	/*
	 * Inlined functions as frames of the call graphs: 0 (the default) as
	 * perf report 6.1 shows them, for the user frames the DWARF unwinder
	 * found (--call-graph dwarf captures); 1 for every frame (--inline);
	 * -1 for none (--no-inline).
	 */
	int inline_frames;
	bool timeline;	   /* also build the timeline (time-binned stacks): the HTML view */
	/* Filters: a sample is kept when it matches one of each given list. */
	const char *const *comms;
	size_t ncomms;
	const uint32_t *pids;
	size_t npids;
	const char *const *dsos; /* short or long object names */
	size_t ndsos;
	/*
	 * Optional hook for passes over single samples (sonde script, sched
	 * latency): called in time order for every sample the filters keep,
	 * after the machine caught up with the records before it.
	 */
	sonde_report_sample_fn on_sample;
	void *sample_ctx;
	bool no_profile; /* with a hook: skip aggregation */
	/*
	 * Optional: called with every kept sample's leaf frame, after the
	 * filters (sonde annotate's per-address histograms ride on the same
	 * pass).  Return: 0, or an error that stops the pass.
	 */
	int (*on_leaf)(void *ctx, size_t event, uint64_t period, const struct sonde_frame *leaf);
	void *leaf_ctx;
	/* Optional progress: called with the file offset reached and the size. */
	void (*progress)(void *ctx, uint64_t offset, uint64_t size);
	void *progress_ctx;
};

struct sonde_report {
	const struct sonde_report_opts *opts; /* borrowed, during the pass only */
	struct sonde_pd_reader *reader;	      /* borrowed */
	struct sonde_symtab *symtab;
	struct sonde_machine *machine;
	struct sonde_profile *profile;
	struct sonde_timeline *timeline; /* NULL unless opts.timeline */
	size_t nevents;
	const struct sonde_pd_attr **events; /* [nevents], borrowed from the reader */
	const char **event_names;	     /* [nevents] */
	bool has_callchains;		     /* some sample had a chain or a user stack */
	/* lost: the sum of LOST records (lost_chunks of them), events the rings
	 * dropped; lost_samples: of LOST_SAMPLES records, the samples the
	 * events dropped.  The same losses show in both (perf reports the
	 * latter), never add them. */
	uint64_t lost, lost_chunks, lost_samples, throttled, filtered_out;
	uint64_t unwound, unwind_failed; /* dwarf samples */
	struct sonde_pd_walk_stats walk;
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
