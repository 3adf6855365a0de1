// SPDX-License-Identifier: MIT
/*
 * The tracing data blob of perf.data's HEADER_TRACING_DATA feature (and of
 * the start of a trace-cmd trace.dat v6 file): everything a decoder needs
 * to turn a tracepoint's raw bytes into named fields, copied from tracefs
 * on the target.
 *
 * Layout, numbers in the writer's byte order (the endian byte says which):
 *
 *	"\027\010\104tracing"   10 bytes of magic
 *	"0.6\0"                 version; >= 0.6 means saved cmdlines follow
 *	u8  endian              0 little, 1 big
 *	u8  sizeof(long)        user space long of the writer
 *	u32 page size
 *	"header_page\0"  u64 size, events/header_page
 *	"header_event\0" u64 size, events/header_event
 *	u32 nr ftrace formats, each: u64 size, events/ftrace/EV/format
 *	u32 nr systems, each: "sys\0", u32 nr events, each: u64 size, format
 *	u32 kallsyms size (always 0: sonde keeps kallsyms in its own feature)
 *	u32 size, printk_formats
 *	u64 size, saved_cmdlines
 *
 * There is no padding anywhere and none at the end: perf's file-mode reader
 * (trace_report() from process_tracing_data()) parses the blob as a stream
 * and never compares what it consumed with the section size; its pipe-mode
 * reader (PERF_RECORD_HEADER_TRACING_DATA) does, after rounding up to 8,
 * so whoever puts the blob in a record pads it there.
 *
 * Systems come in the order the caller first names them, events in that
 * order within their system, each once; perf itself uses readdir order,
 * which no reader relies on (formats are found again by their ID).  A
 * requested tracepoint without a format file fails the whole build: a blob
 * without it would make perf print the event undecoded.  Optional files
 * (printk_formats, saved_cmdlines) are written with size 0 when tracefs
 * lacks them, as perf does.  header_event has been the same text since
 * 2.6.3x and perf only skips it; if a kernel ever drops the file, the
 * known text goes in so that older readers still find the tag they expect.
 *
 * Tracefs files report size 0 to stat, so each is read whole into memory
 * before its size is written.  The blob is built in one growing buffer with
 * a sticky error, so the writers below don't check every append.
 */
#include <sonde/tracing_data.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>

#define TD_MAGIC "\027\010\104tracing"
#define TD_VERSION "0.6"

/* What ring_buffer_print_entry_header() has printed since 2.6.3x. */
static const char header_event_text[] = "# compressed entry header\n"
					"\ttype_len    :    5 bits\n"
					"\ttime_delta  :   27 bits\n"
					"\tarray       :   32 bits\n"
					"\n"
					"\tpadding     : type == 29\n"
					"\ttime_extend : type == 30\n"
					"\ttime_stamp : type == 31\n"
					"\tdata max type_len  == 28\n";

struct td_buf {
	char *data;
	size_t len, cap;
	int err; /* sticky: first failure, later appends do nothing */
};

