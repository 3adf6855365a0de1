/* SPDX-License-Identifier: MIT */
/*
 * The views of `sonde script`: one sample per line (perf script's default
 * columns: "comm tid [cpu] secs.usecs: event: fields", call chains below)
 * or one JSON object per line with typed tracepoint fields.  They read a
 * sample as the report pass hands it to its hook: the machine has the
 * thread's comm, the frames are resolved; tracepoint payloads are decoded
 * through the capture's formats.
 */
#ifndef SONDE_SCRIPT_PRINT_H
#define SONDE_SCRIPT_PRINT_H

#include <stdio.h>

#include <sonde/session.h>
#include <sonde/tool.h>
#include <sonde/tpdecode.h>

/* -F fields (perf script's names). */
enum sonde_script_field {
	SONDE_SF_COMM = 1u << 0,
	SONDE_SF_TID = 1u << 1,
	SONDE_SF_PID = 1u << 2,
	SONDE_SF_CPU = 1u << 3,
	SONDE_SF_TIME = 1u << 4,
	SONDE_SF_EVENT = 1u << 5,
	SONDE_SF_IP = 1u << 6,
	SONDE_SF_SYM = 1u << 7,
	SONDE_SF_SYMOFF = 1u << 8,
	SONDE_SF_DSO = 1u << 9,
	SONDE_SF_TRACE = 1u << 10,
	SONDE_SF_PERIOD = 1u << 11,
};

/* Parses "comm,tid,time" into a mask.  Return: 0, or -EINVAL with *bad the unknown name. */
int sonde_script_fields_parse(const char *list, unsigned *mask, const char **bad);

/*
 * What perf script shows for an event by default: tracepoints comm, tid,
 * cpu, time, event and the decoded trace (plus ip, sym and dso with call
 * chains); other events also period, ip, sym+offset and dso.  Fields the
 * event's samples lack (no CPU in sample_type...) are left out.
 */
unsigned sonde_script_default_fields(const struct perf_event_attr *a);

/* Side-band records shown between the samples (perf script --show-*-events). */
enum sonde_script_show {
	SONDE_SHOW_TASK = 1u << 0,   /* COMM, FORK, EXIT */
	SONDE_SHOW_MMAP = 1u << 1,   /* MMAP, MMAP2 */
	SONDE_SHOW_SWITCH = 1u << 2, /* SWITCH, SWITCH_CPU_WIDE */
	SONDE_SHOW_LOST = 1u << 3,   /* LOST */
};

/* Times shown: absolute, from the first line shown, or from the previous one. */
enum sonde_script_time { SONDE_TIME_ABS, SONDE_TIME_REL, SONDE_TIME_DELTA };

struct sonde_script_print {
	FILE *out;
	struct sonde_tp_decoder *tp; /* NULL: tracepoints shown undecoded */
	unsigned fields;	     /* 0: each event's default */
	int name_width;		     /* of the event column: the longest event name */
	bool ns;		     /* times to the nanosecond (perf script --ns) */
	unsigned show;		     /* enum sonde_script_show */
	enum sonde_script_time time_mode;
	uint64_t first_time, prev_time; /* --reltime / --deltatime state, 0: unset */
};

/* Return: 0, or -EIO when writing failed. */
int sonde_script_print_text(struct sonde_script_print *p, const struct sonde_session *ses,
			    const struct sonde_tool_sample *rs);
/**
 * sonde_script_print_sideband() - a side-band record as perf script shows it
 * @p: the view; records of kinds @p->show leaves out print nothing
 * @ses: the session (the machine has already taken the record)
 * @rec, @ev: the record and its parsed form
 *
 * The line starts with the columns of the samples (comm of the record's
 * task, the tid, CPU and time of its sample_id trailer), then
 * "PERF_RECORD_<KIND>" and the record's fields in perf's words.
 * Return: 0, or -EIO when writing failed.
 */
int sonde_script_print_sideband(struct sonde_script_print *p, const struct sonde_session *ses,
				const struct sonde_pd_record *rec, const struct sonde_pd_event *ev);

/*
 * One JSON object and a newline: event, comm, pid, tid, cpu, time (seconds)
 * and time_ns, period, ip/sym/dso, "fields" (tracepoint fields by name:
 * numbers, strings, arrays of numbers), "trace" (the print format's text)
 * and "callchain" (objects of ip, sym, symoff, dso).  With -F, only those.
 */
int sonde_script_print_json(struct sonde_script_print *p, const struct sonde_session *ses,
			    const struct sonde_tool_sample *rs);

#endif
