// SPDX-License-Identifier: MIT
/*
 * The machine's names for threads it never saw a COMM for, as perf's
 * thread__new() makes them: ":TID" with TID signed, so a sample without a
 * task (pid/tid -1) reads ":-1", and tid 0 is "swapper" (machine__init).
 * find_thread gives the latest comm, which --sort pid shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/machine.h>
#include <sonde/symbols.h>

#include <stdint.h>

static void test_unnamed_threads(void **state)
{
	struct sonde_symtab *st;
	struct sonde_machine *m;
	struct sonde_thread *t;

	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	assert_int_equal(sonde_machine_new(&m, st), 0);
	t = sonde_machine_findnew_thread(m, UINT32_MAX, UINT32_MAX);
	assert_non_null(t);
	assert_string_equal(sonde_machine_str(m, t->comm), ":-1");
	t = sonde_machine_findnew_thread(m, 4242, 4243);
	assert_string_equal(sonde_machine_str(m, t->comm), ":4243");
	t = sonde_machine_findnew_thread(m, 0, 0);
	assert_string_equal(sonde_machine_str(m, t->comm), "swapper");
	assert_ptr_equal(sonde_machine_find_thread(m, 4243)->comm,
			 sonde_machine_findnew_thread(m, 4242, 4243)->comm);
	assert_null(sonde_machine_find_thread(m, 777));
	sonde_machine_free(m);
	sonde_symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unnamed_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
