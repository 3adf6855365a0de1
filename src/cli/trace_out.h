/* SPDX-License-Identifier: MIT */
/*
 * The files of `sonde trace -o FILE`: the trace.dat, written under a
 * temporary name beside FILE and renamed over it only at a good end (a
 * failed run leaves an earlier FILE as it was), the per-CPU page files the
 * recorder fills (TMP.cpuN), and the run-folder entry that lets a later run
 * find them when this one is killed (sonde/ftrace_leftover.h).
 * `sonde trace recover` turns such leftovers into the trace.dat they
 * would have become.
 */
#ifndef SONDE_TRACE_OUT_H
#define SONDE_TRACE_OUT_H

#include <stdbool.h>

#include <sonde/ftrace.h>
#include <sonde/outfile.h>

#include <sonde/trace_dat.h>

struct cli;

struct trace_out {
	struct sonde_outfile of;
	char **cpu_files; /* per CPU 0..ncpus-1, owned */
	int ncpus;
	bool registered;
};

/* Creates the temporary trace.dat, the page files and the entry.  Prints errors.  Return: 0 or -errno. */
int trace_out_open(struct trace_out *to, const char *output, int ncpus,
		   const struct sonde_ftrace_event *events, size_t nevents);

/* Writes the trace.dat (@spec without fd and cpu files) and renames it into place.  Return: 0 or an error with @err. */
int trace_out_commit(struct trace_out *to, struct sonde_trace_dat_spec *spec,
		     struct sonde_errmsg *err);

/* Removes the page files and the entry, and the temporary trace.dat unless committed. */
void trace_out_close(struct trace_out *to);

/* Says what killed sondes left (removing leftovers with no data).  For every trace run. */
void trace_out_check_leftovers(void);

/* sonde trace recover [FILE] */
int trace_recover(int argc, char **argv, struct cli *cli);

#endif
