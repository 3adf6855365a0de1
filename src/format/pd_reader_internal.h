/* SPDX-License-Identifier: MIT */
/*
 * The perf.data reader's state, shared by the files of the reader:
 * pd_reader.c (opening, file mode, iteration), pd_pipe.c (the header
 * records a pipe-mode stream starts with) and pd_reader_header.c (events
 * and features, below both).  Not part of the public API.
 */
#ifndef SONDE_PD_READER_INTERNAL_H
#define SONDE_PD_READER_INTERNAL_H

#include <sonde/perf_data.h>

#define STREAM_MAX (1u << 30)	/* largest record + extra taken from a pipe */
#define UNPACK_MAX (256u << 20) /* decompressed bytes held at once */

struct idmap {
	uint64_t id;
	const struct sonde_pd_attr *attr;
};

struct sonde_pd_reader {
	uint64_t nr_compressed; /* COMPRESSED records unpacked so far */
	/* source: memory (mapped or lent) or a stream */
	const uint8_t *base;
	size_t len;
	void *map;
	size_t map_len;
	int fd;
	bool own_fd;
	bool stream;
	bool pipe;
	struct sonde_errmsg msg;
	struct sonde_pd_file_header hdr;

	struct sonde_pd_attr **attrs; /* each allocated, so pointers stay valid */
	size_t nr_attrs;
	struct idmap *ids;
	size_t nr_ids;
	int sample_id_pos; /* u64 index of the id in a sample body, -1 if none */

	struct sonde_pd_section feat_sec[SONDE_PD_FEAT_BITS];
	const uint8_t *feat_ptr[SONDE_PD_FEAT_BITS]; /* borrowed: each feature's bytes */
	bool feat_present[SONDE_PD_FEAT_BITS];
	struct sonde_pd_features feat;
	const char **argv;
	struct sonde_pd_build_id *bids;
	const char **topo;

	/* iteration */
	uint64_t data_start, data_end, pos;
	uint64_t forgotten;  /* data bytes before this were handed back (madvise) */
	bool truncated_file; /* the declared data end lies past the end of file */
	enum sonde_pd_tail tail;
	int err;	  /* sticky iteration error */
	uint8_t *scratch; /* aligned copy of an unaligned record */
	uint8_t *sbuf;	  /* stream mode: the current record */
	size_t scap, slen;
	bool seof;
	/* records unpacked from COMPRESSED ones: zbuf[zpos, zlen) */
	struct pd_zdecomp *zd;
	uint8_t *zbuf;
	size_t zlen, zcap, zpos;
	uint64_t zoff; /* offset of the COMPRESSED record they came from */
	/* pipe mode: the header records before the first kernel record */
	uint8_t *pre; /* stream: those records (and the next), read ahead at open */
	size_t pre_len, pre_pos;
	uint64_t pre_end; /* stream offset where they end: their HEADER_ATTRs are taken */
};

/* pd_reader_header.c, below pd_reader.c and pd_pipe.c */
int sonde_pd_reader_setmsg(struct sonde_pd_reader *r, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * Adds an event from @fsz bytes of on-disk attr and @nr_ids ids at @ids
 * (unaligned little-endian).  The attr is zero-extended or cut to ours.
 */
int sonde_pd_reader_add_attr(struct sonde_pd_reader *r, const uint8_t *a, size_t fsz,
			     const uint8_t *ids, size_t nr_ids);
/* Rebuilds the sorted id map and the sample id position. */
int sonde_pd_reader_index_ids(struct sonde_pd_reader *r);
/* Parses feature @bit from feat_ptr[bit], feat_sec[bit].size bytes. */
int sonde_pd_reader_parse_feature(struct sonde_pd_reader *r, unsigned bit);
/* Adds the event of a HEADER_ATTR record (pipe mode). */
int sonde_pd_reader_take_attr(struct sonde_pd_reader *r, const uint8_t *rec, uint16_t size,
			      uint64_t off);

/* The event of a kernel record, found through its id. */
const struct sonde_pd_attr *sonde_pd_reader_record_attr(const struct sonde_pd_reader *r,
							uint32_t type, const uint8_t *rec,
							uint16_t size);
/* Ends iteration at a cut record: tail TRUNCATED, message kept.  Return: 0. */
int sonde_pd_reader_truncated(struct sonde_pd_reader *r, uint64_t off, const char *what);

/* pd_trailer.c: sonde's own sections, from the trailer of a mapped file. */
void sonde_pd_trailer_read(struct sonde_pd_reader *r);

/* pd_pipe.c */
/* Takes the events, names, features and tracing data of the header
 * records at the start of a pipe-mode capture (mapped, or read ahead
 * from a stream and replayed by sonde_pd_pipe_next_pre()).  Return: 0 or error. */
int sonde_pd_pipe_prelude(struct sonde_pd_reader *r);
/* The next read-ahead record of a stream: 1, 0 when none is left, or error. */
int sonde_pd_pipe_next_pre(struct sonde_pd_reader *r, struct sonde_pd_record *rec);

#endif
