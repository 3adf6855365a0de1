// SPDX-License-Identifier: MIT
/*
 * A bounded cursor over a trace.dat image (see trace_dat_check.h).
 *
 * Version 6: the initial header (magic, version, endianness, long size,
 * page size), then header_page, header_event, the ftrace formats, the
 * event formats by system, kallsyms, printk formats, the CPU count, the
 * options (id, size, data; id 0 ends them) and "flyrecord" with one
 * {offset, size} pair per CPU, or "latency".  Version 7: the initial
 * header, the compression name and version, the offset of the first
 * options section, then sections ({id u16, flags u16, string u32, size
 * u64}) reached from option 16 (BUFFER), 17 (the next options section)
 * and the per-CPU data offsets.  Each count is bounded by the bytes left,
 * each offset by the file size; where the format is open (format text
 * contents, compressed payloads) the libraries are left to judge.
 */
#include "trace_dat_check.h"

#include <sonde/tracepoint.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct cur {
	const uint8_t *d;
	size_t size, off;
	bool big; /* file byte order */
	char *err;
	size_t len;
	bool failed;
};

__attribute__((format(printf, 2, 3))) static int fail(struct cur *c, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (c->failed)
		return -1;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->len, "offset 0x%zx: %s", c->off, what);
	c->failed = true;
	return -1;
}

static int need(struct cur *c, uint64_t n, const char *what)
{
	if (n > c->size - c->off)
		return fail(c, "%s: %llu bytes, the file has %zu more", what, (unsigned long long)n,
			    c->size - c->off);
	return 0;
}

static uint64_t num(struct cur *c, int bytes, const char *what)
{
	uint64_t v = 0;

	if (need(c, (uint64_t)bytes, what) < 0)
		return 0;
	for (int i = 0; i < bytes; i++) {
		int k = c->big ? i : bytes - 1 - i;

		v = v << 8 | c->d[c->off + (size_t)k];
	}
	c->off += (size_t)bytes;
	return v;
}

static int skip(struct cur *c, uint64_t n, const char *what)
{
	if (need(c, n, what) < 0)
		return -1;
	c->off += (size_t)n;
	return 0;
}

/* A NUL-terminated string.  Return: it, or NULL. */
static const char *str(struct cur *c, const char *what)
{
	const uint8_t *nul;
	const char *s;

	if (c->failed)
		return NULL;
	nul = memchr(c->d + c->off, 0, c->size - c->off);
	if (!nul) {
		fail(c, "%s: no end", what);
		return NULL;
	}
	s = (const char *)c->d + c->off;
	c->off = (size_t)(nul - c->d) + 1;
	return s;
}

static int tag(struct cur *c, const char *want)
{
	const char *s = str(c, want);

	if (s && strcmp(s, want)) {
		c->off -= strlen(s) + 1;
		return fail(c, "'%s' expected", want);
	}
	return s ? 0 : -1;
}

/* @n format texts of an 8-byte size each, with the kernel's shape (libtracecmd
 * hands them to libtraceevent, which trusts it: sonde_tp_format_safe()). */
static int blobs(struct cur *c, uint64_t n, const char *what)
{
	for (uint64_t i = 0; i < n && !c->failed; i++) {
		uint64_t len = num(c, 8, what);
		size_t at = c->off;

		if (skip(c, len, what) == 0 &&
		    !sonde_tp_format_safe((const char *)c->d + at, (size_t)len)) {
			c->off = at;
			return fail(c, "%s: not a format text the kernel writes", what);
		}
	}
	return c->failed ? -1 : 0;
}

static int v6_headers(struct cur *c)
{
	uint64_t n;

	tag(c, "header_page");
	skip(c, num(c, 8, "header_page size"), "header_page");
	tag(c, "header_event");
	skip(c, num(c, 8, "header_event size"), "header_event");
	n = num(c, 4, "ftrace format count");
	if (!c->failed && n > (c->size - c->off) / 8)
		return fail(c, "%llu ftrace formats can't fit", (unsigned long long)n);
	blobs(c, n, "ftrace format");
	n = num(c, 4, "event system count");
	if (!c->failed && n > c->size - c->off)
		return fail(c, "%llu event systems can't fit", (unsigned long long)n);
	for (uint64_t i = 0; i < n && !c->failed; i++) {
		uint64_t k;

		str(c, "event system name");
		k = num(c, 4, "event format count");
		if (!c->failed && k > (c->size - c->off) / 8)
			return fail(c, "%llu event formats can't fit", (unsigned long long)k);
		blobs(c, k, "event format");
	}
	skip(c, num(c, 4, "kallsyms size"), "kallsyms");
	skip(c, num(c, 4, "printk formats size"), "printk formats");
	skip(c, num(c, 8, "saved cmdlines size"), "saved cmdlines");
	return c->failed ? -1 : 0;
}

/* Options up to id 0.  Return: 0 or -1. */
static int v6_options(struct cur *c)
{
	for (int i = 0; i < 4096 && !c->failed; i++) {
		uint64_t id = num(c, 2, "option id");

		if (c->failed || id == 0)
			return c->failed ? -1 : 0;
		skip(c, num(c, 4, "option size"), "option");
	}
	return fail(c, "more than 4096 options");
}

