// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the tracing data reader (sonde_tp_decoder_new),
 * which parses the HEADER_TRACING_DATA section of any perf.data it is
 * given.  Promises checked: it returns 0 or SONDE_E_FORMAT /
 * SONDE_E_TRUNCATED (or -ENOMEM) and never reads outside the input; a
 * decoder that was made decodes and prints a payload built from the input's
 * tail through every event it holds without reading past that payload.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/tpdecode.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sonde_tp_decoder *d = NULL;
	struct sonde_errmsg err;
	uint8_t *copy = malloc(size ? size : 1);
	int r;

	if (!copy)
		return 0;
	memcpy(copy, data, size); /* an exact-size heap copy: ASan sees overreads */
	r = sonde_tp_decoder_new(&d, copy, size, &err);
	if (r != 0 && r != SONDE_E_FORMAT && r != SONDE_E_TRUNCATED && r != -ENOMEM)
		abort();
	if (r == 0) {
		/* the last 64 bytes (or fewer) as a payload of each event id */
		size_t n = size < 64 ? size : 64;
		uint8_t *raw = malloc(n ? n : 1);

		for (uint32_t id = 0; raw && id < 2048; id++) {
			const struct sonde_tp_event *ev = sonde_tp_find_id(d, id);
			struct sonde_tp_value v;

			if (!ev)
				continue;
			memcpy(raw, data + size - n, n);
			if (n >= 2) {
				raw[0] = (uint8_t)id;
				raw[1] = (uint8_t)(id >> 8);
			}
			for (size_t i = 0; i < sonde_tp_event_nr_fields(ev) + 4; i++)
				if (sonde_tp_field(d, ev, i, raw, n, &v) == 0 &&
				    v.kind == SONDE_TP_ARRAY && v.nelem)
					(void)sonde_tp_array_elem(d, &v, v.nelem - 1);
			(void)sonde_tp_print(d, raw, n, 0);
		}
		free(raw);
	}
	sonde_tp_decoder_free(d);
	free(copy);
	return 0;
}
