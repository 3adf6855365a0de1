// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the trace.dat layout checks (src/cli/trace_dat_check.c)
 * that stand between a file and libtracecmd.  Promises checked: no read
 * outside the image (ASan), 0 or -1, a message on -1, and the offset
 * reached never past the end.
 */
#include <stdint.h>
#include <stdlib.h>

#include "trace_dat_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	uint64_t good;
	/* An exact-size copy, so ASan sees a read past the end. */
	uint8_t *copy = malloc(size ? size : 1);
	int r;

	if (!copy)
		return 0;
	for (size_t i = 0; i < size; i++)
		copy[i] = data[i];
	r = trace_dat_check(copy, size, &good, err, sizeof(err));
	if ((r != 0 && r != -1) || (r < 0 && !err[0]) || good > size)
		abort();
	free(copy);
	return 0;
}
