// SPDX-License-Identifier: MIT
/*
 * perf.data writer.
 *
 * Data moves in three steps.  Setup: events (attrs, ids, names) and header
 * features are collected in memory, each feature serialized to its on-disk
 * bytes as soon as it is set.  Data: the first record writes the file
 * header and the ids/attrs sections, then records are appended through a
 * 64 KiB buffer; after every flush the header on disk is rewritten with the
 * data size reached, always at a record boundary.  perf 6.1 reads a file
 * whose header says data size 0 as empty, and one with a data size past
 * the end of the file fails, so keeping the size current is what makes a
 * killed recorder's file readable.  Close: the feature table goes right
 * after the data (where perf looks for it), then the feature bodies, and
 * the header is rewritten with the feature bits.
 *
 * Errors are sticky.  A write that fails (a full disk) records the first
 * error and its offset; later calls return it without touching the file.
 * Close then cuts the file after the last whole record on disk and writes
 * a header without features, which needs no new disk space.
 */
#include <sonde/perf_data.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pd_le.h"
#include "pd_writer_internal.h"
#include "pd_zstd.h"

static int alloc_fail(struct sonde_pd_writer *w)
{
	return sonde_pd_writer_fail(w, -ENOMEM, "out of memory");
}

int sonde_pd_writer_open_fd(struct sonde_pd_writer **out, int fd, struct sonde_errmsg *err)
{
	struct sonde_pd_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w || !(w->buf = malloc(BUF_CAP))) {
		free(w);
		return err ? sonde_errmsg_set(err, -ENOMEM, "out of memory") : -ENOMEM;
	}
	w->fd = fd;
	*out = w;
	return 0;
}

int sonde_pd_writer_open(struct sonde_pd_writer **out, const char *path, struct sonde_errmsg *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int e;

	*out = NULL;
	if (fd < 0) {
		e = -errno;
		return err ? sonde_errmsg_set(err, e, "%s: %s", path, sonde_strerror(e)) : e;
	}
	e = sonde_pd_writer_open_fd(out, fd, err);
	if (e) {
		close(fd);
		return e;
	}
	(*out)->own_fd = true;
	return 0;
}

int sonde_pd_writer_open_stream(struct sonde_pd_writer **out, int fd, struct sonde_errmsg *err)
{
	int e = sonde_pd_writer_open_fd(out, fd, err);

	if (!e)
		(*out)->stream = true;
	return e;
}

int sonde_pd_writer_error(const struct sonde_pd_writer *w)
{
	return w->err;
}

const char *sonde_pd_writer_errmsg(const struct sonde_pd_writer *w)
{
	return w->err ? w->msg.text : "";
}

uint64_t sonde_pd_writer_data_size(const struct sonde_pd_writer *w)
{
	return w->data_size;
}

/* ---- events ----------------------------------------------------------- */

int sonde_pd_writer_add_attr(struct sonde_pd_writer *w, const struct perf_event_attr *attr,
			     const char *name, const uint64_t *ids, size_t nr_ids)
{
	struct wattr *a;
	int idx;

	if (w->err)
		return w->err;
	a = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*a));
	if (!a)
		return alloc_fail(w);
	w->attrs = a;
	a = &w->attrs[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(a->attr, attr, SONDE_PD_ATTR_SIZE);
	pd_put32(a->attr + offsetof(struct perf_event_attr, size), SONDE_PD_ATTR_SIZE);
	if (name && !(a->name = strdup(name)))
		return alloc_fail(w);
	idx = (int)w->nr_attrs++;
	w->attrs_dirty = true;
	if (nr_ids) {
		int e = sonde_pd_writer_add_ids(w, idx, ids, nr_ids);

		if (e)
			return e;
	}
	/* A stream can't go back to its start: a late event gets its record now. */
	if (w->stream && w->begun && sonde_pd_pipe_put_attr(w, (size_t)idx))
		return w->err;
	return idx;
}

