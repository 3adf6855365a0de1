// SPDX-License-Identifier: MIT
/*
 * perf.data writer -> reader round trips, for every record type (with a
 * tripwire that fails when a type has no test) and every header feature;
 * truncated and corrupted files (errors carry offsets, nothing crashes);
 * pipe mode; the sticky error on a failing disk; a killed writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/perf_data.h>
#include <sonde/record.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "fake_tree.h"

/* ---- helpers ---------------------------------------------------------- */

/* A record under construction, 8-byte aligned. */
struct rb {
	uint64_t w[8192];
	size_t n; /* bytes */
};

static uint8_t *rb_bytes(struct rb *b)
{
	return (uint8_t *)b->w;
}

static void rb_put(struct rb *b, const void *p, size_t n)
{
	memcpy(rb_bytes(b) + b->n, p, n);
	b->n += n;
}

static void rb_64(struct rb *b, uint64_t v)
{
	rb_put(b, &v, 8);
}

static void rb_32(struct rb *b, uint32_t v)
{
	rb_put(b, &v, 4);
}

static void rb_begin(struct rb *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {type, misc, 0};

	b->n = 0;
	rb_put(b, &h, sizeof(h));
}

static void rb_pad(struct rb *b)
{
	while (b->n % 8)
		rb_bytes(b)[b->n++] = 0;
}

static void rb_setsize(struct rb *b, uint16_t size)
{
	memcpy(rb_bytes(b) + 6, &size, 2);
}

static void rb_end(struct rb *b)
{
	rb_pad(b);
	rb_setsize(b, (uint16_t)b->n);
}

#define ID_FULL 11u
#define ID_PLAIN 22u
#define PID 4242u
#define TID 4243u

/* Trailer for the "plain" event: TID|TIME|ID|STREAM_ID|CPU|IDENTIFIER. */
static void rb_trailer(struct rb *b, uint64_t time)
{
	rb_32(b, PID);
	rb_32(b, TID);
	rb_64(b, time);
	rb_64(b, ID_PLAIN); /* ID */
	rb_64(b, 77);	    /* STREAM_ID */
	rb_32(b, 3);	    /* CPU */
	rb_32(b, 0);
	rb_64(b, ID_PLAIN); /* IDENTIFIER */
}

static void check_trailer(const struct sonde_pd_event *ev, uint64_t time)
{
	assert_int_equal(ev->sample.pid, PID);
	assert_int_equal(ev->sample.tid, TID);
	assert_int_equal(ev->sample.time, time);
	assert_int_equal(ev->sample.id, ID_PLAIN);
	assert_int_equal(ev->sample.stream_id, 77);
	assert_int_equal(ev->sample.cpu, 3);
}

static void attr_plain(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_READ;
	a->read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
	a->sample_id_all = 1;
}

#define REGS_USER_MASK 0x7ull /* 3 registers */
#define REGS_INTR_MASK 0x3ull /* 2 registers */

static void attr_full(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
			 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
			 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
			 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX;
	a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_LOST;
	a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	a->sample_regs_user = REGS_USER_MASK;
	a->sample_regs_intr = REGS_INTR_MASK;
	a->sample_id_all = 1;
}

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/sonde-pd-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

/* Reads a whole file into an exact-size buffer (ASan sees over-reads). */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	b = malloc(*len ? *len : 1);
	assert_non_null(b);
	assert_int_equal(read(fd, b, *len), (ssize_t)*len);
	close(fd);
	return b;
}

static struct sonde_pd_writer *new_writer(const char *name)
{
	struct sonde_pd_writer *w;
	struct perf_event_attr a;
	uint64_t id;

	assert_int_equal(sonde_pd_writer_open(&w, tmp_path(name), NULL), 0);
	attr_full(&a);
	id = ID_FULL;
	assert_int_equal(sonde_pd_writer_add_attr(w, &a, "full", &id, 1), 0);
	attr_plain(&a);
	id = ID_PLAIN;
	assert_int_equal(sonde_pd_writer_add_attr(w, &a, "plain", &id, 1), 1);
	return w;
}

/* ---- record round trips ----------------------------------------------- */

static const uint64_t chain[] = {PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000};
static const uint8_t raw_bytes[12] = "raw-payload";

static void build_full_sample(struct rb *b)
{
	rb_begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_64(b, ID_FULL); /* IDENTIFIER */
	rb_64(b, 0x401000);
	rb_32(b, PID);
	rb_32(b, TID);
	rb_64(b, 123456789);
	rb_64(b, 0xdead0000); /* ADDR */
	rb_64(b, ID_FULL);    /* ID */
	rb_64(b, 99);	      /* STREAM_ID */
	rb_32(b, 1);	      /* CPU */
	rb_32(b, 0);
	rb_64(b, 4000); /* PERIOD */
	/* READ, group: nr, enabled, running, {value, id, lost} x 2 */
	rb_64(b, 2);
	rb_64(b, 1000);
	rb_64(b, 900);
	rb_64(b, 5);
	rb_64(b, ID_FULL);
	rb_64(b, 0);
	rb_64(b, 6);
	rb_64(b, 33);
	rb_64(b, 1);
	rb_64(b, 4); /* CALLCHAIN */
	rb_put(b, chain, sizeof(chain));
	rb_32(b, sizeof(raw_bytes)); /* RAW: 4 + 12 = 16 */
	rb_put(b, raw_bytes, sizeof(raw_bytes));
	rb_64(b, 1);   /* BRANCH nr */
	rb_64(b, 7);   /* hw_idx */
	rb_64(b, 0xa); /* from */
	rb_64(b, 0xb); /* to */
	rb_64(b, 0xc); /* flags */
	rb_64(b, PERF_SAMPLE_REGS_ABI_64);
	rb_64(b, 100);
	rb_64(b, 101);
	rb_64(b, 102);
	rb_64(b, 16); /* STACK_USER size */
	rb_64(b, 0x1111);
	rb_64(b, 0x2222);
	rb_64(b, 8);  /* dyn size */
	rb_64(b, 55); /* WEIGHT */
	rb_64(b, 66); /* DATA_SRC */
	rb_64(b, 77); /* TRANSACTION */
	rb_64(b, PERF_SAMPLE_REGS_ABI_64);
	rb_64(b, 200);
	rb_64(b, 201);
	rb_64(b, 0xfeed000); /* PHYS_ADDR */
	rb_64(b, 42);	     /* CGROUP */
	rb_64(b, 4096);	     /* DATA_PAGE_SIZE */
	rb_64(b, 2097152);   /* CODE_PAGE_SIZE */
	rb_64(b, 8);	     /* AUX size */
	rb_64(b, 0xabcdef);
	rb_end(b);
}

