/* SPDX-License-Identifier: MIT */
/*
 * trace.dat, trace-cmd's file of ftrace ring-buffer pages, through
 * libtracecmd: writing one from the per-CPU page files an ftrace recorder
 * made (sonde_ftrace_recorder_start()), and printing or counting the
 * events of one as trace-cmd report does.  Host side only (decode layer;
 * the agent never links libtracecmd).  When sonde is built without
 * libtracecmd every call fails with a message saying so.
 *
 * libtracecmd and libtraceevent trust the lengths and offsets they read,
 * so sonde_trace_dat_check() walks a file's layout first (libc only,
 * fuzzed) and the reading itself runs in a forked child.
 */
#ifndef SONDE_TRACE_DAT_H
#define SONDE_TRACE_DAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sonde/error.h>

struct sonde_trace_dat_spec {
	int fd;		     /* write here (the path names it in messages); -1: create path */
	const char *tracefs; /* formats, printk formats, saved_cmdlines from here */
	const char *const *event_globs; /* "SYS:EVENT" globs whose formats to keep */
	size_t nglobs;
	const char *const *cpu_files; /* per CPU number 0..ncpus-1, raw pages */
	int ncpus;
	const char *const *cpu_stats; /* per CPU, the stats text or NULL */
};

/* Whether sonde was built with libtracecmd. */
bool sonde_trace_dat_available(void);

/**
 * sonde_trace_dat_write() - write a trace.dat in trace-cmd record's order
 * @path: the file (created when @spec->fd is -1; named in messages)
 * @spec: where the formats and pages come from; NULL only to get the
 *        "built without libtracecmd" message
 * @err: receives the reason on failure
 *
 * Return: 0, or a negative code with @err set.
 */
int sonde_trace_dat_write(const char *path, const struct sonde_trace_dat_spec *spec,
			  struct sonde_errmsg *err);

/**
 * sonde_trace_dat_report() - print every event of @path in time order
 * @out: receives trace-cmd report's lines ("cpus=N" first)
 * @count: receives the number of events
 * @err: receives the reason on failure (a damaged layout with its offset)
 *
 * Every buffer of the file (the top level and instance buffers) is merged
 * in time order and labelled as trace-cmd labels them.
 * Return: 0, or a negative code with @err set.
 */
int sonde_trace_dat_report(const char *path, FILE *out, uint64_t *count, struct sonde_errmsg *err);

/* Counts the events of @path without printing.  Return: 0, or a negative code with @err. */
int sonde_trace_dat_count(const char *path, uint64_t *count, struct sonde_errmsg *err);

/**
 * sonde_trace_dat_check() - walk a trace.dat image's layout
 * @data, @size: the whole file
 * @good: receives how far the walk got (the offset of the last checked byte + 1)
 * @err: receives "offset 0x...: what is wrong" on failure
 *
 * trace-cmd's trace-cmd.dat(5): version 6 sections in order, version 7
 * section chains, CPU data inside the file.  Libc only.
 * Return: 0 when the layout holds, SONDE_E_FORMAT otherwise.
 */
int sonde_trace_dat_check(const uint8_t *data, size_t size, uint64_t *good,
			  struct sonde_errmsg *err);

#endif
