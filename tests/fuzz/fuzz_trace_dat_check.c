// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the trace.dat layout checks (src/decode/trace_dat_check.c)
 * that stand between a file and libtracecmd.  Promises checked: no read
 * outside the image (ASan), 0 or SONDE_E_FORMAT, a message on failure, and the offset
 * reached never past the end.
 */
#include <stdint.h>
#include <stdlib.h>

#include <sonde/trace_dat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sonde_errmsg err = {{0}};
	uint64_t good;
	/* An exact-size copy, so ASan sees a read past the end. */
	uint8_t *copy = malloc(size ? size : 1);
	int r;

	if (!copy)
		return 0;
	for (size_t i = 0; i < size; i++)
		copy[i] = data[i];
	r = sonde_trace_dat_check(copy, size, &good, &err);
	if ((r != 0 && r != SONDE_E_FORMAT) || (r < 0 && !err.text[0]) || good > size)
		abort();
	free(copy);
	return 0;
}
