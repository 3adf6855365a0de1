// SPDX-License-Identifier: MIT
/*
 * perf.data reader.
 *
 * A file is mapped read-only (or taken from the caller's memory); a pipe
 * is streamed.  Opening validates the header, copies the attrs and their
 * ids into the reader (sorted by id for lookups), and parses the known
 * header features into struct sonde_pd_features with strings borrowed
 * from the mapping.  Unknown features stay available as raw bytes.
 *
 * Iteration walks the data section one record at a time, checking each
 * size against what is left before trusting it.  A record is handed out
 * in place when it is 8-byte aligned and copied to a scratch buffer when
 * it is not (pipe-mode files have odd-sized synthesized records), so the
 * sample decoder can lend u64 arrays.  A file that ends inside the data
 * section is not an error: iteration ends and sonde_pd_reader_tail() says
 * TRUNCATED, keeping everything read so far.  A header with data size 0
 * (a recorder killed before its first flush) is read to the end of file.
 *
 * Pipe mode (16-byte header) has no sections: attrs, names, features and
 * tracing data arrive as records before the first kernel record; pd_pipe.c
 * takes them at open (reading a stream ahead and replaying it), so a pipe
 * opens with what a file has.  Later HEADER_ATTR records are added as met.  Some perf records carry bytes
 * past their size (AUXTRACE data, pipe-mode tracing data): they are lent
 * as rec->extra and skipped.
 */
#include <sonde/perf_data.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pd_le.h"
#include "pd_reader_internal.h"
#include "pd_zstd.h"

const char *sonde_pd_reader_errmsg(const struct sonde_pd_reader *r)
{
	return r->msg.text;
}

/* True when [off, off+n) lies inside [0, lim). */
static bool inside(uint64_t off, uint64_t n, uint64_t lim)
{
	return off <= lim && n <= lim - off;
}

/* ---- a file's attrs and features sections ----------------------------- */

static int read_attrs(struct sonde_pd_reader *r)
{
	const struct sonde_pd_file_header *h = &r->hdr;
	uint64_t stride = h->attr_size, n;

	if (h->attrs.size == 0)
		return 0;
	if (stride < PERF_ATTR_SIZE_VER0 + sizeof(struct sonde_pd_section) || stride > 4096)
		return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
					      "header: attr size %" PRIu64 " is invalid", stride);
	if (!inside(h->attrs.offset, h->attrs.size, r->len))
		return sonde_pd_reader_setmsg(r, SONDE_E_TRUNCATED,
					      "attrs section at 0x%" PRIx64 " (%" PRIu64
					      " bytes) runs past the end of file (%zu bytes)",
					      h->attrs.offset, h->attrs.size, r->len);
	n = h->attrs.size / stride;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = h->attrs.offset + i * stride;
		const uint8_t *a = r->base + off;
		uint32_t fsz = pd_get32(a + 4);
		uint64_t ioff, isz;
		int err;

		if (fsz == 0)
			fsz = PERF_ATTR_SIZE_VER0;
		if (fsz < PERF_ATTR_SIZE_VER0 || fsz > stride - sizeof(struct sonde_pd_section))
			return sonde_pd_reader_setmsg(
			    r, SONDE_E_FORMAT,
			    "attr %" PRIu64 " at offset 0x%" PRIx64
			    ": size %u does not fit the attr stride %" PRIu64,
			    i, off, fsz, stride);
		ioff = pd_get64(a + fsz);
		isz = pd_get64(a + fsz + 8);
		if (isz % 8 || !inside(ioff, isz, r->len))
			return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
						      "attr %" PRIu64 " at offset 0x%" PRIx64
						      ": ids at 0x%" PRIx64 " (%" PRIu64
						      " bytes) outside the file",
						      i, off, ioff, isz);
		err = sonde_pd_reader_add_attr(r, a, fsz, r->base + ioff, isz / 8);
		if (err)
			return err;
	}
	return 0;
}