int sonde_pd_writer_add_ids(struct sonde_pd_writer *w, int idx, const uint64_t *ids, size_t nr)
{
	struct wattr *a;
	uint64_t *n;

	if (w->err)
		return w->err;
	if (idx < 0 || (size_t)idx >= w->nr_attrs)
		return sonde_pd_writer_fail(w, -EINVAL, "add_ids: no event %d", idx);
	a = &w->attrs[idx];
	n = realloc(a->ids, (a->nr_ids + nr) * sizeof(*n));
	if (!n)
		return alloc_fail(w);
	memcpy(n + a->nr_ids, ids, nr * sizeof(*n));
	a->ids = n;
	a->nr_ids += nr;
	w->attrs_dirty = true;
	return 0;
}

/*
 * Builds the ids arrays followed by the attrs section for placement at file
 * offset @base.  Return: new image (free()), NULL when out of memory.
 */
static uint8_t *attrs_image(struct sonde_pd_writer *w, uint64_t base, size_t *len,
			    struct sonde_pd_section *sec)
{
	size_t stride = SONDE_PD_ATTR_SIZE + sizeof(struct sonde_pd_section);
	size_t n = 0, pos = 0;
	uint8_t *img;

	for (size_t i = 0; i < w->nr_attrs; i++)
		n += w->attrs[i].nr_ids * 8;
	n += w->nr_attrs * stride;
	img = calloc(1, n ? n : 1);
	if (!img)
		return NULL;
	for (size_t i = 0; i < w->nr_attrs; i++)
		for (size_t j = 0; j < w->attrs[i].nr_ids; j++, pos += 8)
			pd_put64(img + pos, w->attrs[i].ids[j]);
	sec->offset = base + pos;
	sec->size = w->nr_attrs * stride;
	for (size_t i = 0, ids = 0; i < w->nr_attrs; i++) {
		memcpy(img + pos, w->attrs[i].attr, SONDE_PD_ATTR_SIZE);
		pd_put64(img + pos + SONDE_PD_ATTR_SIZE, base + ids);
		pd_put64(img + pos + SONDE_PD_ATTR_SIZE + 8, w->attrs[i].nr_ids * 8);
		ids += w->attrs[i].nr_ids * 8;
		pos += stride;
	}
	*len = n;
	return img;
}

/* ---- header ----------------------------------------------------------- */

static int write_header(struct sonde_pd_writer *w, bool with_features)
{
	uint8_t h[sizeof(struct sonde_pd_file_header)] = {0};

	pd_put64(h + offsetof(struct sonde_pd_file_header, magic), SONDE_PD_MAGIC);
	pd_put64(h + offsetof(struct sonde_pd_file_header, size), sizeof(h));
	pd_put64(h + offsetof(struct sonde_pd_file_header, attr_size),
		 SONDE_PD_ATTR_SIZE + sizeof(struct sonde_pd_section));
	pd_put64(h + offsetof(struct sonde_pd_file_header, attrs.offset), w->attrs_sec.offset);
	pd_put64(h + offsetof(struct sonde_pd_file_header, attrs.size), w->attrs_sec.size);
	pd_put64(h + offsetof(struct sonde_pd_file_header, data.offset), w->data_offset);
	pd_put64(h + offsetof(struct sonde_pd_file_header, data.size), w->disk_size);
	/* sonde's own sections have no bit: they go in the trailer (pd_trailer.c). */
	for (unsigned b = 0; with_features && b < SONDE_PD_FEAT_SONDE_BASE; b++) {
		if (!w->feat[b].set)
			continue;
		uint8_t *word = h + offsetof(struct sonde_pd_file_header, features) + (b / 64) * 8;

		pd_put64(word, pd_get64(word) | (1ull << (b % 64)));
	}
	return sonde_pd_pwrite_all(w->fd, h, sizeof(h), 0, NULL);
}

