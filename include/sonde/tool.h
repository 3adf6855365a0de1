/* SPDX-License-Identifier: MIT */
/*
 * Tools: every pass over a capture is one table of callbacks (perf's
 * struct perf_tool), not a hook field of the report.
 *
 * A session walks the records once, in time order (sonde_pd_walk_ordered),
 * keeps one machine model up to date, applies the sample filters once, and
 * hands each record to every tool registered with it, in registration
 * order: side-band records after the machine took them in, samples after
 * the filters kept them and (on the host) their frames were resolved.
 * profile, timeline, annotate, script, iostat, schedlat and the capture
 * side's build-id marking are tools; adding a pass is one new file with
 * one table and its registration.
 *
 * libc only: the table and its dispatcher sit in the format layer, so the
 * target side (record's build-id pass) uses the same table without symbols.
 */
#ifndef SONDE_TOOL_H
#define SONDE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/perf_data.h>

struct sonde_session; /* the pass running the tools: machine, events, counters;
		       * NULL where the capture side runs a tool without one */
struct sonde_thread;
struct sonde_frame;

/* One sample as a tool sees it; everything borrowed for the call. */
struct sonde_tool_sample {
	const struct sonde_pd_record *rec;
	const struct sonde_pd_sample *s;
	size_t event;	 /* index into the session's events */
	uint64_t period; /* the sample's period, 1 when it has none */
	/* Filled by the host session; NULL/0 where no symbols are loaded. */
	const struct sonde_thread *thread; /* comm as of the sample's time */
	const struct sonde_frame *frames;  /* leaf first: chain and unwound frames, or the ip */
	const uint64_t *ips;		   /* [nframes] the addresses as recorded */
	size_t nframes;
	size_t leaf; /* index of the first frame that is a function, not an inlined body */
	bool chain;  /* frames came from a call chain or unwinding */
};

/*
 * Callbacks for one record kind each, all optional.  @rec and @ev are
 * borrowed for the call.  Return: 0 to go on, or a negative error that
 * stops the pass (the session reports it).
 */
typedef int (*sonde_tool_record_fn)(void *ctx, struct sonde_session *ses,
				    const struct sonde_pd_record *rec,
				    const struct sonde_pd_event *ev);

struct sonde_tool {
	const char *name;
	/* The capture's events are known (at once for files, at the first
	 * event record for pipes). */
	int (*begin)(void *ctx, struct sonde_session *ses);
	int (*sample)(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts);
	sonde_tool_record_fn mmap;     /* MMAP and MMAP2 */
	sonde_tool_record_fn comm;     /* COMM (exec or rename) */
	sonde_tool_record_fn fork;     /* FORK */
	sonde_tool_record_fn exit;     /* EXIT */
	sonde_tool_record_fn lost;     /* LOST and LOST_SAMPLES */
	sonde_tool_record_fn throttle; /* THROTTLE and UNTHROTTLE */
	sonde_tool_record_fn other;    /* every other record kind */
	/* After each FINISHED_ROUND's records were delivered. */
	int (*finished_round)(void *ctx, struct sonde_session *ses);
	/* The tracepoint formats (HEADER_TRACING_DATA), once, before the samples. */
	int (*tracing_data)(void *ctx, struct sonde_session *ses, const void *data, size_t size);
	/* The walk ended without an error. */
	int (*end)(void *ctx, struct sonde_session *ses);
};

/* A tool and its state, as a session registers it. */
struct sonde_tool_slot {
	const struct sonde_tool *tool;
	void *ctx;
};

/**
 * sonde_tool_dispatch() - hand one non-sample record to a tool
 * @t: the tool; callbacks it leaves NULL skip the record
 * Return: 0, or the callback's error.
 */
int sonde_tool_dispatch(const struct sonde_tool *t, void *ctx, struct sonde_session *ses,
			const struct sonde_pd_record *rec, const struct sonde_pd_event *ev);

#endif