static void check_full_sample(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	const struct sonde_pd_sample *s = &ev->sample;

	assert_non_null(rec->attr);
	assert_string_equal(rec->attr->name, "full");
	assert_int_equal(s->id, ID_FULL);
	assert_int_equal(s->ip, 0x401000);
	assert_int_equal(s->pid, PID);
	assert_int_equal(s->tid, TID);
	assert_int_equal(s->time, 123456789);
	assert_int_equal(s->addr, 0xdead0000);
	assert_int_equal(s->stream_id, 99);
	assert_int_equal(s->cpu, 1);
	assert_int_equal(s->period, 4000);
	assert_int_equal(s->read_nr, 2);
	assert_int_equal(s->read_time_enabled, 1000);
	assert_int_equal(s->read_time_running, 900);
	assert_int_equal(s->read_stride, 3);
	assert_int_equal(s->read_values[0], 5);
	assert_int_equal(s->read_values[1], ID_FULL);
	assert_int_equal(s->read_values[3], 6);
	assert_int_equal(s->read_values[4], 33);
	assert_int_equal(s->read_values[5], 1);
	assert_int_equal(s->callchain_nr, 4);
	assert_memory_equal(s->callchain, chain, sizeof(chain));
	assert_int_equal(s->raw_size, sizeof(raw_bytes));
	assert_memory_equal(s->raw, raw_bytes, sizeof(raw_bytes));
	assert_int_equal(s->branch_nr, 1);
	assert_int_equal(s->branch_hw_idx, 7);
	assert_int_equal(s->branch_entries[0], 0xa);
	assert_int_equal(s->branch_entries[2], 0xc);
	assert_int_equal(s->regs_user_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s->regs_user_nr, 3);
	assert_int_equal(s->regs_user[2], 102);
	assert_int_equal(s->stack_user_size, 16);
	assert_int_equal(s->stack_user[0], 0x11);
	assert_int_equal(s->stack_user_dyn_size, 8);
	assert_int_equal(s->weight, 55);
	assert_int_equal(s->data_src, 66);
	assert_int_equal(s->transaction, 77);
	assert_int_equal(s->regs_intr_nr, 2);
	assert_int_equal(s->regs_intr[1], 201);
	assert_int_equal(s->phys_addr, 0xfeed000);
	assert_int_equal(s->cgroup, 42);
	assert_int_equal(s->data_page_size, 4096);
	assert_int_equal(s->code_page_size, 2097152);
	assert_int_equal(s->aux_size, 8);
	assert_int_equal(s->aux[0], 0xef);
}

/* A SAMPLE of the plain event: non-group read with id. */
static void build_plain_sample(struct rb *b)
{
	rb_begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	rb_64(b, ID_PLAIN);
	rb_64(b, 0xffffffff81000000ull);
	rb_32(b, PID);
	rb_32(b, TID);
	rb_64(b, 555);
	rb_64(b, ID_PLAIN);
	rb_64(b, 77);
	rb_32(b, 3);
	rb_32(b, 0);
	rb_64(b, 31); /* read value */
	rb_64(b, 32); /* enabled */
	rb_64(b, ID_PLAIN);
	rb_end(b);
}

static void check_plain_sample(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	assert_string_equal(rec->attr->name, "plain");
	assert_int_equal(ev->sample.ip, 0xffffffff81000000ull);
	assert_int_equal(ev->sample.read_nr, 1);
	assert_int_equal(ev->sample.read_value, 31);
	assert_int_equal(ev->sample.read_time_enabled, 32);
	assert_int_equal(ev->sample.read_id, ID_PLAIN);
	assert_int_equal(ev->sample.time, 555);
}

