// SPDX-License-Identifier: MIT
/*
 * Decoding of PERF_RECORD_SAMPLE bodies and of the sample_id_all trailer
 * that kernel records carry.
 *
 * A sample's layout is not self-describing: which fields are present, and
 * in what order, follows the event's attr (sample_type, read_format,
 * branch_sample_type, the register masks).  The decoder walks a cursor
 * through the record, checking each field against the record's end
 * before reading it, and leaves borrowed pointers into the record for the
 * arrays (callchain, raw, registers, stacks), so nothing is allocated.
 * Arrays of u64 are handed out as pointers: the reader guarantees the
 * record is 8-byte aligned and the decoder refuses the odd-sized fields
 * (raw, user stack) that would misalign what follows.
 */
#include <sonde/perf_data.h>

#include <errno.h>
#include <string.h>

#include "pd_le.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

static const char *const kernel_names[SONDE_PD_KERNEL_RECORD_MAX] = {
    [PERF_RECORD_MMAP] = "MMAP",
    [PERF_RECORD_LOST] = "LOST",
    [PERF_RECORD_COMM] = "COMM",
    [PERF_RECORD_EXIT] = "EXIT",
    [PERF_RECORD_THROTTLE] = "THROTTLE",
    [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
    [PERF_RECORD_FORK] = "FORK",
    [PERF_RECORD_READ] = "READ",
    [PERF_RECORD_SAMPLE] = "SAMPLE",
    [PERF_RECORD_MMAP2] = "MMAP2",
    [PERF_RECORD_AUX] = "AUX",
    [PERF_RECORD_ITRACE_START] = "ITRACE_START",
    [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
    [PERF_RECORD_SWITCH] = "SWITCH",
    [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
    [PERF_RECORD_NAMESPACES] = "NAMESPACES",
    [PERF_RECORD_KSYMBOL] = "KSYMBOL",
    [PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
    [PERF_RECORD_CGROUP] = "CGROUP",
    [PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
    [21] = "AUX_OUTPUT_HW_ID",
};

static const char *const user_names[SONDE_PD_RECORD_HEADER_MAX - 64] = {
    [SONDE_PD_RECORD_HEADER_ATTR - 64] = "HEADER_ATTR",
    [SONDE_PD_RECORD_HEADER_EVENT_TYPE - 64] = "HEADER_EVENT_TYPE",
    [SONDE_PD_RECORD_HEADER_TRACING_DATA - 64] = "HEADER_TRACING_DATA",
    [SONDE_PD_RECORD_HEADER_BUILD_ID - 64] = "HEADER_BUILD_ID",
    [SONDE_PD_RECORD_FINISHED_ROUND - 64] = "FINISHED_ROUND",
    [SONDE_PD_RECORD_ID_INDEX - 64] = "ID_INDEX",
    [SONDE_PD_RECORD_AUXTRACE_INFO - 64] = "AUXTRACE_INFO",
    [SONDE_PD_RECORD_AUXTRACE - 64] = "AUXTRACE",
    [SONDE_PD_RECORD_AUXTRACE_ERROR - 64] = "AUXTRACE_ERROR",
    [SONDE_PD_RECORD_THREAD_MAP - 64] = "THREAD_MAP",
    [SONDE_PD_RECORD_CPU_MAP - 64] = "CPU_MAP",
    [SONDE_PD_RECORD_STAT_CONFIG - 64] = "STAT_CONFIG",
    [SONDE_PD_RECORD_STAT - 64] = "STAT",
    [SONDE_PD_RECORD_STAT_ROUND - 64] = "STAT_ROUND",
    [SONDE_PD_RECORD_EVENT_UPDATE - 64] = "EVENT_UPDATE",
    [SONDE_PD_RECORD_TIME_CONV - 64] = "TIME_CONV",
    [SONDE_PD_RECORD_HEADER_FEATURE - 64] = "HEADER_FEATURE",
    [SONDE_PD_RECORD_COMPRESSED - 64] = "COMPRESSED",
    [SONDE_PD_RECORD_FINISHED_INIT - 64] = "FINISHED_INIT",
};

const char *sonde_pd_record_name(uint32_t type)
{
	if (type < SONDE_PD_KERNEL_RECORD_MAX && kernel_names[type])
		return kernel_names[type];
	if (type >= 64 && type < SONDE_PD_RECORD_HEADER_MAX && user_names[type - 64])
		return user_names[type - 64];
	return "UNKNOWN";
}

/* A bounds-checked cursor over one record. */
struct cur {
	const uint8_t *p, *end;
	const char **what;
	int err;
};

static bool need(struct cur *c, uint64_t n, const char *what)
{
	if (c->err)
		return false;
	if (n > (uint64_t)(c->end - c->p)) {
		c->err = SONDE_E_TRUNCATED;
		*c->what = what;
		return false;
	}
	return true;
}

static uint64_t take64(struct cur *c, const char *what)
{
	uint64_t v;

	if (!need(c, 8, what))
		return 0;
	v = pd_get64(c->p);
	c->p += 8;
	return v;
}

/* A borrowed array of @n u64s. */
static const uint64_t *take_array(struct cur *c, uint64_t n, const char *what)
{
	const uint64_t *a = (const uint64_t *)(const void *)c->p;

	if (!need(c, n > UINT64_MAX / 8 ? UINT64_MAX : n * 8, what))
		return NULL;
	c->p += n * 8;
	return a;
}

static void bad(struct cur *c, const char *what)
{
	if (!c->err) {
		c->err = SONDE_E_FORMAT;
		*c->what = what;
	}
}

static void parse_read(struct cur *c, const struct perf_event_attr *attr, struct sonde_pd_sample *s)
{
	uint64_t rf = attr->read_format;

	if (rf & PERF_FORMAT_GROUP) {
		s->read_nr = take64(c, "read nr");
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			s->read_time_enabled = take64(c, "read time enabled");
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			s->read_time_running = take64(c, "read time running");
		s->read_stride = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		if (s->read_nr > UINT64_MAX / 8 / s->read_stride) {
			bad(c, "read nr");
			return;
		}
		s->read_values = take_array(c, s->read_nr * s->read_stride, "read values");
		return;
	}
	s->read_nr = 1;
	s->read_value = take64(c, "read value");
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		s->read_time_enabled = take64(c, "read time enabled");
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		s->read_time_running = take64(c, "read time running");
	if (rf & PERF_FORMAT_ID)
		s->read_id = take64(c, "read id");
	if (rf & PERF_FORMAT_LOST)
		s->read_lost = take64(c, "read lost");
}

static void parse_regs(struct cur *c, uint64_t mask, uint64_t *abi, uint32_t *nr,
		       const uint64_t **regs, const char *what)
{
	*abi = take64(c, what);
	if (*abi == 0 || c->err)
		return;
	*nr = (uint32_t)__builtin_popcountll(mask);
	*regs = take_array(c, *nr, what);
}

int sonde_pd_sample_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
			  struct sonde_pd_sample *s, const char **what)
{
	const char *dummy;
	struct cur c = {(const uint8_t *)rec + sizeof(struct perf_event_header),
			(const uint8_t *)rec + size, what ? what : &dummy, 0};
	uint64_t t = attr->sample_type;

	memset(s, 0, sizeof(*s));
	if (size < sizeof(struct perf_event_header))
		return SONDE_E_TRUNCATED;
	s->present = t;
	/* A field sonde doesn't know would shift every one after it. */
	if (t & ~SONDE_PD_SAMPLE_TYPES)
		bad(&c, "sample_type (bits unknown to sonde)");
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = take64(&c, "identifier");
	if (t & PERF_SAMPLE_IP)
		s->ip = take64(&c, "ip");
	if (t & PERF_SAMPLE_TID && need(&c, 8, "tid")) {
		s->pid = pd_get32(c.p);
		s->tid = pd_get32(c.p + 4);
		c.p += 8;
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = take64(&c, "time");
	if (t & PERF_SAMPLE_ADDR)
		s->addr = take64(&c, "addr");
	if (t & PERF_SAMPLE_ID)
		s->id = take64(&c, "id");
	if (t & PERF_SAMPLE_STREAM_ID)
		s->stream_id = take64(&c, "stream id");
	if (t & PERF_SAMPLE_CPU && need(&c, 8, "cpu")) {
		s->cpu = pd_get32(c.p);
		c.p += 8;
	}
	if (t & PERF_SAMPLE_PERIOD)
		s->period = take64(&c, "period");
	if (t & PERF_SAMPLE_READ)
		parse_read(&c, attr, s);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_nr = take64(&c, "callchain nr");
		s->callchain = take_array(&c, s->callchain_nr, "callchain");
	}
	if (t & PERF_SAMPLE_RAW && need(&c, 4, "raw size")) {
		s->raw_size = pd_get32(c.p);
		c.p += 4;
		/* The kernel pads raw data so that what follows stays aligned. */
		if ((s->raw_size + 4) % 8)
			bad(&c, "raw size (not padded to 8 bytes)");
		else if (need(&c, s->raw_size, "raw data")) {
			s->raw = c.p;
			c.p += s->raw_size;
		}
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		s->branch_nr = take64(&c, "branch nr");
		if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_hw_idx = take64(&c, "branch hw index");
		if (s->branch_nr > UINT64_MAX / 24)
			bad(&c, "branch nr");
		else
			s->branch_entries = take_array(&c, s->branch_nr * 3, "branch entries");
	}
	if (t & PERF_SAMPLE_REGS_USER)
		parse_regs(&c, attr->sample_regs_user, &s->regs_user_abi, &s->regs_user_nr,
			   &s->regs_user, "user registers");
	if (t & PERF_SAMPLE_STACK_USER) {
		s->stack_user_size = take64(&c, "user stack size");
		if (s->stack_user_size % 8)
			bad(&c, "user stack size (not a multiple of 8)");
		else if (s->stack_user_size && need(&c, s->stack_user_size, "user stack")) {
			s->stack_user = c.p;
			c.p += s->stack_user_size;
			s->stack_user_dyn_size = take64(&c, "user stack dyn size");
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		s->weight = take64(&c, "weight");
	if (t & PERF_SAMPLE_DATA_SRC)
		s->data_src = take64(&c, "data src");
	if (t & PERF_SAMPLE_TRANSACTION)
		s->transaction = take64(&c, "transaction");
	if (t & PERF_SAMPLE_REGS_INTR)
		parse_regs(&c, attr->sample_regs_intr, &s->regs_intr_abi, &s->regs_intr_nr,
			   &s->regs_intr, "interrupt registers");
	if (t & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = take64(&c, "phys addr");
	if (t & PERF_SAMPLE_CGROUP)
		s->cgroup = take64(&c, "cgroup");
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = take64(&c, "data page size");
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = take64(&c, "code page size");
	if (t & PERF_SAMPLE_AUX) {
		s->aux_size = take64(&c, "aux size");
		if (need(&c, s->aux_size, "aux data")) {
			s->aux = c.p;
			c.p += s->aux_size;
		}
	}
	return c.err;
}

static const uint64_t id_bits[] = {PERF_SAMPLE_TID,	  PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
				   PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,  PERF_SAMPLE_IDENTIFIER};

size_t sonde_pd_sample_id_size(const struct perf_event_attr *attr)
{
	size_t n = 0;

	if (!attr->sample_id_all)
		return 0;
	for (size_t i = 0; i < sizeof(id_bits) / sizeof(id_bits[0]); i++)
		if (attr->sample_type & id_bits[i])
			n += 8;
	return n;
}

int sonde_pd_sample_id_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
			     struct sonde_pd_sample *s)
{
	size_t n = sonde_pd_sample_id_size(attr);
	const uint8_t *p;
	uint64_t t = attr->sample_type;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return 0;
	if (size < sizeof(struct perf_event_header) + n)
		return SONDE_E_TRUNCATED;
	p = (const uint8_t *)rec + size - n;
	s->present = t & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			  PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	if (t & PERF_SAMPLE_TID) {
		s->pid = pd_get32(p);
		s->tid = pd_get32(p + 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		s->time = pd_get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		s->id = pd_get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		s->stream_id = pd_get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_CPU) {
		s->cpu = pd_get32(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = pd_get64(p);
	return 0;
}

int sonde_pd_record_time(const struct perf_event_attr *attr, const struct sonde_pd_record *rec,
			 uint64_t *time)
{
	uint64_t t = attr->sample_type;
	size_t off;

	if (!(t & PERF_SAMPLE_TIME))
		return -ENOENT;
	if (rec->type == PERF_RECORD_SAMPLE) {
		/* IDENTIFIER, IP and TID come before TIME in a sample. */
		off = sizeof(struct perf_event_header) + 8 * !!(t & PERF_SAMPLE_IDENTIFIER) +
		      8 * !!(t & PERF_SAMPLE_IP) + 8 * !!(t & PERF_SAMPLE_TID);
	} else {
		size_t n = sonde_pd_sample_id_size(attr);

		if (!n || rec->type >= SONDE_PD_KERNEL_RECORD_MAX || rec->size < 8 + n)
			return -ENOENT;
		off = rec->size - n + 8 * !!(t & PERF_SAMPLE_TID);
	}
	if (off + 8 > rec->size)
		return SONDE_E_TRUNCATED;
	*time = pd_get64((const uint8_t *)rec->data + off);
	return 0;
}