static int read_features(struct sonde_pd_reader *r)
{
	uint64_t table = r->hdr.data.offset + r->hdr.data.size, nr = 0;
	int err;

	for (unsigned w = 0; w < 4; w++)
		nr += (uint64_t)__builtin_popcountll(r->hdr.features[w]);
	if (nr == 0)
		return 0;
	if (r->truncated_file || !inside(table, nr * 16, r->len)) {
		/* A file cut inside its data or table: the features are gone, the data is not. */
		r->feat.truncated = true;
		return 0;
	}
	for (unsigned bit = 0, i = 0; bit < SONDE_PD_FEAT_BITS; bit++) {
		const uint8_t *e;

		if (!(r->hdr.features[bit / 64] & (1ull << (bit % 64))))
			continue;
		e = r->base + table + 16 * i++;
		r->feat_sec[bit].offset = pd_get64(e);
		r->feat_sec[bit].size = pd_get64(e + 8);
		if (!inside(r->feat_sec[bit].offset, r->feat_sec[bit].size, r->len)) {
			/* A cut file: keep the data and the features that are whole. */
			r->feat.truncated = true;
			sonde_pd_reader_setmsg(
			    r, 0,
			    "feature %u: section at 0x%" PRIx64 " (%" PRIu64
			    " bytes) runs past the end of file (%zu bytes); dropped",
			    bit, r->feat_sec[bit].offset, r->feat_sec[bit].size, r->len);
			continue;
		}
		r->feat_present[bit] = true;
		r->feat_ptr[bit] = r->base + r->feat_sec[bit].offset;
	}
	/* In bit order, as perf does: NRCPUS comes before CPU_TOPOLOGY. */
	for (unsigned bit = 0; bit < SONDE_PD_FEAT_BITS; bit++)
		if (r->feat_present[bit] && (err = sonde_pd_reader_parse_feature(r, bit)))
			return err;
	return 0;
}

/* ---- opening ---------------------------------------------------------- */

static int read_header(struct sonde_pd_reader *r)
{
	const uint8_t *b = r->base;
	struct sonde_pd_file_header *h = &r->hdr;
	uint64_t magic;

	if (r->len < 16)
		return sonde_pd_reader_setmsg(
		    r, SONDE_E_TRUNCATED, "%zu bytes: too small for a perf.data header", r->len);
	magic = pd_get64(b);
	if (magic == __builtin_bswap64(SONDE_PD_MAGIC))
		return sonde_pd_reader_setmsg(
		    r, SONDE_E_NOT_SUPPORTED,
		    "byte-swapped (other-endian) perf.data is not supported");
	if (memcmp(b, "PERFFILE", 8) == 0)
		return sonde_pd_reader_setmsg(r, SONDE_E_NOT_SUPPORTED,
					      "old (PERFFILE) perf.data is not supported");
	if (magic != SONDE_PD_MAGIC)
		return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
					      "not a perf.data file (bad magic)");
	h->magic = magic;
	h->size = pd_get64(b + 8);
	if (h->size == 16) {
		r->pipe = true;
		r->data_start = 16;
		r->data_end = r->stream ? UINT64_MAX : r->len;
		return 0;
	}
	/* perf also takes the header from before the feature bitmap (72 bytes) */
	if (h->size != sizeof(*h) && h->size != offsetof(struct sonde_pd_file_header, features))
		return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
					      "header: size %" PRIu64 " is not 104 or 16", h->size);
	if (r->stream)
		return sonde_pd_reader_setmsg(r, SONDE_E_NOT_SUPPORTED,
					      "a file-mode perf.data can't be read from a pipe");
	if (r->len < h->size)
		return sonde_pd_reader_setmsg(r, SONDE_E_TRUNCATED,
					      "%zu bytes: too small for the %" PRIu64
					      "-byte perf.data header",
					      r->len, h->size);
	h->attr_size = pd_get64(b + 16);
	h->attrs.offset = pd_get64(b + 24);
	h->attrs.size = pd_get64(b + 32);
	h->data.offset = pd_get64(b + 40);
	h->data.size = pd_get64(b + 48);
	h->event_types.offset = pd_get64(b + 56);
	h->event_types.size = pd_get64(b + 64);
	for (unsigned i = 0; h->size == sizeof(*h) && i < 4; i++)
		h->features[i] = pd_get64(b + 72 + 8 * i);
	h->features[0] &= ~1ull; /* HEADER_RESERVED, always clear */

	if (h->data.offset < h->size || h->data.offset > r->len)
		return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
					      "header: data offset 0x%" PRIx64
					      " outside the file (%zu bytes)",
					      h->data.offset, r->len);
	r->data_start = h->data.offset;
	if (h->data.size == 0 && r->len > h->data.offset &&
	    !(h->features[0] | h->features[1] | h->features[2] | h->features[3])) {
		/* Never finalized: read whatever whole records there are. */
		r->tail = SONDE_PD_TAIL_UNFINISHED;
		r->data_end = r->len;
	} else if (h->data.size > r->len - h->data.offset) {
		r->truncated_file = true;
		r->data_end = r->len;
	} else {
		r->data_end = h->data.offset + h->data.size;
	}
	return 0;
}

