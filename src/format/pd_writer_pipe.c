// SPDX-License-Identifier: MIT
/*
 * perf.data in pipe mode: what `perf record -o -` writes and `perf report
 * -i -` reads, for outputs that can't seek (a pipe, a FIFO).
 *
 * Nothing is ever rewritten, so everything a file keeps in its header
 * sections comes first, as records, in perf 6.1's order: the 16-byte
 * header (magic, size 16), one HEADER_ATTR per event (attr then ids), one
 * HEADER_FEATURE per feature set so far (u64 feature id, then the same
 * bytes as in a file; EVENT_DESC names the events; COMPRESSED comes before
 * the first compressed record, which perf needs to size its buffer), the
 * end-of-features marker (id HEADER_LAST_FEATURE, empty), then
 * HEADER_TRACING_DATA with the blob after it padded to 8 bytes.  Features
 * set during the capture follow the records at close.  sonde's own
 * features (bits 224 and up) are not sent: perf warns about ids past its
 * last feature in a pipe.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pd_le.h"
#include "pd_writer_internal.h"

int sonde_pd_pipe_write(struct sonde_pd_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t r = write(w->fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int put(struct sonde_pd_writer *w, const void *buf, size_t len, const char *what)
{
	int err;

	if (w->err)
		return w->err;
	if ((err = sonde_pd_pipe_write(w, buf, len)))
		return sonde_pd_writer_fail(w, err, "writing %s to the stream: %s", what,
					    sonde_strerror(err));
	return 0;
}

/* A record: header, @prefix_len bytes of @prefix, then @len bytes of @body. */
static int put_record(struct sonde_pd_writer *w, uint32_t type, const void *prefix,
		      size_t prefix_len, const void *body, size_t len, const char *what)
{
	uint8_t h[8 + 8];
	size_t total = 8 + prefix_len + len;

	if (total > UINT16_MAX)
		return sonde_pd_writer_fail(
		    w, SONDE_E_LIMIT, "%s: %zu bytes, too big for a pipe record", what, total);
	pd_put32(h, type);
	pd_put16(h + 4, 0);
	pd_put16(h + 6, (uint16_t)total);
	if (prefix_len)
		memcpy(h + 8, prefix, prefix_len);
	if (put(w, h, 8 + prefix_len, what))
		return w->err;
	return len ? put(w, body, len, what) : 0;
}

int sonde_pd_pipe_put_attr(struct sonde_pd_writer *w, size_t idx)
{
	const struct wattr *a = &w->attrs[idx];
	size_t n = SONDE_PD_ATTR_SIZE + a->nr_ids * 8;
	uint8_t *b = malloc(n);
	int err;

	if (!b)
		return sonde_pd_writer_fail(w, -ENOMEM, "out of memory");
	memcpy(b, a->attr, SONDE_PD_ATTR_SIZE);
	for (size_t i = 0; i < a->nr_ids; i++)
		pd_put64(b + SONDE_PD_ATTR_SIZE + i * 8, a->ids[i]);
	err = put_record(w, SONDE_PD_RECORD_HEADER_ATTR, NULL, 0, b, n, "an event (HEADER_ATTR)");
	free(b);
	return err;
}

/* HEADER_FEATURE records for the features set and not sent yet. */
static int put_features(struct sonde_pd_writer *w)
{
	for (unsigned bit = 1; bit < SONDE_PD_FEAT_LAST_PERF && !w->err; bit++) {
		struct blob *b = &w->feat[bit];
		uint8_t id[8];

		/* Tracing data has its own record, build ids have none in a pipe. */
		if (!b->set || b->sent || bit == SONDE_PD_FEAT_TRACING_DATA ||
		    bit == SONDE_PD_FEAT_BUILD_ID)
			continue;
		pd_put64(id, bit);
		put_record(w, SONDE_PD_RECORD_HEADER_FEATURE, id, 8, b->data, b->len,
			   "a header feature");
		b->sent = true;
	}
	return w->err;
}

static int put_tracing_data(struct sonde_pd_writer *w)
{
	const struct blob *b = &w->feat[SONDE_PD_FEAT_TRACING_DATA];
	static const uint8_t zeros[8];
	size_t padded = (b->len + 7) & ~(size_t)7;
	uint8_t size[8] = {0};

	if (!b->set || !b->len)
		return 0;
	/* perf: the size field holds the padded size, the blob follows the record. */
	pd_put32(size, (uint32_t)padded);
	if (put_record(w, SONDE_PD_RECORD_HEADER_TRACING_DATA, size, 8, NULL, 0, "tracing data") ||
	    put(w, b->data, b->len, "tracing data") ||
	    put(w, zeros, padded - b->len, "tracing data"))
		return w->err;
	w->feat[SONDE_PD_FEAT_TRACING_DATA].sent = true;
	return 0;
}

int sonde_pd_pipe_begin(struct sonde_pd_writer *w)
{
	uint8_t h[16], last[8];

	pd_put64(h, SONDE_PD_MAGIC);
	pd_put64(h + 8, sizeof(h));
	if (put(w, h, sizeof(h), "the pipe header"))
		return w->err;
	for (size_t i = 0; i < w->nr_attrs; i++)
		if (sonde_pd_pipe_put_attr(w, i))
			return w->err;
	if (put_features(w))
		return w->err;
	pd_put64(last, SONDE_PD_FEAT_LAST_PERF);
	if (put_record(w, SONDE_PD_RECORD_HEADER_FEATURE, last, 8, NULL, 0, "a header feature") ||
	    put_tracing_data(w))
		return w->err;
	w->begun = true;
	w->attrs_dirty = false;
	return 0;
}

int sonde_pd_pipe_end(struct sonde_pd_writer *w)
{
	return put_features(w);
}