static int v6(struct cur *c)
{
	uint64_t cpus;
	const char *what;

	if (v6_headers(c) < 0)
		return -1;
	cpus = num(c, 4, "CPU count");
	if (!c->failed && cpus > 8192)
		return fail(c, "%llu CPUs", (unsigned long long)cpus);
	what = str(c, "data section name");
	while (what && !strcmp(what, "options  ")) {
		if (v6_options(c) < 0)
			return -1;
		what = str(c, "data section name");
	}
	if (!what)
		return -1;
	if (!strcmp(what, "latency"))
		return 0;
	if (strcmp(what, "flyrecord"))
		return fail(c, "'%.20s': neither flyrecord nor latency", what);
	for (uint64_t i = 0; i < cpus && !c->failed; i++) {
		uint64_t off = num(c, 8, "CPU data offset"), sz = num(c, 8, "CPU data size");

		if (!c->failed && (off > c->size || sz > c->size - off)) {
			c->off -= 16;
			return fail(c,
				    "CPU %llu's data (offset %llu, %llu bytes) is past the end "
				    "of the file (%zu bytes)",
				    (unsigned long long)i, (unsigned long long)off,
				    (unsigned long long)sz, c->size);
		}
	}
	return c->failed ? -1 : 0;
}

/* A section header at @at: {id u16, flags u16, string u32, size u64}, its body in the file. */
static int section(struct cur *c, uint64_t at, uint64_t want_id, uint64_t *flags, uint64_t *size)
{
	uint64_t id;

	if (at > c->size || c->size - at < 16)
		return fail(c, "a section at %llu is outside the file", (unsigned long long)at);
	c->off = (size_t)at;
	id = num(c, 2, "section id");
	*flags = num(c, 2, "section flags");
	num(c, 4, "section string");
	*size = num(c, 8, "section size");
	if (id != want_id) {
		c->off = (size_t)at;
		return fail(c, "section id %llu where %llu was expected", (unsigned long long)id,
			    (unsigned long long)want_id);
	}
	return need(c, *size, "section");
}

/* The options of one section; @next receives the next section's offset (option 0). */
static int v7_options(struct cur *c, size_t end, uint64_t *next)
{
	*next = 0;
	while (c->off < end && !c->failed) {
		uint64_t id = num(c, 2, "option id"), sz = num(c, 4, "option size");
		size_t body = c->off;

		if (c->failed)
			return -1;
		if (c->off > end || sz > end - c->off)
			return fail(c, "option %llu: %llu bytes past its section",
				    (unsigned long long)id, (unsigned long long)sz);
		if (sz >= 8 && (id == 0 || (id >= 16 && id <= 21))) {
			uint64_t at = num(c, 8, "section offset"), flags, size;

			if (id == 0) {
				*next = at;
				return 0;
			}
			/* The formats, kallsyms, printk and comm sections it points to. */
			if (section(c, at, id, &flags, &size) < 0)
				return -1;
		}
		if (id == 0)
			return 0;
		c->off = body + (size_t)sz;
	}
	return c->failed ? -1 : 0;
}

static int v7(struct cur *c)
{
	uint64_t at;

	str(c, "compression name");
	str(c, "compression version");
	at = num(c, 8, "first options offset");
	/* Follow the chain of option sections. */
	for (int hops = 0; hops < 64 && at && !c->failed; hops++) {
		uint64_t flags, size;

		if (section(c, at, 0, &flags, &size) < 0)
			return -1;
		if (flags & 1)
			return 0; /* compressed: the library's to judge */
		if (v7_options(c, c->off + (size_t)size, &at) < 0)
			return -1;
	}
	return c->failed ? -1 : 0;
}

int trace_dat_check(const uint8_t *data, size_t size, uint64_t *good, char *err, size_t len)
{
	static const uint8_t magic[] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
	struct cur c = {.d = data, .size = size, .err = err, .len = len};
	const char *version;
	uint64_t endian, lsize, page;
	int r;

	*good = 0;
	if (size < sizeof(magic) || memcmp(data, magic, sizeof(magic)))
		return fail(&c, "not a trace.dat (no trace-cmd magic)");
	c.off = sizeof(magic);
	version = str(&c, "version");
	endian = num(&c, 1, "endianness");
	c.big = endian == 1;
	lsize = num(&c, 1, "long size");
	page = num(&c, 4, "page size");
	if (c.failed)
		return -1;
	if (endian > 1 || (lsize != 4 && lsize != 8)) {
		c.off -= 6;
		return fail(&c, "endianness %llu, long size %llu", (unsigned long long)endian,
			    (unsigned long long)lsize);
	}
	if (page < 512 || page > (1u << 20) || (page & (page - 1))) {
		c.off -= 4;
		return fail(&c, "page size %llu", (unsigned long long)page);
	}
	if (!strcmp(version, "6"))
		r = v6(&c);
	else if (!strcmp(version, "7"))
		r = v7(&c);
	else
		r = fail(&c, "file version '%.8s' (6 and 7 are known)", version);
	*good = c.off;
	return r;
}
