// SPDX-License-Identifier: MIT
/*
 * perf -z compression with libzstd's streaming API.
 *
 * Compression: ZSTD_compressStream2 with ZSTD_e_flush into an output
 * window the size of one record's payload; when the window fills, the
 * record is emitted and a new one started, until zstd reports the flush
 * complete.  A flush per call means a reader never needs bytes from a
 * later record to finish the records of an earlier batch.
 */
#include "pd_zstd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include <sonde/error.h>
#include <sonde/perf_data.h>

#include "pd_le.h"

/* A record's size is a u16: header plus at most this much payload. */
#define REC_PAYLOAD_MAX (UINT16_MAX - sizeof(struct perf_event_header))

struct pd_zcomp {
	ZSTD_CCtx *cctx;
	uint8_t rec[UINT16_MAX];
};

struct pd_zdecomp {
	ZSTD_DCtx *dctx;
};

bool sonde_pd_zstd_available(void)
{
	return true;
}

int sonde_pd_zcomp_new(struct pd_zcomp **out, int level)
{
	struct pd_zcomp *z;

	if (level < 1 || level > ZSTD_maxCLevel())
		return -EINVAL;
	if (!(z = malloc(sizeof(*z))))
		return -ENOMEM;
	if (!(z->cctx = ZSTD_createCCtx())) {
		free(z);
		return -ENOMEM;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level))) {
		sonde_pd_zcomp_free(z);
		return -EINVAL;
	}
	*out = z;
	return 0;
}

void sonde_pd_zcomp_free(struct pd_zcomp *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z);
}

/* Emits the record being filled when it holds any payload. */
static int emit_record(struct pd_zcomp *z, size_t payload,
		       int (*emit)(void *ctx, const void *rec, size_t len), void *ctx)
{
	size_t size = sizeof(struct perf_event_header) + payload;

	if (!payload)
		return 0;
	pd_put32(z->rec, SONDE_PD_RECORD_COMPRESSED);
	pd_put16(z->rec + 4, 0);
	pd_put16(z->rec + 6, (uint16_t)size);
	return emit(ctx, z->rec, size);
}

int sonde_pd_zcomp_records(struct pd_zcomp *z, const void *in, size_t len,
			   int (*emit)(void *ctx, const void *rec, size_t len), void *ctx)
{
	ZSTD_inBuffer src = {in, len, 0};
	size_t left;

	do {
		ZSTD_outBuffer dst = {z->rec + sizeof(struct perf_event_header), REC_PAYLOAD_MAX,
				      0};
		int err;

		left = ZSTD_compressStream2(z->cctx, &dst, &src, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return SONDE_E_FORMAT;
		if ((err = emit_record(z, dst.pos, emit, ctx)))
			return err;
	} while (left || src.pos < src.size);
	return 0;
}

int sonde_pd_zdecomp_new(struct pd_zdecomp **out)
{
	struct pd_zdecomp *z = malloc(sizeof(*z));

	if (!z)
		return -ENOMEM;
	if (!(z->dctx = ZSTD_createDCtx())) {
		free(z);
		return -ENOMEM;
	}
	*out = z;
	return 0;
}

void sonde_pd_zdecomp_free(struct pd_zdecomp *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->dctx);
	free(z);
}

void sonde_pd_zdecomp_reset(struct pd_zdecomp *z)
{
	ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
}

int sonde_pd_zdecomp_append(struct pd_zdecomp *z, const void *in, size_t in_len, uint8_t **buf,
			    size_t *len, size_t *cap, size_t max, const char **why)
{
	ZSTD_inBuffer src = {in, in_len, 0};

	for (;;) {
		ZSTD_outBuffer dst;
		size_t r;

		if (*cap - *len < ZSTD_DStreamOutSize()) {
			size_t ncap = *cap ? *cap * 2 : 4 * ZSTD_DStreamOutSize();
			uint8_t *n;

			if (ncap > max)
				ncap = max;
			if (ncap <= *cap)
				return SONDE_E_LIMIT;
			if (!(n = realloc(*buf, ncap)))
				return -ENOMEM;
			*buf = n;
			*cap = ncap;
		}
		dst = (ZSTD_outBuffer){*buf + *len, *cap - *len, 0};
		r = ZSTD_decompressStream(z->dctx, &dst, &src);
		*len += dst.pos;
		if (ZSTD_isError(r)) {
			*why = ZSTD_getErrorName(r);
			return SONDE_E_FORMAT;
		}
		/* Done when the input is used and zstd had room left to spare. */
		if (src.pos == src.size && dst.pos < dst.size)
			return 0;
	}
}