static void build_mmap(struct rb *b)
{
	rb_begin(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	rb_32(b, PID);
	rb_32(b, TID);
	rb_64(b, 0x400000);
	rb_64(b, 0x1000);
	rb_64(b, 0x200);
	rb_put(b, "/bin/true", 10);
	rb_pad(b);
	rb_trailer(b, 10);
	rb_end(b);
}

static void check_mmap(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	(void)rec;
	assert_int_equal(ev->mmap.pid, PID);
	assert_int_equal(ev->mmap.start, 0x400000);
	assert_int_equal(ev->mmap.len, 0x1000);
	assert_int_equal(ev->mmap.pgoff, 0x200);
	assert_string_equal(ev->mmap.filename, "/bin/true");
	check_trailer(ev, 10);
}

static void build_mmap2(struct rb *b)
{
	rb_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_32(b, PID);
	rb_32(b, TID);
	rb_64(b, 0x7f0000000000);
	rb_64(b, 0x21000);
	rb_64(b, 0);
	rb_32(b, 8);
	rb_32(b, 3);
	rb_64(b, 123456);
	rb_64(b, 9);
	rb_32(b, 5);
	rb_32(b, 2);
	rb_put(b, "/usr/lib/libc.so.6", 19);
	rb_pad(b);
	rb_trailer(b, 11);
	rb_end(b);
}

static void check_mmap2(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	(void)rec;
	assert_int_equal(ev->mmap.start, 0x7f0000000000);
	assert_int_equal(ev->mmap.maj, 8);
	assert_int_equal(ev->mmap.min, 3);
	assert_int_equal(ev->mmap.ino, 123456);
	assert_int_equal(ev->mmap.ino_generation, 9);
	assert_int_equal(ev->mmap.prot, 5);
	assert_int_equal(ev->mmap.flags, 2);
	assert_string_equal(ev->mmap.filename, "/usr/lib/libc.so.6");
	check_trailer(ev, 11);
}

static void build_comm(struct rb *b)
{
	rb_begin(b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rb_32(b, PID);
	rb_32(b, TID);
	rb_put(b, "worker", 7);
	rb_pad(b);
	rb_trailer(b, 12);
	rb_end(b);
}

static void check_comm(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	assert_int_equal(rec->misc, PERF_RECORD_MISC_COMM_EXEC);
	assert_int_equal(ev->comm.pid, PID);
	assert_int_equal(ev->comm.tid, TID);
	assert_string_equal(ev->comm.comm, "worker");
	check_trailer(ev, 12);
}

static void build_fork_like(struct rb *b, uint32_t type)
{
	rb_begin(b, type, 0);
	rb_32(b, PID);
	rb_32(b, 1);
	rb_32(b, TID);
	rb_32(b, 1);
	rb_64(b, 13);
	rb_trailer(b, 13);
	rb_end(b);
}

static void build_fork(struct rb *b)
{
	build_fork_like(b, PERF_RECORD_FORK);
}

static void build_exit(struct rb *b)
{
	build_fork_like(b, PERF_RECORD_EXIT);
}

static void check_fork(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	(void)rec;
	assert_int_equal(ev->fork.pid, PID);
	assert_int_equal(ev->fork.ppid, 1);
	assert_int_equal(ev->fork.tid, TID);
	assert_int_equal(ev->fork.ptid, 1);
	assert_int_equal(ev->fork.time, 13);
	check_trailer(ev, 13);
}

static void build_lost(struct rb *b)
{
	rb_begin(b, PERF_RECORD_LOST, 0);
	rb_64(b, ID_PLAIN);
	rb_64(b, 17);
	rb_trailer(b, 14);
	rb_end(b);
}

static void check_lost(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	(void)rec;
	assert_int_equal(ev->lost.id, ID_PLAIN);
	assert_int_equal(ev->lost.lost, 17);
	check_trailer(ev, 14);
}

static void build_throttle_like(struct rb *b, uint32_t type)
{
	rb_begin(b, type, 0);
	rb_64(b, 15);
	rb_64(b, ID_PLAIN);
	rb_64(b, 77);
	rb_trailer(b, 15);
	rb_end(b);
}

static void build_throttle(struct rb *b)
{
	build_throttle_like(b, PERF_RECORD_THROTTLE);
}

static void build_unthrottle(struct rb *b)
{
	build_throttle_like(b, PERF_RECORD_UNTHROTTLE);
}

static void check_throttle(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	(void)rec;
	assert_int_equal(ev->throttle.time, 15);
	assert_int_equal(ev->throttle.id, ID_PLAIN);
	assert_int_equal(ev->throttle.stream_id, 77);
	check_trailer(ev, 15);
}

/*
 * Records sonde keeps as opaque bytes: a body of @n distinct bytes, then
 * the id trailer for kernel types.  The round trip checks the bytes and,
 * for kernel types, the trailer.
 */
static uint32_t opaque_type;

static void build_opaque(struct rb *b)
{
	rb_begin(b, opaque_type, 0);
	for (uint32_t i = 0; i < 24; i++)
		rb_bytes(b)[b->n++] = (uint8_t)(i * 7 + opaque_type);
	if (opaque_type < SONDE_PD_KERNEL_RECORD_MAX)
		rb_trailer(b, 16);
	rb_end(b);
}

static void check_opaque(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	const uint8_t *p = rec->data;

	for (uint32_t i = 0; i < 24; i++)
		assert_int_equal(p[8 + i], (uint8_t)(i * 7 + opaque_type));
	if (opaque_type < SONDE_PD_KERNEL_RECORD_MAX)
		check_trailer(ev, 16);
}

/* Records followed by data outside their size. */
static void build_auxtrace(struct rb *b)
{
	rb_begin(b, SONDE_PD_RECORD_AUXTRACE, 0);
	rb_64(b, 16); /* size of the data that follows */
	rb_64(b, 0);  /* offset */
	rb_64(b, 0);  /* reference */
	rb_32(b, 0);  /* idx */
	rb_32(b, TID);
	rb_32(b, 1);
	rb_32(b, 0);
	rb_end(b);
	rb_64(b, 0x1122334455667788ull);
	rb_64(b, 0x99aabbccddeeff00ull);
}

static void check_auxtrace(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	(void)ev;
	assert_int_equal(rec->size, 48);
	assert_int_equal(rec->extra_size, 16);
	assert_non_null(rec->extra);
	assert_int_equal(((const uint8_t *)rec->extra)[0], 0x88);
}

static void build_tracing_data_rec(struct rb *b)
{
	rb_begin(b, SONDE_PD_RECORD_HEADER_TRACING_DATA, 0);
	rb_32(b, 8); /* 12-byte record: the blob follows unaligned */
	rb_setsize(b, 12);
	rb_put(b, "tracing!", 8);
}

static void check_tracing_data_rec(const struct sonde_pd_event *ev,
				   const struct sonde_pd_record *rec)
{
	(void)ev;
	assert_int_equal(rec->size, 12);
	assert_int_equal(rec->extra_size, 8);
	assert_memory_equal(rec->extra, "tracing!", 8);
}

/* perf -z: a COMPRESSED record holding one zstd frame of a COMM record,
 * which the reader hands out in its place. */
static void build_compressed(struct rb *b)
{
	static struct rb inner;
	size_t n;

	build_comm(&inner);
	rb_begin(b, SONDE_PD_RECORD_COMPRESSED, 0);
	n = ZSTD_compress(rb_bytes(b) + b->n, sizeof(b->w) - b->n, inner.w, inner.n, 1);
	assert_false(ZSTD_isError(n));
	b->n += n;
	rb_setsize(b, (uint16_t)b->n);
}

static void check_compressed(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec)
{
	assert_int_equal(rec->type, PERF_RECORD_COMM);
	check_comm(ev, rec);
}

/* The type the reader hands out for a case's record. */
static uint32_t read_type(uint32_t written)
{
	return written == SONDE_PD_RECORD_COMPRESSED ? PERF_RECORD_COMM : written;
}

struct rt_case {
	uint32_t type;
	void (*build)(struct rb *b);
	void (*check)(const struct sonde_pd_event *ev, const struct sonde_pd_record *rec);
};

#define OPAQUE(t)                                                                                  \
	{                                                                                          \
		t, build_opaque, check_opaque                                                      \
	}

/*
 * The tripwire: every record type sonde names must have a row here.  When
 * the uapi header or perf grows a type, test_tripwire fails until the new
 * type gets a round trip.
 */
static const struct rt_case cases[] = {
    {PERF_RECORD_MMAP, build_mmap, check_mmap},
    {PERF_RECORD_LOST, build_lost, check_lost},
    {PERF_RECORD_COMM, build_comm, check_comm},
    {PERF_RECORD_EXIT, build_exit, check_fork},
    {PERF_RECORD_THROTTLE, build_throttle, check_throttle},
    {PERF_RECORD_UNTHROTTLE, build_unthrottle, check_throttle},
    {PERF_RECORD_FORK, build_fork, check_fork},
    OPAQUE(PERF_RECORD_READ),
    {PERF_RECORD_SAMPLE, build_full_sample, check_full_sample},
    {PERF_RECORD_SAMPLE, build_plain_sample, check_plain_sample},
    {PERF_RECORD_MMAP2, build_mmap2, check_mmap2},
    OPAQUE(PERF_RECORD_AUX),
    OPAQUE(PERF_RECORD_ITRACE_START),
    OPAQUE(PERF_RECORD_LOST_SAMPLES),
    OPAQUE(PERF_RECORD_SWITCH),
    OPAQUE(PERF_RECORD_SWITCH_CPU_WIDE),
    OPAQUE(PERF_RECORD_NAMESPACES),
    OPAQUE(PERF_RECORD_KSYMBOL),
    OPAQUE(PERF_RECORD_BPF_EVENT),
    OPAQUE(PERF_RECORD_CGROUP),
    OPAQUE(PERF_RECORD_TEXT_POKE),
    OPAQUE(21 /* AUX_OUTPUT_HW_ID */),
    OPAQUE(SONDE_PD_RECORD_HEADER_ATTR),
    OPAQUE(SONDE_PD_RECORD_HEADER_EVENT_TYPE),
    {SONDE_PD_RECORD_HEADER_TRACING_DATA, build_tracing_data_rec, check_tracing_data_rec},
    OPAQUE(SONDE_PD_RECORD_HEADER_BUILD_ID),
    OPAQUE(SONDE_PD_RECORD_FINISHED_ROUND),
    OPAQUE(SONDE_PD_RECORD_ID_INDEX),
    OPAQUE(SONDE_PD_RECORD_AUXTRACE_INFO),
    {SONDE_PD_RECORD_AUXTRACE, build_auxtrace, check_auxtrace},
    OPAQUE(SONDE_PD_RECORD_AUXTRACE_ERROR),
    OPAQUE(SONDE_PD_RECORD_THREAD_MAP),
    OPAQUE(SONDE_PD_RECORD_CPU_MAP),
    OPAQUE(SONDE_PD_RECORD_STAT_CONFIG),
    OPAQUE(SONDE_PD_RECORD_STAT),
    OPAQUE(SONDE_PD_RECORD_STAT_ROUND),
    OPAQUE(SONDE_PD_RECORD_EVENT_UPDATE),
    OPAQUE(SONDE_PD_RECORD_TIME_CONV),
    OPAQUE(SONDE_PD_RECORD_HEADER_FEATURE),
    {SONDE_PD_RECORD_COMPRESSED, build_compressed, check_compressed},
    OPAQUE(SONDE_PD_RECORD_FINISHED_INIT),
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

_Static_assert(PERF_RECORD_MAX == SONDE_PD_KERNEL_RECORD_MAX,
	       "the uapi header has new record types: name them and add round trips");

static void test_tripwire(void **state)
{
	(void)state;
	for (uint32_t t = 1; t < SONDE_PD_RECORD_HEADER_MAX; t++) {
		bool found = false;

		if (t >= SONDE_PD_KERNEL_RECORD_MAX && t < 64)
			continue;
		for (size_t i = 0; i < NCASES; i++)
			found |= cases[i].type == t;
		if (!found)
			fail_msg("record type %u (%s) has no round-trip test", t,
				 sonde_pd_record_name(t));
		assert_string_not_equal(sonde_pd_record_name(t), "UNKNOWN");
	}
	assert_string_equal(sonde_pd_record_name(SONDE_PD_RECORD_HEADER_MAX), "UNKNOWN");
}

/*
 * Writes every case (in one file), reads all back and checks each.  With
 * @zlevel the writer compresses, and the case that is itself a COMPRESSED
 * record is left out (perf never nests them).
 */
static void round_trip(const char *name, int zlevel)
{
	static struct rb b;
	struct sonde_pd_writer *w = new_writer(name);
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	struct sonde_errmsg em;
	size_t i = 0, skipped = 0;
	int ret;

	if (zlevel)
		assert_int_equal(sonde_pd_writer_set_compression(w, zlevel), 0);
	for (size_t k = 0; k < NCASES; k++) {
		if (zlevel && cases[k].type == SONDE_PD_RECORD_COMPRESSED)
			continue;
		opaque_type = cases[k].type;
		cases[k].build(&b);
		assert_int_equal(sonde_pd_writer_write(w, b.w, b.n), 0);
	}
	assert_int_equal(sonde_pd_writer_close(w, &em), 0);

	assert_int_equal(sonde_pd_reader_open(&r, tmp_path(name), &em), 0);
	assert_int_equal(sonde_pd_reader_nr_attrs(r), 2);
	assert_int_equal(sonde_pd_reader_features(r)->has_compressed, zlevel != 0);
	while ((ret = sonde_pd_reader_next(r, &rec)) == 1) {
		if (zlevel && i < NCASES && cases[i].type == SONDE_PD_RECORD_COMPRESSED) {
			i++;
			skipped++;
		}
		assert_true(i < NCASES);
		opaque_type = cases[i].type;
		assert_int_equal(rec.type, read_type(cases[i].type));
		assert_int_equal((uintptr_t)rec.data % 8, 0);
		if (rec.type < SONDE_PD_KERNEL_RECORD_MAX && rec.type != PERF_RECORD_SAMPLE) {
			assert_non_null(rec.attr);
			assert_string_equal(rec.attr->name, "plain");
		}
		if (sonde_pd_reader_parse(r, &rec, &ev) != 0)
			fail_msg("type %u: %s", rec.type, sonde_pd_reader_errmsg(r));
		cases[i].check(&ev, &rec);
		i++;
	}
	if (ret)
		fail_msg("%s", sonde_pd_reader_errmsg(r));
	assert_int_equal(i, NCASES);
	assert_int_equal(skipped, zlevel ? 1 : 0);
	assert_int_equal(sonde_pd_reader_tail(r), SONDE_PD_TAIL_CLEAN);
	/* rewind gives the same stream again */
	assert_int_equal(sonde_pd_reader_rewind(r), 0);
	assert_int_equal(sonde_pd_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, read_type(cases[0].type));
	sonde_pd_reader_close(r);
}

static void test_record_round_trip(void **state)
{
	(void)state;
	round_trip("records.data", 0);
}

static void test_compressed_round_trip(void **state)
{
	(void)state;
	round_trip("records-z.data", 3);
}

/*
 * Many incompressible records: several COMPRESSED records per batch, so
 * records straddle two of them; plus one record bigger than a batch (an
 * AUXTRACE with 1 MiB of data).  Every byte comes back.
 */
static void test_compressed_bulk(void **state)
{
	enum { N = 4000, SZ = 200, AUX = 1 << 20 };
	struct sonde_pd_writer *w = new_writer("bulk-z.data");
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	uint8_t *recs = malloc((size_t)N * SZ), *aux = malloc(16 + 8 + AUX);
	uint64_t seed = 42, auxsz = AUX;
	size_t got = 0;
	int ret;

	(void)state;
	for (size_t i = 0; i < (size_t)N * SZ; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		recs[i] = (uint8_t)(seed >> 56);
	}
	for (size_t i = 0; i < N; i++) {
		struct perf_event_header h = {PERF_RECORD_SWITCH, 0, SZ};

		memcpy(recs + i * SZ, &h, sizeof(h));
	}
	{
		struct perf_event_header h = {SONDE_PD_RECORD_AUXTRACE, 0, 24};

		memcpy(aux, &h, sizeof(h));
		memcpy(aux + 8, &auxsz, 8);
		memset(aux + 16, 0, 8);
		for (size_t i = 0; i < AUX; i++)
			aux[24 + i] = (uint8_t)(i * 13);
	}
	assert_int_equal(sonde_pd_writer_set_compression(w, 1), 0);
	assert_int_equal(sonde_pd_writer_write(w, recs, (size_t)N / 2 * SZ), 0);
	assert_int_equal(sonde_pd_writer_write(w, aux, 24 + AUX), 0);
	assert_int_equal(sonde_pd_writer_write(w, recs + (size_t)N / 2 * SZ, (size_t)N / 2 * SZ),
			 0);
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);

	assert_int_equal(sonde_pd_reader_open(&r, tmp_path("bulk-z.data"), NULL), 0);
	while ((ret = sonde_pd_reader_next(r, &rec)) == 1) {
		if (got == N / 2) {
			assert_int_equal(rec.type, SONDE_PD_RECORD_AUXTRACE);
			assert_int_equal(rec.extra_size, AUX);
			assert_memory_equal(rec.extra, aux + 24, AUX);
		} else {
			size_t k = got < N / 2 ? got : got - 1;

			assert_int_equal(rec.size, SZ);
			assert_memory_equal(rec.data, recs + k * SZ, SZ);
		}
		got++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(got, N + 1);
	sonde_pd_reader_close(r);
	free(recs);
	free(aux);
}

static int read_all(const uint8_t *src, size_t len, enum sonde_pd_tail *tail, char *msg,
		    size_t msglen);
static void check_damaged(const uint8_t *copy, size_t len, size_t most, int *opened, int *refused);

/* A compressed file cut anywhere in its data, or with a damaged byte:
 * what was read stays read, the ending is reported, nothing crashes. */
static void test_compressed_damage(void **state)
{
	enum { N = 600 };
	struct sonde_pd_writer *w = new_writer("dmg-z.data");
	static struct rb b;
	size_t len, doff, dsize;
	enum sonde_pd_tail tail;
	char msg[512];
	uint8_t *buf;
	int full, prev = 0;

	(void)state;
	assert_int_equal(sonde_pd_writer_set_compression(w, 1), 0);
	for (int i = 0; i < N; i++) {
		build_plain_sample(&b);
		sonde_pd_writer_write(w, b.w, b.n);
		/* flushing makes many small COMPRESSED records */
		if (i % 50 == 49)
			sonde_pd_writer_sync(w);
	}
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);
	buf = slurp(tmp_path("dmg-z.data"), &len);
	memcpy(&doff, buf + 40, sizeof(doff));
	memcpy(&dsize, buf + 48, sizeof(dsize));
	full = read_all(buf, len, &tail, msg, sizeof(msg));
	assert_int_equal(full, N);
	for (size_t l = doff; l < doff + dsize; l += 7) {
		int n = read_all(buf, l, &tail, msg, sizeof(msg));

		assert_true(n >= prev);
		assert_true(n < full);
		prev = n;
		if (l > doff) {
			assert_int_equal(tail, SONDE_PD_TAIL_TRUNCATED);
			assert_non_null(strstr(msg, "offset 0x"));
		}
	}
	assert_true(prev > N - 60); /* the last cut loses at most the last batch */
	for (size_t o = doff + 8; o < doff + dsize; o += 97) {
		uint8_t save = buf[o];
		int opened = 0, refused = 0;

		buf[o] ^= 0x5a;
		/* A byte changed in a compressed frame never adds records. */
		check_damaged(buf, len, N, &opened, &refused);
		buf[o] = save;
	}
	free(buf);
}

/* The fast path: many records in one buffer bigger than the writer's. */
static void test_bulk_write(void **state)
{
	struct sonde_pd_writer *w = new_writer("bulk.data");
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	static struct rb one;
	size_t n = 3000, got = 0;
	uint8_t *big;
	int ret;

	(void)state;
	build_plain_sample(&one);
	big = malloc(n * one.n);
	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		memcpy(big + i * one.n, one.w, one.n);
	assert_int_equal(sonde_pd_writer_write(w, big, 10 * one.n), 0);
	assert_int_equal(sonde_pd_writer_write(w, big, n * one.n), 0);
	assert_int_equal(sonde_pd_writer_data_size(w), (n + 10) * one.n);
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);
	free(big);
	assert_int_equal(sonde_pd_reader_open(&r, tmp_path("bulk.data"), NULL), 0);
	while ((ret = sonde_pd_reader_next(r, &rec)) == 1)
		got++;
	assert_int_equal(ret, 0);
	assert_int_equal(got, n + 10);
	sonde_pd_reader_close(r);
}

/* ---- features --------------------------------------------------------- */

static void test_feature_round_trip(void **state)
{
	struct sonde_pd_writer *w = new_writer("features.data");
	struct sonde_pd_reader *r;
	const struct sonde_pd_features *f;
	struct sonde_pd_host h;
	static struct rb b;
	const char *argv[] = {"sonde", "record", "-g", "--", "sleep 1"};
	const uint8_t bid1[20] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
				  11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
	const uint8_t bid2[16] = {0xaa, 0xbb};
	const char *cores[] = {"0-3"}, *threads[] = {"0-1", "2-3"}, *dies[] = {"0-3"};
	const uint32_t core_id[] = {0, 0, 1, 1}, socket_id[] = {0, 0, 0, 0},
		       die_id[] = {0, 0, 0, 0};
	struct sonde_pd_topology topo = {1,    cores, 2,       threads,	  1,
					 dies, 4,     core_id, socket_id, die_id};
	const void *blob;
	uint64_t size;

	(void)state;
	memset(&h, 0, sizeof(h));
	strcpy(h.hostname, "testhost");
	strcpy(h.osrelease, "6.18.0-test");
	strcpy(h.version, "sonde 0.1");
	strcpy(h.arch, "x86_64");
	strcpy(h.cpudesc, "Test CPU @ 1GHz");
	strcpy(h.cpuid, "GenuineIntel,6,85,7");
	h.nr_cpus_avail = 4;
	h.nr_cpus_online = 3;
	h.total_mem_kb = 16384;
	assert_int_equal(sonde_pd_writer_set_host(w, &h), 0);
	assert_int_equal(sonde_pd_writer_set_cmdline(w, 5, argv), 0);
	assert_int_equal(sonde_pd_writer_set_tracing_data(w, "\x17\x08\x44tracing", 10), 0);
	assert_int_equal(sonde_pd_writer_add_build_id(w, -1, PERF_RECORD_MISC_KERNEL, bid1, 20,
						      "[kernel.kallsyms]"),
			 0);
	assert_int_equal(sonde_pd_writer_add_build_id(w, PID, PERF_RECORD_MISC_USER, bid2, 16,
						      "/usr/bin/a-rather-long-program-name-to-pad-"
						      "past-sixty-four-bytes"),
			 0);
	assert_int_equal(sonde_pd_writer_set_sample_time(w, 100, 200), 0);
	assert_int_equal(sonde_pd_writer_set_clockid_res(w, 1), 0);
	assert_int_equal(sonde_pd_writer_set_topology(w, &topo), 0);
	assert_int_equal(sonde_pd_writer_set_sonde_feature(w, SONDE_PD_SFEAT_KALLSYMS, "ksyms", 5),
			 0);
	assert_int_equal(sonde_pd_writer_set_sonde_feature(w, SONDE_PD_SFEAT_MODULES, "mods", 4),
			 0);
	assert_int_equal(sonde_pd_writer_set_feature(w, SONDE_PD_FEAT_STAT, NULL, 0), 0);
	build_plain_sample(&b);
	assert_int_equal(sonde_pd_writer_write(w, b.w, b.n), 0);
	/* an event added after the data began moves the attrs to the end */
	{
		struct perf_event_attr a;
		uint64_t ids[] = {33, 34};

		attr_plain(&a);
		a.config = PERF_COUNT_SW_PAGE_FAULTS;
		assert_int_equal(sonde_pd_writer_add_attr(w, &a, "late", ids, 2), 2);
	}
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);

	assert_int_equal(sonde_pd_reader_open(&r, tmp_path("features.data"), NULL), 0);
	f = sonde_pd_reader_features(r);
	assert_string_equal(f->hostname, "testhost");
	assert_string_equal(f->osrelease, "6.18.0-test");
	assert_string_equal(f->version, "sonde 0.1");
	assert_string_equal(f->arch, "x86_64");
	assert_string_equal(f->cpudesc, "Test CPU @ 1GHz");
	assert_string_equal(f->cpuid, "GenuineIntel,6,85,7");
	assert_true(f->has_nrcpus);
	assert_int_equal(f->nr_cpus_avail, 4);
	assert_int_equal(f->nr_cpus_online, 3);
	assert_int_equal(f->total_mem_kb, 16384);
	assert_int_equal(f->cmdline_argc, 5);
	assert_string_equal(f->cmdline_argv[0], "sonde");
	assert_string_equal(f->cmdline_argv[4], "sleep 1");
	assert_int_equal(f->tracing_data_size, 10);
	assert_memory_equal(f->tracing_data, "\x17\x08\x44tracing", 10);
	assert_int_equal(f->nr_build_ids, 2);
	assert_int_equal(f->build_ids[0].pid, -1);
	assert_int_equal(f->build_ids[0].misc, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(f->build_ids[0].size, 20);
	assert_memory_equal(f->build_ids[0].id, bid1, 20);
	assert_string_equal(f->build_ids[0].filename, "[kernel.kallsyms]");
	assert_int_equal(f->build_ids[1].pid, PID);
	assert_int_equal(f->build_ids[1].size, 16);
	assert_memory_equal(f->build_ids[1].id, bid2, 16);
	assert_string_equal(f->build_ids[1].filename,
			    "/usr/bin/a-rather-long-program-name-to-pad-past-sixty-four-bytes");
	assert_true(f->has_sample_time);
	assert_int_equal(f->first_sample_time, 100);
	assert_int_equal(f->last_sample_time, 200);
	assert_true(f->has_clockid);
	assert_int_equal(f->clockid_res_ns, 1);
	assert_true(f->has_topology);
	assert_int_equal(f->topo_nr_core_sibs, 1);
	assert_string_equal(f->topo_core_sibs[0], "0-3");
	assert_int_equal(f->topo_nr_thread_sibs, 2);
	assert_string_equal(f->topo_thread_sibs[1], "2-3");
	assert_int_equal(f->topo_nr_cpus, 4);
	/* sonde's features: raw blobs from the trailer, no header bit past perf's
	 * (perf inject follows every set bit into its 32-entry feature table) */
	for (unsigned w = 0; w < 4; w++)
		assert_int_equal(sonde_pd_reader_header(r)->features[w] >> (w ? 0 : 32), 0);
	assert_int_equal(sonde_pd_reader_feature(
			     r, SONDE_PD_FEAT_SONDE_BASE + SONDE_PD_SFEAT_KALLSYMS, &blob, &size),
			 0);
	assert_int_equal(size, 5);
	assert_memory_equal(blob, "ksyms", 5);
	assert_int_equal(sonde_pd_reader_feature(
			     r, SONDE_PD_FEAT_SONDE_BASE + SONDE_PD_SFEAT_MODULES, &blob, &size),
			 0);
	assert_memory_equal(blob, "mods", 4);
	assert_true(sonde_pd_reader_has_feature(r, SONDE_PD_FEAT_STAT));
	assert_false(sonde_pd_reader_has_feature(r, SONDE_PD_FEAT_NUMA_TOPOLOGY));
	assert_int_equal(sonde_pd_reader_feature(r, SONDE_PD_FEAT_NUMA_TOPOLOGY, &blob, &size),
			 -ENOENT);
	/* EVENT_DESC names and ids, including the late event */
	assert_int_equal(sonde_pd_reader_nr_attrs(r), 3);
	assert_string_equal(sonde_pd_reader_attr(r, 0)->name, "full");
	assert_string_equal(sonde_pd_reader_attr(r, 1)->name, "plain");
	assert_string_equal(sonde_pd_reader_attr(r, 2)->name, "late");
	assert_int_equal(sonde_pd_reader_attr(r, 2)->nr_ids, 2);
	assert_int_equal(sonde_pd_reader_attr(r, 2)->attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_ptr_equal(sonde_pd_reader_find_id(r, 34), sonde_pd_reader_attr(r, 2));
	assert_null(sonde_pd_reader_find_id(r, 35));
	assert_int_equal(sonde_pd_reader_attr(r, 0)->file_size, SONDE_PD_ATTR_SIZE);
	sonde_pd_reader_close(r);
}

static void test_host_fill(void **state)
{
	struct sonde_pd_host h;

	(void)state;
	assert_int_equal(sonde_record_host_fill(&h, NULL), 0);
	assert_true(h.hostname[0]);
	assert_true(h.osrelease[0]);
	assert_true(h.arch[0]);
	assert_true(h.nr_cpus_online > 0);
	assert_true(h.nr_cpus_avail >= h.nr_cpus_online);
	assert_true(h.total_mem_kb > 0);
}

/* The host facts read under the roots given (src/record/host_facts.c). */
static void test_host_fill_roots(void **state)
{
	struct sonde_pd_host h;
	char *root = fake_tree_new(), proc[4096], sys[4096];
	struct sonde_roots roots = {.sysfs = sys, .tracefs = NULL, .procfs = proc};

	(void)state;
	assert_non_null(root);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	/* x86: cpuid from the first block only, description from "model name" */
	assert_int_equal(
	    fake_tree_write(root, "proc/cpuinfo",
			    "processor\t: 0\nvendor_id\t: FakeVendor\n"
			    "cpu family\t: 6\nmodel\t\t: 85\n"
			    "model name\t: Fake CPU @ 1.00GHz  \nstepping\t: 7\n\n"
			    "processor\t: 1\nvendor_id\t: Other\nmodel name\t: Other\n"),
	    0);
	assert_int_equal(
	    fake_tree_write(root, "proc/meminfo", "MemTotal:       12345678 kB\nMemFree:  1 kB\n"),
	    0);
	assert_int_equal(sonde_record_host_fill(&h, &roots), 0);
	assert_string_equal(h.cpudesc, "Fake CPU @ 1.00GHz");
	assert_string_equal(h.cpuid, "FakeVendor,6,85,7");
	assert_int_equal(h.total_mem_kb, 12345678);
	/* arm64: no x86 cpuid, so the MIDR of cpu0 */
	assert_int_equal(fake_tree_write(root, "proc/cpuinfo",
					 "processor\t: 0\nBogoMIPS\t: 50.00\n"
					 "CPU implementer\t: 0x41\n\n"),
			 0);
	assert_int_equal(fake_tree_write(root,
					 "sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
					 "0x00000000410fd0c0\n"),
			 0);
	assert_int_equal(sonde_record_host_fill(&h, &roots), 0);
	assert_string_equal(h.cpuid, "0x00000000410fd0c0");
	assert_string_equal(h.cpudesc, "");
	/* nothing under the roots: uname's facts only */
	fake_tree_remove(root);
	assert_int_equal(sonde_record_host_fill(&h, &roots), 0);
	assert_true(h.osrelease[0]);
	assert_string_equal(h.cpuid, "");
	assert_int_equal(h.total_mem_kb, 0);
}

/* ---- damaged files ---------------------------------------------------- */

/* Writes a small file of COMM, MMAP2 and samples; returns its bytes. */
static uint8_t *small_file(const char *name, size_t *len, size_t *data_off, size_t *data_size)
{
	struct sonde_pd_writer *w = new_writer(name);
	static struct rb b;
	uint8_t *buf;

	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_HOSTNAME, "h");
	build_comm(&b);
	sonde_pd_writer_write(w, b.w, b.n);
	build_mmap2(&b);
	sonde_pd_writer_write(w, b.w, b.n);
	for (int i = 0; i < 3; i++) {
		build_full_sample(&b);
		sonde_pd_writer_write(w, b.w, b.n);
		build_plain_sample(&b);
		sonde_pd_writer_write(w, b.w, b.n);
	}
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);
	buf = slurp(tmp_path(name), len);
	memcpy(data_off, buf + 40, sizeof(*data_off));
	memcpy(data_size, buf + 48, sizeof(*data_size));
	return buf;
}