static int finish_open(struct sonde_pd_reader *r)
{
	int err;

	r->sample_id_pos = -1;
	r->scratch = malloc(UINT16_MAX + 1);
	if (!r->scratch)
		return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
	if ((err = read_header(r)))
		return err;
	r->pos = r->data_start;
	if (r->pipe)
		return sonde_pd_pipe_prelude(r);
	if ((err = read_attrs(r)) || (err = sonde_pd_reader_index_ids(r)) ||
	    (err = read_features(r)))
		return err;
	sonde_pd_trailer_read(r);
	return 0;
}

static struct sonde_pd_reader *reader_new(void)
{
	struct sonde_pd_reader *r = calloc(1, sizeof(*r));

	if (r)
		r->fd = -1;
	return r;
}

/* Finishes an open: hands out @r, or frees it and passes on the message. */
static int conclude(struct sonde_pd_reader *r, int err, struct sonde_pd_reader **out,
		    struct sonde_errmsg *errmsg)
{
	if (!err)
		err = finish_open(r);
	if (err) {
		if (errmsg)
			*errmsg = r->msg;
		sonde_pd_reader_close(r);
		return err;
	}
	*out = r;
	return 0;
}

int sonde_pd_reader_open_mem(struct sonde_pd_reader **out, const void *buf, size_t len,
			     struct sonde_errmsg *err)
{
	struct sonde_pd_reader *r = reader_new();

	*out = NULL;
	if (!r)
		return err ? sonde_errmsg_set(err, -ENOMEM, "out of memory") : -ENOMEM;
	r->base = buf;
	r->len = len;
	return conclude(r, 0, out, err);
}

/* Stream mode: make bytes [0, n) of the current record available in sbuf. */
static int stream_fill(struct sonde_pd_reader *r, size_t n)
{
	if (n > STREAM_MAX)
		return SONDE_E_LIMIT;
	if (n > r->scap) {
		size_t cap = r->scap ? r->scap : 65536;
		uint8_t *b;

		while (cap < n)
			cap *= 2;
		if (!(b = realloc(r->sbuf, cap)))
			return -ENOMEM;
		r->sbuf = b;
		r->scap = cap;
	}
	while (r->slen < n) {
		ssize_t got = read(r->fd, r->sbuf + r->slen, n - r->slen);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0) {
			r->seof = true;
			return 0;
		}
		r->slen += (size_t)got;
	}
	return 0;
}

int sonde_pd_reader_open_fd(struct sonde_pd_reader **out, int fd, struct sonde_errmsg *errmsg)
{
	struct sonde_pd_reader *r = reader_new();
	struct stat st;
	int err = 0;

	*out = NULL;
	if (!r)
		return errmsg ? sonde_errmsg_set(errmsg, -ENOMEM, "out of memory") : -ENOMEM;
	r->fd = fd;
	if (fstat(fd, &st) != 0) {
		err = sonde_pd_reader_setmsg(r, -errno, "fstat: %s", sonde_strerror(-errno));
	} else if (S_ISREG(st.st_mode)) {
		if (st.st_size > 0) {
			r->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (r->map == MAP_FAILED) {
				r->map = NULL;
				err = sonde_pd_reader_setmsg(r, -errno, "mmap: %s",
							     sonde_strerror(-errno));
			} else {
				r->map_len = (size_t)st.st_size;
				/* Read once front to back: big readahead, and what was
				 * read can go (sonde_pd_reader_forget). */
				madvise(r->map, r->map_len, MADV_SEQUENTIAL);
			}
		}
		r->base = r->map;
		r->len = r->map_len;
	} else {
		/* A pipe: the 16-byte pipe header is all there is before records. */
		r->stream = true;
		err = stream_fill(r, 16);
		if (!err) {
			r->base = r->sbuf;
			r->len = r->slen;
		} else {
			sonde_pd_reader_setmsg(r, err, "reading the header: %s",
					       sonde_strerror(err));
		}
	}
	err = conclude(r, err, out, errmsg);
	if (!err && r->stream) {
		r->base = NULL;
		r->len = 0;
		r->slen = 0;
	}
	return err;
}

