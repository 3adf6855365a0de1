// SPDX-License-Identifier: MIT
/*
 * The one hash (include/sonde/hash.h) is 64-bit FNV-1a: the published
 * test vectors (from the FNV reference test suite, isthe.com/chongo/tech/comp/fnv),
 * bytes above 0x7f taken unsigned, NUL bytes inside a buffer counted, and
 * a hash continued over pieces equal to the hash of the whole.  Its values
 * name the kallsyms cache files, so they must never change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <sonde/hash.h>

static void test_vectors(void **state)
{
	static const struct {
		const char *s;
		uint64_t h;
	} v[] = {
	    {"", 0xcbf29ce484222325ull},
	    {"a", 0xaf63dc4c8601ec8cull},
	    {"foobar", 0x85944171f73967e8ull},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(sonde_fnv1a_str(v[i].s), v[i].h);
		assert_int_equal(sonde_fnv1a(SONDE_FNV1A_INIT, v[i].s, strlen(v[i].s)), v[i].h);
	}
}

static void test_bytes(void **state)
{
	static const unsigned char b[] = {0xff, 0x00, 0x01};

	(void)state;
	/* Signed chars would give another value for 0xff. */
	assert_int_equal(sonde_fnv1a(SONDE_FNV1A_INIT, b, 3), 0xf9210a1be4164051ull);
	assert_int_equal(sonde_fnv1a_str("\xff"), sonde_fnv1a(SONDE_FNV1A_INIT, b, 1));
	/* In pieces: foo, then bar. */
	assert_int_equal(sonde_fnv1a(sonde_fnv1a(SONDE_FNV1A_INIT, "foo", 3), "bar", 3),
			 0x85944171f73967e8ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),
	    cmocka_unit_test(test_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
