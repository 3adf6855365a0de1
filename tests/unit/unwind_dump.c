// SPDX-License-Identifier: MIT
/*
 * Test-only: unwinds every `--call-graph dwarf` sample of a perf.data file
 * with sonde's unwinder and prints the user call chains.
 *
 *   unwind_dump [-r] [-q] [-n N] FILE
 *
 * Per sample with user registers and a stack copy: a line "# TID TIME"
 * (time in ns), then one ip per line (hex), innermost first, then a blank
 * line.  -r prints each ip as perf script does (relative to its mapping:
 * ip - start + pgoff); -q prints nothing but the totals, -n unwinds the
 * file N times (timing).  Totals (samples, frames, errors, ns per sample
 * spent in sonde_unwind) go to stderr.
 *
 * The process model is deliberately minimal: per pid, a list of its
 * MMAP/MMAP2 file mappings (the newest holding an address wins), copied
 * on fork and dropped on exec.
 */
#include <sonde/perf_data.h>
#include <sonde/unwind.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct map {
	uint32_t pid;
	uint64_t start, end, pgoff;
	char *path;
};

static struct map *maps;
static size_t nmaps, maps_cap;

static void map_add(uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	if (nmaps == maps_cap) {
		maps_cap = maps_cap ? maps_cap * 2 : 256;
		maps = realloc(maps, maps_cap * sizeof(*maps));
		if (!maps)
			abort();
	}
	maps[nmaps++] = (struct map){pid, start, end, pgoff, strdup(path)};
}

static void maps_drop(uint32_t pid)
{
	size_t j = 0;

	for (size_t i = 0; i < nmaps; i++) {
		if (maps[i].pid == pid)
			free(maps[i].path);
		else
			maps[j++] = maps[i];
	}
	nmaps = j;
}

static void maps_clear(void)
{
	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].path);
	nmaps = 0;
}

static const struct map *map_find(uint32_t pid, uint64_t addr)
{
	for (size_t i = nmaps; i-- > 0;)
		if (maps[i].pid == pid && addr >= maps[i].start && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

static int find_map(void *ctx, uint32_t pid, uint64_t addr, struct sonde_unwind_map *out)
{
	const struct map *m = map_find(pid, addr);

	/* only files: anonymous memory, [stack], [vdso] have nothing to read */
	if (!m || m->path[0] != '/')
		return -ENOENT;
	*out = (struct sonde_unwind_map){m->start, m->end, m->pgoff, m->path};
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sonde_pd_reader *r;
	struct sonde_errmsg em;
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	struct sonde_unwinder *u;
	static uint64_t ips[512];
	uint64_t samples = 0, frames = 0, errors = 0, ns = 0;
	bool rel = false, quiet = false;
	int opt, ret = 0, passes = 1;

	while ((opt = getopt(argc, argv, "rqn:")) != -1) {
		if (opt == 'r')
			rel = true;
		else if (opt == 'q')
			quiet = true;
		else if (opt == 'n')
			passes = atoi(optarg);
		else
			goto usage;
	}
	if (optind + 1 != argc) {
	usage:
		fprintf(stderr, "usage: unwind_dump [-r] [-q] [-n N] FILE\n");
		return 2;
	}
	if (sonde_pd_reader_open(&r, argv[optind], &em)) {
		fprintf(stderr, "unwind_dump: %s\n", em.text);
		return 1;
	}
	if (sonde_unwinder_new(&u, find_map, NULL))
		return 1;
	for (int pass = 0; pass < passes; pass++) {
		if (pass && sonde_pd_reader_rewind(r))
			break;
		maps_clear();
		while ((ret = sonde_pd_reader_next(r, &rec)) == 1) {
			const struct sonde_pd_sample *sm = &ev.sample;
			struct sonde_unwind_sample s;
			uint64_t t0;
			int n;

			if (sonde_pd_reader_parse(r, &rec, &ev))
				continue;
			switch (rec.type) {
			case PERF_RECORD_MMAP:
			case PERF_RECORD_MMAP2:
				map_add(ev.mmap.pid, ev.mmap.start, ev.mmap.start + ev.mmap.len,
					ev.mmap.pgoff, ev.mmap.filename);
				continue;
			case PERF_RECORD_COMM:
				if (rec.misc & PERF_RECORD_MISC_COMM_EXEC) {
					maps_drop(ev.comm.pid);
					sonde_unwinder_forget(u, ev.comm.pid);
				}
				continue;
			case PERF_RECORD_FORK:
				if (ev.fork.pid != ev.fork.ppid) {
					size_t n0 = nmaps;

					for (size_t i = 0; i < n0; i++)
						if (maps[i].pid == ev.fork.ppid)
							map_add(ev.fork.pid, maps[i].start,
								maps[i].end, maps[i].pgoff,
								maps[i].path);
				}
				continue;
			case PERF_RECORD_EXIT:
				if (ev.fork.pid == ev.fork.tid)
					sonde_unwinder_forget(u, ev.fork.pid);
				continue;
			case PERF_RECORD_SAMPLE:
				break;
			default:
				continue;
			}
			if (!(sm->present & PERF_SAMPLE_REGS_USER) ||
			    !(sm->present & PERF_SAMPLE_STACK_USER))
				continue;
			s = (struct sonde_unwind_sample){
			    .pid = sm->pid,
			    .tid = sm->tid,
			    .abi = sm->regs_user_abi,
			    .regs_mask = rec.attr->attr.sample_regs_user,
			    .regs = sm->regs_user,
			    .nr_regs = sm->regs_user_nr,
			    .stack = sm->stack_user,
			    .stack_size = sm->stack_user_dyn_size,
			    .arch = sonde_pd_reader_features(r)->arch,
			};
			samples++;
			t0 = now_ns();
			n = sonde_unwind(u, &s, ips, sizeof(ips) / sizeof(ips[0]));
			ns += now_ns() - t0;
			if (n < 0) {
				errors++;
				n = 0;
			}
			frames += (uint64_t)n;
			if (quiet || pass)
				continue;
			printf("# %u %" PRIu64 "\n", sm->tid, sm->time);
			for (int i = 0; i < n; i++) {
				const struct map *m = rel ? map_find(sm->pid, ips[i]) : NULL;

				printf("%" PRIx64 "\n", m ? ips[i] - m->start + m->pgoff : ips[i]);
			}
			printf("\n");
		}
	}
	fprintf(stderr,
		"unwind_dump: %" PRIu64 " samples, %" PRIu64 " frames, %" PRIu64
		" errors, %.0f ns/sample\n",
		samples, frames, errors, samples ? (double)ns / (double)samples : 0.0);
	if (ret < 0)
		fprintf(stderr, "unwind_dump: %s\n", sonde_pd_reader_errmsg(r));
	sonde_unwinder_free(u);
	sonde_pd_reader_close(r);
	maps_clear();
	free(maps);
	return ret < 0 ? 1 : 0;
}
