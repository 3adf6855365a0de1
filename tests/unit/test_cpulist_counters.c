// SPDX-License-Identifier: MIT
/* CPU list notation and multiplexed-count scaling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>

#include <sonde/counters.h>
#include <sonde/cpulist.h>

static void test_cpulist_parse(void **state)
{
	struct sonde_cpulist l;
	char buf[64];

	(void)state;
	assert_int_equal(sonde_cpulist_parse("0-3,8,10-11\n", &l), 0);
	assert_int_equal(l.n, 7);
	assert_int_equal(l.cpus[4], 8);
	sonde_cpulist_format(&l, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,8,10-11");
	sonde_cpulist_fini(&l);

	assert_int_equal(sonde_cpulist_parse("3,1,1,2", &l), 0);
	assert_int_equal(l.n, 3);
	sonde_cpulist_format(&l, buf, sizeof(buf));
	assert_string_equal(buf, "1-3");
	sonde_cpulist_fini(&l);

	assert_int_equal(sonde_cpulist_parse("", &l), -EINVAL);
	assert_int_equal(sonde_cpulist_parse("a", &l), -EINVAL);
	assert_int_equal(sonde_cpulist_parse("3-1", &l), -EINVAL);
	assert_int_equal(sonde_cpulist_parse("1,,2", &l), -EINVAL);
	assert_int_equal(sonde_cpulist_parse("99999", &l), -EINVAL);
}

static void test_scaling(void **state)
{
	struct sonde_counter c = {.value = 1000, .enabled = 200, .running = 100};
	double v;

	(void)state;
	/* Ran half the time it was enabled: the estimate doubles. */
	assert_true(sonde_counter_scaled(&c, &v));
	assert_true(v > 1999.99 && v < 2000.01);
	c.running = c.enabled;
	assert_true(sonde_counter_scaled(&c, &v));
	assert_true(v > 999.99 && v < 1000.01);
	/* Never ran: <not counted>. */
	c.running = 0;
	assert_false(sonde_counter_scaled(&c, &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpulist_parse),
	    cmocka_unit_test(test_scaling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
