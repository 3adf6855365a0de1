// SPDX-License-Identifier: MIT
/*
 * What a perf.data header holds, as the reader keeps it: the events (attrs
 * with their ids, and the id index sorted for lookups) and the features
 * parsed into struct sonde_pd_features, strings borrowed from the bytes.
 *
 * The bottom of the reader: pd_reader.c feeds it a file's attrs and
 * feature sections, pd_pipe.c a pipe's HEADER_ATTR and HEADER_FEATURE
 * records.  Apart from pd_reader.c, which calls pd_pipe.c, so neither
 * calls back up.
 */
#include <sonde/perf_data.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pd_le.h"
#include "pd_reader_internal.h"

int sonde_pd_reader_setmsg(struct sonde_pd_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg.text, sizeof(r->msg.text), fmt, ap);
	va_end(ap);
	return err;
}

/* ---- attrs and ids ---------------------------------------------------- */

static int idmap_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct idmap *)a)->id, y = ((const struct idmap *)b)->id;

	return x < y ? -1 : x > y;
}

int sonde_pd_reader_index_ids(struct sonde_pd_reader *r)
{
	size_t n = 0, k = 0;
	struct idmap *m;

	for (size_t i = 0; i < r->nr_attrs; i++)
		n += r->attrs[i]->nr_ids;
	m = calloc(n ? n : 1, sizeof(*m));
	if (!m)
		return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nr_attrs; i++)
		for (size_t j = 0; j < r->attrs[i]->nr_ids; j++) {
			m[k].id = r->attrs[i]->ids[j];
			m[k++].attr = r->attrs[i];
		}
	qsort(m, n, sizeof(*m), idmap_cmp);
	free(r->ids);
	r->ids = m;
	r->nr_ids = n;
	r->sample_id_pos = -1;
	if (r->nr_attrs) {
		uint64_t t = r->attrs[0]->attr.sample_type;

		if (t & PERF_SAMPLE_IDENTIFIER)
			r->sample_id_pos = 0;
		else if (t & PERF_SAMPLE_ID)
			r->sample_id_pos = !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) +
					   !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR);
	}
	return 0;
}

const struct sonde_pd_attr *sonde_pd_reader_find_id(const struct sonde_pd_reader *r, uint64_t id)
{
	struct idmap key = {id, NULL}, *hit;

	if (!r->nr_ids)
		return NULL;
	hit = bsearch(&key, r->ids, r->nr_ids, sizeof(key), idmap_cmp);
	return hit ? hit->attr : NULL;
}

int sonde_pd_reader_add_attr(struct sonde_pd_reader *r, const uint8_t *a, size_t fsz,
			     const uint8_t *ids, size_t nr_ids)
{
	struct sonde_pd_attr **v, *e;
	uint64_t *idv;

	v = realloc(r->attrs, (r->nr_attrs + 1) * sizeof(*v));
	if (!v)
		return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
	r->attrs = v;
	e = calloc(1, sizeof(*e) + nr_ids * sizeof(uint64_t));
	if (!e)
		return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
	memcpy(&e->attr, a, fsz < sizeof(e->attr) ? fsz : sizeof(e->attr));
	e->file_size = (uint32_t)fsz;
	e->attr.size = sizeof(e->attr);
	idv = (uint64_t *)(e + 1);
	for (size_t i = 0; i < nr_ids; i++)
		idv[i] = pd_get64(ids + i * 8);
	e->ids = idv;
	e->nr_ids = nr_ids;
	r->attrs[r->nr_attrs++] = e;
	return 0;
}

/* ---- features --------------------------------------------------------- */

/* A cursor over one feature section. */
struct fcur {
	const uint8_t *p, *end;
	bool bad;
};

static bool fneed(struct fcur *c, uint64_t n)
{
	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return false;
	}
	return true;
}

static uint32_t f32(struct fcur *c)
{
	uint32_t v = 0;

	if (fneed(c, 4)) {
		v = pd_get32(c->p);
		c->p += 4;
	}
	return v;
}

static uint64_t f64(struct fcur *c)
{
	uint64_t v = 0;

	if (fneed(c, 8)) {
		v = pd_get64(c->p);
		c->p += 8;
	}
	return v;
}

/* A perf string: u32 length, then bytes holding a NUL.  Borrowed. */
static const char *fstr(struct fcur *c)
{
	uint32_t len = f32(c);
	const char *s = (const char *)c->p;

	if (!fneed(c, len) || !memchr(s, 0, len)) {
		c->bad = true;
		return NULL;
	}
	c->p += len;
	return s;
}

/* A string list into a new array of @nr borrowed strings. */
static const char **fstrlist(struct fcur *c, uint32_t *nr)
{
	const char **v;

	*nr = f32(c);
	/* each string takes at least 5 bytes: refuse counts the section can't hold */
	if (c->bad || *nr > (uint64_t)(c->end - c->p) / 5) {
		c->bad = true;
		return NULL;
	}
	v = calloc(*nr + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < *nr && !c->bad; i++)
		v[i] = fstr(c);
	if (c->bad) {
		free(v);
		return NULL;
	}
	return v;
}

