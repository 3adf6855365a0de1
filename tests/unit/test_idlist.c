// SPDX-License-Identifier: MIT
/*
 * The one id-list parser behind -p, -t, -P, --pid, --tid and -C: values,
 * ranges, and the range checks that keep "4294967297" from becoming pid 1.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sonde/cpulist.h>
#include <sonde/idlist.h>

/* Parses @text as @kind into a fresh array; returns the result code. */
static int parse(const char *text, const struct sonde_idkind *kind, int **v, size_t *n,
		 struct sonde_errmsg *err)
{
	*v = NULL;
	*n = 0;
	err->text[0] = '\0';
	return sonde_idlist_add(text, kind, v, n, err);
}

static void test_values(void **state)
{
	struct sonde_errmsg err;
	int *v;
	size_t n;

	(void)state;
	assert_int_equal(parse("1234,1240", &sonde_idkind_pid, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0], 1234);
	assert_int_equal(v[1], 1240);
	/* A second list appends. */
	assert_int_equal(sonde_idlist_add("7", &sonde_idkind_pid, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[2], 7);
	free(v);
	assert_int_equal(parse("4194304", &sonde_idkind_pid, &v, &n, &err), 0);
	assert_int_equal(v[0], SONDE_PID_MAX);
	free(v);
}

static void test_wrap_is_refused(void **state)
{
	static const char *const wrapping[] = {
	    "4294967297",	    /* 2^32 + 1: strtol then (pid_t) made it 1 */
	    "4294989781",	    /* 2^32 + 22485 */
	    "2147483648",	    /* INT_MAX + 1 */
	    "4194305",		    /* PID_MAX_LIMIT + 1 */
	    "18446744073709551617", /* 2^64 + 1: strtoul saturates, no wrap either */
	    "99999999999999999999999999",
	};
	struct sonde_errmsg err;
	int *v;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(wrapping) / sizeof(wrapping[0]); i++) {
		assert_int_equal(parse(wrapping[i], &sonde_idkind_pid, &v, &n, &err), -ERANGE);
		assert_int_equal(n, 0);
		assert_non_null(strstr(err.text, "1..4194304"));
		free(v);
	}
	/* The ids before the bad one stay; the caller sees where it stopped. */
	assert_int_equal(parse("5,4294967297,6", &sonde_idkind_tid, &v, &n, &err), -ERANGE);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], 5);
	assert_string_equal(err.text, "'4294967297': a thread id is 1..4194304");
	free(v);
}

static void test_syntax(void **state)
{
	static const char *const bad[] = {"",	",",  "1,",   ",1", "1,,2", "-1",    "+1",
					  " 1", "1 ", "0x10", "1a", "1-3",  "1\n\n", "1.5"};
	struct sonde_errmsg err;
	int *v;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i], &sonde_idkind_pid, &v, &n, &err);

		assert_int_equal(r, -EINVAL);
		assert_true(err.text[0] != '\0');
		free(v);
	}
	/* 0 is no process to attach to, but it is the idle task in a capture. */
	assert_int_equal(parse("0", &sonde_idkind_pid, &v, &n, &err), -ERANGE);
	free(v);
	assert_int_equal(parse("0", &sonde_idkind_sample_pid, &v, &n, &err), 0);
	assert_int_equal(v[0], 0);
	free(v);
	assert_int_equal(parse("12ab", &sonde_idkind_pid, &v, &n, &err), -EINVAL);
	assert_string_equal(err.text, "'12ab' is not a process id");
	free(v);
}

static void test_cpu_ranges(void **state)
{
	struct sonde_errmsg err;
	struct sonde_cpulist l;
	int *v;
	size_t n;

	(void)state;
	assert_int_equal(parse("0-2,5\n", &sonde_idkind_cpu, &v, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[0], 0);
	assert_int_equal(v[2], 2);
	assert_int_equal(v[3], 5);
	free(v);
	/* The whole range, grown in powers of two. */
	assert_int_equal(parse("0-8191", &sonde_idkind_cpu, &v, &n, &err), 0);
	assert_int_equal(n, 8192);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i], (int)i);
	free(v);
	assert_int_equal(parse("0-8192", &sonde_idkind_cpu, &v, &n, &err), -ERANGE);
	free(v);
	assert_int_equal(parse("3-1", &sonde_idkind_cpu, &v, &n, &err), -EINVAL);
	free(v);
	assert_int_equal(parse("1-", &sonde_idkind_cpu, &v, &n, &err), -EINVAL);
	free(v);
	/* -C 4294967296 was CPU 0 for a strtol then int cast. */
	assert_int_equal(sonde_cpulist_parse("4294967296", &l), -EINVAL);
	assert_int_equal(sonde_cpulist_parse("0-4294967297", &l), -EINVAL);
	assert_int_equal(sonde_cpulist_parse("1,0-1", &l), 0);
	assert_int_equal(l.n, 2);
	sonde_cpulist_fini(&l);
}

static void test_u32(void **state)
{
	struct sonde_errmsg err;
	uint32_t *v = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(sonde_idlist_add_u32("0,4294967295", &sonde_idkind_index, &v, &n, &err),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[1], UINT32_MAX);
	assert_int_equal(sonde_idlist_add_u32("4294967296", &sonde_idkind_index, &v, &n, &err),
			 -ERANGE);
	assert_int_equal(n, 2);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values), cmocka_unit_test(test_wrap_is_refused),
	    cmocka_unit_test(test_syntax), cmocka_unit_test(test_cpu_ranges),
	    cmocka_unit_test(test_u32),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