/* Opens @len bytes (copied to an exact buffer) and reads every record.
 * Return: records read, or a negative error; *tail the ending. */
static int read_all(const uint8_t *src, size_t len, enum sonde_pd_tail *tail, char *msg,
		    size_t msglen)
{
	uint8_t *copy = malloc(len ? len : 1);
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	struct sonde_errmsg em;
	int n = 0, ret;

	memcpy(copy, src, len);
	ret = sonde_pd_reader_open_mem(&r, copy, len, &em);
	if (ret) {
		snprintf(msg, msglen, "%s", em.text);
		free(copy);
		return ret;
	}
	while ((ret = sonde_pd_reader_next(r, &rec)) == 1) {
		n++;
		sonde_pd_reader_parse(r, &rec, &ev);
	}
	*tail = sonde_pd_reader_tail(r);
	snprintf(msg, msglen, "%s", sonde_pd_reader_errmsg(r));
	sonde_pd_reader_close(r);
	free(copy);
	return ret < 0 ? ret : n;
}

static void test_truncated(void **state)
{
	size_t len, doff, dsize;
	uint8_t *buf = small_file("trunc.data", &len, &doff, &dsize);
	enum sonde_pd_tail tail;
	char msg[512];
	int full, prev = 0;

	(void)state;
	full = read_all(buf, len, &tail, msg, sizeof(msg));
	assert_int_equal(full, 8);
	assert_int_equal(tail, SONDE_PD_TAIL_CLEAN);
	for (size_t l = 0; l < len; l++) {
		int n = read_all(buf, l, &tail, msg, sizeof(msg));

		if (l < doff) {
			/* header or attrs cut: a clear open error */
			assert_true(n < 0);
			continue;
		}
		assert_true(n >= 0);
		assert_true(n >= prev);
		prev = n;
		if (l < doff + dsize) {
			assert_true(n < full);
			if (n < full && l > doff && tail != SONDE_PD_TAIL_TRUNCATED)
				fail_msg("cut at %zu: tail %d", l, tail);
			if (tail == SONDE_PD_TAIL_TRUNCATED)
				assert_non_null(strstr(msg, "at offset 0x"));
		} else {
			assert_int_equal(n, full); /* only features lost */
		}
	}
	free(buf);
}

