// SPDX-License-Identifier: MIT
/*
 * The zstd interface (pd_zstd.h) for a build without libzstd, so the
 * writer, the reader and the static agent link the same calls either way.
 * sonde_pd_zstd_available() says false; compressing and decompressing
 * fail with "not supported", which record -z and a reader that meets a
 * COMPRESSED record turn into a message instead of a crash.
 */
#include "pd_zstd.h"

#include <errno.h>

#include <sonde/error.h>

bool sonde_pd_zstd_available(void)
{
	return false;
}

int sonde_pd_zcomp_new(struct pd_zcomp **out, int level)
{
	(void)out;
	(void)level;
	return -ENOTSUP;
}

void sonde_pd_zcomp_free(struct pd_zcomp *z)
{
	(void)z;
}

int sonde_pd_zcomp_records(struct pd_zcomp *z, const void *in, size_t len,
			   int (*emit)(void *ctx, const void *rec, size_t len), void *ctx)
{
	(void)z, (void)in, (void)len, (void)emit, (void)ctx;
	return -ENOTSUP;
}

int sonde_pd_zdecomp_new(struct pd_zdecomp **out)
{
	(void)out;
	return -ENOTSUP;
}

void sonde_pd_zdecomp_free(struct pd_zdecomp *z)
{
	(void)z;
}

void sonde_pd_zdecomp_reset(struct pd_zdecomp *z)
{
	(void)z;
}

int sonde_pd_zdecomp_append(struct pd_zdecomp *z, const void *in, size_t in_len, uint8_t **buf,
			    size_t *len, size_t *cap, size_t max, const char **why)
{
	(void)z, (void)in, (void)in_len, (void)buf, (void)len, (void)cap, (void)max;
	*why = "sonde was built without zstd";
	return -ENOTSUP;
}
