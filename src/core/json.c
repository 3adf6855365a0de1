// SPDX-License-Identifier: MIT
/*
 * The JSON writer (see include/sonde/json.h for the contract).
 *
 * Every value goes through prefix(), which writes the separator the
 * position needs: nothing after a key or as a level's first value, else a
 * comma; so producers never count.  Bytes collect in a small buffer that
 * goes to the sink when it fills and whenever a top-level value is
 * complete (and around raw bytes), so the sink sees few large writes and
 * the error a producer checks at the end covers everything it wrote.
 * Strings are copied in runs of bytes that need no escape.  Integers and
 * fixed-point decimals are formatted without printf.
 */
#include <sonde/json.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Hands the buffered bytes to the sink. */
static void flush(struct sonde_json *j)
{
	int r;

	if (!j->err && j->blen && (r = j->write(j->ctx, j->buf, j->blen)) < 0)
		j->err = r;
	j->blen = 0;
}

/* Buffers @len bytes; what does not fit the buffer goes to the sink directly. */
static void put(struct sonde_json *j, const void *buf, size_t len)
{
	int r;

	if (j->err || !len)
		return;
	if (j->blen + len > sizeof(j->buf)) {
		flush(j);
		if (len > sizeof(j->buf)) {
			if (!j->err && (r = j->write(j->ctx, buf, len)) < 0)
				j->err = r;
			return;
		}
	}
	memcpy(j->buf + j->blen, buf, len);
	j->blen += len;
}

/* One byte: the commas, quotes and brackets, most of the calls. */
static void put1(struct sonde_json *j, char c)
{
	if (j->blen < sizeof(j->buf))
		j->buf[j->blen++] = c;
	else
		put(j, &c, 1);
}

/*
 * Unlocked: one thread owns an output stream while it writes JSON to it,
 * and the buffer already makes the writes few.
 */
static int file_write(void *ctx, const void *buf, size_t len)
{
	return fwrite_unlocked(buf, 1, len, ctx) == len ? 0 : -EIO;
}

void sonde_json_init(struct sonde_json *j, sonde_json_write_fn write, void *ctx, unsigned flags)
{
	j->write = write;
	j->ctx = ctx;
	j->err = 0;
	j->flags = flags;
	j->depth = 0;
	j->after_key = false;
	j->blen = 0;
}

void sonde_json_init_file(struct sonde_json *j, FILE *f, unsigned flags)
{
	sonde_json_init(j, file_write, f, flags);
}

int sonde_json_error(const struct sonde_json *j)
{
	return j->err;
}

static bool bit(const uint8_t *set, unsigned i)
{
	return set[i / 8] & (1u << (i % 8));
}