/* Writes header, ids and attrs; the data section starts after them. */
static int begin(struct sonde_pd_writer *w)
{
	uint64_t base = sizeof(struct sonde_pd_file_header);
	size_t len;
	uint8_t *img;
	int err;

	if (w->stream) {
		/* The stream sends features first: EVENT_DESC names the events, and
		 * COMPRESSED comes before the first compressed record. */
		if ((w->nr_attrs && sonde_pd_writer_event_desc(w)) ||
		    (w->z && sonde_pd_writer_compressed_feature(w)))
			return w->err;
		return sonde_pd_pipe_begin(w);
	}
	img = attrs_image(w, base, &len, &w->attrs_sec);
	if (!img)
		return alloc_fail(w);
	w->data_offset = (base + len + 7) & ~7ull;
	err = write_header(w, false);
	if (!err)
		err = sonde_pd_pwrite_all(w->fd, img, len, base, NULL);
	free(img);
	if (err)
		return sonde_pd_writer_fail(w, err, "writing the perf.data header: %s",
					    sonde_strerror(err));
	w->begun = true;
	w->attrs_dirty = false;
	return 0;
}

/* ---- records ---------------------------------------------------------- */

/* Bytes of whole records at the start of @buf that fit in @n. */
static size_t whole_records(const uint8_t *buf, size_t n)
{
	size_t off = 0;

	while (off + 8 <= n) {
		uint16_t sz = pd_get16(buf + off + 6);
		uint64_t all = sz + pd_record_extra(pd_get32(buf + off), buf + off, sz);

		if (all > n - off)
			break;
		off += all;
	}
	return off;
}

/* Appends records (already checked) at the end of the data on disk. */
static int write_records(struct sonde_pd_writer *w, const uint8_t *buf, size_t len)
{
	uint64_t off = w->data_offset + w->disk_size;
	size_t done = 0;
	int err;

	if (w->stream) {
		if ((err = sonde_pd_pipe_write(w, buf, len)))
			return sonde_pd_writer_fail(w, err, "writing records to the stream: %s",
						    sonde_strerror(err));
		w->disk_size += len;
		return 0;
	}
	err = sonde_pd_pwrite_all(w->fd, buf, len, off, &done);
	if (err) {
		/* Keep what landed as whole records; drop a torn last one. */
		w->disk_size += whole_records(buf, done);
		if (ftruncate(w->fd, (off_t)(w->data_offset + w->disk_size)) == 0)
			write_header(w, false);
		return sonde_pd_writer_fail(
		    w, err,
		    "writing records at offset 0x%" PRIx64 ": %s (data kept up to 0x%" PRIx64 ")",
		    off + done, sonde_strerror(err), w->data_offset + w->disk_size);
	}
	w->disk_size += len;
	/* Keep the header's data size current, so a killed recorder's file reads. */
	err = write_header(w, false);
	if (err)
		return sonde_pd_writer_fail(w, err, "rewriting the header: %s",
					    sonde_strerror(err));
	return 0;
}

static int flush(struct sonde_pd_writer *w)
{
	int err;

	if (w->err || w->buf_len == 0)
		return w->err;
	err = write_records(w, w->buf, w->buf_len);
	w->buf_len = 0;
	return err;
}

/* Buffers whole records for the data section (or writes big ones through). */
static int append(struct sonde_pd_writer *w, const void *p, size_t len)
{
	if (w->buf_len + len > BUF_CAP && flush(w))
		return w->err;
	if (len >= BUF_CAP)
		return write_records(w, p, len);
	memcpy(w->buf + w->buf_len, p, len);
	w->buf_len += len;
	return 0;
}

static int append_cb(void *ctx, const void *rec, size_t len)
{
	return append(ctx, rec, len);
}

/* Compresses the staged records into COMPRESSED records. */
static int compress_staged(struct sonde_pd_writer *w)
{
	int err;

	if (w->err || !w->z || !w->zin_len)
		return w->err;
	err = sonde_pd_zcomp_records(w->z, w->zin, w->zin_len, append_cb, w);
	w->zin_len = 0;
	if (err && !w->err)
		sonde_pd_writer_fail(w, err, "zstd failed to compress records");
	return w->err;
}

