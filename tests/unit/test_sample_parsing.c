// SPDX-License-Identifier: MIT
/*
 * PERF_SAMPLE_* tripwire, after perf's tests/sample-parsing.c: for every
 * sample_type bit sonde decodes, alone, in every pair and all together
 * (and the read_format and branch variants), a sample is laid out here by
 * hand in the order of the uapi header's PERF_RECORD_SAMPLE comment,
 * written through sonde's writer, read back through the reader and
 * checked field by field.  The encoder below is independent of
 * src/format/pd_sample.c, so a field read at the wrong place or with the
 * wrong width fails.
 *
 * The tripwire: `fields` must name exactly SONDE_PD_SAMPLE_TYPES (the bits
 * the decoder knows, and refuses any other), and that must be every bit
 * of the uapi header: a new bit in the header or in the decoder without a
 * row here fails to build or fails test_tripwire.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/perf_data.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

static const struct {
	uint64_t bit;
	const char *name;
} fields[] = {
    {PERF_SAMPLE_IP, "IP"},
    {PERF_SAMPLE_TID, "TID"},
    {PERF_SAMPLE_TIME, "TIME"},
    {PERF_SAMPLE_ADDR, "ADDR"},
    {PERF_SAMPLE_READ, "READ"},
    {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"},
    {PERF_SAMPLE_ID, "ID"},
    {PERF_SAMPLE_CPU, "CPU"},
    {PERF_SAMPLE_PERIOD, "PERIOD"},
    {PERF_SAMPLE_STREAM_ID, "STREAM_ID"},
    {PERF_SAMPLE_RAW, "RAW"},
    {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"},
    {PERF_SAMPLE_REGS_USER, "REGS_USER"},
    {PERF_SAMPLE_STACK_USER, "STACK_USER"},
    {PERF_SAMPLE_WEIGHT, "WEIGHT"},
    {PERF_SAMPLE_DATA_SRC, "DATA_SRC"},
    {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"},
    {PERF_SAMPLE_TRANSACTION, "TRANSACTION"},
    {PERF_SAMPLE_REGS_INTR, "REGS_INTR"},
    {PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR"},
    {PERF_SAMPLE_AUX, "AUX"},
    {PERF_SAMPLE_CGROUP, "CGROUP"},
    {PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE"},
    {PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE"},
    {PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT"},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

_Static_assert(SONDE_PD_SAMPLE_TYPES == PERF_SAMPLE_MAX - 1,
	       "the uapi header has new sample_type bits: decode them and add rows to fields[]");

/* ---- the values every sample carries ---------------------------------- */

#define REGS_USER_MASK 0xbull /* 3 registers */
#define REGS_INTR_MASK 0x3ull /* 2 registers */
static const uint64_t chain[] = {PERF_CONTEXT_USER, 0x401000, 0x402000};
static const uint8_t raw[12] = "raw payload";
static const uint64_t branches[] = {0x10, 0x20, 0x1, 0x30, 0x40, 0x2}; /* 2 x {from, to, flags} */
static const uint64_t regs_user[] = {0xa1, 0xa2, 0xa3};
static const uint64_t regs_intr[] = {0xb1, 0xb2};
static const uint8_t stack[16] = "user stack bytes";
static const uint8_t aux[16] = "aux area bytes!";
/* read values: the group's {value, id, lost} of 2 members */
static const uint64_t group[] = {500, 71, 1, 600, 72, 2};

struct enc {
	uint8_t b[1024] __attribute__((aligned(8)));
	size_t n;
};

static void p64(struct enc *e, uint64_t v)
{
	memcpy(e->b + e->n, &v, 8);
	e->n += 8;
}

