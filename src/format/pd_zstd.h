/* SPDX-License-Identifier: MIT */
/*
 * zstd streams of perf records, as perf's -z writes them: one zstd stream
 * for the whole file, cut into PERF_RECORD_COMPRESSED records of at most
 * 64 KiB, each ending at a flush point so that every record decompresses
 * on its own given the ones before it.  Records inside may straddle two
 * COMPRESSED records.
 *
 * zstd is optional for the target build: without it (pd_zstd_none.c)
 * every constructor returns -ENOTSUP.
 */
#ifndef SONDE_PD_ZSTD_H
#define SONDE_PD_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether this build can compress and decompress. */
bool sonde_pd_zstd_available(void);

struct pd_zcomp;
/* Return: 0, -ENOTSUP without zstd, -ENOMEM, or -EINVAL for a bad level. */
int sonde_pd_zcomp_new(struct pd_zcomp **out, int level);
void sonde_pd_zcomp_free(struct pd_zcomp *z);
/*
 * Compresses @len bytes and flushes; each COMPRESSED record made (header
 * included) goes to @emit, whose non-zero return stops and is returned.
 * Return: 0, the emit error, or SONDE_E_FORMAT from zstd.
 */
int sonde_pd_zcomp_records(struct pd_zcomp *z, const void *in, size_t len,
			   int (*emit)(void *ctx, const void *rec, size_t len), void *ctx);

struct pd_zdecomp;
int sonde_pd_zdecomp_new(struct pd_zdecomp **out);
void sonde_pd_zdecomp_free(struct pd_zdecomp *z);
/* Starts a new stream (rewind). */
void sonde_pd_zdecomp_reset(struct pd_zdecomp *z);
/*
 * Decompresses one COMPRESSED payload, appending to *buf (len *len, room
 * *cap, grown with realloc up to @max bytes).
 * Return: 0, -ENOMEM, SONDE_E_LIMIT past @max, or SONDE_E_FORMAT with
 * zstd's reason in *why.
 */
int sonde_pd_zdecomp_append(struct pd_zdecomp *z, const void *in, size_t in_len, uint8_t **buf,
			    size_t *len, size_t *cap, size_t max, const char **why);

#endif