/* Stages whole records (already checked), compressing full batches. */
static int stage(struct sonde_pd_writer *w, const uint8_t *p, size_t len)
{
	while (len) {
		size_t n = whole_records(p, len < ZBATCH - w->zin_len ? len : ZBATCH - w->zin_len);

		if (n) {
			memcpy(w->zin + w->zin_len, p, n);
			w->zin_len += n;
		} else if (w->zin_len) {
			if (compress_staged(w))
				return w->err;
			continue;
		} else {
			/* One record bigger than a batch goes alone. */
			n = pd_get16(p + 6) + pd_record_extra(pd_get32(p), p, pd_get16(p + 6));
			if (sonde_pd_zcomp_records(w->z, p, n, append_cb, w) && !w->err)
				sonde_pd_writer_fail(w, SONDE_E_FORMAT,
						     "zstd failed to compress records");
			if (w->err)
				return w->err;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int sonde_pd_writer_write(struct sonde_pd_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t off = 0;

	if (w->err)
		return w->err;
	while (off < len) {
		size_t sz;

		if (len - off < sizeof(struct perf_event_header))
			return sonde_pd_writer_fail(
			    w, SONDE_E_FORMAT,
			    "record at buffer offset %zu: %zu bytes left, less than a header", off,
			    len - off);
		sz = pd_get16(p + off + 6);
		if (sz < sizeof(struct perf_event_header))
			return sonde_pd_writer_fail(
			    w, SONDE_E_FORMAT,
			    "record type %u at buffer offset %zu: size %zu smaller than header",
			    pd_get32(p + off), off, sz);
		if (sz > len - off ||
		    pd_record_extra(pd_get32(p + off), p + off, (uint16_t)sz) > len - off - sz)
			return sonde_pd_writer_fail(
			    w, SONDE_E_FORMAT,
			    "record type %u at buffer offset %zu: size %zu runs past the "
			    "buffer (%zu bytes left)",
			    pd_get32(p + off), off, sz, len - off);
		off += sz + pd_record_extra(pd_get32(p + off), p + off, (uint16_t)sz);
	}
	if (!w->begun && begin(w))
		return w->err;
	if (w->z ? stage(w, p, len) : append(w, p, len))
		return w->err;
	w->data_size += len;
	return 0;
}

int sonde_pd_writer_sync(struct sonde_pd_writer *w)
{
	if (!w->begun && !w->err && begin(w))
		return w->err;
	if (compress_staged(w))
		return w->err;
	return flush(w);
}

int sonde_pd_writer_set_compression(struct sonde_pd_writer *w, int level)
{
	int err;

	if (w->err)
		return w->err;
	if (w->data_size)
		return sonde_pd_writer_fail(w, -EINVAL,
					    "compression must be set before the first record");
	if (w->z)
		return 0;
	if ((err = sonde_pd_zcomp_new(&w->z, level))) {
		if (err == -ENOTSUP)
			return sonde_pd_writer_fail(
			    w, err, "this sonde was built without zstd: -z is unavailable");
		if (err == -EINVAL)
			return sonde_pd_writer_fail(
			    w, err, "zstd compression level %d out of range", level);
		return alloc_fail(w);
	}
	if (!(w->zin = malloc(ZBATCH))) {
		sonde_pd_zcomp_free(w->z);
		w->z = NULL;
		return alloc_fail(w);
	}
	w->zlevel = (uint32_t)level;
	return 0;
}

bool sonde_pd_writer_can_compress(void)
{
	return sonde_pd_zstd_available();
}

uint64_t sonde_pd_writer_file_data_size(const struct sonde_pd_writer *w)
{
	return w->disk_size + w->buf_len;
}

/* HEADER_COMPRESSED: version, type (1: zstd), level, ratio, mmap_len. */
int sonde_pd_writer_compressed_feature(struct sonde_pd_writer *w)
{
	uint8_t b[20];
	uint64_t packed = w->disk_size ? w->disk_size : 1;

	pd_put32(b, 0);
	pd_put32(b + 4, 1);
	pd_put32(b + 8, w->zlevel);
	pd_put32(b + 12, (uint32_t)(w->data_size / packed));
	pd_put32(b + 16, ZBATCH);
	return sonde_pd_writer_set_feature(w, SONDE_PD_FEAT_COMPRESSED, b, sizeof(b));
}

/* ---- features --------------------------------------------------------- */

static int blob_put(struct sonde_pd_writer *w, unsigned bit, const void *data, size_t len,
		    bool append)
{
	struct blob *b;
	uint8_t *n;

	if (w->err)
		return w->err;
	if (bit == 0 || bit >= SONDE_PD_FEAT_BITS)
		return sonde_pd_writer_fail(w, -EINVAL, "feature bit %u out of range", bit);
	b = &w->feat[bit];
	if (!append)
		b->len = 0;
	n = realloc(b->data, b->len + len + 1);
	if (!n)
		return alloc_fail(w);
	if (len)
		memcpy(n + b->len, data, len);
	b->data = n;
	b->len += len;
	b->set = true;
	return 0;
}

/* Serializes perf's string: u32 padded length, then the padded bytes. */
static size_t put_string(uint8_t *dst, const char *s)
{
	size_t sl = strlen(s);
	uint32_t len = pd_string_len(sl);

	if (dst) {
		pd_put32(dst, len);
		memset(dst + 4, 0, len);
		memcpy(dst + 4, s, sl);
	}
	return 4 + len;
}

int sonde_pd_writer_set_string(struct sonde_pd_writer *w, unsigned feat, const char *s)
{
	uint8_t *tmp;
	size_t n;
	int err;

	switch (feat) {
	case SONDE_PD_FEAT_HOSTNAME:
	case SONDE_PD_FEAT_OSRELEASE:
	case SONDE_PD_FEAT_VERSION:
	case SONDE_PD_FEAT_ARCH:
	case SONDE_PD_FEAT_CPUDESC:
	case SONDE_PD_FEAT_CPUID:
		break;
	default:
		return sonde_pd_writer_fail(w, -EINVAL, "feature %u is not a string", feat);
	}
	n = put_string(NULL, s);
	if (!(tmp = malloc(n)))
		return alloc_fail(w);
	put_string(tmp, s);
	err = blob_put(w, feat, tmp, n, false);
	free(tmp);
	return err;
}

int sonde_pd_writer_set_nrcpus(struct sonde_pd_writer *w, uint32_t avail, uint32_t online)
{
	uint8_t b[8];

	/* perf's order: available (max present) first, then online. */
	pd_put32(b, avail);
	pd_put32(b + 4, online);
	return blob_put(w, SONDE_PD_FEAT_NRCPUS, b, sizeof(b), false);
}

int sonde_pd_writer_set_total_mem(struct sonde_pd_writer *w, uint64_t kb)
{
	uint8_t b[8];

	pd_put64(b, kb);
	return blob_put(w, SONDE_PD_FEAT_TOTAL_MEM, b, sizeof(b), false);
}

int sonde_pd_writer_set_host(struct sonde_pd_writer *w, const struct sonde_pd_host *h)
{
	const struct {
		unsigned feat;
		const char *s;
	} strs[] = {
	    {SONDE_PD_FEAT_HOSTNAME, h->hostname}, {SONDE_PD_FEAT_OSRELEASE, h->osrelease},
	    {SONDE_PD_FEAT_VERSION, h->version},   {SONDE_PD_FEAT_ARCH, h->arch},
	    {SONDE_PD_FEAT_CPUDESC, h->cpudesc},   {SONDE_PD_FEAT_CPUID, h->cpuid},
	};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i].s[0])
			sonde_pd_writer_set_string(w, strs[i].feat, strs[i].s);
	if (h->nr_cpus_avail)
		sonde_pd_writer_set_nrcpus(w, h->nr_cpus_avail, h->nr_cpus_online);
	if (h->total_mem_kb)
		sonde_pd_writer_set_total_mem(w, h->total_mem_kb);
	return w->err;
}

/* A perf string list: u32 count, then strings.  Return: new buffer. */
static uint8_t *string_list(uint32_t n, const char *const *s, size_t *len)
{
	size_t total = 4, pos = 4;
	uint8_t *b;

	for (uint32_t i = 0; i < n; i++)
		total += put_string(NULL, s[i]);
	if (!(b = malloc(total)))
		return NULL;
	pd_put32(b, n);
	for (uint32_t i = 0; i < n; i++)
		pos += put_string(b + pos, s[i]);
	*len = total;
	return b;
}

int sonde_pd_writer_set_groups(struct sonde_pd_writer *w, const struct sonde_pd_group *g, size_t n)
{
	size_t total = 4, pos = 4;
	uint8_t *b;
	int err;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		total += put_string(NULL, g[i].name ? g[i].name : "{anon_group}") + 8;
	if (!(b = malloc(total)))
		return alloc_fail(w);
	pd_put32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		pos += put_string(b + pos, g[i].name ? g[i].name : "{anon_group}");
		pd_put32(b + pos, g[i].leader);
		pd_put32(b + pos + 4, g[i].nr);
		pos += 8;
	}
	err = blob_put(w, SONDE_PD_FEAT_GROUP_DESC, b, total, false);
	free(b);
	return err;
}