int sonde_pd_reader_open(struct sonde_pd_reader **out, const char *path, struct sonde_errmsg *err)
{
	int fd, e;

	*out = NULL;
	if (strcmp(path, "-") == 0)
		return sonde_pd_reader_open_fd(out, STDIN_FILENO, err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		return err ? sonde_errmsg_set(err, e, "%s: %s", path, sonde_strerror(e)) : e;
	}
	e = sonde_pd_reader_open_fd(out, fd, err);
	if (e) {
		close(fd);
		if (err) {
			struct sonde_errmsg m = *err;

			sonde_errmsg_set(err, e, "%s: %s", path, m.text);
		}
		return e;
	}
	(*out)->own_fd = true;
	return 0;
}

void sonde_pd_reader_close(struct sonde_pd_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->own_fd)
		close(r->fd);
	for (size_t i = 0; i < r->nr_attrs; i++)
		free(r->attrs[i]);
	free(r->attrs);
	free(r->ids);
	free(r->argv);
	free(r->bids);
	free(r->topo);
	free(r->scratch);
	free(r->sbuf);
	free(r->pre);
	sonde_pd_zdecomp_free(r->zd);
	free(r->zbuf);
	free(r);
}

/* ---- accessors -------------------------------------------------------- */

bool sonde_pd_reader_is_pipe(const struct sonde_pd_reader *r)
{
	return r->pipe;
}

size_t sonde_pd_reader_nr_attrs(const struct sonde_pd_reader *r)
{
	return r->nr_attrs;
}

const struct sonde_pd_attr *sonde_pd_reader_attr(const struct sonde_pd_reader *r, size_t i)
{
	return i < r->nr_attrs ? r->attrs[i] : NULL;
}

const struct sonde_pd_features *sonde_pd_reader_features(const struct sonde_pd_reader *r)
{
	return &r->feat;
}

bool sonde_pd_reader_has_feature(const struct sonde_pd_reader *r, unsigned bit)
{
	return bit < SONDE_PD_FEAT_BITS && r->feat_present[bit];
}

int sonde_pd_reader_feature(const struct sonde_pd_reader *r, unsigned bit, const void **data,
			    uint64_t *size)
{
	if (!sonde_pd_reader_has_feature(r, bit))
		return -ENOENT;
	*data = r->feat_ptr[bit];
	*size = r->feat_sec[bit].size;
	return 0;
}

/*
 * GROUP_DESC: u32 count, then per group a perf string (u32 padded length,
 * NUL-terminated text), u32 leader index, u32 number of events.
 */
size_t sonde_pd_reader_groups(const struct sonde_pd_reader *r, struct sonde_pd_group *out,
			      size_t max)
{
	const uint8_t *p;
	const void *data;
	uint64_t size, off = 4;
	size_t n = 0, nattrs = sonde_pd_reader_nr_attrs(r);
	uint32_t nr;

	if (sonde_pd_reader_feature(r, SONDE_PD_FEAT_GROUP_DESC, &data, &size) < 0 || size < 4)
		return 0;
	p = data;
	nr = pd_get32(p);
	while (n < nr && n < max && size - off >= 4) {
		uint32_t len = pd_get32(p + off);
		const char *name = (const char *)(p + off + 4);

		off += 4;
		if (!len || len > size - off || size - off - len < 8 || !memchr(name, '\0', len))
			break;
		off += len;
		out[n] = (struct sonde_pd_group){strcmp(name, "{anon_group}") ? name : NULL,
						 pd_get32(p + off), pd_get32(p + off + 4)};
		off += 8;
		if (out[n].leader >= nattrs || out[n].nr > nattrs - out[n].leader)
			break;
		n++;
	}
	return n;
}

