// SPDX-License-Identifier: MIT
/*
 * The start of a pipe-mode perf.data (perf record -o -, sonde record -o -).
 *
 * A pipe has no header sections: what a file keeps in its attrs section
 * and header features comes as records before the first kernel record.
 * perf 6.1 sends, in order: HEADER_ATTR per event, HEADER_FEATURE per
 * feature (the feature's file-mode bytes after a u64 feature id, HOSTNAME
 * through EVENT_DESC and the rest, ending with id HEADER_LAST_FEATURE),
 * HEADER_TRACING_DATA (the blob follows the record, padded to 8 bytes),
 * ID_INDEX, EVENT_UPDATE (names, units, scales of events), THREAD_MAP,
 * CPU_MAP, FINISHED_INIT.
 *
 * The reader takes all of them at open, so a pipe's events have their
 * names ("sched:sched_switch", "cpu-clock:ppp"), its features and its
 * tracing data are there before the first sample, exactly as a file's
 * are.  From a stream they are read ahead into one buffer that lives as
 * long as the reader (the features borrow from it) and then handed out
 * again by the iteration, so callers still see every record.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pd_le.h"
#include "pd_reader_internal.h"

/* Read-ahead cap: perf's header records are tens of KiB (tracing data of
 * many events: a few MiB). */
#define PRE_MAX (256u << 20)
/* PERF_EVENT_UPDATE__NAME in an EVENT_UPDATE record. */
#define EVENT_UPDATE_NAME 2

/* EVENT_UPDATE: u64 type, u64 id, then for NAME a NUL-terminated name. */
static void take_event_update(struct sonde_pd_reader *r, const uint8_t *rec, uint16_t size)
{
	const struct sonde_pd_attr *a;

	if (size <= 24 || pd_get64(rec + 8) != EVENT_UPDATE_NAME ||
	    !memchr(rec + 24, 0, size - 24u))
		return;
	a = sonde_pd_reader_find_id(r, pd_get64(rec + 16));
	if (a)
		((struct sonde_pd_attr *)a)->name = (const char *)rec + 24;
}

/* HEADER_FEATURE: u64 feature id, then the feature's bytes. */
static int take_feature(struct sonde_pd_reader *r, const uint8_t *rec, uint16_t size, uint64_t off)
{
	uint64_t bit;

	if (size < 16)
		return sonde_pd_reader_setmsg(
		    r, SONDE_E_FORMAT, "HEADER_FEATURE at offset 0x%" PRIx64 ": size %u too small",
		    off, size);
	bit = pd_get64(rec + 8);
	/* 0 is reserved; perf ends the list with an empty HEADER_LAST_FEATURE. */
	if (bit == 0 || bit >= SONDE_PD_FEAT_BITS || size == 16)
		return 0;
	/* A feature sent twice: the first one stands (its parse owns arrays). */
	if (r->feat_present[bit])
		return 0;
	r->feat_present[bit] = true;
	r->feat_ptr[bit] = rec + 16;
	r->feat_sec[bit].offset = off + 16;
	r->feat_sec[bit].size = size - 16u;
	return sonde_pd_reader_parse_feature(r, (unsigned)bit);
}

/* Bytes of the whole record at @p (size and trailing data), 0 if it does
 * not fit in @left or is malformed. */
static uint64_t whole(const uint8_t *p, uint64_t left)
{
	uint16_t size;
	uint64_t extra;

	if (left < 8 || (size = pd_get16(p + 6)) < 8 || size > left)
		return 0;
	extra = pd_record_extra(pd_get32(p), p, size);
	if ((pd_get32(p) == SONDE_PD_RECORD_HEADER_TRACING_DATA && size < 12) ||
	    extra > left - size)
		return 0;
	return size + extra;
}

/* Takes the header records in [p, p + len), which start at offset @off.
 * Return: bytes they take, or an error. */
static int64_t scan(struct sonde_pd_reader *r, const uint8_t *p, uint64_t len, uint64_t off)
{
	uint64_t pos = 0, n;
	int err = 0;

	while ((n = whole(p + pos, len - pos)) != 0) {
		const uint8_t *rec = p + pos;
		uint32_t type = pd_get32(rec);
		uint16_t size = pd_get16(rec + 6);

		if (type < SONDE_PD_KERNEL_RECORD_MAX || type == SONDE_PD_RECORD_FINISHED_ROUND)
			break; /* the data proper */
		switch (type) {
		case SONDE_PD_RECORD_HEADER_ATTR:
			err = sonde_pd_reader_take_attr(r, rec, size, off + pos);
			break;
		case SONDE_PD_RECORD_HEADER_FEATURE:
			err = take_feature(r, rec, size, off + pos);
			break;
		case SONDE_PD_RECORD_EVENT_UPDATE:
			take_event_update(r, rec, size);
			break;
		case SONDE_PD_RECORD_HEADER_TRACING_DATA:
			r->feat.tracing_data = rec + size;
			r->feat.tracing_data_size = n - size;
			r->feat_present[SONDE_PD_FEAT_TRACING_DATA] = true;
			r->feat_ptr[SONDE_PD_FEAT_TRACING_DATA] = rec + size;
			r->feat_sec[SONDE_PD_FEAT_TRACING_DATA].offset = off + pos + size;
			r->feat_sec[SONDE_PD_FEAT_TRACING_DATA].size = n - size;
			break;
		}
		if (err)
			return err;
		pos += n;
	}
	return (int64_t)pos;
}