int sonde_pd_writer_set_cmdline(struct sonde_pd_writer *w, int argc, const char *const *argv)
{
	size_t len;
	uint8_t *b;
	int err;

	if (argc < 0)
		return sonde_pd_writer_fail(w, -EINVAL, "negative argc");
	if (!(b = string_list((uint32_t)argc, argv, &len)))
		return alloc_fail(w);
	err = blob_put(w, SONDE_PD_FEAT_CMDLINE, b, len, false);
	free(b);
	return err;
}

int sonde_pd_writer_set_tracing_data(struct sonde_pd_writer *w, const void *blob, size_t len)
{
	return blob_put(w, SONDE_PD_FEAT_TRACING_DATA, blob, len, false);
}

int sonde_pd_writer_add_build_id(struct sonde_pd_writer *w, int32_t pid, uint16_t misc,
				 const uint8_t *id, size_t id_len, const char *filename)
{
	size_t flen = pd_string_len(strlen(filename));
	size_t n = 36 + flen;
	uint8_t *e;
	int err;

	if (id_len > 20)
		return sonde_pd_writer_fail(w, -EINVAL, "build id of %s: %zu bytes, at most 20",
					    filename, id_len);
	if (n > UINT16_MAX)
		return sonde_pd_writer_fail(w, -ENAMETOOLONG, "build id file name too long: %s",
					    filename);
	if (!(e = calloc(1, n)))
		return alloc_fail(w);
	/* perf_event_header (type 0), pid, 20 id bytes + size byte + 3 pad, name */
	pd_put16(e + 4, misc | SONDE_PD_MISC_BUILD_ID_SIZE);
	pd_put16(e + 6, (uint16_t)n);
	pd_put32(e + 8, (uint32_t)pid);
	memcpy(e + 12, id, id_len);
	e[12 + 20] = (uint8_t)id_len;
	memcpy(e + 36, filename, strlen(filename));
	err = blob_put(w, SONDE_PD_FEAT_BUILD_ID, e, n, true);
	free(e);
	return err;
}