static void test_corrupted_sizes(void **state)
{
	size_t len, doff, dsize, second;
	uint8_t *buf = small_file("corrupt.data", &len, &doff, &dsize);
	enum sonde_pd_tail tail;
	char msg[512], want[64];
	uint16_t sz;

	(void)state;
	memcpy(&sz, buf + doff + 6, 2);
	second = doff + sz;
	/* second record's size below a header */
	sz = 4;
	memcpy(buf + second + 6, &sz, 2);
	assert_int_equal(read_all(buf, len, &tail, msg, sizeof(msg)), SONDE_E_FORMAT);
	snprintf(want, sizeof(want), "at offset 0x%zx: size 4 smaller than header", second);
	assert_non_null(strstr(msg, want));
	/* second record runs past the data section */
	sz = 0xfff8;
	memcpy(buf + second + 6, &sz, 2);
	assert_int_equal(read_all(buf, len, &tail, msg, sizeof(msg)), SONDE_E_FORMAT);
	assert_non_null(strstr(msg, "runs past the end of the data section"));
	free(buf);
}

static void test_bad_headers(void **state)
{
	size_t len, doff, dsize;
	uint8_t *buf = small_file("hdr.data", &len, &doff, &dsize);
	uint8_t *copy = malloc(len);
	enum sonde_pd_tail tail;
	char msg[512];
	uint64_t v;

	(void)state;
	memcpy(copy, buf, len);
	memcpy(copy, "PERFILE3", 8);
	assert_int_equal(read_all(copy, len, &tail, msg, sizeof(msg)), SONDE_E_FORMAT);
	assert_non_null(strstr(msg, "magic"));
	v = __builtin_bswap64(SONDE_PD_MAGIC);
	memcpy(copy, &v, 8);
	assert_int_equal(read_all(copy, len, &tail, msg, sizeof(msg)), SONDE_E_NOT_SUPPORTED);
	memcpy(copy, buf, len);
	v = 99;
	memcpy(copy + 8, &v, 8);
	assert_int_equal(read_all(copy, len, &tail, msg, sizeof(msg)), SONDE_E_FORMAT);
	memcpy(copy, buf, len);
	v = len + 100; /* attrs past the end */
	memcpy(copy + 24, &v, 8);
	assert_int_equal(read_all(copy, len, &tail, msg, sizeof(msg)), SONDE_E_TRUNCATED);
	memcpy(copy, buf, len);
	v = 1000; /* data offset past the end */
	memcpy(copy + 40, &v, 8);
	memcpy(copy + 40, &(uint64_t){len + 8}, 8);
	assert_true(read_all(copy, len, &tail, msg, sizeof(msg)) < 0);
	/* a feature section pointing outside the file is dropped, the data kept */
	memcpy(copy, buf, len);
	v = len * 2;
	memcpy(copy + doff + dsize, &v, 8);
	assert_int_equal(read_all(copy, len, &tail, msg, sizeof(msg)), 8);
	/* a malformed feature inside the file is an error naming it */
	memcpy(copy, buf, len);
	memcpy(&v, copy + doff + dsize, 8); /* first feature: the hostname string */
	memcpy(copy + v, &(uint32_t){9999}, 4);
	assert_int_equal(read_all(copy, len, &tail, msg, sizeof(msg)), SONDE_E_FORMAT);
	assert_non_null(strstr(msg, "feature 3 at offset 0x"));
	free(copy);
	free(buf);
}

