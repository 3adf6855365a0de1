/* SPDX-License-Identifier: MIT */
/*
 * The session: one pass over a capture that every analysis shares.
 *
 * Records come in time order (sonde_pd_walk_ordered()).  Side-band
 * records update the one machine model (threads, maps) as they come, so
 * a sample resolves against the maps that held at its time; then every
 * registered tool (include/sonde/tool.h) sees the record.  A sample is
 * checked against the filters once: the cheap ones (event, CPU, time,
 * pid, tid, comm) before its frames are resolved, the object filter
 * after.  Its frames are its call chain (kernel and frame-pointer user
 * frames, context markers switching the address space), then, for
 * --call-graph dwarf captures, the user frames the unwinder finds from
 * the saved registers and stack, with inlined functions expanded as
 * perf does.  Tools never re-read the file.
 */
#ifndef SONDE_SESSION_H
#define SONDE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/cpulist.h>
#include <sonde/error.h>
#include <sonde/machine_symbols.h>
#include <sonde/pd_ordered.h>
#include <sonde/perf_data.h>
#include <sonde/profile.h>
#include <sonde/symbols.h>
#include <sonde/tool.h>

/*
 * Which samples the tools see: a sample is kept when it matches one entry
 * of each list given (an empty list keeps everything).
 */
struct sonde_sample_filter {
	const char *const *comms;
	size_t ncomms;
	const uint32_t *pids, *tids;
	size_t npids, ntids;
	const struct sonde_cpulist *cpus; /* NULL or empty: every CPU */
	bool has_time;
	uint64_t time_start, time_end; /* inclusive, ns */
	/* Event names: the full name, or a tracepoint's without its system. */
	const char *const *events;
	size_t nevents;
	const char *const *dsos; /* short or long object names of the leaf */
	size_t ndsos;
};

struct sonde_session_opts {
	/* Where symbols come from; the capture's kallsyms, modules and release
	 * are added when these leave them unset. */
	struct sonde_symtab_opts sym;
	struct sonde_sample_filter filter;
	bool srcline;	 /* resolve each frame's source line */
	bool callchains; /* call graphs are drawn: inlined frames are expanded */
	bool no_unwind;	 /* ignore saved user stacks (--call-graph dwarf captures) */
	/*
	 * Inlined functions as frames (with callchains): 0 (the default) as
	 * perf report 6.1 shows them, for the user frames the DWARF unwinder
	 * found; 1 for every frame (--inline); -1 for none (--no-inline).
	 */
	int inline_frames;
	/* Optional progress: called with the file offset reached and the size. */
	void (*progress)(void *ctx, uint64_t offset, uint64_t size);
	void *progress_ctx;
};

struct sonde_session {
	const struct sonde_session_opts *opts; /* borrowed, during the pass only */
	struct sonde_pd_reader *reader;	       /* borrowed */
	struct sonde_symtab *symtab;
	struct sonde_machine *machine;
	size_t nevents;
	const struct sonde_pd_attr **events; /* [nevents], borrowed from the reader */
	const char **event_names;	     /* [nevents] */
	const bool *event_kept;		     /* [nevents] the event filter; NULL: every event */
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
 * sonde_session_run() - one pass over @r with @ntools tools
 * @out: receives the session (its machine and symbols stay valid for the
 *	 tools' results; free with sonde_session_free())
 * @tools: called in this order for every record
 * @err: receives the message of a failure (with the file offset)
 * Return: 0, or the reader's, the setup's or a tool's error.
 */
int sonde_session_run(struct sonde_session **out, struct sonde_pd_reader *r,
		      const struct sonde_session_opts *o, const struct sonde_tool_slot *tools,
		      size_t ntools, struct sonde_errmsg *err);

/* Whether @name passes @f's event list: the full name, or a tracepoint's
 * without its system ("sys_enter_read" for "syscalls:sys_enter_read"). */
bool sonde_sample_filter_event(const struct sonde_sample_filter *f, const char *name);

/* Frees @ses and what it owns (machine, symbols); NULL is fine. */
void sonde_session_free(struct sonde_session *ses);

#endif
