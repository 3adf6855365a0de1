// SPDX-License-Identifier: MIT
/*
 * Tracing data -> libtraceevent, and tracepoint payloads -> values.
 *
 * The blob (layout in src/tracefs/tracing_data.c, perf's
 * trace-event-read.c and trace-cmd.dat(5)) is walked with one bounded
 * cursor whose numbers follow the blob's endian byte; each piece is
 * handed to the matching libtraceevent parser with its exact length (or
 * as a NUL-terminated copy for the parsers that want a string).  After
 * parsing, every event gets a small wrapper holding its field arrays, in a
 * table sorted by format ID, so finding a payload's event is one binary
 * search and decoding a field is a bounds check and a number read.
 *
 * Printing goes through tep_print_event() on a zero-padded scratch copy
 * of the payload: libtraceevent trusts field offsets and __data_loc
 * words, so a payload shorter than its format (or a dynamic array
 * pointing past the end) must read zeros, never memory beyond it.  The
 * scratch is large enough for any 16-bit __data_loc offset plus length,
 * and only the bytes copied in are cleared again after each use.
 */
#include <sonde/tpdecode.h>
#include <sonde/tracepoint.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/perf_data.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#define TD_MAGIC "\027\010\104tracing"
#define MAX_PAYLOAD 65536u
/* A __data_loc word can point 64 KiB in and be 64 KiB long, past a 64 KiB payload. */
#define SCRATCH_SIZE (MAX_PAYLOAD + 2u * 65536u + 64u)

struct sonde_tp_event {
	struct tep_event *tep;
	struct tep_format_field **fields; /* own fields, NULL-terminated (libtraceevent's malloc) */
	struct tep_format_field **common; /* common_* fields */
	size_t nfields, ncommon;
};

struct sonde_tp_decoder {
	struct tep_handle *tep;
	struct sonde_tp_event *events; /* sorted by id */
	size_t nevents;
	size_t failed;
	bool big_endian;
	bool wants_kallsyms;
	uint8_t *scratch; /* SCRATCH_SIZE zero bytes, made on first print */
	struct trace_seq seq;
};

/* ---- the blob ---------------------------------------------------------- */

struct cur {
	const uint8_t *p;
	size_t len, off;
	bool big;
	struct sonde_errmsg *err;
};

static int short_blob(struct cur *c, const char *what)
{
	return sonde_errmsg_set(c->err, SONDE_E_TRUNCATED,
				"tracing data: %s at offset %zu runs past the end (%zu bytes)",
				what, c->off, c->len);
}

static int take(struct cur *c, size_t n, const char *what, const uint8_t **at)
{
	if (n > c->len - c->off)
		return short_blob(c, what);
	*at = c->p + c->off;
	c->off += n;
	return 0;
}

static int get_num(struct cur *c, unsigned bytes, const char *what, uint64_t *v)
{
	const uint8_t *b = NULL;
	int r = take(c, bytes, what, &b);

	if (r)
		return r;
	*v = 0;
	for (unsigned i = 0; i < bytes; i++)
		*v |= (uint64_t)b[c->big ? i : bytes - 1 - i] << (8 * (bytes - 1 - i));
	return 0;
}

/* A NUL-terminated string of at most @max bytes. */
static int get_str(struct cur *c, size_t max, const char *what, const char **s)
{
	size_t left = c->len - c->off;
	const uint8_t *nul = memchr(c->p + c->off, '\0', left < max ? left : max);

	/* Set on every path: at -O3 gcc cannot see that an error return is never 0. */
	*s = NULL;
	if (!nul)
		return sonde_errmsg_set(c->err, SONDE_E_FORMAT,
					"tracing data: %s at offset %zu is not a string", what,
					c->off);
	*s = (const char *)c->p + c->off;
	c->off = (size_t)(nul - c->p) + 1;
	return 0;
}

/* A size of @bytes then that many bytes. */
static int get_sized(struct cur *c, unsigned bytes, const char *what, const char **data,
		     size_t *len)
{
	uint64_t n;
	const uint8_t *at = NULL;
	int r;

	if ((r = get_num(c, bytes, what, &n)))
		return r;
	if (n > c->len - c->off)
		return short_blob(c, what);
	if ((r = take(c, (size_t)n, what, &at)))
		return r;
	*data = (const char *)at;
	*len = (size_t)n;
	return 0;
}

