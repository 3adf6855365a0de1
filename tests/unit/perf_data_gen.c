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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_BASE 0x400000ull
#define SAMPLE_ID 1001ull

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void hdr(struct buf *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {type, misc, 0};

	b->n = 0;
	put(b, &h, sizeof(h));
}

static void end(struct buf *b)
{
	while (b->n % 8)
		b->b[b->n++] = 0;
	((struct perf_event_header *)(void *)b->b)->size = (uint16_t)b->n;
}

/* sample_id_all trailer for TID|TIME|CPU|IDENTIFIER */
static void trailer(struct buf *b, uint32_t pid, uint64_t time)
{
	put32(b, pid);
	put32(b, pid);
	put64(b, time);
	put32(b, 0);
	put32(b, 0);
	put64(b, SAMPLE_ID);
}

static void attr_init(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 1000;
	a->freq = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_CALLCHAIN;
	a->sample_id_all = 1;
	a->comm = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

/* Builds the records into @cb, calling it once per record. */
static int records(uint32_t pid, const char *comm, int nsamples,
		   int (*cb)(void *ctx, const void *rec, size_t len), void *ctx)
{
	struct buf b;
	uint64_t t = 1000000000ull;
	char name[16] = {0};
	int err;

	hdr(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put32(&b, pid);
	put32(&b, pid);
	strncpy(name, comm, sizeof(name) - 1);
	put(&b, name, (strlen(name) + 8) & ~7ul);
	trailer(&b, pid, t);
	end(&b);
	if ((err = cb(ctx, b.b, b.n)))
		return err;

	hdr(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put32(&b, pid);
	put32(&b, pid);
	put64(&b, FAKE_BASE);
	put64(&b, 0x10000);
	put64(&b, 0);
	put32(&b, 8);	 /* maj */
	put32(&b, 1);	 /* min */
	put64(&b, 4242); /* ino */
	put64(&b, 0);
	put32(&b, 5); /* PROT_READ|PROT_EXEC */
	put32(&b, 2); /* MAP_PRIVATE */
	put(&b, "/nonexistent/sonde-fake.so\0\0\0\0\0", 32);
	trailer(&b, pid, t + 1);
	end(&b);
	if ((err = cb(ctx, b.b, b.n)))
		return err;

	for (int i = 0; i < nsamples; i++) {
		hdr(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		put64(&b, SAMPLE_ID);
		put64(&b, FAKE_BASE + 0x100 + 0x100 * (uint64_t)(i % 3)); /* ip */
		put32(&b, pid);
		put32(&b, pid);
		put64(&b, t + 1000 + 1000000ull * (uint64_t)i);
		put32(&b, (uint32_t)(i % 2)); /* cpu */
		put32(&b, 0);
		put64(&b, 1000000); /* period */
		put64(&b, 3);	    /* callchain */
		put64(&b, PERF_CONTEXT_USER);
		put64(&b, FAKE_BASE + 0x100 + 0x100 * (uint64_t)(i % 3));
		put64(&b, FAKE_BASE + 0x800);
		end(&b);
		if ((err = cb(ctx, b.b, b.n)))
			return err;
	}
	hdr(&b, PERF_RECORD_EXIT, 0);
	put32(&b, pid);
	put32(&b, 1);
	put32(&b, pid);
	put32(&b, 1);
	put64(&b, t + 1000000ull * (uint64_t)nsamples + 5000);
	trailer(&b, pid, t + 1000000ull * (uint64_t)nsamples + 5000);
	end(&b);
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
	struct buf b;
	uint64_t magic = SONDE_PD_MAGIC, size = 16;

	if (!f)
		return 1;
	fwrite(&magic, 8, 1, f);
	fwrite(&size, 8, 1, f);
	attr_init(&a);
	a.size = SONDE_PD_ATTR_SIZE;
	hdr(&b, SONDE_PD_RECORD_HEADER_ATTR, 0);
	put(&b, &a, SONDE_PD_ATTR_SIZE);
	put64(&b, SAMPLE_ID);
	end(&b);
	to_file(f, b.b, b.n);
	records(pid, comm, n, to_file, f);
	hdr(&b, SONDE_PD_RECORD_FINISHED_ROUND, 0);
	end(&b);
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
	uint64_t id = SAMPLE_ID;
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
	attr_init(&a);
	sonde_pd_writer_add_attr(w, &a, "cpu-clock", &id, 1);
	if (!tiny) {
		sonde_pd_host_fill(&h);
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
