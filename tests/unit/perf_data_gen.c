// SPDX-License-Identifier: MIT
/*
 * Test-only generator of small perf.data files through sonde's writer:
 * a fake process (COMM, MMAP2) with samples at known addresses, plus the
 * host features.  The integration tests open its output in perf; the fuzz
 * corpus seeds come from it too.
 *
 *   perf_data_gen OUT [-n SAMPLES] [-p PID] [-c COMM] [--tiny] [--pipe]
 *
 * --tiny leaves out the host features (small fuzz seeds); --pipe writes a
 * pipe-mode stream by hand (the writer makes file mode only); --abort
 * syncs after the records and dies without closing (a killed recorder).
 */
#include <sonde/perf_data.h>
#include <sonde/record.h>

#include "pd_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_BASE 0x400000ull

/* Builds the records, calling @cb once per record. */
static int records(uint32_t pid, const char *comm, int nsamples,
		   int (*cb)(void *ctx, const void *rec, size_t len), void *ctx)
{
	struct pdg_buf b;
	uint64_t t = 1000000000ull, tend = t + 1000000ull * (uint64_t)nsamples + 5000;
	int err;

	pdg_comm(&b, pid, pid, comm, true, t);
	if ((err = cb(ctx, b.b, b.n)))
		return err;
	pdg_mmap2(&b, pid, FAKE_BASE, 0x10000, 0, 4242, "/nonexistent/sonde-fake.so", t + 1);
	if ((err = cb(ctx, b.b, b.n)))
		return err;
	for (int i = 0; i < nsamples; i++) {
		uint64_t ip = FAKE_BASE + 0x100 + 0x100 * (uint64_t)(i % 3);
		uint64_t chain[3] = {PERF_CONTEXT_USER, ip, FAKE_BASE + 0x800};

		pdg_sample(&b, PERF_RECORD_MISC_USER, pid, pid, t + 1000 + 1000000ull * (uint64_t)i,
			   (uint32_t)(i % 2), ip, 1000000, chain, 3);
		if ((err = cb(ctx, b.b, b.n)))
			return err;
	}
	pdg_task(&b, PERF_RECORD_EXIT, pid, 1, pid, 1, tend);
	return cb(ctx, b.b, b.n);
}

static int to_writer(void *ctx, const void *rec, size_t len)
{
	return sonde_pd_writer_write(ctx, rec, len);
}

static int to_file(void *ctx, const void *rec, size_t len)
{
	return fwrite(rec, 1, len, ctx) == len ? 0 : -1;
}

static int write_pipe(const char *out, uint32_t pid, const char *comm, int n)
{
	FILE *f = fopen(out, "wb");
	struct perf_event_attr a;
	struct pdg_buf b;
	uint64_t magic = SONDE_PD_MAGIC, size = 16;

	if (!f)
		return 1;
	fwrite(&magic, 8, 1, f);
	fwrite(&size, 8, 1, f);
	pdg_attr_init(&a);
	a.size = SONDE_PD_ATTR_SIZE;
	pdg_hdr(&b, SONDE_PD_RECORD_HEADER_ATTR, 0);
	pdg_put(&b, &a, SONDE_PD_ATTR_SIZE);
	pdg_put64(&b, PDG_SAMPLE_ID);
	pdg_end(&b);
	to_file(f, b.b, b.n);
	records(pid, comm, n, to_file, f);
	pdg_round(&b);
	to_file(f, b.b, b.n);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *comm = "sonde-fake";
	int n = 10, tiny = 0, pipe = 0, die = 0;
	uint32_t pid = 4242;
	struct sonde_pd_writer *w;
	struct sonde_errmsg em;
	struct perf_event_attr a;
	struct sonde_pd_host h;
	uint64_t id = PDG_SAMPLE_ID;
	static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
					7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			pid = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			comm = argv[++i];
		else if (!strcmp(argv[i], "--tiny"))
			tiny = 1;
		else if (!strcmp(argv[i], "--pipe"))
			pipe = 1;
		else if (!strcmp(argv[i], "--abort"))
			die = 1;
		else
			out = argv[i];
	}
	if (!out) {
		fprintf(stderr, "usage: perf_data_gen OUT [-n N] [-p PID] [-c COMM] [--tiny] "
				"[--pipe] [--abort]\n");
		return 2;
	}
	if (pipe)
		return write_pipe(out, pid, comm, n);
	if (sonde_pd_writer_open(&w, out, &em)) {
		fprintf(stderr, "perf_data_gen: %s\n", em.text);
		return 1;
	}
	pdg_attr_init(&a);
	sonde_pd_writer_add_attr(w, &a, "cpu-clock", &id, 1);
	if (!tiny) {
		sonde_record_host_fill(&h, NULL);
		sonde_pd_writer_set_host(w, &h);
		sonde_pd_writer_set_cmdline(w, argc, (const char *const *)argv);
		sonde_pd_writer_add_build_id(w, (int32_t)pid, PERF_RECORD_MISC_USER, bid, 20,
					     "/nonexistent/sonde-fake.so");
		sonde_pd_writer_set_sample_time(w, 1000001000ull,
						1000001000ull + 1000000ull * (uint64_t)(n - 1));
		sonde_pd_writer_set_sonde_feature(w, SONDE_PD_SFEAT_KALLSYMS,
						  "ffffffff81000000 T _text\n", 26);
	}
	records(pid, comm, n, to_writer, w);
	if (die) {
		sonde_pd_writer_sync(w);
		abort();
	}
	if (sonde_pd_writer_close(w, &em)) {
		fprintf(stderr, "perf_data_gen: %s\n", em.text);
		return 1;
	}
	return 0;
}
