// SPDX-License-Identifier: MIT
/*
 * The perf.data writer's sticky error and its positioned writes: the
 * bottom of the writer, used by pd_writer.c (header, data, close),
 * pd_writer_pipe.c (the stream's header records) and pd_trailer.c
 * (sonde's sections).  Apart from pd_writer.c, which calls the other two,
 * so they never call back up into it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "pd_writer_internal.h"

int sonde_pd_writer_fail(struct sonde_pd_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return w->err;
	w->err = err;
	va_start(ap, fmt);
	vsnprintf(w->msg.text, sizeof(w->msg.text), fmt, ap);
	va_end(ap);
	return err;
}

int sonde_pd_pwrite_all(int fd, const void *buf, size_t len, uint64_t off, size_t *done)
{
	const uint8_t *p = buf;
	size_t n = 0;

	while (n < len) {
		ssize_t r = pwrite(fd, p + n, len - n, (off_t)(off + n));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (done)
				*done = n;
			return r < 0 ? -errno : -ENOSPC;
		}
		n += (size_t)r;
	}
	if (done)
		*done = n;
	return 0;
}

int sonde_pd_writer_put(struct sonde_pd_writer *w, const void *buf, size_t len, uint64_t off,
			const char *what)
{
	int err = sonde_pd_pwrite_all(w->fd, buf, len, off, NULL);

	if (err)
		return sonde_pd_writer_fail(w, err, "writing %s at offset 0x%" PRIx64 ": %s", what,
					    off, sonde_strerror(err));
	return 0;
}
