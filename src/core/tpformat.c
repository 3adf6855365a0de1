// SPDX-License-Identifier: MIT
/*
 * Whether a tracepoint format text (events/SYS/EVENT/format, as captures
 * and trace.dat files carry it) has the shape the kernel gives it, before
 * it is handed to libtraceevent, which trusts that shape: 1.7 dereferences
 * NULL on a flags or symbolic print of a field the event lacks, and
 * crashes on a field list with bytes a kernel never prints.  One flipped
 * byte of a capture was enough (test_trace_dat.py).  libc only: the
 * trace.dat checks of the CLI and the decode layer both use it.
 */
#include <sonde/tracepoint.h>

#include <string.h>

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether the format's field list (lines "field:TYPE NAME[N];") names @name. */
static bool has_field(const char *text, const char *end, const char *name, size_t n)
{
	for (const char *p = text; (p = memmem(p, (size_t)(end - p), "field:", 6)); p += 6) {
		const char *semi = memchr(p, ';', (size_t)(end - p)), *q;

		if (!semi)
			return false;
		q = memchr(p, '[', (size_t)(semi - p));
		if (!q)
			q = semi;
		/* the name: the identifier just before '[' or ';' */
		const char *e = q;

		while (e > p && !ident_char(e[-1]))
			e--;
		const char *b = e;

		while (b > p && ident_char(b[-1]))
			b--;
		if ((size_t)(e - b) == n && !memcmp(b, name, n))
			return true;
	}
	return false;
}

/*
 * Every REC->NAME of the print format is a field of the event.
 * libtraceevent 1.7 dereferences NULL on a flags or symbolic print of an
 * unknown field (one flipped byte of a capture's format text was enough:
 * test_trace_dat.py), so such an event is never handed over.
 */
static bool print_fields_known(const char *text, size_t len)
{
	const char *end = text + len, *fmt = memmem(text, len, "print fmt:", 10);

	for (const char *p = fmt; p && (p = memmem(p, (size_t)(end - p), "REC->", 5)); p += 5) {
		const char *b = p + 5, *e = b;

		while (e < end && ident_char(*e))
			e++;
		if (e == b || !has_field(text, fmt, b, (size_t)(e - b)))
			return false;
	}
	return true;
}

/*
 * The field list has the kernel's shape: printable ASCII and balanced,
 * unnested brackets (libtraceevent 1.7 crashes on "char prev_comm[\xce6]").
 */
static bool fields_well_formed(const char *text, size_t len)
{
	const char *fmt = memmem(text, len, "print fmt:", 10), *end = fmt ? fmt : text + len;
	bool in_brackets = false;

	for (const char *p = text; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c < 0x20 && c != '\t' && c != '\n') || c > 0x7e)
			return false;
		if (c == '[') {
			if (in_brackets)
				return false;
			in_brackets = true;
		} else if (c == ']') {
			if (!in_brackets)
				return false;
			in_brackets = false;
		}
	}
	return !in_brackets;
}

bool sonde_tp_format_safe(const char *text, size_t len)
{
	return fields_well_formed(text, len) && print_fields_known(text, len);
}
