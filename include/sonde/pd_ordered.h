/* SPDX-License-Identifier: MIT */
/*
 * Records of a perf.data file in time order across CPUs.
 *
 * Rings are drained per CPU, so the data section interleaves CPUs; every
 * analysis needs one time-ordered stream.  Records are queued and, at
 * each FINISHED_ROUND, those no later than the newest time seen before
 * the previous round are sorted and delivered (perf's rule: a record
 * cannot be older than what was already in the file a full round ago).
 * A file without rounds is sorted whole at its end.  Records without a
 * time (no sample_id_all, or synthesized with time 0) keep file order
 * ahead of later times.  libc only.
 */
#ifndef SONDE_PD_ORDERED_H
#define SONDE_PD_ORDERED_H

#include <sonde/perf_data.h>

/*
 * Receives one record and its decoded fields; both borrowed for the call.
 * Return: 0 to go on, or a negative error that stops the walk.
 */
typedef int (*sonde_pd_deliver_fn)(void *ctx, const struct sonde_pd_record *rec,
				   const struct sonde_pd_event *ev);

/* Counters of the walk, for warnings and progress. */
struct sonde_pd_walk_stats {
	uint64_t records, samples;
	uint64_t undecodable;  /* records whose fields failed to decode (skipped) */
	uint64_t out_of_order; /* records older than what was already delivered */
};

/**
 * sonde_pd_walk_ordered() - deliver every record of @r in time order
 * @progress: optional, called now and then with the file offset reached
 * @round: optional, called after the records each FINISHED_ROUND released
 *	   were delivered (perf_tool's finished_round); non-zero stops the walk
 * Return: 0, or the first error (the reader's or the callback's); the
 * reader's message says where.
 */
int sonde_pd_walk_ordered(struct sonde_pd_reader *r, sonde_pd_deliver_fn deliver, void *ctx,
			  void (*progress)(void *ctx, uint64_t offset), int (*round)(void *ctx),
			  struct sonde_pd_walk_stats *stats);

#endif
