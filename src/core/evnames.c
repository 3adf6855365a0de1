// SPDX-License-Identifier: MIT
/*
 * The generic event names perf users know: hardware and software events
 * with their aliases, and the hardware cache events built from
 * cache x operation x result (config = cache | op << 8 | result << 16).
 */
#include <sonde/evspec.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct sonde_named_event named[] = {
    {"cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
    {"dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY},
    {"bpf-output", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT},
    {"cgroup-switches", NULL, PERF_TYPE_SOFTWARE, 11 /* PERF_COUNT_SW_CGROUP_SWITCHES */},
};

const struct sonde_named_event *sonde_named_events(size_t *n)
{
	*n = sizeof(named) / sizeof(named[0]);
	return named;
}

const char *sonde_named_event_of(uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].type == type && named[i].config == config)
			return named[i].name;
	return NULL;
}

const struct sonde_named_event *sonde_named_event_find(const char *name)
{
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(named[i].name, name) ||
		    (named[i].alias && !strcmp(named[i].alias, name)))
			return &named[i];
	return NULL;
}

/* First entry of each row is the canonical name. */
static const char *const cache_names[][5] = {
    {"L1-dcache", "l1-d", "l1d", "L1-data", NULL},
    {"L1-icache", "l1-i", "l1i", "L1-instruction", NULL},
    {"LLC", "L2", NULL},
    {"dTLB", "d-tlb", "Data-TLB", NULL},
    {"iTLB", "i-tlb", "Instruction-TLB", NULL},
    {"branch", "branches", "bpu", "btb", "bpc"},
    {"node", NULL},
};
static const char *const op_names[][4] = {
    {"load", "loads", "read", NULL},
    {"store", "stores", "write", NULL},
    {"prefetch", "prefetches", "speculative-read", "speculative-load"},
};
static const char *const result_names[][5] = {
    {"refs", "Reference", "ops", "access", "accesses"},
    {"misses", "miss", NULL},
};
/* Operations perf lists per cache: bit 0 load, 1 store, 2 prefetch. */
static const unsigned char cache_ops[] = {7, 5, 7, 7, 1, 1, 7};

#define NCACHE (sizeof(cache_names) / sizeof(cache_names[0]))
#define NOP 3
#define NRESULT 2

unsigned int sonde_cache_event_count(void)
{
	return NCACHE * NOP * NRESULT;
}

bool sonde_cache_event_name(unsigned int idx, char *buf, size_t len, uint64_t *config)
{
	static const char *const op_plural[] = {"loads", "stores", "prefetches"};
	unsigned int cache = idx / (NOP * NRESULT), op = idx / NRESULT % NOP, res = idx % NRESULT;

	if (cache >= NCACHE || !(cache_ops[cache] & (1u << op)))
		return false;
	if (res)
		snprintf(buf, len, "%s-%s-misses", cache_names[cache][0], op_names[op][0]);
	else
		snprintf(buf, len, "%s-%s", cache_names[cache][0], op_plural[op]);
	*config = cache | op << 8 | (uint64_t)res << 16;
	return true;
}

/* Matches one of @names (case-insensitive) at the start of @s, followed by
 * '-' or the end.  Returns the length matched, 0 if none. */
static size_t match_alias(const char *s, const char *const *names, size_t nnames)
{
	size_t best = 0;

	for (size_t i = 0; i < nnames && names[i]; i++) {
		size_t n = strlen(names[i]);

		if (n > best && !strncasecmp(s, names[i], n) && (s[n] == '-' || s[n] == '\0'))
			best = n;
	}
	return best;
}

/*
 * CACHE[-X[-Y]] where X and Y are an operation and a result in either
 * order, as perf reads them: the operation defaults to load and the result
 * to refs, so "L1-dcache-misses" is L1-dcache-load-misses.  Like perf,
 * operations a cache does not have (iTLB-stores) are refused.
 */
bool sonde_cache_event_parse(const char *name, uint64_t *config)
{
	for (unsigned int c = 0; c < NCACHE; c++) {
		size_t n = match_alias(name, cache_names[c], 5);
		const char *p = name + n;
		int op = -1, res = -1;

		if (!n)
			continue;
		for (int part = 0; part < 2 && *p == '-'; part++) {
			size_t m = 0;

			if (!*++p) {
				p--;
				break;
			}
			if (op < 0) {
				for (unsigned int o = 0; o < NOP && !m; o++)
					if ((m = match_alias(p, op_names[o], 4)))
						op = (int)o;
			}
			if (!m && res < 0) {
				for (unsigned int r = 0; r < NRESULT && !m; r++)
					if ((m = match_alias(p, result_names[r], 5)))
						res = (int)r;
			}
			if (!m) {
				p--; /* back on the '-', so the name is refused */
				break;
			}
			p += m;
		}
		if (*p)
			continue;
		if (op < 0)
			op = 0;
		if (res < 0)
			res = 0;
		if (!(cache_ops[c] & (1u << op)))
			continue;
		*config = c | (uint64_t)op << 8 | (uint64_t)res << 16;
		return true;
	}
	return false;
}
