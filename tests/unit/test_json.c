// SPDX-License-Identifier: MIT
/*
 * The JSON writer: the escaping table (control bytes, quotes, HTML-unsafe
 * bytes, valid and invalid UTF-8), commas and separators at every level,
 * exact numbers, and the sticky error over a sink that fails.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sonde/json.h>

/* A memory sink that fails with -ENOSPC once @cap bytes are written. */
struct mem {
	char buf[4096];
	size_t len, cap;
	unsigned calls;
};

static int mem_write(void *ctx, const void *b, size_t n)
{
	struct mem *m = ctx;

	m->calls++;
	if (m->len + n > m->cap)
		return -ENOSPC;
	memcpy(m->buf + m->len, b, n);
	m->len += n;
	m->buf[m->len] = '\0';
	return 0;
}

static void start(struct sonde_json *j, struct mem *m, unsigned flags)
{
	memset(m, 0, sizeof(*m));
	m->cap = sizeof(m->buf) - 1;
	sonde_json_init(j, mem_write, m, flags);
}

/* @n bytes of @in as a JSON string, written with @flags. */
static const char *esc(struct mem *m, const char *in, size_t n, unsigned flags)
{
	struct sonde_json j;

	start(&j, m, flags);
	sonde_json_strn(&j, in, n);
	assert_int_equal(sonde_json_error(&j), 0);
	return m->buf;
}