int sonde_pd_writer_set_sample_time(struct sonde_pd_writer *w, uint64_t first, uint64_t last)
{
	uint8_t b[16];

	pd_put64(b, first);
	pd_put64(b + 8, last);
	return blob_put(w, SONDE_PD_FEAT_SAMPLE_TIME, b, sizeof(b), false);
}

int sonde_pd_writer_set_clockid_res(struct sonde_pd_writer *w, uint64_t res_ns)
{
	uint8_t b[8];

	pd_put64(b, res_ns);
	return blob_put(w, SONDE_PD_FEAT_CLOCKID, b, sizeof(b), false);
}

int sonde_pd_writer_set_topology(struct sonde_pd_writer *w, const struct sonde_pd_topology *t)
{
	uint8_t *parts[3], *b;
	size_t lens[3], total, pos = 0;
	int err;

	parts[0] = string_list(t->nr_core_sibs, t->core_sibs, &lens[0]);
	parts[1] = string_list(t->nr_thread_sibs, t->thread_sibs, &lens[1]);
	parts[2] = string_list(t->nr_die_sibs, t->die_sibs, &lens[2]);
	total = lens[0] + lens[1] + (size_t)t->nr_cpus * 8 + lens[2] + (size_t)t->nr_cpus * 4;
	b = (parts[0] && parts[1] && parts[2]) ? malloc(total) : NULL;
	if (!b) {
		for (int i = 0; i < 3; i++)
			free(parts[i]);
		return alloc_fail(w);
	}
	/* cores, threads, {core_id, socket_id}[nr_cpus], dies, die_id[nr_cpus] */
	memcpy(b, parts[0], lens[0]);
	pos = lens[0];
	memcpy(b + pos, parts[1], lens[1]);
	pos += lens[1];
	for (uint32_t i = 0; i < t->nr_cpus; i++, pos += 8) {
		pd_put32(b + pos, t->core_id[i]);
		pd_put32(b + pos + 4, t->socket_id[i]);
	}
	memcpy(b + pos, parts[2], lens[2]);
	pos += lens[2];
	for (uint32_t i = 0; i < t->nr_cpus; i++, pos += 4)
		pd_put32(b + pos, t->die_id ? t->die_id[i] : 0);
	err = blob_put(w, SONDE_PD_FEAT_CPU_TOPOLOGY, b, total, false);
	for (int i = 0; i < 3; i++)
		free(parts[i]);
	free(b);
	return err;
}

