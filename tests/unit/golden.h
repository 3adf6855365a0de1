/* SPDX-License-Identifier: MIT */
/*
 * Test-only: golden files.  A view's whole output is compared byte for
 * byte with tests/unit/golden/NAME (GOLDEN_DIR, set by meson); with
 * SONDE_UPDATE_GOLDEN=1 in the environment the file is written instead,
 * to be reviewed by hand (the numbers against the capture the test
 * built) before it is committed.
 */
#ifndef SONDE_TEST_GOLDEN_H
#define SONDE_TEST_GOLDEN_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns golden/@name's bytes (free() them), NULL when it can't be read. */
static inline char *golden_read(const char *file, size_t *len)
{
	char chunk[4096], *buf = NULL;
	size_t n;
	FILE *f = fopen(file, "r"), *m;

	if (!f)
		return NULL;
	m = open_memstream(&buf, len);
	while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	if (m)
		fclose(m);
	return buf;
}

/* Compares @text with golden/@name, or writes it there with SONDE_UPDATE_GOLDEN=1. */
static void golden(const char *name, const char *text)
{
	char file[512], *want;
	size_t wlen = 0, line = 1, i;

	snprintf(file, sizeof(file), "%s/%s", GOLDEN_DIR, name);
	if (getenv("SONDE_UPDATE_GOLDEN")) {
		FILE *f = fopen(file, "w");

		assert_non_null(f);
		assert_true(fputs(text, f) >= 0);
		assert_int_equal(fclose(f), 0);
		return;
	}
	want = golden_read(file, &wlen);
	if (!want)
		fail_msg("%s: %s (SONDE_UPDATE_GOLDEN=1 writes it)", file, strerror(errno));
	for (i = 0; text[i] && i < wlen && text[i] == want[i]; i++)
		line += text[i] == '\n';
	if (i != wlen || text[i]) {
		/* The line where they part, from at most 60 bytes before (JSON is one line). */
		size_t from = i, wn, gn;

		while (from > 0 && want[from - 1] != '\n' && i - from < 60)
			from--;
		wn = i - from + strcspn(want + i, "\n");
		gn = i - from + strcspn(text + i, "\n");
		fail_msg("%s differs at line %zu, byte %zu:\n  want: %.*s\n  got:  %.*s", name,
			 line, i, (int)(wn < i - from + 60 ? wn : i - from + 60), want + from,
			 (int)(gn < i - from + 60 ? gn : i - from + 60), text + from);
	}
	free(want);
}

#endif
