/* SPDX-License-Identifier: MIT */
/*
 * Test-only builders of perf records, shared by perf_data_gen (the small
 * captures of the integration tests and fuzz seeds) and the offline unit
 * tests of the analysis core (test_pd_ordered, test_machine, test_report).
 *
 * Every record is laid out by hand in perf's order for the one event
 * layout perf_data_gen uses: samples with IDENTIFIER|IP|TID|TIME|CPU|
 * PERIOD|CALLCHAIN, side-band records with the sample_id_all trailer
 * TID|TIME|CPU|IDENTIFIER.  A unit test knows what it wrote, so its
 * expected values come from these calls, never from sonde's output.
 */
#ifndef SONDE_TEST_PD_GEN_H
#define SONDE_TEST_PD_GEN_H

#include <sonde/perf_data.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PDG_SAMPLE_ID 1001ull
#define PDG_SAMPLE_TYPE                                                                            \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* One record being built. */
struct pdg_buf {
	uint8_t b[4096] __attribute__((aligned(8)));
	size_t n;
};

static inline void pdg_put(struct pdg_buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static inline void pdg_put64(struct pdg_buf *b, uint64_t v)
{
	pdg_put(b, &v, 8);
}

static inline void pdg_put32(struct pdg_buf *b, uint32_t v)
{
	pdg_put(b, &v, 4);
}

static inline void pdg_hdr(struct pdg_buf *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {type, misc, 0};

	b->n = 0;
	pdg_put(b, &h, sizeof(h));
}

/* Pads to 8 bytes and sets the header's size. */
static inline void pdg_end(struct pdg_buf *b)
{
	while (b->n % 8)
		b->b[b->n++] = 0;
	((struct perf_event_header *)(void *)b->b)->size = (uint16_t)b->n;
}

/* sample_id_all trailer for TID|TIME|CPU|IDENTIFIER */
static inline void pdg_trailer(struct pdg_buf *b, uint32_t pid, uint32_t tid, uint64_t time)
{
	pdg_put32(b, pid);
	pdg_put32(b, tid);
	pdg_put64(b, time);
	pdg_put32(b, 0);
	pdg_put32(b, 0);
	pdg_put64(b, PDG_SAMPLE_ID);
}

/* perf_data_gen's event: cpu-clock, user only, the layout above. */
static inline void pdg_attr_init(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 1000;
	a->freq = 1;
	a->sample_type = PDG_SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->comm = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static inline void pdg_comm(struct pdg_buf *b, uint32_t pid, uint32_t tid, const char *comm,
			    bool exec, uint64_t time)
{
	char name[16] = {0};

	pdg_hdr(b, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	pdg_put32(b, pid);
	pdg_put32(b, tid);
	strncpy(name, comm, sizeof(name) - 1);
	pdg_put(b, name, (strlen(name) + 8) & ~7ul);
	pdg_trailer(b, pid, tid, time);
	pdg_end(b);
}

/* An executable MMAP2 of @path; @pid UINT32_MAX with a kernel cpumode for the kernel. */
static inline void pdg_mmap2(struct pdg_buf *b, uint32_t pid, uint64_t start, uint64_t len,
			     uint64_t pgoff, uint64_t ino, const char *path, uint64_t time)
{
	char name[256] = {0};

	pdg_hdr(b, PERF_RECORD_MMAP2,
		pid == UINT32_MAX ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	pdg_put32(b, pid);
	pdg_put32(b, pid);
	pdg_put64(b, start);
	pdg_put64(b, len);
	pdg_put64(b, pgoff);
	pdg_put32(b, 8); /* maj */
	pdg_put32(b, 1); /* min */
	pdg_put64(b, ino);
	pdg_put64(b, 0);
	pdg_put32(b, 5); /* PROT_READ|PROT_EXEC */
	pdg_put32(b, 2); /* MAP_PRIVATE */
	strncpy(name, path, sizeof(name) - 1);
	pdg_put(b, name, (strlen(name) + 8) & ~7ul);
	pdg_trailer(b, pid, pid, time);
	pdg_end(b);
}

/* FORK or EXIT (@type). */
static inline void pdg_task(struct pdg_buf *b, uint32_t type, uint32_t pid, uint32_t ppid,
			    uint32_t tid, uint32_t ptid, uint64_t time)
{
	pdg_hdr(b, type, 0);
	pdg_put32(b, pid);
	pdg_put32(b, ppid);
	pdg_put32(b, tid);
	pdg_put32(b, ptid);
	pdg_put64(b, time);
	pdg_trailer(b, pid, tid, time);
	pdg_end(b);
}

/*
 * A sample at @ip with @nchain call-chain entries (as the kernel writes
 * them: context markers included); @cpumode PERF_RECORD_MISC_USER or _KERNEL.
 */
static inline void pdg_sample_of(struct pdg_buf *b, uint64_t id, uint16_t cpumode, uint32_t pid,
				 uint32_t tid, uint64_t time, uint32_t cpu, uint64_t ip,
				 uint64_t period, const uint64_t *chain, size_t nchain)
{
	pdg_hdr(b, PERF_RECORD_SAMPLE, cpumode);
	pdg_put64(b, id);
	pdg_put64(b, ip);
	pdg_put32(b, pid);
	pdg_put32(b, tid);
	pdg_put64(b, time);
	pdg_put32(b, cpu);
	pdg_put32(b, 0);
	pdg_put64(b, period);
	pdg_put64(b, nchain);
	for (size_t i = 0; i < nchain; i++)
		pdg_put64(b, chain[i]);
	pdg_end(b);
}

/* The same for perf_data_gen's event. */
static inline void pdg_sample(struct pdg_buf *b, uint16_t cpumode, uint32_t pid, uint32_t tid,
			      uint64_t time, uint32_t cpu, uint64_t ip, uint64_t period,
			      const uint64_t *chain, size_t nchain)
{
	pdg_sample_of(b, PDG_SAMPLE_ID, cpumode, pid, tid, time, cpu, ip, period, chain, nchain);
}

/* LOST: @lost records of the event with sample id @id were dropped. */
static inline void pdg_lost(struct pdg_buf *b, uint64_t id, uint64_t lost, uint64_t time)
{
	pdg_hdr(b, PERF_RECORD_LOST, 0);
	pdg_put64(b, id);
	pdg_put64(b, lost);
	pdg_trailer(b, UINT32_MAX, UINT32_MAX, time);
	pdg_end(b);
}

static inline void pdg_round(struct pdg_buf *b)
{
	pdg_hdr(b, SONDE_PD_RECORD_FINISHED_ROUND, 0);
	pdg_end(b);
}

/* ---- captures for the unit tests -------------------------------------- */

enum pdg_mode {
	PDG_FILE, /* plain file: the reader's records stay mapped (stable) */
	PDG_ZSTD, /* -z: records come out of a decompression buffer */
	PDG_PIPE, /* pipe mode: records are read from a stream */
};

/* A writer of perf_data_gen's event (with kernel samples allowed). */
static inline struct sonde_pd_writer *pdg_writer_open(const char *path, enum pdg_mode mode)
{
	struct sonde_pd_writer *w = NULL;
	struct perf_event_attr a;
	uint64_t id = PDG_SAMPLE_ID;
	int err;

	if (mode == PDG_PIPE) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		/* The writer does not close it: the fd lives as long as the test. */
		err = fd < 0 ? -1 : sonde_pd_writer_open_stream(&w, fd, NULL);
	} else {
		err = sonde_pd_writer_open(&w, path, NULL);
	}
	if (err)
		return NULL;
	pdg_attr_init(&a);
	a.exclude_kernel = 0;
	if (sonde_pd_writer_add_attr(w, &a, "cpu-clock", &id, 1) < 0 ||
	    (mode == PDG_ZSTD && sonde_pd_writer_set_compression(w, 1))) {
		sonde_pd_writer_close(w, NULL);
		return NULL;
	}
	return w;
}

/* Writes the record in @b. */
static inline int pdg_write(struct sonde_pd_writer *w, const struct pdg_buf *b)
{
	return sonde_pd_writer_write(w, b->b, b->n);
}

/* Creates @path (a mkstemp() template, rewritten) and lets @write fill it. */
static inline int pdg_capture_file(char *path, int (*write)(void))
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	close(fd);
	return write();
}

#endif