/* Random byte damage: the reader must never crash or over-read (ASan). */
/*
 * What a damaged file may do: open with a message, or read some records and
 * say where it stopped; never read more records than the data section can
 * hold (@most), never differ between two reads of the same bytes.
 */
static void check_damaged(const uint8_t *copy, size_t len, size_t most, int *opened, int *refused)
{
	enum sonde_pd_tail tail, tail2;
	char msg[512], msg2[512];
	int n = read_all(copy, len, &tail, msg, sizeof(msg));

	assert_int_equal(read_all(copy, len, &tail2, msg2, sizeof(msg2)), n);
	assert_string_equal(msg, msg2);
	if (n < 0) {
		assert_true(msg[0] != '\0');
		++*refused;
		return;
	}
	assert_int_equal(tail, tail2);
	++*opened;
	if ((size_t)n > most)
		fail_msg("%d records, at most %zu fit", n, most);
	if (tail == SONDE_PD_TAIL_TRUNCATED)
		assert_non_null(strstr(msg, "offset 0x"));
}

static void test_random_damage(void **state)
{
	size_t len, doff, dsize;
	uint8_t *buf = small_file("damage.data", &len, &doff, &dsize);
	uint8_t *copy = malloc(len);
	enum sonde_pd_tail tail;
	char msg[512];
	uint32_t seed = 12345;
	int opened = 0, refused = 0, after_data = 0;

	(void)state;
	for (int iter = 0; iter < 3000; iter++) {
		size_t lowest = len;

		memcpy(copy, buf, len);
		for (int k = 0; k < 1 + iter % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;

			seed = seed * 1103515245u + 12345u;
			copy[at] = (uint8_t)(seed >> 16);
			lowest = at < lowest ? at : lowest;
		}
		/* Every record has at least its 8-byte header. */
		check_damaged(copy, len, dsize / 8, &opened, &refused);
		/* Damage only after the data (in the feature sections): every
		 * record read, or the file refused naming the feature, as perf's
		 * reader does; undamaged bytes read whole. */
		if (lowest >= doff + dsize || !memcmp(copy, buf, len)) {
			int n = read_all(copy, len, &tail, msg, sizeof(msg));

			after_data++;
			if (n != 8 && !(n < 0 && strstr(msg, "feature ") && lowest >= doff + dsize))
				fail_msg("damage at 0x%zx (after the data at 0x%zx..0x%zx): %d "
					 "records, %s",
					 lowest, doff, doff + dsize, n, msg);
		}
	}
	/* The damage reached every part: some files open, some don't, some
	 * were hit only in their feature sections. */
	assert_true(opened > 100 && refused > 100 && after_data > 100);
	free(copy);
	free(buf);
}

