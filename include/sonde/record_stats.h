/* SPDX-License-Identifier: MIT */
/*
 * Record counts of a capture, as `perf report --stats` prints them: every
 * record of the pass by kind (kernel and perf's own), and the samples of
 * each event.  A tool of the session pass (include/sonde/tool.h).
 */
#ifndef SONDE_RECORD_STATS_H
#define SONDE_RECORD_STATS_H

#include <stddef.h>
#include <stdint.h>

#include <sonde/perf_data.h>

struct sonde_record_stats {
	uint64_t total;
	uint64_t nr[SONDE_PD_RECORD_HEADER_MAX]; /* by record type */
	uint64_t *samples;			 /* [nevents], owned */
	size_t nevents;
};

struct sonde_tool;
/* ctx: a zeroed struct sonde_record_stats; free with sonde_record_stats_fini(). */
extern const struct sonde_tool sonde_record_stats_tool;

/**
 * sonde_record_stats_fini() - free the per-event sample counts
 * @st: the counts the tool filled
 */
void sonde_record_stats_fini(struct sonde_record_stats *st);

#endif
