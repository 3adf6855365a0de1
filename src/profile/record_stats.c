// SPDX-License-Identifier: MIT
/*
 * The record-counting tool behind `sonde report --stats`: one counter per
 * record kind, fed by the session's callbacks (FINISHED_ROUND through its
 * own), and the samples per event.  Samples are counted as the session
 * hands them over, so filters apply as in perf (none by default).
 */
#include <sonde/record_stats.h>

#include <errno.h>
#include <stdlib.h>

#include <sonde/session.h>
#include <sonde/tool.h>

static void count(struct sonde_record_stats *st, uint32_t type)
{
	st->total++;
	if (type < SONDE_PD_RECORD_HEADER_MAX)
		st->nr[type]++;
}

static int on_begin(void *ctx, struct sonde_session *ses)
{
	struct sonde_record_stats *st = ctx;

	st->nevents = ses->nevents;
	st->samples = calloc(ses->nevents ? ses->nevents : 1, sizeof(*st->samples));
	return st->samples ? 0 : -ENOMEM;
}

static int on_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	struct sonde_record_stats *st = ctx;

	(void)ses;
	count(st, PERF_RECORD_SAMPLE);
	st->samples[ts->event]++;
	return 0;
}

static int on_record(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		     const struct sonde_pd_event *ev)
{
	(void)ses;
	(void)ev;
	count(ctx, rec->type);
	return 0;
}

static int on_round(void *ctx, struct sonde_session *ses)
{
	(void)ses;
	count(ctx, SONDE_PD_RECORD_FINISHED_ROUND);
	return 0;
}

/* The reader unpacks COMPRESSED records itself: perf counts them too. */
static int on_end(void *ctx, struct sonde_session *ses)
{
	struct sonde_record_stats *st = ctx;
	uint64_t n = sonde_pd_reader_nr_compressed(ses->reader);

	st->nr[SONDE_PD_RECORD_COMPRESSED] += n;
	st->total += n;
	return 0;
}

const struct sonde_tool sonde_record_stats_tool = {
    .name = "stats",
    .begin = on_begin,
    .sample = on_sample,
    .mmap = on_record,
    .comm = on_record,
    .fork = on_record,
    .exit = on_record,
    .lost = on_record,
    .throttle = on_record,
    .other = on_record,
    .finished_round = on_round,
    .end = on_end,
};

void sonde_record_stats_fini(struct sonde_record_stats *st)
{
	free(st->samples);
	st->samples = NULL;
}
