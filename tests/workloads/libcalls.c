// SPDX-License-Identifier: MIT
/*
 * libcalls [SECONDS]: spends about SECONDS (default 1) in cheap libc calls
 * made through this program's PLT: strtoll, memmove and strlen.  glibc
 * gives these addresses several names (strtoll/strtol/__strtol_internal,
 * memmove/memcpy variants), and the PLT stubs themselves get a share of
 * the samples, so a report of it shows which alias a tool picks and
 * whether PLT entries are named (perf: "strlen@plt").
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile size_t sink;
static char buf[512];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end = now() + secs;
	/* volatile pointers: the compiler must call the library, never fold */
	const char *volatile num = "123456789";
	const char *volatile word = "ab";

	while (now() < end) {
		for (int i = 0; i < 2000; i++) {
			sink += (size_t)strtoll(num, NULL, 10);
			memmove(buf, buf + 1 + (i & 7), 200);
			sink += strlen(word);
			sink += strlen(word);
			sink += strlen(word);
		}
	}
	return 0;
}
