/* SPDX-License-Identifier: MIT */
/*
 * The tracing data perf keeps in the HEADER_TRACING_DATA feature: the
 * tracefs format files (header_page, header_event, each recorded event's
 * format), printk formats and saved comm names, in the layout perf's and
 * trace-cmd's readers parse (the "\027\010\104tracing" blob, version 0.6).
 * With it, `perf script` and `sonde script` decode tracepoint fields
 * offline.  libc only: made on the target.
 */
#ifndef SONDE_TRACING_DATA_H
#define SONDE_TRACING_DATA_H

#include <stddef.h>

#include <sonde/error.h>

struct sonde_tp_name {
	const char *system; /* "sched" */
	const char *event;  /* "sched_switch" */
};

/**
 * sonde_tracing_data_build() - make the blob for tracepoints @tps
 * @tracefs: mounted tracefs root
 * @tps, @n: the recorded tracepoints (duplicates allowed; "ftrace" system
 *           events go to the ftrace section as perf puts them)
 *
 * Systems follow the order of their first mention in @tps, events the given
 * order within their system, each once.  Numbers are in host byte order (the
 * blob's endian byte says which); there is no trailing padding, so a caller
 * putting the blob in a PERF_RECORD_HEADER_TRACING_DATA record (pipe mode)
 * pads it to 8 bytes there, as perf's reader checks.  A missing format file
 * fails with SONDE_E_UNKNOWN_EVENT and a message naming the tracepoint;
 * missing printk_formats or saved_cmdlines are written as empty.
 *
 * Return: 0 with *blob new (free()), or a negative code with @err set.
 */
int sonde_tracing_data_build(const char *tracefs, const struct sonde_tp_name *tps, size_t n,
			     char **blob, size_t *len, struct sonde_errmsg *err);

#endif
