// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the per_cpu/cpuN/stats parser
 * (sonde_ftrace_stats_parse), whose text can come from a target through
 * the agent.  Promises checked: it never reads past the NUL, returns 0 or
 * SONDE_E_FORMAT, and parsing the same text twice gives the same numbers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/ftrace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sonde_ftrace_stats a, b;
	char *text = malloc(size + 1);
	int ra, rb;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ra = sonde_ftrace_stats_parse(text, &a);
	rb = sonde_ftrace_stats_parse(text, &b);
	if ((ra != 0 && ra != SONDE_E_FORMAT) || ra != rb)
		abort();
	if (ra == 0 && memcmp(&a, &b, sizeof(a)))
		abort();
	free(text);
	return 0;
}