static bool host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static bool prints_symbols(const char *fmt)
{
	for (const char *p = fmt ? strstr(fmt, "%p") : NULL; p; p = strstr(p + 2, "%p"))
		if (strchr("sSfFB", p[2]) && p[2])
			return true;
	return false;
}

static int add_event(struct sonde_tp_decoder *d, const char *text, size_t len, const char *sys)
{
	enum tep_errno e;

	/* libtraceevent 1.7 trusts the format's shape: see sonde_tp_format_safe(). */
	if (!sonde_tp_format_safe(text, len)) {
		d->failed++;
		return 0;
	}
	e = tep_parse_event(d->tep, text, len, sys);

	/* A bad print format may still leave the event's fields usable: count it. */
	if (e != 0)
		d->failed++;
	return 0;
}

/*
 * Line checks for the text sections.  libtraceevent 1.7 trusts their shape
 * (tep_parse_printk_formats() reads past a line without its quoted
 * string, found by fuzz_tracing_data), so only lines of the form the
 * kernel prints are handed on: "0xADDR : \"fmt\"" for printk formats,
 * "ADDR TYPE NAME..." for kallsyms, "PID COMM" for saved comms.
 */
typedef bool (*line_ok_fn)(const char *line, size_t len);

static bool printk_line_ok(const char *l, size_t n)
{
	const char *sep = memmem(l, n, " : \"", 4), *fmt;
	size_t len;

	if (n <= 6 || l[0] != '0' || l[1] != 'x' || !sep || l[n - 1] != '"' ||
	    (size_t)(sep - l) + 4 >= n)
		return false;
	/* tep_register_print_string() looks two bytes before the end of the
	 * string between the quotes (for a trailing "\n"): at least three,
	 * and no quote inside, or it reads before its buffer. */
	fmt = sep + 4;
	len = (size_t)(l + n - 1 - fmt);
	return len >= 3 && !memchr(fmt, '"', len);
}

static bool words_ok(const char *l, size_t n, unsigned want)
{
	unsigned words = 0;

	for (size_t i = 0; i < n; i++)
		if (l[i] != ' ' && l[i] != '\t' && (i == 0 || l[i - 1] == ' ' || l[i - 1] == '\t'))
			words++;
	return words >= want;
}

static bool kallsyms_line_ok(const char *l, size_t n)
{
	return words_ok(l, n, 3);
}

static bool cmdline_line_ok(const char *l, size_t n)
{
	return words_ok(l, n, 2);
}

/* Hands the well-formed lines of a text section to a libtraceevent parser. */
static int parse_text(struct sonde_tp_decoder *d, const char *data, size_t len,
		      int (*fn)(struct tep_handle *, const char *), line_ok_fn ok)
{
	char *s, *o;

	if (!len)
		return 0;
	if (!(s = malloc(len + 2))) /* a newline may be added after the last line */
		return -ENOMEM;
	o = s;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (data + i)) : len - i;

		if (!memchr(data + i, '\0', n) && ok(data + i, n)) {
			memcpy(o, data + i, n);
			o += n;
			*o++ = '\n';
		}
		i += n + 1;
	}
	*o = '\0';
	if (o > s)
		fn(d->tep, s); /* unparsable lines are skipped, as perf does */
	free(s);
	return 0;
}