static void td_put(struct td_buf *b, const void *p, size_t n)
{
	if (b->err || !n)
		return;
	if (n > SIZE_MAX - b->len) {
		b->err = -EOVERFLOW;
		return;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		char *d;

		while (cap < b->len + n)
			cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->err = -ENOMEM;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* Numbers go in host order: the endian byte of the blob says which. */
static void td_u32(struct td_buf *b, uint32_t v)
{
	td_put(b, &v, sizeof(v));
}

static void td_u64(struct td_buf *b, uint64_t v)
{
	td_put(b, &v, sizeof(v));
}

static void td_str(struct td_buf *b, const char *s)
{
	td_put(b, s, strlen(s) + 1);
}

static bool host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

/* A name that is one plain path component. */
static bool name_ok(const char *s)
{
	return s && s[0] && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/');
}

/*
 * Appends file @path with a size field of @size_bytes (4 or 8) before it.
 * A missing file is size 0 when @optional, an error otherwise.
 */
static int td_file(struct td_buf *b, const char *path, unsigned int size_bytes, bool optional,
		   struct sonde_errmsg *err)
{
	char *text;
	size_t len;
	int ret = sonde_read_all(path, &text, &len);

	if (ret == -ENOENT && optional) {
		text = NULL;
		len = 0;
	} else if (ret < 0) {
		return sonde_errmsg_set(err, ret, "tracing data: can't read %s: %s", path,
					sonde_strerror(ret));
	}
	if (size_bytes == 4) {
		if (len > UINT32_MAX) {
			free(text);
			return sonde_errmsg_set(
			    err, SONDE_E_LIMIT,
			    "tracing data: %s: %zu bytes do not fit its 32-bit size", path, len);
		}
		td_u32(b, (uint32_t)len);
	} else {
		td_u64(b, len);
	}
	td_put(b, text, len);
	free(text);
	return 0;
}

/* td_file() of tracefs file @rel. */
static int td_tracefs_file(struct td_buf *b, const char *tracefs, const char *rel,
			   unsigned int size_bytes, bool optional, struct sonde_errmsg *err)
{
	char path[4096];
	int ret = sonde_path(path, sizeof(path), "%s/%s", tracefs, rel);

	if (ret < 0)
		return sonde_errmsg_set(err, ret, "tracing data: path of %s too long", rel);
	return td_file(b, path, size_bytes, optional, err);
}

/* Appends one event's format file, the size before it; a missing one is an error. */
static int td_format(struct td_buf *b, const char *tracefs, const struct sonde_tp_name *tp,
		     struct sonde_errmsg *err)
{
	char path[4096];
	char *text;
	size_t len;
	int ret;

	ret = sonde_path(path, sizeof(path), "%s/events/%s/%s/format", tracefs, tp->system,
			 tp->event);
	if (ret < 0)
		return sonde_errmsg_set(err, ret, "tracepoint %s:%s: path too long", tp->system,
					tp->event);
	ret = sonde_read_all(path, &text, &len);
	if (ret == -ENOENT || ret == -ENOTDIR)
		return sonde_errmsg_set(err, SONDE_E_UNKNOWN_EVENT,
					"tracepoint %s:%s: no format file %s", tp->system,
					tp->event, path);
	if (ret < 0)
		return sonde_errmsg_set(err, ret, "tracepoint %s:%s: can't read %s: %s", tp->system,
					tp->event, path, sonde_strerror(ret));
	td_u64(b, len);
	td_put(b, text, len);
	free(text);
	return 0;
}

/*
 * The requested tracepoints and, computed once, which of them are the
 * first mention of their event and of their system (quadratic in the
 * number of tracepoints, with a small constant: thousands are fine).
 */
struct td_list {
	const struct sonde_tp_name *tps;
	size_t n;
	bool *first_event, *first_system;
};

static int td_list_init(struct td_list *l, const struct sonde_tp_name *tps, size_t n)
{
	l->tps = tps;
	l->n = n;
	l->first_event = calloc(n ? 2 * n : 1, sizeof(bool));
	if (!l->first_event)
		return -ENOMEM;
	l->first_system = l->first_event + n;
	for (size_t i = 0; i < n; i++) {
		l->first_event[i] = l->first_system[i] = true;
		for (size_t j = 0; j < i && l->first_event[i]; j++) {
			if (strcmp(tps[j].system, tps[i].system))
				continue;
			l->first_system[i] = false;
			if (!strcmp(tps[j].event, tps[i].event))
				l->first_event[i] = false;
		}
	}
	return 0;
}

/* Appends the formats of system @sys's events: u32 count, then each once. */
static int td_system(struct td_buf *b, const char *tracefs, const struct td_list *l,
		     const char *sys, struct sonde_errmsg *err)
{
	uint32_t count = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->first_event[i] && !strcmp(l->tps[i].system, sys))
			count++;
	td_u32(b, count);
	for (size_t i = 0; i < l->n; i++) {
		int ret;

		if (!l->first_event[i] || strcmp(l->tps[i].system, sys))
			continue;
		ret = td_format(b, tracefs, &l->tps[i], err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int td_header_files(struct td_buf *b, const char *tracefs, struct sonde_errmsg *err)
{
	char path[4096];
	char *text;
	size_t len;
	int ret;

	td_str(b, "header_page");
	ret = td_tracefs_file(b, tracefs, "events/header_page", 8, false, err);
	if (ret < 0)
		return ret;

	ret = sonde_path(path, sizeof(path), "%s/events/header_event", tracefs);
	if (ret < 0)
		return sonde_errmsg_set(err, ret, "tracing data: tracefs path too long");
	td_str(b, "header_event");
	ret = sonde_read_all(path, &text, &len);
	if (ret == -ENOENT) {
		td_u64(b, sizeof(header_event_text) - 1);
		td_put(b, header_event_text, sizeof(header_event_text) - 1);
		return 0;
	}
	if (ret < 0)
		return sonde_errmsg_set(err, ret, "tracing data: can't read %s: %s", path,
					sonde_strerror(ret));
	td_u64(b, len);
	td_put(b, text, len);
	free(text);
	return 0;
}

static int td_build(struct td_buf *b, const char *tracefs, const struct td_list *l,
		    struct sonde_errmsg *err)
{
	uint8_t byte;
	uint32_t nsys = 0;
	int ret;

	td_put(b, TD_MAGIC, sizeof(TD_MAGIC) - 1);
	td_str(b, TD_VERSION);
	byte = host_big_endian();
	td_put(b, &byte, 1);
	byte = sizeof(long);
	td_put(b, &byte, 1);
	td_u32(b, (uint32_t)sysconf(_SC_PAGESIZE));

	ret = td_header_files(b, tracefs, err);
	if (ret < 0)
		return ret;

	/* ftrace's own events (function, print, ...) have a section of their own. */
	ret = td_system(b, tracefs, l, "ftrace", err);
	if (ret < 0)
		return ret;

	for (size_t i = 0; i < l->n; i++)
		if (l->first_system[i] && strcmp(l->tps[i].system, "ftrace"))
			nsys++;
	td_u32(b, nsys);
	for (size_t i = 0; i < l->n; i++) {
		if (!l->first_system[i] || !strcmp(l->tps[i].system, "ftrace"))
			continue;
		td_str(b, l->tps[i].system);
		ret = td_system(b, tracefs, l, l->tps[i].system, err);
		if (ret < 0)
			return ret;
	}

	td_u32(b, 0); /* kallsyms */

	ret = td_tracefs_file(b, tracefs, "printk_formats", 4, true, err);
	if (ret < 0)
		return ret;
	return td_tracefs_file(b, tracefs, "saved_cmdlines", 8, true, err);
}

int sonde_tracing_data_build(const char *tracefs, const struct sonde_tp_name *tps, size_t n,
			     char **blob, size_t *len, struct sonde_errmsg *err)
{
	struct td_buf b = {0};
	struct td_list l;
	int ret;

	*blob = NULL;
	*len = 0;
	if (!tracefs || (n && !tps))
		return sonde_errmsg_set(err, -EINVAL, "tracing data: no tracefs or tracepoints");
	for (size_t i = 0; i < n; i++)
		if (!name_ok(tps[i].system) || !name_ok(tps[i].event))
			return sonde_errmsg_set(err, -EINVAL,
						"tracing data: bad tracepoint name '%s:%s'",
						tps[i].system ? tps[i].system : "(null)",
						tps[i].event ? tps[i].event : "(null)");

	ret = td_list_init(&l, tps, n);
	if (ret < 0)
		return sonde_errmsg_set(err, ret, "tracing data: out of memory");
	ret = td_build(&b, tracefs, &l, err);
	free(l.first_event);
	if (ret == 0 && b.err)
		ret = sonde_errmsg_set(err, b.err, "tracing data: %s", sonde_strerror(b.err));
	if (ret < 0) {
		free(b.data);
		return ret;
	}
	*blob = b.data;
	*len = b.len;
	return 0;
}
