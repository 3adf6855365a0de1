// SPDX-License-Identifier: MIT
/*
 * evspec_dump: a test-only window on the event-spec parser.  Parses each
 * argument as one -e value into a single list and prints one line per
 * event, so that the integration tests can compare the parser with perf
 * (tracepoint glob expansion) without going through a subcommand:
 *
 *	NAME<TAB>kind=tracepoint type=2 config=0x174 ... leader=0
 *
 * usage: evspec_dump [--sysfs DIR] [--tracefs DIR|none] SPEC...
 * Exit status 1 with the parser's message on stderr when a spec fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/evspec.h>

static const char *const kinds[] = {
    [SONDE_EV_HARDWARE] = "hardware",
    [SONDE_EV_SOFTWARE] = "software",
    [SONDE_EV_CACHE] = "cache",
    [SONDE_EV_RAW] = "raw",
    [SONDE_EV_PMU] = "pmu",
    [SONDE_EV_TRACEPOINT] = "tracepoint",
    [SONDE_EV_BREAKPOINT] = "breakpoint",
};

static void dump(const struct sonde_event *e)
{
	const struct perf_event_attr *a = &e->attr;

	printf("%s\tkind=%s type=%u config=%#llx config1=%#llx config2=%#llx"
	       " exclude_user=%u exclude_kernel=%u exclude_hv=%u exclude_host=%u"
	       " exclude_guest=%u exclude_idle=%u precise_ip=%u pinned=%u exclusive=%u",
	       e->name, kinds[e->kind], a->type, (unsigned long long)a->config,
	       (unsigned long long)a->config1, (unsigned long long)a->config2, a->exclude_user,
	       a->exclude_kernel, a->exclude_hv, a->exclude_host, a->exclude_guest, a->exclude_idle,
	       a->precise_ip, a->pinned, a->exclusive);
	if (e->flags & SONDE_EVF_PERIOD)
		printf(" period=%llu", (unsigned long long)a->sample_period);
	if (e->flags & SONDE_EVF_FREQ)
		printf(" freq=%llu", (unsigned long long)a->sample_freq);
	if (e->kind == SONDE_EV_BREAKPOINT)
		printf(" bp_type=%u bp_addr=%#llx bp_len=%llu", a->bp_type,
		       (unsigned long long)a->bp_addr, (unsigned long long)a->bp_len);
	printf(" leader=%d\n", e->leader);
}

static const char *default_tracefs(void)
{
	static const char *const candidates[] = {"/sys/kernel/tracing",
						 "/sys/kernel/debug/tracing"};

	for (size_t i = 0; i < 2; i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/events", candidates[i]);
		if (access(path, F_OK) == 0)
			return candidates[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sonde_roots roots = {.sysfs = "/sys", .tracefs = default_tracefs()};
	struct sonde_evlist l;
	int i = 1, status = 0;

	for (; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sysfs"))
			roots.sysfs = argv[i + 1];
		else if (!strcmp(argv[i], "--tracefs"))
			roots.tracefs = strcmp(argv[i + 1], "none") ? argv[i + 1] : NULL;
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: evspec_dump [--sysfs DIR] [--tracefs DIR|none] SPEC...\n");
		return 2;
	}
	sonde_evlist_init(&l);
	for (; i < argc; i++) {
		if (sonde_evlist_parse(&l, argv[i], &roots) < 0) {
			fprintf(stderr, "evspec_dump: %s\n", l.err.text);
			status = 1;
			break;
		}
	}
	if (!status)
		for (size_t j = 0; j < l.n; j++)
			dump(&l.events[j]);
	sonde_evlist_fini(&l);
	return status;
}
