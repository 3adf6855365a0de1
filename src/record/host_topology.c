// SPDX-License-Identifier: MIT
/*
 * The machine-shape header features perf record writes and readers use:
 * CPU_TOPOLOGY (perf report --sort socket, perf's sibling lists), NUMA_TOPOLOGY,
 * PMU_MAPPINGS (PMU type numbers to names) and CACHE, read from sysfs on
 * the recording machine (the target, for a remote capture) in perf 6.1's
 * layouts (tools/perf/util/header.c: write_cpu_topology, write_numa_topology,
 * write_pmu_mappings, write_cache).  Without CPU_TOPOLOGY perf shows socket
 * -001 for every sample.  Each feature is built whole and set only when
 * its files were read; a missing one is left out rather than made up.
 */
#include <sonde/record.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/fileio.h>
#include <sonde/perf_data.h>
#include <sonde/strlist.h>

/* A growing little-endian buffer with perf's header encodings. */
struct buf {
	uint8_t *p;
	size_t len, cap;
	bool bad;
};

static uint8_t *grow(struct buf *b, size_t n)
{
	if (b->bad)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->bad = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	b->len += n;
	return b->p + b->len - n;
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t *p = grow(b, 4);

	for (int i = 0; p && i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Overwrites the u32 at @off (a count known only at the end). */
static void patch32(struct buf *b, size_t off, uint32_t v)
{
	for (int i = 0; !b->bad && i < 4; i++)
		b->p[off + i] = (uint8_t)(v >> (8 * i));
}

static void put64(struct buf *b, uint64_t v)
{
	put32(b, (uint32_t)v);
	put32(b, (uint32_t)(v >> 32));
}

/* perf's string: u32 length (with the NUL, padded to 64), then the bytes. */
static void putstr(struct buf *b, const char *s)
{
	size_t sl = strlen(s);
	uint32_t len = (uint32_t)((sl + 1 + 63) & ~(size_t)63);
	uint8_t *p;

	put32(b, len);
	if ((p = grow(b, len))) {
		memset(p, 0, len);
		memcpy(p, s, sl);
	}
}

static void putlist(struct buf *b, const struct sonde_strlist *l)
{
	put32(b, (uint32_t)l->n);
	for (size_t i = 0; i < l->n; i++)
		putstr(b, l->v[i]);
}

static int set(struct sonde_pd_writer *w, unsigned bit, struct buf *b)
{
	int r = b->bad ? -ENOMEM : sonde_pd_writer_set_feature(w, bit, b->p, b->len);

	free(b->p);
	return r;
}

/* Sets @bit from @b, whose first u32 becomes the count @n (none: not set). */
static int set_counted(struct sonde_pd_writer *w, unsigned bit, struct buf *b, uint32_t n)
{
	if (!n || b->bad) {
		free(b->p);
		return b->bad ? -ENOMEM : 0;
	}
	patch32(b, 0, n);
	return set(w, bit, b);
}

/* The first of @names under the CPU's topology folder that reads. */
static int topo_text(const char *sysfs, unsigned cpu, const char *const *names, char *out,
		     size_t len)
{
	char path[512];
	int r = -ENOENT;

	for (; *names && r < 0; names++) {
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%u/topology/%s", sysfs, cpu,
			 *names);
		r = sonde_read_text(path, out, len);
	}
	return r;
}

static uint32_t topo_id(const char *sysfs, unsigned cpu, const char *name)
{
	const char *names[] = {name, NULL};
	char text[32];

	/* perf writes -1 for a CPU it can't read (offline). */
	if (topo_text(sysfs, cpu, names, text, sizeof(text)) <= 0)
		return UINT32_MAX;
	return (uint32_t)strtol(text, NULL, 10);
}

static int add_unique(struct sonde_strlist *l, const char *s)
{
	return sonde_strlist_contains(l, s) ? 0 : sonde_strlist_add(l, s);
}

/* cores (package siblings), threads, {core, socket} per CPU, dies, die per CPU. */
static int cpu_topology(struct sonde_pd_writer *w, const char *sysfs, uint32_t nr_cpus)
{
	static const char *const pkg[] = {"package_cpus_list", "core_siblings_list", NULL};
	static const char *const thr[] = {"core_cpus_list", "thread_siblings_list", NULL};
	static const char *const die[] = {"die_cpus_list", NULL};
	struct sonde_strlist cores = {0}, threads = {0}, dies = {0};
	struct buf b = {0};
	char text[1024];
	int r = 0;

	for (uint32_t cpu = 0; cpu < nr_cpus && r >= 0; cpu++) {
		if (topo_text(sysfs, cpu, pkg, text, sizeof(text)) > 0)
			r = add_unique(&cores, text);
		if (r >= 0 && topo_text(sysfs, cpu, thr, text, sizeof(text)) > 0)
			r = add_unique(&threads, text);
		if (r >= 0 && topo_text(sysfs, cpu, die, text, sizeof(text)) > 0)
			r = add_unique(&dies, text);
	}
	if (r >= 0 && cores.n && threads.n) {
		putlist(&b, &cores);
		putlist(&b, &threads);
		for (uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
			put32(&b, topo_id(sysfs, cpu, "core_id"));
			put32(&b, topo_id(sysfs, cpu, "physical_package_id"));
		}
		if (dies.n) {
			putlist(&b, &dies);
			for (uint32_t cpu = 0; cpu < nr_cpus; cpu++)
				put32(&b, topo_id(sysfs, cpu, "die_id"));
		}
		r = set(w, SONDE_PD_FEAT_CPU_TOPOLOGY, &b);
	}
	sonde_strlist_fini(&cores);
	sonde_strlist_fini(&threads);
	sonde_strlist_fini(&dies);
	return r < 0 ? r : 0;
}

/* "Node 0 MemTotal:  24683656 kB" -> 24683656 */
static uint64_t meminfo_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* u32 nodes; per node: u32 id, u64 total kB, u64 free kB, string cpu list. */
static int numa_topology(struct sonde_pd_writer *w, const char *sysfs)
{
	struct sonde_strlist names = {0};
	struct buf b = {0};
	char path[512], cpus[1024];
	uint32_t n = 0;
	int r;

	snprintf(path, sizeof(path), "%s/devices/system/node", sysfs);
	if ((r = sonde_list_dir(path, true, &names)) < 0)
		return r == -ENOENT ? 0 : r;
	put32(&b, 0);
	for (size_t i = 0; i < names.n; i++) {
		char *info = NULL;
		unsigned id;

		if (sscanf(names.v[i], "node%u", &id) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/devices/system/node/%s/meminfo", sysfs,
			 names.v[i]);
		if (sonde_read_all(path, &info, NULL) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/devices/system/node/%s/cpulist", sysfs,
			 names.v[i]);
		if (sonde_read_text(path, cpus, sizeof(cpus)) < 0)
			cpus[0] = '\0';
		put32(&b, id);
		put64(&b, meminfo_kb(info, "MemTotal:"));
		put64(&b, meminfo_kb(info, "MemFree:"));
		putstr(&b, cpus);
		free(info);
		n++;
	}
	sonde_strlist_fini(&names);
	return set_counted(w, SONDE_PD_FEAT_NUMA_TOPOLOGY, &b, n);
}

/* u32 count; per PMU: u32 type, string name. */
static int pmu_mappings(struct sonde_pd_writer *w, const char *sysfs)
{
	struct sonde_strlist names = {0};
	struct buf b = {0};
	char path[512];
	uint32_t n = 0;
	int r;

	snprintf(path, sizeof(path), "%s/bus/event_source/devices", sysfs);
	if ((r = sonde_list_dir(path, false, &names)) < 0)
		return r == -ENOENT ? 0 : r;
	put32(&b, 0);
	for (size_t i = 0; i < names.n; i++) {
		uint64_t type;

		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type", sysfs,
			 names.v[i]);
		if (sonde_read_u64(path, &type) < 0)
			continue;
		put32(&b, (uint32_t)type);
		putstr(&b, names.v[i]);
		n++;
	}
	sonde_strlist_fini(&names);
	return set_counted(w, SONDE_PD_FEAT_PMU_MAPPINGS, &b, n);
}