/* A header never finalized (data size 0, no features) is read to EOF. */
static void test_unfinished(void **state)
{
	size_t len, doff, dsize;
	uint8_t *buf = small_file("unfinished.data", &len, &doff, &dsize);
	enum sonde_pd_tail tail;
	char msg[512];

	(void)state;
	memset(buf + 48, 0, 8);
	memset(buf + 72, 0, 32);
	assert_int_equal(read_all(buf, doff + dsize, &tail, msg, sizeof(msg)), 8);
	assert_int_equal(tail, SONDE_PD_TAIL_UNFINISHED);
	/* with a torn last record */
	assert_int_equal(read_all(buf, doff + dsize - 5, &tail, msg, sizeof(msg)), 7);
	assert_int_equal(tail, SONDE_PD_TAIL_TRUNCATED);
	free(buf);
}

static void test_sample_errors(void **state)
{
	static struct rb b;
	struct perf_event_attr a;
	struct sonde_pd_sample s;
	const char *what = NULL;

	(void)state;
	attr_full(&a);
	build_full_sample(&b);
	assert_int_equal(sonde_pd_sample_parse(&a, b.w, b.n, &s, &what), 0);
	/* every shorter length fails cleanly, naming a field */
	for (size_t l = 8; l < b.n; l += 8) {
		what = NULL;
		assert_int_equal(sonde_pd_sample_parse(&a, b.w, l, &s, &what), SONDE_E_TRUNCATED);
		assert_non_null(what);
	}
	/* a huge callchain count */
	b.w[19] = UINT64_MAX / 4;
	assert_int_equal(sonde_pd_sample_parse(&a, b.w, b.n, &s, &what), SONDE_E_TRUNCATED);
	assert_string_equal(what, "callchain");
	/* raw not padded */
	build_full_sample(&b);
	memcpy(&b.w[24], &(uint32_t){13}, 4);
	assert_int_equal(sonde_pd_sample_parse(&a, b.w, b.n, &s, &what), SONDE_E_FORMAT);
	assert_int_equal(sonde_pd_sample_id_size(&a), 48);
}

/* ---- pipe mode -------------------------------------------------------- */

