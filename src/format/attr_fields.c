// SPDX-License-Identifier: MIT
/*
 * An event's attributes as text, field by field, for the commands that
 * show them (evlist -v, report --header).  The field order, names and
 * value shapes are perf's, so a user comparing the two tools' output line
 * by line sees the same words; zero fields are left out, as perf does.
 * The caller joins the pairs (": " and ", " for evlist, " = " for the
 * header), so one table serves every layout.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include <sonde/attr_fields.h>

struct bit_name {
	uint64_t bit;
	const char *name;
};

#define BIT(prefix, n)                                                                             \
	{                                                                                          \
		prefix##n, #n                                                                      \
	}

static const struct bit_name sample_bits[] = {
    BIT(PERF_SAMPLE_, IP),
    BIT(PERF_SAMPLE_, TID),
    BIT(PERF_SAMPLE_, TIME),
    BIT(PERF_SAMPLE_, ADDR),
    BIT(PERF_SAMPLE_, READ),
    BIT(PERF_SAMPLE_, CALLCHAIN),
    BIT(PERF_SAMPLE_, ID),
    BIT(PERF_SAMPLE_, CPU),
    BIT(PERF_SAMPLE_, PERIOD),
    BIT(PERF_SAMPLE_, STREAM_ID),
    BIT(PERF_SAMPLE_, RAW),
    BIT(PERF_SAMPLE_, BRANCH_STACK),
    BIT(PERF_SAMPLE_, REGS_USER),
    BIT(PERF_SAMPLE_, STACK_USER),
    BIT(PERF_SAMPLE_, IDENTIFIER),
    BIT(PERF_SAMPLE_, REGS_INTR),
    BIT(PERF_SAMPLE_, DATA_SRC),
    BIT(PERF_SAMPLE_, WEIGHT),
    BIT(PERF_SAMPLE_, PHYS_ADDR),
    BIT(PERF_SAMPLE_, AUX),
    BIT(PERF_SAMPLE_, CGROUP),
    BIT(PERF_SAMPLE_, DATA_PAGE_SIZE),
    BIT(PERF_SAMPLE_, CODE_PAGE_SIZE),
    BIT(PERF_SAMPLE_, WEIGHT_STRUCT),
    {0, NULL},
};

static const struct bit_name branch_bits[] = {
    BIT(PERF_SAMPLE_BRANCH_, USER),
    BIT(PERF_SAMPLE_BRANCH_, KERNEL),
    BIT(PERF_SAMPLE_BRANCH_, HV),
    BIT(PERF_SAMPLE_BRANCH_, ANY),
    BIT(PERF_SAMPLE_BRANCH_, ANY_CALL),
    BIT(PERF_SAMPLE_BRANCH_, ANY_RETURN),
    BIT(PERF_SAMPLE_BRANCH_, IND_CALL),
    BIT(PERF_SAMPLE_BRANCH_, ABORT_TX),
    BIT(PERF_SAMPLE_BRANCH_, IN_TX),
    BIT(PERF_SAMPLE_BRANCH_, NO_TX),
    BIT(PERF_SAMPLE_BRANCH_, COND),
    BIT(PERF_SAMPLE_BRANCH_, CALL_STACK),
    BIT(PERF_SAMPLE_BRANCH_, IND_JUMP),
    BIT(PERF_SAMPLE_BRANCH_, CALL),
    BIT(PERF_SAMPLE_BRANCH_, NO_FLAGS),
    BIT(PERF_SAMPLE_BRANCH_, NO_CYCLES),
    BIT(PERF_SAMPLE_BRANCH_, TYPE_SAVE),
    BIT(PERF_SAMPLE_BRANCH_, HW_INDEX),
    {0, NULL},
};

static const struct bit_name read_bits[] = {
    BIT(PERF_FORMAT_, TOTAL_TIME_ENABLED),
    BIT(PERF_FORMAT_, TOTAL_TIME_RUNNING),
    BIT(PERF_FORMAT_, ID),
    BIT(PERF_FORMAT_, GROUP),
    BIT(PERF_FORMAT_, LOST),
    {0, NULL},
};

#undef BIT

/* Value shapes: perf prints masks in hex, counts in decimal, flags by name. */
enum shape { DEC, HEX, SIGNED, SAMPLE, BRANCH, READ };

