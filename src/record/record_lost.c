// SPDX-License-Identifier: MIT
/*
 * LOST_SAMPLES records at the end of a capture, as perf record writes them
 * (builtin-record.c, record__read_lost_samples): every event is opened
 * with PERF_FORMAT_LOST, so reading its fd gives the samples the kernel
 * dropped for it (ring full); each fd with a non-zero count becomes one
 * PERF_RECORD_LOST_SAMPLES {header, u64 lost, sample_id trailer} whose
 * trailer names the event by its id.  perf report's "Total Lost Samples"
 * is the sum of these records; the LOST records the rings deliver count
 * the same losses per ring, and perf does not add them.
 */
#include <sonde/record.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4) /* uapi headers before 6.0 */
#endif

/* The lost count of one fd, or 0 when it has none or cannot be read. */
static uint64_t read_lost(int fd, uint64_t read_format)
{
	uint64_t v[5];
	size_t at = 1; /* after the value: enabled, running, id, then lost */
	ssize_t n;

	if (!(read_format & PERF_FORMAT_LOST) || (read_format & PERF_FORMAT_GROUP))
		return 0;
	at += !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED);
	at += !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	at += !!(read_format & PERF_FORMAT_ID);
	n = read(fd, v, sizeof(v));
	return n >= 0 && (size_t)n >= (at + 1) * sizeof(*v) ? v[at] : 0;
}

/*
 * The sample_id trailer perf synthesizes for it: every field of the
 * event's sample_type zero but the id (perf_event__synthesize_id_sample).
 * Return: bytes written to @out (room for 6 u64s).
 */
static size_t id_trailer(uint64_t sample_type, uint64_t id, uint64_t *out)
{
	size_t n = 0;

	if (sample_type & PERF_SAMPLE_TID)
		out[n++] = 0;
	if (sample_type & PERF_SAMPLE_TIME)
		out[n++] = 0;
	if (sample_type & PERF_SAMPLE_ID)
		out[n++] = id;
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		out[n++] = 0;
	if (sample_type & PERF_SAMPLE_CPU)
		out[n++] = 0;
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		out[n++] = id;
	return n * sizeof(*out);
}

int sonde_record_write_lost(struct sonde_record *r, sonde_ring_sink sink, void *ctx)
{
	r->lost_samples = 0;
	for (size_t i = 0; i < r->nevents; i++) {
		const struct perf_event_attr *a = &r->attrs[i];

		for (size_t s = 0; s < r->nslots; s++) {
			size_t k = i * r->nslots + s;
			struct {
				struct perf_event_header h;
				uint64_t lost;
				uint64_t trailer[6];
			} rec;
			int err;

			if (r->fds[k] < 0 || !(rec.lost = read_lost(r->fds[k], a->read_format)))
				continue;
			rec.h.type = PERF_RECORD_LOST_SAMPLES;
			rec.h.misc = 0;
			rec.h.size = (uint16_t)(sizeof(rec.h) + sizeof(rec.lost) +
						id_trailer(a->sample_type, r->ids[k], rec.trailer));
			if ((err = sink(ctx, &rec, rec.h.size)) < 0)
				return err;
			r->lost_samples += rec.lost;
		}
	}
	return 0;
}
