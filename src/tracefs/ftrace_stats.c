// SPDX-License-Identifier: MIT
/*
 * The text of tracefs per_cpu/cpuN/stats, one "name: value" per line:
 *
 *   entries: 0
 *   overrun: 1532
 *   commit overrun: 0
 *   bytes: 0
 *   oldest event ts:  5310.424446
 *   now ts:  5312.118911
 *   dropped events: 0
 *   read events: 70112
 *
 * Only the counters are kept; timestamps and lines a newer kernel adds are
 * skipped.  The text comes from the kernel (or, through the agent, from a
 * target), so nothing is trusted: lines may be missing, long, or hold
 * anything.
 */
#include <sonde/ftrace.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	size_t offset;
} fields[] = {
    {"entries", offsetof(struct sonde_ftrace_stats, entries)},
    {"overrun", offsetof(struct sonde_ftrace_stats, overrun)},
    {"commit overrun", offsetof(struct sonde_ftrace_stats, commit_overrun)},
    {"bytes", offsetof(struct sonde_ftrace_stats, bytes)},
    {"dropped events", offsetof(struct sonde_ftrace_stats, dropped)},
    {"read events", offsetof(struct sonde_ftrace_stats, read)},
};

/* Parses a decimal counter; stops at the end of the line.  Return: 0 or -1. */
static int parse_u64(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	bool any = false;

	while (p < end && *p == ' ')
		p++;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		any = true;
	}
	while (p < end && (*p == ' ' || *p == '\r'))
		p++;
	if (!any || p != end)
		return -1;
	*out = v;
	return 0;
}

int sonde_ftrace_stats_parse(const char *text, struct sonde_ftrace_stats *st)
{
	const char *line = text;

	memset(st, 0, sizeof(*st));
	while (*line) {
		const char *end = strchr(line, '\n');
		const char *colon;

		if (!end)
			end = line + strlen(line);
		colon = memchr(line, ':', (size_t)(end - line));
		if (colon) {
			size_t nlen = (size_t)(colon - line);

			for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
				if (strlen(fields[i].name) != nlen ||
				    memcmp(fields[i].name, line, nlen))
					continue;
				if (parse_u64(colon + 1, end,
					      (uint64_t *)((char *)st + fields[i].offset)) < 0)
					return SONDE_E_FORMAT;
				break;
			}
		}
		line = *end ? end + 1 : end;
	}
	return 0;
}