static int parse_build_ids(struct sonde_pd_reader *r, const uint8_t *p, uint64_t size)
{
	size_t n = 0, k = 0;

	for (int pass = 0; pass < 2; pass++) {
		uint64_t off = 0;

		while (off < size) {
			uint16_t misc, esz;
			struct sonde_pd_build_id *b;

			if (size - off < 36 || (esz = pd_get16(p + off + 6)) < 36 ||
			    esz > size - off)
				return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
							      "build id entry at offset 0x%" PRIx64
							      " of the BUILD_ID feature: bad size",
							      off);
			if (!memchr(p + off + 36, 0, esz - 36))
				return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
							      "build id entry at offset 0x%" PRIx64
							      ": file name not terminated",
							      off);
			if (pass == 1) {
				misc = pd_get16(p + off + 4);
				b = &r->bids[k++];
				b->pid = (int32_t)pd_get32(p + off + 8);
				b->misc = misc & (uint16_t)~SONDE_PD_MISC_BUILD_ID_SIZE;
				memcpy(b->id, p + off + 12, 20);
				b->size = 20;
				if (misc & SONDE_PD_MISC_BUILD_ID_SIZE && p[off + 32] <= 20)
					b->size = p[off + 32];
				b->filename = (const char *)p + off + 36;
			} else {
				n++;
			}
			off += esz;
		}
		if (pass == 0 && !(r->bids = calloc(n ? n : 1, sizeof(*r->bids))))
			return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
	}
	r->feat.build_ids = r->bids;
	r->feat.nr_build_ids = n;
	return 0;
}

static int parse_event_desc(struct sonde_pd_reader *r, struct fcur *c)
{
	uint32_t nr = f32(c), asz = f32(c);

	if (c->bad || asz < PERF_ATTR_SIZE_VER0)
		return -1;
	for (uint32_t i = 0; i < nr && !c->bad; i++) {
		uint32_t nids;
		const char *name;

		if (!fneed(c, asz))
			break;
		c->p += asz;
		nids = f32(c);
		name = fstr(c);
		if (!fneed(c, (uint64_t)nids * 8))
			break;
		/* perf writes events in attrs order; match by the first id if it can. */
		if (nids && r->nr_ids) {
			const struct sonde_pd_attr *a = sonde_pd_reader_find_id(r, pd_get64(c->p));

			if (a)
				((struct sonde_pd_attr *)a)->name = name;
		} else if (i < r->nr_attrs) {
			r->attrs[i]->name = name;
		}
		c->p += (uint64_t)nids * 8;
	}
	return c->bad ? -1 : 0;
}

int sonde_pd_reader_parse_feature(struct sonde_pd_reader *r, unsigned bit)
{
	const uint8_t *p = r->feat_ptr[bit];
	uint64_t size = r->feat_sec[bit].size;
	struct fcur c = {p, p + size, false};
	struct sonde_pd_features *f = &r->feat;
	uint32_t n;

	switch (bit) {
	case SONDE_PD_FEAT_TRACING_DATA:
		f->tracing_data = p;
		f->tracing_data_size = size;
		return 0;
	case SONDE_PD_FEAT_BUILD_ID:
		return parse_build_ids(r, p, size);
	case SONDE_PD_FEAT_HOSTNAME:
		f->hostname = fstr(&c);
		break;
	case SONDE_PD_FEAT_OSRELEASE:
		f->osrelease = fstr(&c);
		break;
	case SONDE_PD_FEAT_VERSION:
		f->version = fstr(&c);
		break;
	case SONDE_PD_FEAT_ARCH:
		f->arch = fstr(&c);
		break;
	case SONDE_PD_FEAT_CPUDESC:
		f->cpudesc = fstr(&c);
		break;
	case SONDE_PD_FEAT_CPUID:
		f->cpuid = fstr(&c);
		break;
	case SONDE_PD_FEAT_NRCPUS:
		f->nr_cpus_avail = f32(&c);
		f->nr_cpus_online = f32(&c);
		f->has_nrcpus = !c.bad;
		break;
	case SONDE_PD_FEAT_TOTAL_MEM:
		f->total_mem_kb = f64(&c);
		break;
	case SONDE_PD_FEAT_CMDLINE:
		r->argv = fstrlist(&c, &n);
		if (!r->argv && !c.bad)
			return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
		f->cmdline_argv = r->argv;
		f->cmdline_argc = r->argv ? n : 0;
		break;
	case SONDE_PD_FEAT_EVENT_DESC:
		parse_event_desc(r, &c);
		break;
	case SONDE_PD_FEAT_CPU_TOPOLOGY: {
		uint32_t nc, nt;
		const char **cores = fstrlist(&c, &nc), **threads;

		if (!cores)
			break;
		threads = fstrlist(&c, &nt);
		if (!threads) {
			free(cores);
			break;
		}
		/* One array owns both lists: cores, NULL, threads, NULL. */
		r->topo = calloc((size_t)nc + nt + 2, sizeof(*r->topo));
		if (r->topo) {
			memcpy(r->topo, cores, nc * sizeof(*cores));
			memcpy(r->topo + nc + 1, threads, nt * sizeof(*threads));
			f->topo_core_sibs = r->topo;
			f->topo_thread_sibs = r->topo + nc + 1;
			f->topo_nr_core_sibs = nc;
			f->topo_nr_thread_sibs = nt;
			f->topo_nr_cpus = (uint32_t)((c.end - c.p) / 8);
			if (f->has_nrcpus && f->nr_cpus_avail < f->topo_nr_cpus)
				f->topo_nr_cpus = f->nr_cpus_avail;
			f->has_topology = true;
		}
		free(cores);
		free(threads);
		if (!r->topo)
			return sonde_pd_reader_setmsg(r, -ENOMEM, "out of memory");
		break;
	}
	case SONDE_PD_FEAT_SAMPLE_TIME:
		f->first_sample_time = f64(&c);
		f->last_sample_time = f64(&c);
		f->has_sample_time = !c.bad;
		break;
	case SONDE_PD_FEAT_CLOCKID:
		f->clockid_res_ns = f64(&c);
		f->has_clockid = !c.bad;
		break;
	case SONDE_PD_FEAT_COMPRESSED:
		f->comp_version = f32(&c);
		f->comp_type = f32(&c);
		f->comp_level = f32(&c);
		f->comp_ratio = f32(&c);
		f->comp_mmap_len = f32(&c);
		f->has_compressed = !c.bad;
		break;
	default:
		return 0; /* kept as raw bytes */
	}
	if (c.bad)
		return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
					      "feature %u at offset 0x%" PRIx64 " (%" PRIu64
					      " bytes) is malformed",
					      bit, r->feat_sec[bit].offset, size);
	return 0;
}