const struct sonde_pd_file_header *sonde_pd_reader_header(const struct sonde_pd_reader *r)
{
	return &r->hdr;
}

enum sonde_pd_tail sonde_pd_reader_tail(const struct sonde_pd_reader *r)
{
	return r->tail;
}

void sonde_pd_reader_forget(struct sonde_pd_reader *r, uint64_t upto)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t from, to;

	if (!r->map || page <= 0 || upto <= r->data_start)
		return;
	if (upto > r->data_end)
		upto = r->data_end;
	/* Whole pages inside the data section: the features after it stay. */
	from = (r->forgotten > r->data_start ? r->forgotten : r->data_start);
	from = (from + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	to = upto & ~((uint64_t)page - 1);
	if (to <= from || to - from < 64 * (uint64_t)page)
		return;
	/* Clean file pages of a private read-only map: dropped now, read again if touched. */
	madvise((uint8_t *)r->map + from, (size_t)(to - from), MADV_DONTNEED);
	r->forgotten = to;
}

int sonde_pd_reader_rewind(struct sonde_pd_reader *r)
{
	if (r->stream)
		return -ESPIPE;
	r->pos = r->data_start;
	r->err = 0;
	r->zlen = r->zpos = 0;
	if (r->zd)
		sonde_pd_zdecomp_reset(r->zd);
	if (r->tail == SONDE_PD_TAIL_TRUNCATED)
		r->tail = SONDE_PD_TAIL_CLEAN;
	return 0;
}

/* ---- iteration -------------------------------------------------------- */

/* How many bytes follow a record outside its size, or an error. */
static int extra_size(struct sonde_pd_reader *r, uint32_t type, const uint8_t *rec, uint16_t size,
		      uint64_t off, uint64_t *extra)
{
	*extra = pd_record_extra(type, rec, size);
	if ((type == SONDE_PD_RECORD_HEADER_TRACING_DATA && size < 12) ||
	    (type == SONDE_PD_RECORD_AUXTRACE && size < 16))
		return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
					      "%s at offset 0x%" PRIx64 ": size %u too small",
					      sonde_pd_record_name(type), off, size);
	return 0;
}

static int next_stream(struct sonde_pd_reader *r, struct sonde_pd_record *rec)
{
	uint64_t off = r->pos, extra;
	uint16_t size;
	uint32_t type;
	int err;

	if (r->pre_pos < r->pre_len)
		return sonde_pd_pipe_next_pre(r, rec);
	r->slen = 0;
	if ((err = stream_fill(r, 8)))
		return r->err = sonde_pd_reader_setmsg(r, err, "record at offset 0x%" PRIx64 ": %s",
						       off, sonde_strerror(err));
	if (r->slen == 0)
		return 0;
	if (r->slen < 8)
		return sonde_pd_reader_truncated(r, off, "the stream ends inside a record header");
	type = pd_get32(r->sbuf);
	size = pd_get16(r->sbuf + 6);
	if (size < 8)
		return r->err = sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
						       "record type %u at offset 0x%" PRIx64
						       ": size %u smaller than header",
						       type, off, size);
	if ((err = stream_fill(r, size)))
		return r->err = sonde_pd_reader_setmsg(r, err, "record at offset 0x%" PRIx64 ": %s",
						       off, sonde_strerror(err));
	if (r->slen < size)
		return sonde_pd_reader_truncated(r, off, "the stream ends inside the record");
	if ((err = extra_size(r, type, r->sbuf, size, off, &extra)))
		return r->err = err;
	if (extra > STREAM_MAX - size)
		return r->err = sonde_pd_reader_setmsg(r, SONDE_E_LIMIT,
						       "record type %u at offset 0x%" PRIx64
						       ": %" PRIu64 " bytes of trailing data",
						       type, off, extra);
	if ((err = stream_fill(r, size + extra)))
		return r->err = sonde_pd_reader_setmsg(r, err, "record at offset 0x%" PRIx64 ": %s",
						       off, sonde_strerror(err));
	if (r->slen < size + extra)
		return sonde_pd_reader_truncated(r, off,
						 "the stream ends inside the record's data");
	if (type == SONDE_PD_RECORD_HEADER_ATTR &&
	    (err = sonde_pd_reader_take_attr(r, r->sbuf, size, off)))
		return r->err = err;
	rec->offset = off;
	rec->type = type;
	rec->misc = pd_get16(r->sbuf + 4);
	rec->size = size;
	rec->data = r->sbuf;
	rec->stable = false;
	rec->extra = extra ? r->sbuf + size : NULL;
	rec->extra_size = extra;
	rec->attr = sonde_pd_reader_record_attr(r, type, r->sbuf, size);
	r->pos += size + extra;
	return 1;
}