static int parse_blob(struct sonde_tp_decoder *d, struct cur *c)
{
	const uint8_t *at = NULL;
	const char *version, *data, *sys;
	size_t len;
	uint64_t v, n;
	uint8_t long_size;
	int r;

	if (c->len < 10 || memcmp(c->p, TD_MAGIC, 10))
		return sonde_errmsg_set(c->err, SONDE_E_FORMAT, "tracing data: bad magic");
	c->off = 10;
	if ((r = get_str(c, 16, "version", &version)) || (r = take(c, 2, "endian", &at)))
		return r;
	if (at[0] > 1 || (at[1] != 4 && at[1] != 8))
		return sonde_errmsg_set(c->err, SONDE_E_FORMAT,
					"tracing data: endian %u, long size %u", at[0], at[1]);
	c->big = d->big_endian = at[0] == 1;
	long_size = at[1];
	tep_set_file_bigendian(d->tep, c->big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(d->tep, host_big_endian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(d->tep, long_size);
	if ((r = get_num(c, 4, "page size", &v)))
		return r;
	tep_set_page_size(d->tep, (int)(v & 0x7fffffff));

	if ((r = take(c, 12, "header_page tag", &at)))
		return r;
	if (memcmp(at, "header_page", 12))
		return sonde_errmsg_set(c->err, SONDE_E_FORMAT, "tracing data: no header_page");
	if ((r = get_sized(c, 8, "header_page", &data, &len)))
		return r;
	if (len && tep_parse_header_page(d->tep, (char *)data, (unsigned long)len, long_size))
		return sonde_errmsg_set(c->err, SONDE_E_FORMAT,
					"tracing data: header_page does not parse");
	if ((r = take(c, 13, "header_event tag", &at)))
		return r;
	if (memcmp(at, "header_event", 13))
		return sonde_errmsg_set(c->err, SONDE_E_FORMAT, "tracing data: no header_event");
	if ((r = get_sized(c, 8, "header_event", &data, &len)))
		return r;

	if ((r = get_num(c, 4, "ftrace format count", &n)))
		return r;
	for (uint64_t i = 0; i < n; i++) {
		if ((r = get_sized(c, 8, "ftrace format", &data, &len)) ||
		    (r = add_event(d, data, len, "ftrace")))
			return r;
	}
	if ((r = get_num(c, 4, "system count", &n)))
		return r;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t nev;

		if ((r = get_str(c, 256, "system name", &sys)) ||
		    (r = get_num(c, 4, "event count", &nev)))
			return r;
		for (uint64_t j = 0; j < nev; j++)
			if ((r = get_sized(c, 8, "event format", &data, &len)) ||
			    (r = add_event(d, data, len, sys)))
				return r;
	}
	if ((r = get_sized(c, 4, "kallsyms", &data, &len)) ||
	    (r = parse_text(d, data, len, tep_parse_kallsyms, kallsyms_line_ok)))
		return r;
	if ((r = get_sized(c, 4, "printk formats", &data, &len)) ||
	    (r = parse_text(d, data, len, tep_parse_printk_formats, printk_line_ok)))
		return r;
	/* 0.6 and later: saved comms; a cut blob just has none. */
	if (strcmp(version, "0.6") >= 0 && c->off < c->len) {
		if ((r = get_sized(c, 8, "saved cmdlines", &data, &len)) ||
		    (r = parse_text(d, data, len, tep_parse_saved_cmdlines, cmdline_line_ok)))
			return r;
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct sonde_tp_event *x = a, *y = b;

	return (x->tep->id > y->tep->id) - (x->tep->id < y->tep->id);
}

static size_t count(struct tep_format_field **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* The wrapper table: field arrays per event, sorted by id. */
static int index_events(struct sonde_tp_decoder *d)
{
	int n = tep_get_events_count(d->tep);

	if (n <= 0)
		return 0;
	if (!(d->events = calloc((size_t)n, sizeof(*d->events))))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct tep_event *te = tep_get_event(d->tep, i);
		struct sonde_tp_event *ev = &d->events[d->nevents];

		if (!te)
			continue;
		ev->tep = te;
		ev->fields = te->format.nr_fields ? tep_event_fields(te) : NULL;
		ev->common = te->format.nr_common ? tep_event_common_fields(te) : NULL;
		if ((te->format.nr_fields && !ev->fields) || (te->format.nr_common && !ev->common))
			return -ENOMEM;
		ev->nfields = count(ev->fields);
		ev->ncommon = count(ev->common);
		d->wants_kallsyms |= prints_symbols(te->print_fmt.format);
		d->nevents++;
	}
	qsort(d->events, d->nevents, sizeof(*d->events), by_id);
	return 0;
}

int sonde_tp_decoder_new(struct sonde_tp_decoder **out, const void *blob, size_t len,
			 struct sonde_errmsg *err)
{
	struct sonde_errmsg local;
	struct sonde_tp_decoder *d = calloc(1, sizeof(*d));
	struct cur c = {blob, len, 0, false, err ? err : &local};
	int r;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	trace_seq_init(&d->seq);
	if (!(d->tep = tep_alloc())) {
		sonde_tp_decoder_free(d);
		return -ENOMEM;
	}
	r = parse_blob(d, &c);
	if (!r && (r = index_events(d)) == -ENOMEM)
		sonde_errmsg_set(c.err, r, "tracing data: out of memory");
	if (r) {
		sonde_tp_decoder_free(d);
		return r;
	}
	*out = d;
	return 0;
}

void sonde_tp_decoder_free(struct sonde_tp_decoder *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nevents; i++) {
		free(d->events[i].fields);
		free(d->events[i].common);
	}
	free(d->events);
	free(d->scratch);
	trace_seq_destroy(&d->seq);
	tep_free(d->tep);
	free(d);
}

size_t sonde_tp_decoder_nr_failed(const struct sonde_tp_decoder *d)
{
	return d->failed;
}

bool sonde_tp_decoder_wants_kallsyms(const struct sonde_tp_decoder *d)
{
	return d->wants_kallsyms;
}

int sonde_tp_decoder_add_kallsyms(struct sonde_tp_decoder *d, const char *text, size_t len)
{
	return parse_text(d, text, len, tep_parse_kallsyms, kallsyms_line_ok);
}

int sonde_tp_decoder_open_capture(struct sonde_tp_decoder **out, struct sonde_pd_reader *r,
				  struct sonde_errmsg *err)
{
	const struct sonde_pd_features *f = sonde_pd_reader_features(r);
	const void *ks;
	uint64_t kslen;
	int ret;

	*out = NULL;
	if (!f->tracing_data || !f->tracing_data_size)
		return -ENOENT;
	if ((ret = sonde_tp_decoder_new(out, f->tracing_data, (size_t)f->tracing_data_size, err)))
		return ret;
	if (sonde_tp_decoder_wants_kallsyms(*out) &&
	    sonde_pd_reader_feature(r, SONDE_PD_FEAT_SONDE_BASE + SONDE_PD_SFEAT_KALLSYMS, &ks,
				    &kslen) == 0 &&
	    (ret = sonde_tp_decoder_add_kallsyms(*out, ks, (size_t)kslen))) {
		sonde_tp_decoder_free(*out);
		*out = NULL;
		return ret;
	}
	return 0;
}

/* ---- events and fields ------------------------------------------------- */

const struct sonde_tp_event *sonde_tp_find_id(const struct sonde_tp_decoder *d, uint32_t id)
{
	size_t lo = 0, hi = d->nevents;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t m = (uint32_t)d->events[mid].tep->id;

		if (m == id)
			return &d->events[mid];
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* common_type is the first u16 of every payload (the header_page/format convention). */
const struct sonde_tp_event *sonde_tp_find_raw(const struct sonde_tp_decoder *d, const void *raw,
					       size_t size)
{
	if (!raw || size < 2)
		return NULL;
	return sonde_tp_find_id(d, (uint32_t)tep_read_number(d->tep, raw, 2));
}

const struct sonde_tp_event *sonde_tp_find_name(const struct sonde_tp_decoder *d, const char *sys,
						const char *name)
{
	for (size_t i = 0; i < d->nevents; i++)
		if (!strcmp(d->events[i].tep->name, name) &&
		    (!sys || !strcmp(d->events[i].tep->system, sys)))
			return &d->events[i];
	return NULL;
}

const char *sonde_tp_event_system(const struct sonde_tp_event *ev)
{
	return ev->tep->system;
}

const char *sonde_tp_event_name(const struct sonde_tp_event *ev)
{
	return ev->tep->name;
}

uint32_t sonde_tp_event_id(const struct sonde_tp_event *ev)
{
	return (uint32_t)ev->tep->id;
}

size_t sonde_tp_event_nr_fields(const struct sonde_tp_event *ev)
{
	return ev->nfields;
}

static struct tep_format_field *field_at(const struct sonde_tp_event *ev, size_t i)
{
	if (i < ev->nfields)
		return ev->fields[i];
	if (i - ev->nfields < ev->ncommon)
		return ev->common[i - ev->nfields];
	return NULL;
}

const char *sonde_tp_field_name(const struct sonde_tp_event *ev, size_t i)
{
	struct tep_format_field *f = field_at(ev, i);

	return f ? f->name : NULL;
}

int sonde_tp_field_index(const struct sonde_tp_event *ev, const char *name)
{
	for (size_t i = 0; i < ev->nfields + ev->ncommon; i++)
		if (!strcmp(field_at(ev, i)->name, name))
			return (int)i;
	return -1;
}

static uint64_t sign_extend(uint64_t v, unsigned bytes)
{
	unsigned shift = 64 - 8 * bytes;

	return bytes && bytes < 8 ? (uint64_t)((int64_t)(v << shift) >> shift) : v;
}

int sonde_tp_field(const struct sonde_tp_decoder *d, const struct sonde_tp_event *ev, size_t i,
		   const void *raw, size_t size, struct sonde_tp_value *v)
{
	const struct tep_format_field *f = field_at(ev, i);
	const uint8_t *p = raw;
	size_t off, len;

	if (!f)
		return -ENOENT;
	memset(v, 0, sizeof(*v));
	v->name = f->name;
	if (f->offset < 0 || f->size < 0 || (size_t)f->offset + (size_t)f->size > size)
		return SONDE_E_TRUNCATED;
	off = (size_t)f->offset;
	len = (size_t)f->size;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		/* __data_loc: u32 with the offset in the low half, the length in the high */
		uint32_t loc = (uint32_t)tep_read_number(d->tep, p + off, 4);

		len = loc >> 16;
		off = (loc & 0xffff) + ((f->flags & TEP_FIELD_IS_RELATIVE) ? off + 4 : 0);
		if (off > size || len > size - off)
			return SONDE_E_TRUNCATED;
	}
	if (f->flags & TEP_FIELD_IS_STRING) {
		const char *s = (const char *)p + off;
		const char *nul = memchr(s, '\0', len);

		v->kind = SONDE_TP_STR;
		v->str = s;
		v->len = nul ? (size_t)(nul - s) : len;
		return 0;
	}
	if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
		unsigned es = f->elementsize;

		if (!es || es > 8 || (es & (es - 1)))
			es = 1;
		v->kind = SONDE_TP_ARRAY;
		v->data = p + off;
		v->elem_size = es;
		v->nelem = (uint32_t)(len / es);
		v->elem_signed = f->flags & TEP_FIELD_IS_SIGNED;
		return 0;
	}
	if (len == 0 || len > 8 || (len & (len - 1))) {
		/* an odd-sized scalar: show its bytes */
		v->kind = SONDE_TP_ARRAY;
		v->data = p + off;
		v->elem_size = 1;
		v->nelem = (uint32_t)len;
		return 0;
	}
	v->u = tep_read_number(d->tep, p + off, (int)len);
	v->pointer = f->flags & TEP_FIELD_IS_POINTER;
	if ((f->flags & TEP_FIELD_IS_SIGNED) && !v->pointer) {
		v->kind = SONDE_TP_INT;
		v->i = (int64_t)sign_extend(v->u, (unsigned)len);
		v->u = (uint64_t)v->i;
	} else {
		v->kind = SONDE_TP_UINT;
		v->i = (int64_t)v->u;
	}
	return 0;
}