static void set_bit(uint8_t *set, unsigned i, bool v)
{
	if (v)
		set[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		set[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

/* The separator before a value (or a key): none first, after a key, or at the top. */
static void prefix(struct sonde_json *j)
{
	unsigned d = j->depth;
	bool lines;

	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!d)
		return;
	lines = d == 1 && (j->flags & SONDE_JSON_LIST_LINES) && !bit(j->is_obj, 0);
	if (bit(j->nonempty, d - 1)) {
		put1(j, ',');
		if ((j->flags & SONDE_JSON_SPACED) && !lines)
			put1(j, ' ');
	}
	set_bit(j->nonempty, d - 1, true);
	if (lines)
		put(j, "\n  ", 3);
}

static void begin(struct sonde_json *j, bool obj)
{
	if (j->err)
		return;
	prefix(j);
	if (j->depth == SONDE_JSON_MAX_DEPTH) {
		j->err = -E2BIG;
		return;
	}
	set_bit(j->nonempty, j->depth, false);
	set_bit(j->is_obj, j->depth, obj);
	j->depth++;
	put1(j, obj ? '{' : '[');
}

static void end(struct sonde_json *j, bool obj)
{
	if (j->err)
		return;
	if (!j->depth || bit(j->is_obj, j->depth - 1) != obj || j->after_key) {
		j->err = -EINVAL;
		return;
	}
	j->depth--;
	if (!j->depth && !obj && (j->flags & SONDE_JSON_LIST_LINES))
		put(j, "\n", 1);
	put1(j, obj ? '}' : ']');
	if (!j->depth)
		flush(j);
}

void sonde_json_obj_begin(struct sonde_json *j)
{
	begin(j, true);
}

void sonde_json_obj_end(struct sonde_json *j)
{
	end(j, true);
}

void sonde_json_arr_begin(struct sonde_json *j)
{
	begin(j, false);
}

void sonde_json_arr_end(struct sonde_json *j)
{
	end(j, false);
}

/*
 * The length of the valid UTF-8 sequence at @p (at most @n bytes), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629).
 */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	/* The second byte's range is narrower right after these leaders. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/* What a byte needs in a string: nothing, a backslash, \u00XX (HTML: also <>&), a UTF-8 check. */
enum { PLAIN, BACKSLASH, HEX, HTML_HEX, HIGH };

static const uint8_t byte_class[256] = {
    [0x00 ... 0x1f] = HEX, ['"'] = BACKSLASH, ['\\'] = BACKSLASH,     ['<'] = HTML_HEX,
    ['>'] = HTML_HEX,	   ['&'] = HTML_HEX,  [0x80 ... 0xff] = HIGH,
};

static void escaped(struct sonde_json *j, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0; /* start of the bytes not yet written */
	bool html = j->flags & SONDE_JSON_HTML;

	put1(j, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		char esc[8];
		size_t elen = 0, ulen = 1;

		switch (byte_class[c]) {
		case PLAIN:
			i++;
			continue;
		case BACKSLASH:
			esc[0] = '\\', esc[1] = (char)c, elen = 2;
			break;
		case HTML_HEX:
			if (!html)
				break;
			/* fall through */
		case HEX:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4], esc[5] = hex[c & 15], elen = 6;
			break;
		case HIGH:
			if (!(ulen = utf8_len(p + i, n - i)))
				memcpy(esc, "\\ufffd", 6), elen = 6, ulen = 1;
			break;
		}
		if (elen) {
			put(j, s + run, i - run);
			put(j, esc, elen);
			run = i + 1;
		}
		i += ulen;
	}
	put(j, s + run, n - run);
	put1(j, '"');
}

void sonde_json_key(struct sonde_json *j, const char *k)
{
	if (j->err)
		return;
	if (!j->depth || !bit(j->is_obj, j->depth - 1) || j->after_key) {
		j->err = -EINVAL;
		return;
	}
	prefix(j);
	escaped(j, k, strlen(k));
	if (!(j->flags & SONDE_JSON_SPACED))
		put1(j, ':');
	else if (j->flags & SONDE_JSON_WIDE_COLON)
		put(j, " : ", 3);
	else
		put(j, ": ", 2);
	j->after_key = true;
}

/* A scalar: its separator, then its text. */
static void scalar(struct sonde_json *j, const char *text, size_t len)
{
	if (j->err)
		return;
	prefix(j);
	put(j, text, len);
	if (!j->depth)
		flush(j);
}

void sonde_json_strn(struct sonde_json *j, const char *s, size_t n)
{
	if (j->err)
		return;
	prefix(j);
	escaped(j, s, n);
	if (!j->depth)
		flush(j);
}

void sonde_json_str(struct sonde_json *j, const char *s)
{
	if (s)
		sonde_json_strn(j, s, strlen(s));
	else
		sonde_json_null(j);
}

/* Decimal digits of @v ending at @end; returns where they start. */
static char *digits(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

void sonde_json_u64(struct sonde_json *j, uint64_t v)
{
	char b[24], *e = b + sizeof(b), *s = digits(e, v);

	scalar(j, s, (size_t)(e - s));
}

void sonde_json_i64(struct sonde_json *j, int64_t v)
{
	char b[24], *e = b + sizeof(b);
	/* The magnitude as unsigned: -INT64_MIN does not fit an int64_t. */
	char *s = digits(e, v < 0 ? -(uint64_t)v : (uint64_t)v);

	if (v < 0)
		*--s = '-';
	scalar(j, s, (size_t)(e - s));
}

void sonde_json_double(struct sonde_json *j, double v, int decimals)
{
	char b[400]; /* %.*f of DBL_MAX is 309 digits before the point */
	int n;

	if (!isfinite(v)) {
		sonde_json_null(j);
		return;
	}
	if (decimals < 0 || decimals > 17)
		decimals = decimals < 0 ? 0 : 17;
	n = snprintf(b, sizeof(b), "%.*f", decimals, v);
	scalar(j, b, n > 0 && (size_t)n < sizeof(b) ? (size_t)n : 0);
}

void sonde_json_fixed(struct sonde_json *j, uint64_t v, unsigned decimals)
{
	char b[48], *e = b + sizeof(b), *s = e;

	if (decimals > 19)
		decimals = 19;
	/* The fraction digit by digit (zero-padded), then the point and the integer part. */
	for (unsigned i = 0; i < decimals; i++, v /= 10)
		*--s = (char)('0' + v % 10);
	if (decimals)
		*--s = '.';
	s = digits(s, v);
	scalar(j, s, (size_t)(e - s));
}

void sonde_json_hex(struct sonde_json *j, uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof(b), "\"0x%" PRIx64 "\"", v);

	scalar(j, b, (size_t)n);
}

void sonde_json_bool(struct sonde_json *j, bool v)
{
	scalar(j, v ? "true" : "false", v ? 4 : 5);
}

void sonde_json_null(struct sonde_json *j)
{
	scalar(j, "null", 4);
}

void sonde_json_line_end(struct sonde_json *j)
{
	if (!j->err && j->depth)
		j->err = -EINVAL;
	put(j, "\n", 1);
	flush(j);
}

void sonde_json_raw(struct sonde_json *j, const void *buf, size_t len)
{
	put(j, buf, len);
	flush(j);
}