/* Bytes the record at @p needs beyond the @have read so far (0: it is
 * whole), or -1 when its size is malformed. */
static int64_t missing(const uint8_t *p, size_t have)
{
	uint16_t size;
	uint64_t extra;

	if (have < 8)
		return (int64_t)(8 - have);
	if ((size = pd_get16(p + 6)) < 8)
		return -1;
	if (have < size)
		return (int64_t)(size - have);
	if (pd_get32(p) == SONDE_PD_RECORD_HEADER_TRACING_DATA && size < 12)
		return -1;
	extra = pd_record_extra(pd_get32(p), p, size);
	if (extra > PRE_MAX)
		return (int64_t)PRE_MAX;
	return have >= size + extra ? 0 : (int64_t)(size + extra - have);
}

/*
 * Reads the stream into r->pre up to and including the first kernel
 * record, or to its end.  Exactly what the records need is read, so the
 * iteration goes on reading the stream right after them.
 */
static int read_ahead(struct sonde_pd_reader *r)
{
	size_t cap = 4096, done = 0;

	if (!(r->pre = malloc(cap)))
		return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
	for (;;) {
		int64_t need = missing(r->pre + done, r->pre_len - done);
		ssize_t got;

		if (need < 0)
			return 0; /* malformed: the iteration reports it */
		if (need == 0) {
			uint32_t type = pd_get32(r->pre + done);

			done = r->pre_len;
			if (type < SONDE_PD_KERNEL_RECORD_MAX ||
			    type == SONDE_PD_RECORD_FINISHED_ROUND)
				return 0;
			continue;
		}
		if ((uint64_t)need > PRE_MAX - r->pre_len)
			return sonde_pd_reader_setmsg(
			    r, SONDE_E_LIMIT,
			    "pipe header records: more than %u MiB before the "
			    "first event record",
			    PRE_MAX >> 20);
		if (r->pre_len + (size_t)need > cap) {
			size_t ncap = cap;
			uint8_t *b;

			while (ncap < r->pre_len + (size_t)need)
				ncap *= 2;
			if (!(b = realloc(r->pre, ncap)))
				return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
			r->pre = b;
			cap = ncap;
		}
		got = read(r->fd, r->pre + r->pre_len, (size_t)need);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return sonde_pd_reader_setmsg(r, -errno,
						      "reading the pipe header records: %s",
						      sonde_strerror(-errno));
		if (got == 0)
			return 0; /* the stream ended: the iteration finds the cut record */
		r->pre_len += (size_t)got;
	}
}

int sonde_pd_pipe_prelude(struct sonde_pd_reader *r)
{
	int64_t n;
	int err;

	if (r->stream) {
		if ((err = read_ahead(r)))
			return err;
		n = scan(r, r->pre, r->pre_len, r->data_start);
	} else {
		n = scan(r, r->base + r->data_start, r->data_end - r->data_start, r->data_start);
	}
	if (n < 0)
		return (int)n;
	r->pre_end = r->data_start + (uint64_t)n;
	return 0;
}

int sonde_pd_pipe_next_pre(struct sonde_pd_reader *r, struct sonde_pd_record *rec)
{
	size_t left = r->pre_len - r->pre_pos;
	const uint8_t *p = r->pre + r->pre_pos;
	uint64_t n;

	if (!left)
		return 0;
	if (!(n = whole(p, left))) {
		/* read_ahead stops only at the end of the stream or a bad size. */
		r->pre_pos = r->pre_len;
		if (left >= 8 && pd_get16(p + 6) < 8)
			return r->err =
				   sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
							  "record type %u at offset 0x%" PRIx64
							  ": size %u smaller than header",
							  pd_get32(p), r->pos, pd_get16(p + 6));
		return sonde_pd_reader_truncated(r, r->pos, "the stream ends inside a record");
	}
	if ((uintptr_t)p % 8) {
		memcpy(r->scratch, p, pd_get16(p + 6));
		p = r->scratch;
	}
	rec->offset = r->pos;
	rec->type = pd_get32(p);
	rec->misc = pd_get16(p + 4);
	rec->size = pd_get16(p + 6);
	rec->data = p;
	rec->stable = false;
	rec->extra_size = n - rec->size;
	rec->extra = rec->extra_size ? r->pre + r->pre_pos + rec->size : NULL;
	rec->attr = sonde_pd_reader_record_attr(r, rec->type, p, rec->size);
	r->pre_pos += n;
	r->pos += n;
	return 1;
}