int sonde_pd_writer_set_feature(struct sonde_pd_writer *w, unsigned bit, const void *blob,
				size_t len)
{
	return blob_put(w, bit, blob, len, false);
}

int sonde_pd_writer_feature(const struct sonde_pd_writer *w, unsigned bit, const void **data,
			    size_t *len)
{
	if (bit >= SONDE_PD_FEAT_BITS || !w->feat[bit].set)
		return 0;
	*data = w->feat[bit].data;
	*len = w->feat[bit].len;
	return 1;
}

int sonde_pd_writer_set_sonde_feature(struct sonde_pd_writer *w, unsigned n, const void *blob,
				      size_t len)
{
	if (n >= SONDE_PD_FEAT_SONDE_MAX)
		return sonde_pd_writer_fail(w, -EINVAL, "sonde feature %u out of range", n);
	return blob_put(w, SONDE_PD_FEAT_SONDE_BASE + n, blob, len, false);
}

/* HEADER_EVENT_DESC from the events: attrs with their names and ids. */
int sonde_pd_writer_event_desc(struct sonde_pd_writer *w)
{
	size_t total = 8, pos = 8;
	uint8_t *b;
	int err;

	for (size_t i = 0; i < w->nr_attrs; i++)
		total += SONDE_PD_ATTR_SIZE + 4 + put_string(NULL, w->attrs[i].name ?: "") +
			 w->attrs[i].nr_ids * 8;
	if (!(b = malloc(total)))
		return alloc_fail(w);
	pd_put32(b, (uint32_t)w->nr_attrs);
	pd_put32(b + 4, SONDE_PD_ATTR_SIZE);
	for (size_t i = 0; i < w->nr_attrs; i++) {
		memcpy(b + pos, w->attrs[i].attr, SONDE_PD_ATTR_SIZE);
		pos += SONDE_PD_ATTR_SIZE;
		pd_put32(b + pos, (uint32_t)w->attrs[i].nr_ids);
		pos += 4;
		pos += put_string(b + pos, w->attrs[i].name ?: "");
		for (size_t j = 0; j < w->attrs[i].nr_ids; j++, pos += 8)
			pd_put64(b + pos, w->attrs[i].ids[j]);
	}
	err = blob_put(w, SONDE_PD_FEAT_EVENT_DESC, b, total, false);
	free(b);
	return err;
}