/* The next record as stored in the file (a COMPRESSED one included). */
static int next_stored(struct sonde_pd_reader *r, struct sonde_pd_record *rec)
{
	uint64_t off = r->pos, left, extra;
	const uint8_t *p;
	uint16_t size;
	uint32_t type;
	int err;

	if (r->stream)
		return next_stream(r, rec);
	if (off >= r->data_end) {
		if (r->truncated_file && r->tail == SONDE_PD_TAIL_CLEAN) {
			r->tail = SONDE_PD_TAIL_TRUNCATED;
			sonde_pd_reader_setmsg(r, 0,
					       "the file ends at offset 0x%" PRIx64
					       " inside the data section (which ends at 0x%" PRIx64
					       ")",
					       off, r->hdr.data.offset + r->hdr.data.size);
		}
		return 0;
	}
	left = r->data_end - off;
	p = r->base + off;
	if (left < 8) {
		if (r->truncated_file || r->tail == SONDE_PD_TAIL_UNFINISHED || r->pipe)
			return sonde_pd_reader_truncated(r, off,
							 "the file ends inside a record header");
		return r->err = sonde_pd_reader_setmsg(
			   r, SONDE_E_FORMAT,
			   "record at offset 0x%" PRIx64 ": %" PRIu64
			   " bytes left in the data section, less than a header",
			   off, left);
	}
	type = pd_get32(p);
	size = pd_get16(p + 6);
	if (size < 8)
		return r->err = sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
						       "record type %u at offset 0x%" PRIx64
						       ": size %u smaller than header",
						       type, off, size);
	if ((err = extra_size(r, type, p, size <= left ? size : 0, off, &extra)) && size <= left)
		return r->err = err;
	if (size > left || extra > left - size) {
		if (r->truncated_file || r->tail == SONDE_PD_TAIL_UNFINISHED || r->pipe)
			return sonde_pd_reader_truncated(r, off, "the file ends inside the record");
		return r->err = sonde_pd_reader_setmsg(
			   r, SONDE_E_FORMAT,
			   "record type %u at offset 0x%" PRIx64 ": size %" PRIu64
			   " runs past the end of the data section (0x%" PRIx64 ")",
			   type, off, size + extra, r->data_end);
	}
	if ((uintptr_t)p % 8) {
		memcpy(r->scratch, p, size);
		p = r->scratch;
	}
	/* The pipe's header records were taken at open (pd_pipe.c). */
	if (type == SONDE_PD_RECORD_HEADER_ATTR && r->pipe && off >= r->pre_end &&
	    (err = sonde_pd_reader_take_attr(r, p, size, off)))
		return r->err = err;
	rec->offset = off;
	rec->type = type;
	rec->misc = pd_get16(p + 4);
	rec->size = size;
	rec->data = p;
	rec->stable = p != r->scratch; /* in the mapping (or the caller's memory) */
	rec->extra = extra ? r->base + off + size : NULL;
	rec->extra_size = extra;
	rec->attr = sonde_pd_reader_record_attr(r, type, p, size);
	r->pos = off + size + extra;
	return 1;
}

/*
 * The next record unpacked from COMPRESSED ones: 1, 0 when the unpacked
 * bytes hold no whole record (a record may continue in the next
 * COMPRESSED one), or an error.
 */
