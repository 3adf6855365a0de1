// SPDX-License-Identifier: MIT
/*
 * The synthesizers' shared pieces: checking a struct sonde_synth, finishing
 * a record (name padded to 8 bytes, the zeroed sample_id trailer, the
 * size) and emitting it, the kernel's MMAP, a line reader over procfs
 * files and a growing string buffer.  Every synth_*.c file calls down
 * into these; nothing here calls back up.
 */
#include "synth_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>

int sonde_synth_check(const struct sonde_synth *s)
{
	if (!s || !s->emit || s->id_hdr_size > SONDE_SYNTH_ID_HDR_MAX || s->id_hdr_size % 8)
		return -EINVAL;
	return 0;
}

int sonde_synth_finish(const struct sonde_synth *s, union sonde_rec_buf *buf, size_t fixed,
		       const char *name)
{
	struct sonde_rec_header *h = (struct sonde_rec_header *)buf->b;
	size_t size = fixed, n = 0, padded = 0;

	if (name) {
		n = strlen(name) + 1;
		padded = (n + 7) & ~(size_t)7;
	}
	if (fixed + padded + s->id_hdr_size > sizeof(buf->b))
		return -EINVAL;
	if (name)
		memcpy(buf->b + size, name, n);
	memset(buf->b + size + n, 0, padded - n + s->id_hdr_size);
	size += padded + s->id_hdr_size;
	h->size = (uint16_t)size;
	return s->emit(s->ctx, buf->b, size);
}

int sonde_synth_emit_kmmap(const struct sonde_synth *s, uint64_t start, uint64_t len,
			   uint64_t pgoff, const char *name)
{
	union sonde_rec_buf buf;
	struct sonde_rec_mmap *m = (struct sonde_rec_mmap *)buf.b;
	char cut[SONDE_SYNTH_PATH_MAX];
	size_t room = SONDE_SYNTH_PATH_MAX - s->id_hdr_size;

	if (strlen(name) >= room) { /* perf's strlcpy into its clamped buffer */
		memcpy(cut, name, room - 1);
		cut[room - 1] = '\0';
		name = cut;
	}
	memset(m, 0, sizeof(*m));
	m->h.type = PERF_RECORD_MMAP;
	m->h.misc = PERF_RECORD_MISC_KERNEL;
	m->pid = (uint32_t)-1;
	m->tid = 0;
	m->start = start;
	m->len = len;
	m->pgoff = pgoff;
	return sonde_synth_finish(s, &buf, sizeof(*m), name);
}

/* ---- line reader ---- */

int sonde_lines_open(struct sonde_lines *l, const char *path, char *buf, size_t cap)
{
	memset(l, 0, sizeof(*l));
	l->buf = buf;
	l->cap = cap;
	l->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (l->fd < 0)
		return -errno;
	return 0;
}

void sonde_lines_close(struct sonde_lines *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

int sonde_lines_next(struct sonde_lines *l, char **line, size_t *len, bool *cut)
{
	if (cut)
		*cut = false;
	for (;;) {
		char *nl = memchr(l->buf + l->pos, '\n', l->len - l->pos);
		ssize_t r;

		if (l->skip) { /* the rest of a line that was cut */
			if (!nl) {
				l->pos = l->len;
			} else {
				l->pos = (size_t)(nl - l->buf) + 1;
				l->skip = false;
				continue;
			}
		} else if (nl) {
			*nl = '\0';
			*line = l->buf + l->pos;
			*len = (size_t)(nl - *line);
			l->pos = (size_t)(nl - l->buf) + 1;
			return 1;
		} else if (l->eof) {
			if (l->pos == l->len)
				return 0;
			l->buf[l->len] = '\0';
			*line = l->buf + l->pos;
			*len = l->len - l->pos;
			l->pos = l->len;
			return 1;
		}
		if (l->pos) {
			memmove(l->buf, l->buf + l->pos, l->len - l->pos);
			l->len -= l->pos;
			l->pos = 0;
		}
		if (l->len == l->cap - 1) { /* a line longer than the buffer */
			l->buf[l->len] = '\0';
			*line = l->buf;
			*len = l->len;
			l->pos = l->len;
			l->skip = true;
			if (cut)
				*cut = true;
			return 1;
		}
		r = read(l->fd, l->buf + l->len, l->cap - 1 - l->len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			l->eof = true;
		l->len += (size_t)r;
	}
}

/* ---- text buffer ---- */

void sonde_sbuf_printf(struct sonde_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}
