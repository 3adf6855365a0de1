// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/evspec.h>

static const struct sonde_roots none = {"/nonexistent", NULL};

static void test_named(void **state)
{
	struct sonde_evlist l;

	(void)state;
	sonde_evlist_init(&l);
	assert_int_equal(sonde_evlist_parse(&l, "cycles,cs", &none), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.events[0].attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(l.events[1].attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	sonde_evlist_fini(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