static void format(char *buf, size_t len, enum shape s, uint64_t v)
{
	const struct bit_name *bits = s == SAMPLE   ? sample_bits
				      : s == BRANCH ? branch_bits
						    : read_bits;
	size_t used = 0;

	switch (s) {
	case DEC:
		snprintf(buf, len, "%" PRIu64, v);
		return;
	case HEX:
		snprintf(buf, len, "%#" PRIx64, v);
		return;
	case SIGNED:
		snprintf(buf, len, "%" PRId64, (int64_t)v);
		return;
	default:
		break;
	}
	/* Bits without a name are not shown, as perf does. */
	buf[0] = '\0';
	for (const struct bit_name *b = bits; b->name && used < len; b++)
		if (v & b->bit)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
						 b->name);
}

struct emit {
	sonde_attr_field_fn fn;
	void *ctx;
	size_t n;
};

static void field(struct emit *e, const char *name, enum shape s, uint64_t v)
{
	char buf[512];

	if (!v)
		return;
	format(buf, sizeof(buf), s, v);
	e->fn(e->ctx, name, buf);
	e->n++;
}

size_t sonde_attr_fields(const struct perf_event_attr *a, sonde_attr_field_fn fn, void *ctx)
{
	struct emit e = {fn, ctx, 0};

	field(&e, "type", DEC, a->type);
	field(&e, "size", DEC, a->size);
	field(&e, "config", HEX, a->config);
	field(&e, "{ sample_period, sample_freq }", DEC, a->sample_period);
	field(&e, "sample_type", SAMPLE, a->sample_type);
	field(&e, "read_format", READ, a->read_format);
#define FLAG(f) field(&e, #f, DEC, a->f)
	FLAG(disabled);
	FLAG(inherit);
	FLAG(pinned);
	FLAG(exclusive);
	FLAG(exclude_user);
	FLAG(exclude_kernel);
	FLAG(exclude_hv);
	FLAG(exclude_idle);
	FLAG(mmap);
	FLAG(comm);
	FLAG(freq);
	FLAG(inherit_stat);
	FLAG(enable_on_exec);
	FLAG(task);
	FLAG(watermark);
	FLAG(precise_ip);
	FLAG(mmap_data);
	FLAG(sample_id_all);
	FLAG(exclude_host);
	FLAG(exclude_guest);
	FLAG(exclude_callchain_kernel);
	FLAG(exclude_callchain_user);
	FLAG(mmap2);
	FLAG(comm_exec);
	FLAG(use_clockid);
	FLAG(context_switch);
	FLAG(write_backward);
	FLAG(namespaces);
	FLAG(ksymbol);
	FLAG(bpf_event);
	FLAG(aux_output);
	FLAG(cgroup);
	FLAG(text_poke);
	FLAG(build_id);
	FLAG(inherit_thread);
	FLAG(remove_on_exec);
	FLAG(sigtrap);
#undef FLAG
	field(&e, "{ wakeup_events, wakeup_watermark }", DEC, a->wakeup_events);
	field(&e, "bp_type", DEC, a->bp_type);
	field(&e, "{ bp_addr, config1 }", HEX, a->bp_addr);
	field(&e, "{ bp_len, config2 }", HEX, a->bp_len);
	field(&e, "branch_sample_type", BRANCH, a->branch_sample_type);
	field(&e, "sample_regs_user", HEX, a->sample_regs_user);
	field(&e, "sample_stack_user", DEC, a->sample_stack_user);
	field(&e, "clockid", SIGNED, (uint64_t)(int64_t)a->clockid);
	field(&e, "sample_regs_intr", HEX, a->sample_regs_intr);
	field(&e, "aux_watermark", DEC, a->aux_watermark);
	field(&e, "sample_max_stack", DEC, a->sample_max_stack);
	field(&e, "aux_sample_size", DEC, a->aux_sample_size);
	field(&e, "sig_data", DEC, a->sig_data);
	return e.n;
}