static void test_escape_table(void **state)
{
	static const struct {
		const char *in;
		size_t n;
		unsigned flags;
		const char *out;
	} t[] = {
	    {"plain", 5, 0, "\"plain\""},
	    {"", 0, 0, "\"\""},
	    {"a\"b\\c", 5, 0, "\"a\\\"b\\\\c\""},
	    /* Every control byte as \u00XX, the short forms (\n, \t) never. */
	    {"\n\t\r\b\f", 5, 0, "\"\\u000a\\u0009\\u000d\\u0008\\u000c\""},
	    {"\x01\x1f", 2, 0, "\"\\u0001\\u001f\""},
	    {"a\0b", 3, 0, "\"a\\u0000b\""},
	    {"\x7f", 1, 0, "\"\x7f\""},
	    /* '/' and HTML bytes stay, unless the block goes inside <script>. */
	    {"</a>&", 5, 0, "\"</a>&\""},
	    {"</a>&", 5, SONDE_JSON_HTML, "\"\\u003c/a\\u003e\\u0026\""},
	    /* Valid UTF-8 (2, 3 and 4 bytes) passes through. */
	    {"\xc3\xa9", 2, 0, "\"\xc3\xa9\""},
	    {"\xe2\x82\xac", 3, 0, "\"\xe2\x82\xac\""},
	    {"\xf0\x9f\x98\x80", 4, 0, "\"\xf0\x9f\x98\x80\""},
	    {"\xef\xbf\xbf", 3, 0, "\"\xef\xbf\xbf\""},
	    {"\xf4\x8f\xbf\xbf", 4, 0, "\"\xf4\x8f\xbf\xbf\""},
	    /* Invalid: one \ufffd per byte that starts no valid sequence. */
	    {"\x80", 1, 0, "\"\\ufffd\""},
	    {"\xff\xfe", 2, 0, "\"\\ufffd\\ufffd\""},
	    {"\xc0\xaf", 2, 0, "\"\\ufffd\\ufffd\""},			    /* overlong '/' */
	    {"\xe0\x80\xaf", 3, 0, "\"\\ufffd\\ufffd\\ufffd\""},	    /* overlong */
	    {"\xed\xa0\x80", 3, 0, "\"\\ufffd\\ufffd\\ufffd\""},	    /* surrogate */
	    {"\xf4\x90\x80\x80", 4, 0, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* > U+10FFFF */
	    {"\xc3", 1, 0, "\"\\ufffd\""},				    /* truncated */
	    {"\xe2\x82x", 3, 0, "\"\\ufffd\\ufffdx\""},
	    {"a\xc3\xa9\xff"
	     "b",
	     5, 0, "\"a\xc3\xa9\\ufffdb\""},
	};
	struct mem m;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(esc(&m, t[i].in, t[i].n, t[i].flags), t[i].out);
}

static void test_structure(void **state)
{
	struct sonde_json j;
	struct mem m;

	(void)state;
	start(&j, &m, 0);
	sonde_json_obj_begin(&j);
	sonde_json_kstr(&j, "a", "x");
	sonde_json_key(&j, "b");
	sonde_json_arr_begin(&j);
	sonde_json_u64(&j, 1);
	sonde_json_arr_begin(&j);
	sonde_json_arr_end(&j);
	sonde_json_obj_begin(&j);
	sonde_json_obj_end(&j);
	sonde_json_null(&j);
	sonde_json_arr_end(&j);
	sonde_json_kbool(&j, "c", false);
	sonde_json_kstr(&j, "d", NULL);
	sonde_json_obj_end(&j);
	sonde_json_line_end(&j);
	assert_int_equal(sonde_json_error(&j), 0);
	assert_string_equal(m.buf, "{\"a\":\"x\",\"b\":[1,[],{},null],\"c\":false,\"d\":null}\n");

	/* perf stat -j's spacing. */
	start(&j, &m, SONDE_JSON_SPACED | SONDE_JSON_WIDE_COLON);
	sonde_json_obj_begin(&j);
	sonde_json_ku64(&j, "a", 1);
	sonde_json_ki64(&j, "b", -2);
	sonde_json_obj_end(&j);
	assert_string_equal(m.buf, "{\"a\" : 1, \"b\" : -2}");

	/* A list one element a line, the elements' own members spaced. */
	start(&j, &m, SONDE_JSON_SPACED | SONDE_JSON_LIST_LINES);
	sonde_json_arr_begin(&j);
	for (int i = 0; i < 2; i++) {
		sonde_json_obj_begin(&j);
		sonde_json_ki64(&j, "i", i);
		sonde_json_ku64(&j, "n", 7);
		sonde_json_obj_end(&j);
	}
	sonde_json_arr_end(&j);
	assert_string_equal(m.buf, "[\n  {\"i\": 0, \"n\": 7},\n  {\"i\": 1, \"n\": 7}\n]");
	start(&j, &m, SONDE_JSON_SPACED | SONDE_JSON_LIST_LINES);
	sonde_json_arr_begin(&j);
	sonde_json_arr_end(&j);
	assert_string_equal(m.buf, "[\n]");
}

static void test_numbers(void **state)
{
	struct sonde_json j;
	struct mem m;

	(void)state;
	start(&j, &m, 0);
	sonde_json_arr_begin(&j);
	sonde_json_u64(&j, 0);
	sonde_json_u64(&j, UINT64_MAX);
	sonde_json_i64(&j, INT64_MIN);
	sonde_json_i64(&j, -1);
	sonde_json_double(&j, 12.5, 4);
	sonde_json_double(&j, 2.0 / 3.0, 2);
	sonde_json_double(&j, NAN, 2);
	sonde_json_double(&j, -INFINITY, 2);
	sonde_json_fixed(&j, 1500000000, 9);
	sonde_json_fixed(&j, 5, 9);
	sonde_json_fixed(&j, 42, 0);
	sonde_json_hex(&j, 0xffffffff81000000ull);
	sonde_json_arr_end(&j);
	assert_int_equal(sonde_json_error(&j), 0);
	assert_string_equal(m.buf, "[0,18446744073709551615,-9223372036854775808,-1,12.5000,0.67,"
				   "null,null,1.500000000,0.000000005,42,\"0xffffffff81000000\"]");
}

/* The first failure is kept, nothing is written after it, and it is what the end reports. */
static void test_sticky_error(void **state)
{
	struct sonde_json j;
	struct mem m;
	unsigned calls;

	(void)state;
	start(&j, &m, 0);
	m.cap = 10;
	sonde_json_obj_begin(&j);
	sonde_json_kstr(&j, "name", "a long value");
	sonde_json_obj_end(&j); /* a complete value: the sink gets it, and fails */
	assert_int_equal(sonde_json_error(&j), -ENOSPC);
	calls = m.calls;
	m.cap = sizeof(m.buf) - 1; /* the sink would work again: still nothing */
	sonde_json_obj_begin(&j);
	sonde_json_ku64(&j, "n", 1);
	sonde_json_str(&j, "more");
	sonde_json_obj_end(&j);
	sonde_json_line_end(&j);
	sonde_json_raw(&j, "x", 1);
	assert_int_equal(m.calls, calls);
	assert_int_equal(sonde_json_error(&j), -ENOSPC);
	assert_int_equal(m.len, 0);
}

/* Values bigger than the buffer reach the sink whole and in order. */
static void test_big_values(void **state)
{
	static char big[3000];
	struct sonde_json j;
	struct mem m;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	start(&j, &m, 0);
	sonde_json_arr_begin(&j);
	sonde_json_u64(&j, 7);
	sonde_json_str(&j, big);
	sonde_json_u64(&j, 8);
	sonde_json_arr_end(&j);
	assert_int_equal(sonde_json_error(&j), 0);
	assert_int_equal(m.len, 2 + 2 + sizeof(big) + 1 + 2);
	assert_memory_equal(m.buf, "[7,\"xxx", 7);
	assert_string_equal(m.buf + m.len - 7, "xxx\",8]");
}

static void test_misuse(void **state)
{
	struct sonde_json j;
	struct mem m;

	(void)state;
	start(&j, &m, 0);
	sonde_json_arr_begin(&j);
	sonde_json_key(&j, "k"); /* keys only in objects */
	assert_int_equal(sonde_json_error(&j), -EINVAL);

	start(&j, &m, 0);
	sonde_json_obj_begin(&j);
	sonde_json_arr_end(&j); /* closes the wrong kind */
	assert_int_equal(sonde_json_error(&j), -EINVAL);

	start(&j, &m, 0);
	sonde_json_obj_begin(&j);
	sonde_json_line_end(&j); /* a line ends inside an object */
	assert_int_equal(sonde_json_error(&j), -EINVAL);

	start(&j, &m, 0);
	for (int i = 0; i <= SONDE_JSON_MAX_DEPTH; i++)
		sonde_json_arr_begin(&j);
	assert_int_equal(sonde_json_error(&j), -E2BIG);
}

/* A stdio stream that cannot take the bytes: the error comes back at the end. */
static void test_file_sink(void **state)
{
	struct sonde_json j;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	sonde_json_init_file(&j, f, 0);
	sonde_json_str(&j, "x"); /* a complete top-level value: flushed */
	assert_int_equal(sonde_json_error(&j), -EIO);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_escape_table), cmocka_unit_test(test_structure),
	    cmocka_unit_test(test_numbers),	 cmocka_unit_test(test_sticky_error),
	    cmocka_unit_test(test_misuse),	 cmocka_unit_test(test_file_sink),
	    cmocka_unit_test(test_big_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