static int next_unpacked(struct sonde_pd_reader *r, struct sonde_pd_record *rec)
{
	size_t left = r->zlen - r->zpos;
	const uint8_t *p;
	uint64_t extra;
	uint16_t size;
	uint32_t type;
	int err;

	if (left < 8)
		return 0;
	p = r->zbuf + r->zpos;
	type = pd_get32(p);
	size = pd_get16(p + 6);
	if (size < 8)
		return r->err = sonde_pd_reader_setmsg(
			   r, SONDE_E_FORMAT,
			   "record type %u unpacked from the COMPRESSED record at offset "
			   "0x%" PRIx64 ": size %u smaller than header",
			   type, r->zoff, size);
	if (size > left)
		return 0;
	if ((err = extra_size(r, type, p, size, r->zoff, &extra)))
		return r->err = err;
	if (extra > left - size)
		return 0;
	if ((uintptr_t)p % 8) {
		memcpy(r->scratch, p, size);
		p = r->scratch;
	}
	if (type == SONDE_PD_RECORD_HEADER_ATTR && r->pipe &&
	    (err = sonde_pd_reader_take_attr(r, p, size, r->zoff)))
		return r->err = err;
	rec->offset = r->zoff;
	rec->type = type;
	rec->misc = pd_get16(p + 4);
	rec->size = size;
	rec->data = p;
	rec->stable = false;
	rec->extra = extra ? r->zbuf + r->zpos + size : NULL;
	rec->extra_size = extra;
	rec->attr = sonde_pd_reader_record_attr(r, type, p, size);
	r->zpos += size + extra;
	return 1;
}

/* Decompresses a COMPRESSED record after what is left unpacked. */
static int unpack(struct sonde_pd_reader *r, const struct sonde_pd_record *rec)
{
	const char *why = "?";
	int err;

	if (!r->zd && (err = sonde_pd_zdecomp_new(&r->zd)))
		return r->err =
			   sonde_pd_reader_setmsg(r, err == -ENOTSUP ? SONDE_E_NOT_SUPPORTED : err,
						  "COMPRESSED record at offset 0x%" PRIx64
						  ": this sonde was built without zstd",
						  rec->offset);
	if (r->zpos) {
		memmove(r->zbuf, r->zbuf + r->zpos, r->zlen - r->zpos);
		r->zlen -= r->zpos;
		r->zpos = 0;
	}
	r->zoff = rec->offset;
	err = sonde_pd_zdecomp_append(r->zd, (const uint8_t *)rec->data + 8, rec->size - 8u,
				      &r->zbuf, &r->zlen, &r->zcap, UNPACK_MAX, &why);
	if (err == -ENOMEM)
		return r->err =
			   sonde_pd_reader_setmsg(r, err, "out of memory decompressing records");
	if (err == SONDE_E_LIMIT)
		return r->err = sonde_pd_reader_setmsg(
			   r, err,
			   "COMPRESSED record at offset 0x%" PRIx64
			   ": more than %u MiB of records without a whole one",
			   rec->offset, UNPACK_MAX >> 20);
	if (err)
		return r->err = sonde_pd_reader_setmsg(
			   r, SONDE_E_FORMAT, "COMPRESSED record at offset 0x%" PRIx64 ": zstd: %s",
			   rec->offset, why);
	return 0;
}

uint64_t sonde_pd_reader_nr_compressed(const struct sonde_pd_reader *r)
{
	return r->nr_compressed;
}

int sonde_pd_reader_next(struct sonde_pd_reader *r, struct sonde_pd_record *rec)
{
	int n;

	if (r->err)
		return r->err;
	for (;;) {
		if ((n = next_unpacked(r, rec)) != 0)
			return n;
		if ((n = next_stored(r, rec)) <= 0) {
			if (n == 0 && r->zpos < r->zlen && r->tail == SONDE_PD_TAIL_CLEAN) {
				r->tail = SONDE_PD_TAIL_TRUNCATED;
				sonde_pd_reader_setmsg(
				    r, 0,
				    "the compressed data ends inside a record (COMPRESSED "
				    "record at "
				    "offset 0x%" PRIx64 ")",
				    r->zoff);
			}
			return n;
		}
		if (rec->type != SONDE_PD_RECORD_COMPRESSED)
			return n;
		r->nr_compressed++;
		if ((n = unpack(r, rec)) < 0)
			return n;
	}
}

/* ---- record decoding -------------------------------------------------- */