struct cache {
	uint32_t level, line, sets, ways;
	char type[32], size[32], map[256];
};

static int cache_read(const char *sysfs, unsigned cpu, unsigned idx, struct cache *c)
{
	char dir[256], path[320];
	uint64_t v;

	snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu%u/cache/index%u", sysfs, cpu, idx);
#define FIELD(name, dst)                                                                           \
	(snprintf(path, sizeof(path), "%s/" name, dir),                                            \
	 sonde_read_u64(path, &v) == 0 && ((dst) = (uint32_t)v, true))
	if (!FIELD("level", c->level) || !FIELD("coherency_line_size", c->line) ||
	    !FIELD("number_of_sets", c->sets) || !FIELD("ways_of_associativity", c->ways))
		return -ENOENT;
#undef FIELD
	snprintf(path, sizeof(path), "%s/type", dir);
	if (sonde_read_text(path, c->type, sizeof(c->type)) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/size", dir);
	if (sonde_read_text(path, c->size, sizeof(c->size)) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/shared_cpu_list", dir);
	if (sonde_read_text(path, c->map, sizeof(c->map)) < 0)
		return -ENOENT;
	return 0;
}

/* u32 version 1, u32 count; per cache: level, line size, sets, ways, type,
 * size, shared CPU list; each cache once, ordered by level as perf does. */
static int caches(struct sonde_pd_writer *w, const char *sysfs, uint32_t nr_cpus)
{
	struct cache *v = NULL, c;
	size_t n = 0;
	struct buf b = {0};
	int r = 0;

	for (uint32_t cpu = 0; cpu < nr_cpus; cpu++)
		for (unsigned idx = 0; idx < 16 && cache_read(sysfs, cpu, idx, &c) == 0; idx++) {
			bool seen = false;
			struct cache *nv;

			for (size_t i = 0; i < n && !seen; i++)
				seen = v[i].level == c.level && !strcmp(v[i].type, c.type) &&
				       !strcmp(v[i].map, c.map);
			if (seen)
				continue;
			if (!(nv = realloc(v, (n + 1) * sizeof(*v)))) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			v[n++] = c;
		}
	/* No cache directories (some virtual machines): perf still writes the
	 * feature, with no entries ("# CPU cache info:" and nothing under it). */
	put32(&b, 1);
	put32(&b, (uint32_t)n);
	for (uint32_t level = 0; level < 8; level++)
		for (size_t i = 0; i < n; i++) {
			if (v[i].level != level)
				continue;
			put32(&b, v[i].level);
			put32(&b, v[i].line);
			put32(&b, v[i].sets);
			put32(&b, v[i].ways);
			putstr(&b, v[i].type);
			putstr(&b, v[i].size);
			putstr(&b, v[i].map);
		}
	r = set(w, SONDE_PD_FEAT_CACHE, &b);
	free(v);
	return r;
}

/*
 * MEM_TOPOLOGY, perf's layout: u64 version (1), u64 block size, u64 nodes;
 * per node (by id): u64 id, u64 bits, then a bitmap of its memory blocks
 * (u64 bit count again and the u64 words), bit N set for memoryN.
 */
static int node_blocks(const char *dir, uint64_t **bits, uint64_t *nbits)
{
	struct sonde_strlist names = {0};
	uint64_t max = 0, *v;
	unsigned idx;
	int r;

	if ((r = sonde_list_dir(dir, false, &names)) < 0)
		return r;
	for (size_t i = 0; i < names.n; i++)
		if (sscanf(names.v[i], "memory%u", &idx) == 1 && idx + 1ull > max)
			max = idx + 1ull;
	if (!(v = calloc(max / 64 + 1, sizeof(*v)))) {
		sonde_strlist_fini(&names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < names.n; i++)
		if (sscanf(names.v[i], "memory%u", &idx) == 1)
			v[idx / 64] |= 1ull << (idx % 64);
	sonde_strlist_fini(&names);
	*bits = v;
	*nbits = max;
	return 0;
}

static int mem_topology(struct sonde_pd_writer *w, const char *sysfs)
{
	struct sonde_strlist names = {0};
	struct buf b = {0};
	char path[512], text[64];
	uint64_t n = 0;
	unsigned *ids;
	size_t nids = 0;
	int r;

	snprintf(path, sizeof(path), "%s/devices/system/memory/block_size_bytes", sysfs);
	if (sonde_read_text(path, text, sizeof(text)) < 0)
		return 0; /* no memory blocks (no hotplug): perf writes none either */
	snprintf(path, sizeof(path), "%s/devices/system/node", sysfs);
	if ((r = sonde_list_dir(path, true, &names)) < 0)
		return r == -ENOENT ? 0 : r;
	if (!(ids = calloc(names.n + 1, sizeof(*ids)))) {
		sonde_strlist_fini(&names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < names.n; i++) {
		unsigned id;
		size_t j;

		if (sscanf(names.v[i], "node%u", &id) != 1)
			continue;
		for (j = nids; j > 0 && ids[j - 1] > id; j--) /* by id, as perf sorts */
			ids[j] = ids[j - 1];
		ids[j] = id;
		nids++;
	}
	sonde_strlist_fini(&names);
	put64(&b, 1);
	put64(&b, strtoull(text, NULL, 16));
	put64(&b, 0);
	for (size_t i = 0; i < nids; i++) {
		uint64_t *bits = NULL, nbits = 0;

		snprintf(path, sizeof(path), "%s/devices/system/node/node%u", sysfs, ids[i]);
		if (node_blocks(path, &bits, &nbits) < 0)
			continue;
		put64(&b, ids[i]);
		put64(&b, nbits);
		put64(&b, nbits);
		for (uint64_t k = 0; k < (nbits + 63) / 64; k++)
			put64(&b, bits[k]);
		free(bits);
		n++;
	}
	free(ids);
	if (!n || b.bad) {
		free(b.p);
		return b.bad ? -ENOMEM : 0;
	}
	patch32(&b, 16, (uint32_t)n); /* the node count's low half; nodes < 2^32 */
	return set(w, SONDE_PD_FEAT_MEM_TOPOLOGY, &b);
}

int sonde_record_topology_features(struct sonde_pd_writer *w, const char *sysfs, uint32_t nr_cpus)
{
	int first = 0, r;

	if ((r = cpu_topology(w, sysfs, nr_cpus)) < 0 && !first)
		first = r;
	if ((r = numa_topology(w, sysfs)) < 0 && !first)
		first = r;
	if ((r = pmu_mappings(w, sysfs)) < 0 && !first)
		first = r;
	if ((r = caches(w, sysfs, nr_cpus)) < 0 && !first)
		first = r;
	if ((r = mem_topology(w, sysfs)) < 0 && !first)
		first = r;
	return first;
}
