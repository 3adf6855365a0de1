// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the perf.data reader: opens the input as a file in
 * memory (file or pipe mode), walks every feature and record, and decodes
 * each record, and prints the header as report --header does (every
 * feature section decoded).  Seeds in tests/fuzz/corpus/perf_data come from
 * tests/unit/perf_data_gen (--tiny, --pipe).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/header_print.h>

#include "pd_walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sonde_pd_reader *r;
	/* an exact-size copy, so reads past the input trip ASan */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	static FILE *sink;

	if (!sink)
		sink = fopen("/dev/null", "w");
	if (sonde_pd_reader_open_mem(&r, copy, size, NULL) == 0) {
		if (sink)
			sonde_header_print(sink, r, 0);
		fuzz_pd_walk(r);
		sonde_pd_reader_close(r);
	}
	free(copy);
	return 0;
}
