/* SPDX-License-Identifier: MIT */
/*
 * trace.dat through libtracecmd: writing one from the per-CPU page files
 * the recorder made, and printing one as trace-cmd report does.  Host side
 * only (the agent never links libtracecmd).
 */
#ifndef SONDE_TRACE_DAT_H
#define SONDE_TRACE_DAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct trace_dat_spec {
	int fd;		     /* write here (the path names it in messages); -1: create path */
	const char *tracefs; /* formats, printk formats, saved_cmdlines from here */
	const char *const *event_globs; /* "SYS:EVENT" globs whose formats to keep */
	size_t nglobs;
	const char *const *cpu_files; /* per CPU number 0..ncpus-1, raw pages */
	int ncpus;
	const char *const *cpu_stats; /* per CPU, the stats text or NULL */
};

/* Whether sonde was built with libtracecmd. */
bool trace_dat_available(void);

/* Writes @path.  Return: 0, or -1 with @err set. */
int trace_dat_write(const char *path, const struct trace_dat_spec *spec, char *err, size_t len);

/*
 * Prints every event of @path in time order, in trace-cmd report's form.
 * @count receives the number of events.  Return: 0, or -1 with @err set.
 */
int trace_dat_report(const char *path, FILE *out, uint64_t *count, char *err, size_t len);

/* Counts the events of @path without printing.  Return: 0 or -1. */
int trace_dat_count(const char *path, uint64_t *count, char *err, size_t len);

#endif