/* The event of a kernel record, found through its id. */
const struct sonde_pd_attr *sonde_pd_reader_record_attr(const struct sonde_pd_reader *r,
							uint32_t type, const uint8_t *rec,
							uint16_t size)
{
	const struct perf_event_attr *a0;
	uint64_t id, t;
	size_t pos;

	if (r->nr_attrs == 0 || type >= SONDE_PD_KERNEL_RECORD_MAX)
		return NULL;
	if (r->nr_attrs == 1)
		return r->attrs[0];
	a0 = &r->attrs[0]->attr;
	t = a0->sample_type;
	if (type == PERF_RECORD_SAMPLE) {
		if (r->sample_id_pos < 0)
			return r->attrs[0];
		pos = 8 + 8 * (size_t)r->sample_id_pos;
	} else {
		if (!a0->sample_id_all || !(t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
			return r->attrs[0];
		if (t & PERF_SAMPLE_IDENTIFIER)
			pos = (size_t)size - 8;
		else
			pos = (size_t)size -
			      8 * (1 + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU));
		if (pos < 8 || pos > size)
			return NULL;
	}
	if (pos + 8 > size)
		return NULL;
	id = pd_get64(rec + pos);
	/* perf's synthesized records carry id 0: they belong to the first event. */
	return id ? sonde_pd_reader_find_id(r, id) : r->attrs[0];
}

/* A HEADER_ATTR record (pipe mode): attr, then the event's ids. */
int sonde_pd_reader_take_attr(struct sonde_pd_reader *r, const uint8_t *rec, uint16_t size,
			      uint64_t off)
{
	uint32_t asz;
	int err;

	if (size < 8 + PERF_ATTR_SIZE_VER0)
		return sonde_pd_reader_setmsg(
		    r, SONDE_E_FORMAT, "HEADER_ATTR at offset 0x%" PRIx64 ": size %u too small",
		    off, size);
	asz = pd_get32(rec + 8 + 4);
	if (asz == 0)
		asz = PERF_ATTR_SIZE_VER0;
	if (asz < PERF_ATTR_SIZE_VER0 || asz > size - 8u || (size - 8u - asz) % 8)
		return sonde_pd_reader_setmsg(r, SONDE_E_FORMAT,
					      "HEADER_ATTR at offset 0x%" PRIx64
					      ": attr size %u does not fit record size %u",
					      off, asz, size);
	err = sonde_pd_reader_add_attr(r, rec + 8, asz, rec + 8 + asz, (size - 8u - asz) / 8);
	return err ? err : sonde_pd_reader_index_ids(r);
}

/* End of the data reached with @left bytes that don't make a record. */
int sonde_pd_reader_truncated(struct sonde_pd_reader *r, uint64_t off, const char *what)
{
	r->tail = SONDE_PD_TAIL_TRUNCATED;
	sonde_pd_reader_setmsg(r, 0, "record at offset 0x%" PRIx64 ": %s; the file is truncated",
			       off, what);
	r->pos = r->data_end;
	return 0;
}
