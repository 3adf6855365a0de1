// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the JSON writer's string escaper (every name,
 * path, comm and tracepoint string sonde prints as JSON comes from the
 * capture or the machine, so any bytes at all).
 *
 * Each input is written as one string, plainly and for HTML, and the
 * promises are checked: the output is a quoted string with no raw control
 * byte (and no '<', '>', '&' for HTML), its raw bytes are valid UTF-8
 * (checked with the C library's own decoder), and decoding the escapes
 * gives the input back, where each \ufffd stands for exactly one input
 * byte of 0x80 or more.  A broken promise aborts.
 */
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <sonde/json.h>

struct mem {
	unsigned char *buf;
	size_t len, cap;
};

static int mem_write(void *ctx, const void *b, size_t n)
{
	struct mem *m = ctx;

	if (m->len + n > m->cap)
		abort(); /* the output can never exceed 6 bytes per input byte plus quotes */
	memcpy(m->buf + m->len, b, n);
	m->len += n;
	return 0;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	abort(); /* the writer only makes lowercase hex */
}

/* The raw (unescaped) bytes of the output must decode as UTF-8. */
static void check_utf8(const unsigned char *s, size_t n)
{
	mbstate_t st;

	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < n;) {
		size_t r = mbrtowc(NULL, (const char *)s + i, n - i, &st);

		if (r == (size_t)-1 || r == (size_t)-2)
			abort();
		i += r ? r : 1;
	}
}

static void check(const uint8_t *in, size_t n, unsigned flags)
{
	struct mem m = {malloc(6 * n + 2), 0, 6 * n + 2};
	struct sonde_json j;
	size_t k = 0; /* input bytes accounted for */

	if (!m.buf)
		return;
	sonde_json_init(&j, mem_write, &m, flags);
	sonde_json_strn(&j, (const char *)in, n);
	if (sonde_json_error(&j) || m.len < 2 || m.buf[0] != '"' || m.buf[m.len - 1] != '"')
		abort();
	check_utf8(m.buf + 1, m.len - 2);
	for (size_t i = 1; i < m.len - 1; i++) {
		unsigned char c = m.buf[i];

		if (c < 0x20 || c == '"' ||
		    ((flags & SONDE_JSON_HTML) && (c == '<' || c == '>' || c == '&')))
			abort();
		if (c != '\\') {
			if (k >= n || in[k++] != c)
				abort();
			continue;
		}
		if (i + 1 >= m.len - 1)
			abort();
		c = m.buf[++i];
		if (c == '"' || c == '\\') {
			if (k >= n || in[k++] != c)
				abort();
		} else if (c == 'u' && i + 4 < m.len - 1) {
			if (!memcmp(m.buf + i + 1, "fffd", 4)) {
				if (k >= n || in[k++] < 0x80)
					abort();
			} else {
				int v = hexval(m.buf[i + 1]) << 12 | hexval(m.buf[i + 2]) << 8 |
					hexval(m.buf[i + 3]) << 4 | hexval(m.buf[i + 4]);

				if (k >= n || in[k++] != v)
					abort();
			}
			i += 4;
		} else {
			abort();
		}
	}
	if (k != n)
		abort();
	free(m.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;

	if (!init) {
		if (!setlocale(LC_CTYPE, "C.UTF-8"))
			abort();
		init = true;
	}
	check(data, size, 0);
	check(data, size, SONDE_JSON_HTML);
	return 0;
}
