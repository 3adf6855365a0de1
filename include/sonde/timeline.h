/* SPDX-License-Identifier: MIT */
/*
 * Timeline: the report model's time dimension, for views that restrict
 * the profile to a time range (the HTML report).  Built by the report
 * pass only when asked (sonde_report_opts.timeline), so the text and
 * JSON reports pay nothing for it.
 *
 * Every sample adds its whole stack, outermost caller first, to one
 * global call-path trie (node 0 is the root above every stack), and is
 * remembered as (time, leaf node, thread, cpu, event, period): 32 bytes a
 * sample.  Views ask for the samples folded into time bins keyed by
 * (bin, leaf node, thread, cpu, event), from which any range's trie, any
 * function's self and total, and per-CPU and per-thread densities follow.
 * (Per-instruction and per-line heat is sonde annotate's job: the HTML
 * view attaches its accumulator to the same pass.)
 *
 * Frames are identified like the profile's trie nodes: by symbol, or by
 * object and address when unresolved.  Pointers into the symbol world are
 * borrowed; it must outlive the timeline.
 */
#ifndef SONDE_TIMELINE_H
#define SONDE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/profile.h>

struct sonde_timeline;

/*
 * A function (frame identity) of the trie: symbol (and inlined function
 * when the frame is an inlined body), or object + address.
 */
struct sonde_tl_func {
	const struct sonde_symbol *sym; /* NULL: unresolved */
	const char *inlined;		/* interned name of an inlined body, or NULL */
	struct sonde_dso *dso;		/* NULL: no map held the address */
	uint64_t addr;			/* when sym is NULL */
	bool kernel;
};

/* A thread that had samples. */
struct sonde_tl_thread {
	uint32_t pid, tid;
	uint32_t comm; /* interned in the report's machine: the latest seen */
	uint64_t samples;
};

/* One sample as the report pass hands it over. */
struct sonde_tl_sample {
	uint64_t time; /* perf clock ns; 0 when the capture has no times */
	uint32_t cpu;  /* UINT32_MAX when the capture has no cpu */
	uint32_t pid, tid, comm;
	uint32_t event;
	uint64_t period;
};

/* Samples folded into a time bin. */
struct sonde_tl_cell {
	uint32_t bin, leaf, thread, cpu, event;
	uint64_t samples, period;
};

/**
 * sonde_timeline_new() - an empty timeline
 * @out: receives the timeline
 * @nevents: the capture's events (at least 1, else -EINVAL)
 * Return: 0 with *out new (free with sonde_timeline_free()), -EINVAL or -ENOMEM.
 */
int sonde_timeline_new(struct sonde_timeline **out, size_t nevents);

struct sonde_tool;
/* The timeline as a tool of a session pass: ctx is a struct sonde_timeline **
 * that the pass's start fills with a new timeline (the caller frees it). */
extern const struct sonde_tool sonde_timeline_tool;
/**
 * sonde_timeline_free() - free the timeline
 * @tl: the timeline, or NULL
 */
void sonde_timeline_free(struct sonde_timeline *tl);

/**
 * sonde_timeline_add() - account one sample
 * @frames: @n resolved frames, leaf first (at least 1)
 * Return: 0 or -ENOMEM.
 */
int sonde_timeline_add(struct sonde_timeline *tl, const struct sonde_tl_sample *s,
		       const struct sonde_frame *frames, size_t n);

/* Totals: samples added, and the first and last sample times. */
uint64_t sonde_timeline_nr_samples(const struct sonde_timeline *tl);
/**
 * sonde_timeline_span() - the times of the first and last samples added
 * @tl: the timeline
 * @first: receives the first sample's time
 * @last: receives the last sample's time
 */
void sonde_timeline_span(const struct sonde_timeline *tl, uint64_t *first, uint64_t *last);

/* Functions, threads, trie nodes: borrowed, valid until the next add. */
size_t sonde_timeline_nr_funcs(const struct sonde_timeline *tl);
/**
 * sonde_timeline_func() - function @i (its symbol, or object and address)
 * @tl: the timeline
 * @i: below sonde_timeline_nr_funcs()
 * Return: borrowed, valid until the next add.
 */
const struct sonde_tl_func *sonde_timeline_func(const struct sonde_timeline *tl, size_t i);
/**
 * sonde_timeline_nr_threads() - the number of threads seen
 * @tl: the timeline
 * Return: the count; indexes for sonde_timeline_thread() are below it.
 */
size_t sonde_timeline_nr_threads(const struct sonde_timeline *tl);
/**
 * sonde_timeline_thread() - thread @i (pid, tid, comm)
 * @tl: the timeline
 * @i: below sonde_timeline_nr_threads()
 * Return: borrowed, valid until the next add.
 */
const struct sonde_tl_thread *sonde_timeline_thread(const struct sonde_timeline *tl, size_t i);
/* Nodes: 0 is the root (parent UINT32_MAX, func UINT32_MAX); a parent's index is below its child's.
 */
size_t sonde_timeline_nr_nodes(const struct sonde_timeline *tl);
/**
 * sonde_timeline_node() - node @i of the call-path trie
 * @tl: the timeline
 * @i: below sonde_timeline_nr_nodes()
 * @parent: receives the parent's index (UINT32_MAX for the root)
 * @func: receives the function's index (UINT32_MAX for the root)
 */
void sonde_timeline_node(const struct sonde_timeline *tl, size_t i, uint32_t *parent,
			 uint32_t *func);

/**
 * sonde_timeline_bins() - the samples folded into @nbins equal time bins
 * over [first, last]
 * Return: 0 with *cells new (free()), *ncells set, in bin order; or -ENOMEM.
 */
int sonde_timeline_bins(const struct sonde_timeline *tl, size_t nbins, struct sonde_tl_cell **cells,
			size_t *ncells);

/* Sample @i (in time order) as recorded: time, cpu, thread index, event. */
void sonde_timeline_sample(const struct sonde_timeline *tl, size_t i, uint64_t *time, uint32_t *cpu,
			   uint32_t *thread, uint32_t *event);

#endif