static void pbytes(struct enc *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void p32x2(struct enc *e, uint32_t a, uint32_t b)
{
	memcpy(e->b + e->n, &a, 4);
	memcpy(e->b + e->n + 4, &b, 4);
	e->n += 8;
}

/* The record, in the uapi comment's order. */
static void encode(const struct perf_event_attr *a, struct enc *e)
{
	uint64_t t = a->sample_type, rf = a->read_format;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0};
	uint32_t rawsz = sizeof(raw);

	e->n = 0;
	pbytes(e, &h, sizeof(h));
	if (t & PERF_SAMPLE_IDENTIFIER)
		p64(e, 0x1d);
	if (t & PERF_SAMPLE_IP)
		p64(e, 0x400123);
	if (t & PERF_SAMPLE_TID)
		p32x2(e, 11, 12);
	if (t & PERF_SAMPLE_TIME)
		p64(e, 123456789);
	if (t & PERF_SAMPLE_ADDR)
		p64(e, 0xadd0);
	if (t & PERF_SAMPLE_ID)
		p64(e, 0x1d);
	if (t & PERF_SAMPLE_STREAM_ID)
		p64(e, 0x5d);
	if (t & PERF_SAMPLE_CPU)
		p32x2(e, 3, 0);
	if (t & PERF_SAMPLE_PERIOD)
		p64(e, 4000);
	if (t & PERF_SAMPLE_READ) {
		if (rf & PERF_FORMAT_GROUP) {
			p64(e, 2);
			if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
				p64(e, 900);
			if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
				p64(e, 800);
			for (size_t i = 0; i < 2; i++) {
				p64(e, group[3 * i]);
				if (rf & PERF_FORMAT_ID)
					p64(e, group[3 * i + 1]);
				if (rf & PERF_FORMAT_LOST)
					p64(e, group[3 * i + 2]);
			}
		} else {
			p64(e, 500);
			if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
				p64(e, 900);
			if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
				p64(e, 800);
			if (rf & PERF_FORMAT_ID)
				p64(e, 71);
			if (rf & PERF_FORMAT_LOST)
				p64(e, 1);
		}
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		p64(e, 3);
		pbytes(e, chain, sizeof(chain));
	}
	if (t & PERF_SAMPLE_RAW) {
		pbytes(e, &rawsz, 4);
		pbytes(e, raw, sizeof(raw));
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		p64(e, 2);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			p64(e, 7);
		pbytes(e, branches, sizeof(branches));
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		p64(e, PERF_SAMPLE_REGS_ABI_64);
		pbytes(e, regs_user, sizeof(regs_user));
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		p64(e, sizeof(stack));
		pbytes(e, stack, sizeof(stack));
		p64(e, 8); /* dyn size */
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		p64(e, 0x3e1);
	if (t & PERF_SAMPLE_DATA_SRC)
		p64(e, 0xda);
	if (t & PERF_SAMPLE_TRANSACTION)
		p64(e, 0x7a);
	if (t & PERF_SAMPLE_REGS_INTR) {
		p64(e, PERF_SAMPLE_REGS_ABI_64);
		pbytes(e, regs_intr, sizeof(regs_intr));
	}
	if (t & PERF_SAMPLE_PHYS_ADDR)
		p64(e, 0x9a);
	if (t & PERF_SAMPLE_CGROUP)
		p64(e, 0xc6);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		p64(e, 4096);
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		p64(e, 2 << 20);
	if (t & PERF_SAMPLE_AUX) {
		p64(e, sizeof(aux));
		pbytes(e, aux, sizeof(aux));
	}
	((struct perf_event_header *)(void *)e->b)->size = (uint16_t)e->n;
}

/* ---- checks, field by field ------------------------------------------- */

#define EXPECT(bit, field, v)                                                                      \
	check_u64(#field, (t & (bit)) ? (uint64_t)(v) : 0, (uint64_t)(s->field))

static uint64_t cur_type; /* for messages */

static void check_u64(const char *what, uint64_t want, uint64_t got)
{
	if (want != got)
		fail_msg("sample_type %#llx: %s is %#llx, want %#llx", (unsigned long long)cur_type,
			 what, (unsigned long long)got, (unsigned long long)want);
}

static void check_mem(const char *what, bool present, const void *want, const void *got, size_t n)
{
	if (!present) {
		if (got)
			fail_msg("sample_type %#llx: %s set without its bit",
				 (unsigned long long)cur_type, what);
		return;
	}
	if (!got || memcmp(want, got, n))
		fail_msg("sample_type %#llx: %s differs", (unsigned long long)cur_type, what);
}

static void check_read(const struct perf_event_attr *a, const struct sonde_pd_sample *s)
{
	uint64_t t = a->sample_type, rf = a->read_format;
	bool group_fmt = (t & PERF_SAMPLE_READ) && (rf & PERF_FORMAT_GROUP);
	bool single = (t & PERF_SAMPLE_READ) && !group_fmt;

	check_u64("read_nr", group_fmt ? 2 : single, s->read_nr);
	check_u64("read_time_enabled",
		  (t & PERF_SAMPLE_READ) && (rf & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 900 : 0,
		  s->read_time_enabled);
	check_u64("read_time_running",
		  (t & PERF_SAMPLE_READ) && (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 800 : 0,
		  s->read_time_running);
	check_u64("read_value", single ? 500 : 0, s->read_value);
	check_u64("read_id", single && (rf & PERF_FORMAT_ID) ? 71 : 0, s->read_id);
	check_u64("read_lost", single && (rf & PERF_FORMAT_LOST) ? 1 : 0, s->read_lost);
	if (!group_fmt) {
		check_mem("read_values", false, NULL, s->read_values, 0);
		return;
	}
	check_u64("read_stride", 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST),
		  s->read_stride);
	for (size_t i = 0; i < 2; i++) {
		size_t k = i * s->read_stride;

		check_u64("group value", group[3 * i], s->read_values[k++]);
		if (rf & PERF_FORMAT_ID)
			check_u64("group id", group[3 * i + 1], s->read_values[k++]);
		if (rf & PERF_FORMAT_LOST)
			check_u64("group lost", group[3 * i + 2], s->read_values[k]);
	}
}

static void check(const struct perf_event_attr *a, const struct sonde_pd_sample *s)
{
	uint64_t t = a->sample_type;
	bool hw_idx = a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX;

	check_u64("present", t, s->present);
	EXPECT(PERF_SAMPLE_IP, ip, 0x400123);
	EXPECT(PERF_SAMPLE_TID, pid, 11);
	EXPECT(PERF_SAMPLE_TID, tid, 12);
	EXPECT(PERF_SAMPLE_TIME, time, 123456789);
	EXPECT(PERF_SAMPLE_ADDR, addr, 0xadd0);
	EXPECT(PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER, id, 0x1d);
	EXPECT(PERF_SAMPLE_STREAM_ID, stream_id, 0x5d);
	EXPECT(PERF_SAMPLE_CPU, cpu, 3);
	EXPECT(PERF_SAMPLE_PERIOD, period, 4000);
	check_read(a, s);
	EXPECT(PERF_SAMPLE_CALLCHAIN, callchain_nr, 3);
	check_mem("callchain", t & PERF_SAMPLE_CALLCHAIN, chain, s->callchain, sizeof(chain));
	EXPECT(PERF_SAMPLE_RAW, raw_size, sizeof(raw));
	check_mem("raw", t & PERF_SAMPLE_RAW, raw, s->raw, sizeof(raw));
	EXPECT(PERF_SAMPLE_BRANCH_STACK, branch_nr, 2);
	EXPECT(PERF_SAMPLE_BRANCH_STACK, branch_hw_idx, hw_idx ? 7 : 0);
	check_mem("branch entries", t & PERF_SAMPLE_BRANCH_STACK, branches, s->branch_entries,
		  sizeof(branches));
	EXPECT(PERF_SAMPLE_REGS_USER, regs_user_abi, PERF_SAMPLE_REGS_ABI_64);
	EXPECT(PERF_SAMPLE_REGS_USER, regs_user_nr, 3);
	check_mem("user registers", t & PERF_SAMPLE_REGS_USER, regs_user, s->regs_user,
		  sizeof(regs_user));
	EXPECT(PERF_SAMPLE_STACK_USER, stack_user_size, sizeof(stack));
	EXPECT(PERF_SAMPLE_STACK_USER, stack_user_dyn_size, 8);
	check_mem("user stack", t & PERF_SAMPLE_STACK_USER, stack, s->stack_user, sizeof(stack));
	EXPECT(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, weight, 0x3e1);
	EXPECT(PERF_SAMPLE_DATA_SRC, data_src, 0xda);
	EXPECT(PERF_SAMPLE_TRANSACTION, transaction, 0x7a);
	EXPECT(PERF_SAMPLE_REGS_INTR, regs_intr_abi, PERF_SAMPLE_REGS_ABI_64);
	EXPECT(PERF_SAMPLE_REGS_INTR, regs_intr_nr, 2);
	check_mem("interrupt registers", t & PERF_SAMPLE_REGS_INTR, regs_intr, s->regs_intr,
		  sizeof(regs_intr));
	EXPECT(PERF_SAMPLE_PHYS_ADDR, phys_addr, 0x9a);
	EXPECT(PERF_SAMPLE_CGROUP, cgroup, 0xc6);
	EXPECT(PERF_SAMPLE_DATA_PAGE_SIZE, data_page_size, 4096);
	EXPECT(PERF_SAMPLE_CODE_PAGE_SIZE, code_page_size, 2 << 20);
	EXPECT(PERF_SAMPLE_AUX, aux_size, sizeof(aux));
	check_mem("aux", t & PERF_SAMPLE_AUX, aux, s->aux, sizeof(aux));
}

/* ---- writer -> reader ------------------------------------------------- */

static char path[] = "/tmp/sonde-sample-parsing-XXXXXX";
static size_t nchecked;

static void round_trip(uint64_t type, uint64_t read_format, uint64_t branch_type)
{
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof(a)};
	struct sonde_pd_writer *w;
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	struct sonde_errmsg em;
	static struct enc e;
	uint64_t id = 0x1d;

	cur_type = type;
	a.sample_type = type;
	a.read_format = read_format;
	a.branch_sample_type = branch_type;
	a.sample_regs_user = REGS_USER_MASK;
	a.sample_regs_intr = REGS_INTR_MASK;
	a.sample_stack_user = sizeof(stack);
	encode(&a, &e);
	assert_int_equal(sonde_pd_writer_open(&w, path, NULL), 0);
	assert_true(sonde_pd_writer_add_attr(w, &a, "ev", &id, 1) >= 0);
	assert_int_equal(sonde_pd_writer_write(w, e.b, e.n), 0);
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);

	assert_int_equal(sonde_pd_reader_open(&r, path, &em), 0);
	assert_int_equal(sonde_pd_reader_next(r, &rec), 1);
	assert_int_equal(rec.type, PERF_RECORD_SAMPLE);
	if (sonde_pd_reader_parse(r, &rec, &ev))
		fail_msg("sample_type %#llx: %s", (unsigned long long)type,
			 sonde_pd_reader_errmsg(r));
	/* the attr as it came back: the decoder's view of the layout */
	check(&rec.attr->attr, &ev.sample);
	assert_int_equal(rec.attr->attr.sample_type, type);
	assert_int_equal(sonde_pd_reader_next(r, &rec), 0);
	sonde_pd_reader_close(r);
	nchecked++;
}

static void test_tripwire(void **state)
{
	uint64_t all = 0;

	(void)state;
	for (size_t i = 0; i < NFIELDS; i++) {
		if (all & fields[i].bit)
			fail_msg("%s twice in fields[]", fields[i].name);
		all |= fields[i].bit;
	}
	if (all != SONDE_PD_SAMPLE_TYPES)
		fail_msg("the decoder knows bits %#llx that fields[] lacks (or the reverse: %#llx)",
			 (unsigned long long)(SONDE_PD_SAMPLE_TYPES & ~all),
			 (unsigned long long)(all & ~SONDE_PD_SAMPLE_TYPES));
}

/* Each bit alone, each pair, all of them. */
static void test_combinations(void **state)
{
	uint64_t rf = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID;

	(void)state;
	nchecked = 0;
	for (size_t i = 0; i < NFIELDS; i++) {
		round_trip(fields[i].bit, rf, 0);
		for (size_t j = i + 1; j < NFIELDS; j++)
			round_trip(fields[i].bit | fields[j].bit, rf, 0);
	}
	round_trip(SONDE_PD_SAMPLE_TYPES, rf, 0);
	assert_int_equal(nchecked, NFIELDS + NFIELDS * (NFIELDS - 1) / 2 + 1);
}

/* PERF_SAMPLE_READ in every read_format, and branch stacks with the hw index. */
static void test_variants(void **state)
{
	(void)state;
	for (uint64_t rf = 0; rf < PERF_FORMAT_MAX; rf++) {
		round_trip(PERF_SAMPLE_READ, rf, 0);
		round_trip(SONDE_PD_SAMPLE_TYPES, rf, 0);
	}
	round_trip(PERF_SAMPLE_BRANCH_STACK, 0,
		   PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX);
	round_trip(SONDE_PD_SAMPLE_TYPES, PERF_FORMAT_GROUP | PERF_FORMAT_ID,
		   PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX);
}

/* A bit the decoder does not know makes every later field's place unknown:
 * the sample is refused, not misread. */
static void test_unknown_bit(void **state)
{
	static struct enc e;
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof(a)};
	struct sonde_pd_sample s;
	const char *what = NULL;

	(void)state;
	a.sample_type = PERF_SAMPLE_IP | (SONDE_PD_SAMPLE_TYPES + 1);
	encode(&a, &e);
	p64(&e, 0);
	((struct perf_event_header *)(void *)e.b)->size = (uint16_t)e.n;
	assert_int_equal(sonde_pd_sample_parse(&a, e.b, e.n, &s, &what), SONDE_E_FORMAT);
	assert_non_null(what);
}

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	return fd < 0 ? -1 : close(fd);
}

static int teardown(void **state)
{
	(void)state;
	return unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tripwire),
	    cmocka_unit_test(test_combinations),
	    cmocka_unit_test(test_variants),
	    cmocka_unit_test(test_unknown_bit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