static void test_pipe_mode(void **state)
{
	static struct rb b, all;
	struct perf_event_attr a;
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	uint64_t magic = SONDE_PD_MAGIC;
	int n = 0, ret, samples = 0;

	(void)state;
	all.n = 0;
	rb_put(&all, &magic, 8);
	rb_64(&all, 16);
	attr_plain(&a);
	a.size = SONDE_PD_ATTR_SIZE;
	rb_begin(&b, SONDE_PD_RECORD_HEADER_ATTR, 0);
	rb_put(&b, &a, SONDE_PD_ATTR_SIZE);
	rb_64(&b, ID_PLAIN);
	rb_end(&b);
	rb_put(&all, b.w, b.n);
	attr_full(&a);
	a.size = SONDE_PD_ATTR_SIZE;
	rb_begin(&b, SONDE_PD_RECORD_HEADER_ATTR, 0);
	rb_put(&b, &a, SONDE_PD_ATTR_SIZE);
	rb_64(&b, ID_FULL);
	rb_end(&b);
	rb_put(&all, b.w, b.n);
	build_tracing_data_rec(&b); /* leaves the following records unaligned */
	rb_put(&all, b.w, b.n);
	build_comm(&b);
	rb_put(&all, b.w, b.n);
	build_full_sample(&b);
	rb_put(&all, b.w, b.n);
	build_plain_sample(&b);
	rb_put(&all, b.w, b.n);

	assert_int_equal(sonde_pd_reader_open_mem(&r, all.w, all.n, NULL), 0);
	assert_true(sonde_pd_reader_is_pipe(r));
	while ((ret = sonde_pd_reader_next(r, &rec)) == 1) {
		assert_int_equal((uintptr_t)rec.data % 8, 0);
		assert_int_equal(sonde_pd_reader_parse(r, &rec, &ev), 0);
		if (rec.type == PERF_RECORD_SAMPLE) {
			assert_non_null(rec.attr);
			if (samples++ == 0)
				assert_int_equal(ev.sample.callchain_nr, 4);
			else
				assert_int_equal(ev.sample.read_value, 31);
		}
		if (rec.type == PERF_RECORD_COMM)
			check_comm(&ev, &rec);
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, 6);
	assert_int_equal(samples, 2);
	assert_int_equal(sonde_pd_reader_nr_attrs(r), 2);
	sonde_pd_reader_close(r);

	/* the same bytes through a real pipe (stream mode) */
	{
		int fds[2];
		pid_t pid;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		if (pid == 0) {
			close(fds[0]);
			_exit(write(fds[1], all.w, all.n) == (ssize_t)all.n ? 0 : 1);
		}
		close(fds[1]);
		assert_int_equal(sonde_pd_reader_open_fd(&r, fds[0], NULL), 0);
		n = 0;
		while ((ret = sonde_pd_reader_next(r, &rec)) == 1) {
			assert_int_equal(sonde_pd_reader_parse(r, &rec, &ev), 0);
			n++;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(n, 6);
		assert_int_equal(sonde_pd_reader_rewind(r), -ESPIPE);
		sonde_pd_reader_close(r);
		close(fds[0]);
		waitpid(pid, NULL, 0);
	}
}

/* ---- writer failures -------------------------------------------------- */

static void test_sticky_error(void **state)
{
	struct sonde_pd_writer *w = new_writer("sticky.data");
	static struct rb b;
	struct sonde_errmsg em;
	uint8_t bad[8] = {9, 0, 0, 0, 0, 0, 4, 0}; /* size 4 */

	(void)state;
	build_comm(&b);
	assert_int_equal(sonde_pd_writer_write(w, b.w, b.n), 0);
	assert_int_equal(sonde_pd_writer_write(w, bad, sizeof(bad)), SONDE_E_FORMAT);
	assert_non_null(strstr(sonde_pd_writer_errmsg(w), "size 4 smaller than header"));
	/* later calls keep returning the first error */
	assert_int_equal(sonde_pd_writer_write(w, b.w, b.n), SONDE_E_FORMAT);
	assert_int_equal(sonde_pd_writer_set_string(w, SONDE_PD_FEAT_HOSTNAME, "x"),
			 SONDE_E_FORMAT);
	assert_int_equal(sonde_pd_writer_close(w, &em), SONDE_E_FORMAT);
	assert_non_null(strstr(em.text, "size 4"));
}

/* A size limit stands in for a full disk: the error names the offset, the
 * file keeps every whole record written and still opens. */
static void test_disk_full(void **state)
{
	struct sonde_pd_writer *w = new_writer("full.data");
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	struct sonde_errmsg em;
	struct rlimit old, lim;
	static struct rb b;
	int err = 0, n = 0, ret, written = 0;

	(void)state;
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 200 * 1024;
	setrlimit(RLIMIT_FSIZE, &lim);
	build_full_sample(&b);
	for (int i = 0; i < 5000 && !err; i++) {
		err = sonde_pd_writer_write(w, b.w, b.n);
		written += !err;
	}
	if (!err)
		err = sonde_pd_writer_sync(w);
	assert_int_equal(err, -EFBIG);
	assert_non_null(strstr(sonde_pd_writer_errmsg(w), "at offset 0x"));
	assert_int_equal(sonde_pd_writer_close(w, &em), -EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);

	assert_int_equal(sonde_pd_reader_open(&r, tmp_path("full.data"), NULL), 0);
	while ((ret = sonde_pd_reader_next(r, &rec)) == 1)
		n++;
	assert_int_equal(ret, 0);
	assert_int_equal(sonde_pd_reader_tail(r), SONDE_PD_TAIL_CLEAN);
	assert_true(n > 0 && n <= written);
	assert_true((uint64_t)n * b.n > 150 * 1024); /* nearly all that fit */
	sonde_pd_reader_close(r);
}

/* A writer killed after a sync leaves a file with everything synced. */
static void test_killed_writer(void **state)
{
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	int status, n = 0, ret;
	pid_t pid;

	(void)state;
	pid = fork();
	if (pid == 0) {
		struct sonde_pd_writer *w = new_writer("killed.data");
		static struct rb b;

		build_full_sample(&b);
		for (int i = 0; i < 1000; i++)
			sonde_pd_writer_write(w, b.w, b.n);
		sonde_pd_writer_sync(w);
		for (int i = 0; i < 10; i++) /* buffered, lost */
			sonde_pd_writer_write(w, b.w, b.n);
		kill(getpid(), SIGKILL);
	}
	waitpid(pid, &status, 0);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(sonde_pd_reader_open(&r, tmp_path("killed.data"), NULL), 0);
	while ((ret = sonde_pd_reader_next(r, &rec)) == 1)
		n++;
	assert_int_equal(ret, 0);
	assert_int_equal(n, 1000);
	assert_int_equal(sonde_pd_reader_nr_attrs(r), 2);
	sonde_pd_reader_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tripwire),
	    cmocka_unit_test(test_record_round_trip),
	    cmocka_unit_test(test_compressed_round_trip),
	    cmocka_unit_test(test_compressed_bulk),
	    cmocka_unit_test(test_compressed_damage),
	    cmocka_unit_test(test_bulk_write),
	    cmocka_unit_test(test_feature_round_trip),
	    cmocka_unit_test(test_host_fill),
	    cmocka_unit_test(test_host_fill_roots),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_corrupted_sizes),
	    cmocka_unit_test(test_bad_headers),
	    cmocka_unit_test(test_random_damage),
	    cmocka_unit_test(test_unfinished),
	    cmocka_unit_test(test_sample_errors),
	    cmocka_unit_test(test_pipe_mode),
	    cmocka_unit_test(test_sticky_error),
	    cmocka_unit_test(test_disk_full),
	    cmocka_unit_test(test_killed_writer),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
