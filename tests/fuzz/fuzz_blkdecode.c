// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the blk tracer decoder (sonde_blk_format), whose
 * input is a record from a trace.dat.  The first byte picks the byte
 * order, the rest is the record.  Promises checked: a record shorter than
 * the fixed part is refused with -1 and an empty text; otherwise the
 * return is the full text's length, the text fits a buffer of that size,
 * and a small buffer gets a NUL-terminated prefix of the same text.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/blkdecode.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char small[16], *full;
	bool be;
	int n, m;

	if (!size)
		return 0;
	be = data[0] & 1;
	data++;
	size--;
	n = sonde_blk_format(data, size, be, "comm", small, sizeof(small));
	if (size < SONDE_BLK_RECORD_MIN) {
		if (n != -1 || small[0])
			abort();
		return 0;
	}
	if (n < 0 || !memchr(small, '\0', sizeof(small)))
		abort();
	full = malloc((size_t)n + 1);
	if (!full)
		return 0;
	m = sonde_blk_format(data, size, be, "comm", full, (size_t)n + 1);
	if (m != n || strlen(full) != (size_t)n || strncmp(full, small, strlen(small)))
		abort();
	free(full);
	return 0;
}
