/* SPDX-License-Identifier: MIT */
/*
 * Scheduling latency per task (sonde sched latency), from
 * sched:sched_switch, sched:sched_waking (or sched_wakeup when waking was
 * not recorded), sched:sched_wakeup_new and, when present,
 * sched:sched_stat_runtime, with perf sched latency's rules
 * (tools/perf/builtin-sched.c): a task switched out runnable waits for a
 * CPU from that moment, a sleeping one from its wakeup; each switch-in
 * that ends such a wait is one "switch" with its delay.  Runtime is the
 * sum of sched_stat_runtime when the capture has it (as perf), otherwise
 * the time between a task's switch-in and switch-out on a CPU.
 */
#ifndef SONDE_SCHEDLAT_H
#define SONDE_SCHEDLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/tpdecode.h>

struct sonde_schedlat;

struct sonde_schedlat_row {
	uint32_t tid;
	uint32_t comm;	  /* set by sonde_schedlat_rows() through the caller's resolver */
	uint32_t merged;  /* tasks merged into the row (1: one task) */
	uint64_t runtime; /* ns */
	uint64_t switches;
	uint64_t total_delay, max_delay; /* ns */
	uint64_t max_start, max_end;	 /* of the longest delay: wakeup, switch-in */
};

/**
 * sonde_schedlat_new() - an empty analysis over the formats of @tp
 * Return: 0 with *out new (free with sonde_schedlat_free()), -ENOENT when
 * @tp has no sched:sched_switch, or -ENOMEM.
 */
int sonde_schedlat_new(struct sonde_schedlat **out, const struct sonde_tp_decoder *tp);
void sonde_schedlat_free(struct sonde_schedlat *sl);

/*
 * One tracepoint sample, in time order (others are ignored).
 * Return: 0 or -ENOMEM.
 */
int sonde_schedlat_add(struct sonde_schedlat *sl, const void *raw, size_t size, uint64_t time,
		       uint32_t cpu);

/**
 * sonde_schedlat_rows() - the result, longest average delay first
 * @comm: gives a task's comm id (compared to merge tasks by command)
 * @merge: one row per command, as perf does without --pids
 * Return: the number of rows, *rows borrowed until the next call or free.
 * Tasks without a switch and the idle task are left out.
 */
size_t sonde_schedlat_rows(struct sonde_schedlat *sl, uint32_t (*comm)(void *ctx, uint32_t tid),
			   void *ctx, bool merge, const struct sonde_schedlat_row **rows);

struct sonde_tool;
/* The analysis as a tool of a session pass: ctx is the struct sonde_schedlat. */
extern const struct sonde_tool sonde_schedlat_tool;

#endif
