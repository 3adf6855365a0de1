/* SPDX-License-Identifier: MIT */
/*
 * The perf.data writer's state, shared by pd_writer.c (file mode, events,
 * features), pd_writer_pipe.c (pipe mode), pd_trailer.c and pd_writer_io.c
 * (sticky error, positioned writes).  Not part of the public API.
 */
#ifndef SONDE_PD_WRITER_INTERNAL_H
#define SONDE_PD_WRITER_INTERNAL_H

#include <sonde/perf_data.h>

#define BUF_CAP (64 * 1024)
/*
 * With compression, records are staged and compressed this many bytes at a
 * time.  Each batch ends at a zstd flush, so no COMPRESSED record expands
 * to more than a batch: the mmap_len perf's reader sizes its buffer by.
 */
#define ZBATCH (256 * 1024)

struct blob {
	uint8_t *data;
	size_t len;
	bool set;
	bool sent; /* stream: already written as a HEADER_FEATURE record */
};

struct wattr {
	uint8_t attr[SONDE_PD_ATTR_SIZE]; /* on-disk bytes */
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct sonde_pd_writer {
	int fd;
	bool own_fd;
	bool stream; /* pipe mode: written front to back, never rewritten */
	int err;
	struct sonde_errmsg msg;
	uint8_t *buf; /* BUF_CAP bytes of whole records */
	size_t buf_len;
	bool begun;
	uint64_t data_offset;
	uint64_t data_size; /* records accepted */
	uint64_t disk_size; /* whole records on disk */
	struct wattr *attrs;
	size_t nr_attrs;
	bool attrs_dirty; /* changed since the on-disk copy was written */
	struct sonde_pd_section attrs_sec;
	struct blob feat[SONDE_PD_FEAT_BITS];
	struct pd_zcomp *z; /* -z: records staged in zin, compressed per batch */
	uint8_t *zin;
	size_t zin_len;
	uint32_t zlevel;
};

/* pd_writer_io.c, below the other writer files */
/* Records the first error; later ones keep the first message.  Return: the first error. */
int sonde_pd_writer_fail(struct sonde_pd_writer *w, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes all of @len at @off.  Return: 0 or -errno, *done = bytes written. */
int sonde_pd_pwrite_all(int fd, const void *buf, size_t len, uint64_t off, size_t *done);
/* Writes @len bytes at file offset @off (sticky error, message naming @what). */
int sonde_pd_writer_put(struct sonde_pd_writer *w, const void *buf, size_t len, uint64_t off,
			const char *what);

/* pd_writer.c */
/* Serializes HEADER_EVENT_DESC from the events into its feature blob. */
int sonde_pd_writer_event_desc(struct sonde_pd_writer *w);
/* Sets HEADER_COMPRESSED from the compression settings (-z). */
int sonde_pd_writer_compressed_feature(struct sonde_pd_writer *w);

/* pd_trailer.c: sonde's own sections after everything else, from @pos. */
int sonde_pd_trailer_write(struct sonde_pd_writer *w, uint64_t pos);

/* pd_writer_pipe.c */
/* Writes all of @len at the stream's end.  Return: 0 or -errno. */
int sonde_pd_pipe_write(struct sonde_pd_writer *w, const void *buf, size_t len);
/* The stream's start: header, HEADER_ATTRs, features, tracing data. */
int sonde_pd_pipe_begin(struct sonde_pd_writer *w);
/* One HEADER_ATTR record for event @idx. */
int sonde_pd_pipe_put_attr(struct sonde_pd_writer *w, size_t idx);
/* Features set after the start, as HEADER_FEATURE records. */
int sonde_pd_pipe_end(struct sonde_pd_writer *w);

#endif