uint64_t sonde_tp_array_elem(const struct sonde_tp_decoder *d, const struct sonde_tp_value *v,
			     uint32_t k)
{
	uint64_t x;

	if (k >= v->nelem)
		return 0;
	x = tep_read_number(d->tep, v->data + (size_t)k * v->elem_size, (int)v->elem_size);
	return v->elem_signed ? sign_extend(x, v->elem_size) : x;
}

int sonde_tp_field_int(const struct sonde_tp_decoder *d, const struct sonde_tp_event *ev,
		       const char *name, const void *raw, size_t size, int64_t *out)
{
	struct sonde_tp_value v;
	int i = sonde_tp_field_index(ev, name), r;

	if (i < 0)
		return -ENOENT;
	if ((r = sonde_tp_field(d, ev, (size_t)i, raw, size, &v)))
		return r;
	if (v.kind != SONDE_TP_INT && v.kind != SONDE_TP_UINT)
		return -EINVAL;
	*out = v.i;
	return 0;
}

/* ---- print formats ----------------------------------------------------- */

const char *sonde_tp_print(struct sonde_tp_decoder *d, const void *raw, size_t size, int cpu)
{
	struct tep_record rec;

	trace_seq_reset(&d->seq);
	if (!d->scratch && !(d->scratch = calloc(1, SCRATCH_SIZE)))
		return "[out of memory]";
	if (size > MAX_PAYLOAD)
		size = MAX_PAYLOAD;
	if (size < 2 || !sonde_tp_find_raw(d, raw, size))
		return "[unknown event]";
	memcpy(d->scratch, raw, size);
	memset(&rec, 0, sizeof(rec));
	rec.data = d->scratch;
	rec.size = (int)size;
	rec.cpu = cpu;
	tep_print_event(d->tep, &d->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&d->seq);
	memset(d->scratch, 0, size);
	return d->seq.buffer ? d->seq.buffer : "";
}
