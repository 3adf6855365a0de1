/* SPDX-License-Identifier: MIT */
/*
 * Test-only: runs a report view (src/output) into a string, as the CLI
 * runs it into stdout, for the unit tests that check what views print
 * (test_report, test_output_golden).
 */
#ifndef SONDE_TEST_REPORT_RENDER_H
#define SONDE_TEST_REPORT_RENDER_H

#include <sonde/report_print.h>

#include <stdio.h>

typedef int (*report_view_fn)(FILE *, const struct sonde_report *, const struct sonde_print_opts *);

/*
 * The view's text (free() it).  Not inlined: gcc 12 -O3 then takes the
 * rows found in the result for pointers into render()'s local `buf`
 * variable (-Wdangling-pointer, a false alarm that -Werror turns into a
 * failure).
 */
static __attribute__((noinline)) char *render(report_view_fn fn, const struct sonde_report *rep,
					      const struct sonde_print_opts *po)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, rep, po), 0);
	fclose(f);
	return buf;
}

#endif