/* Feature table and bodies after the data, then moved attrs if needed. */
static int write_tail(struct sonde_pd_writer *w)
{
	uint64_t table = w->data_offset + w->disk_size, pos;
	unsigned nr = 0;
	uint8_t *tab;
	int err = 0;

	if (w->nr_attrs && sonde_pd_writer_event_desc(w))
		return w->err;
	for (unsigned b = 0; b < SONDE_PD_FEAT_SONDE_BASE; b++)
		nr += w->feat[b].set;
	/* The table as its bytes: per feature offset and size, 8 bytes each (LE). */
	if (!(tab = calloc(nr ? nr : 1, 16)))
		return alloc_fail(w);
	pos = table + (uint64_t)nr * sizeof(struct sonde_pd_section);
	for (unsigned b = 0, i = 0; b < SONDE_PD_FEAT_SONDE_BASE && !err; b++) {
		if (!w->feat[b].set)
			continue;
		pd_put64(tab + i * 16, pos);
		pd_put64(tab + i * 16 + 8, w->feat[b].len);
		i++;
		err = sonde_pd_writer_put(w, w->feat[b].data, w->feat[b].len, pos,
					  "a header feature");
		pos += w->feat[b].len;
	}
	if (!err)
		err = sonde_pd_writer_put(w, tab, nr * sizeof(struct sonde_pd_section), table,
					  "the feature table");
	free(tab);
	if (!err && w->attrs_dirty) {
		/* Events added after the data began: a new attrs section at the end. */
		size_t len;
		uint8_t *img;

		pos = (pos + 7) & ~7ull;
		if (!(img = attrs_image(w, pos, &len, &w->attrs_sec)))
			return alloc_fail(w);
		err = sonde_pd_writer_put(w, img, len, pos, "the attrs");
		free(img);
		pos += len;
	}
	if (!err)
		err = sonde_pd_trailer_write(w, pos);
	if (!err && (err = write_header(w, true)))
		sonde_pd_writer_fail(w, err, "writing the final header: %s", sonde_strerror(err));
	return err;
}

int sonde_pd_writer_close(struct sonde_pd_writer *w, struct sonde_errmsg *errmsg)
{
	int err;

	if (!w)
		return 0;
	if (w->fd < 0) {
		err = w->err; /* a feature collector: no file */
		goto free_all;
	}
	compress_staged(w);
	flush(w);
	if (!w->begun && !w->err)
		begin(w);
	if (w->stream) {
		if (!w->err)
			sonde_pd_pipe_end(w);
		err = w->err;
		if (err && errmsg)
			*errmsg = w->msg;
		if (w->own_fd)
			close(w->fd);
		goto free_all;
	}
	if (w->z && !w->err)
		sonde_pd_writer_compressed_feature(w);
	if (!w->err && ftruncate(w->fd, (off_t)(w->data_offset + w->disk_size)))
		sonde_pd_writer_fail(w, -errno, "truncating after the data: %s",
				     sonde_strerror(-errno));
	if (!w->err)
		write_tail(w);
	if (w->err && w->begun) {
		/* Best effort: the records on disk with a header that needs no space. */
		if (ftruncate(w->fd, (off_t)(w->data_offset + w->disk_size)) == 0)
			write_header(w, false);
	}
	err = w->err;
	if (err && errmsg)
		*errmsg = w->msg;
	if (w->own_fd && close(w->fd) && !err) {
		err = -errno;
		if (errmsg)
			sonde_errmsg_set(errmsg, err, "closing perf.data: %s", sonde_strerror(err));
	}
free_all:
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	for (unsigned b = 0; b < SONDE_PD_FEAT_BITS; b++)
		free(w->feat[b].data);
	free(w->buf);
	sonde_pd_zcomp_free(w->z);
	free(w->zin);
	free(w);
	return err;
}