/* A NUL-terminated string in [p, end), or NULL. */
static const char *body_string(const uint8_t *p, const uint8_t *end)
{
	return p < end && memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

int sonde_pd_reader_parse(struct sonde_pd_reader *r, const struct sonde_pd_record *rec,
			  struct sonde_pd_event *ev)
{
	const uint8_t *p = rec->data, *end;
	const char *what = "?";
	size_t fixed = 0, trailer = 0;
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->type = rec->type;
	if (rec->type >= SONDE_PD_KERNEL_RECORD_MAX)
		return 0;
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (!rec->attr)
			return sonde_pd_reader_setmsg(
			    r, SONDE_E_FORMAT,
			    "sample at offset 0x%" PRIx64 ": no event with its id", rec->offset);
		err = sonde_pd_sample_parse(&rec->attr->attr, p, rec->size, &ev->sample, &what);
		if (err)
			return sonde_pd_reader_setmsg(
			    r, err, "sample at offset 0x%" PRIx64 ": %s %s (record size %u)",
			    rec->offset, what,
			    err == SONDE_E_TRUNCATED ? "runs past the record" : "is invalid",
			    rec->size);
		return 0;
	}
	if (rec->attr) {
		trailer = sonde_pd_sample_id_size(&rec->attr->attr);
		if (sonde_pd_sample_id_parse(&rec->attr->attr, p, rec->size, &ev->sample))
			return sonde_pd_reader_setmsg(
			    r, SONDE_E_TRUNCATED,
			    "record type %u at offset 0x%" PRIx64
			    ": size %u too small for its %zu-byte sample id",
			    rec->type, rec->offset, rec->size, trailer);
	}
	end = p + rec->size - trailer;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
		fixed = 40;
		break;
	case PERF_RECORD_MMAP2:
		fixed = 72;
		break;
	case PERF_RECORD_COMM:
		fixed = 16;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		fixed = 32;
		break;
	case PERF_RECORD_LOST:
		fixed = 24;
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		fixed = 32;
		break;
	default:
		return 0;
	}
	if ((size_t)(end - p) < fixed)
		return sonde_pd_reader_setmsg(
		    r, SONDE_E_FORMAT,
		    "%s at offset 0x%" PRIx64 ": size %u smaller than its %zu fixed bytes",
		    sonde_pd_record_name(rec->type), rec->offset, rec->size, fixed + trailer);
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct sonde_pd_mmap *m = &ev->mmap;

		m->pid = pd_get32(p + 8);
		m->tid = pd_get32(p + 12);
		m->start = pd_get64(p + 16);
		m->len = pd_get64(p + 24);
		m->pgoff = pd_get64(p + 32);
		if (rec->type == PERF_RECORD_MMAP2) {
			if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				m->build_id_size = p[40] <= 20 ? p[40] : 20;
				m->build_id = p + 44;
			} else {
				m->maj = pd_get32(p + 40);
				m->min = pd_get32(p + 44);
				m->ino = pd_get64(p + 48);
				m->ino_generation = pd_get64(p + 56);
			}
			m->prot = pd_get32(p + 64);
			m->flags = pd_get32(p + 68);
		}
		m->filename = body_string(p + fixed, end);
		if (!m->filename)
			return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
						      "%s at offset 0x%" PRIx64
						      ": file name not terminated",
						      sonde_pd_record_name(rec->type), rec->offset);
		break;
	}
	case PERF_RECORD_COMM:
		ev->comm.pid = pd_get32(p + 8);
		ev->comm.tid = pd_get32(p + 12);
		ev->comm.comm = body_string(p + 16, end);
		if (!ev->comm.comm)
			return sonde_pd_reader_setmsg(
			    r, SONDE_E_FORMAT, "COMM at offset 0x%" PRIx64 ": name not terminated",
			    rec->offset);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ev->fork.pid = pd_get32(p + 8);
		ev->fork.ppid = pd_get32(p + 12);
		ev->fork.tid = pd_get32(p + 16);
		ev->fork.ptid = pd_get32(p + 20);
		ev->fork.time = pd_get64(p + 24);
		break;
	case PERF_RECORD_LOST:
		ev->lost.id = pd_get64(p + 8);
		ev->lost.lost = pd_get64(p + 16);
		break;
	default: /* THROTTLE, UNTHROTTLE */
		ev->throttle.time = pd_get64(p + 8);
		ev->throttle.id = pd_get64(p + 16);
		ev->throttle.stream_id = pd_get64(p + 24);
		break;
	}
	return 0;
}
