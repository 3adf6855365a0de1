// SPDX-License-Identifier: MIT
/*
 * The tool table's dispatcher for non-sample records: one switch on the
 * record kind, so every session (the host's report pass, the capture
 * side's build-id pass) routes records to tools the same way.  Samples
 * are not routed here: each session fills a struct sonde_tool_sample
 * (filters, resolved frames) before calling ->sample itself.
 */
#include <sonde/tool.h>

int sonde_tool_dispatch(const struct sonde_tool *t, void *ctx, struct sonde_session *ses,
			const struct sonde_pd_record *rec, const struct sonde_pd_event *ev)
{
	sonde_tool_record_fn fn;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		return 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		fn = t->mmap;
		break;
	case PERF_RECORD_COMM:
		fn = t->comm;
		break;
	case PERF_RECORD_FORK:
		fn = t->fork;
		break;
	case PERF_RECORD_EXIT:
		fn = t->exit;
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		fn = t->lost;
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		fn = t->throttle;
		break;
	default:
		fn = t->other;
		break;
	}
	return fn ? fn(ctx, ses, rec, ev) : 0;
}
