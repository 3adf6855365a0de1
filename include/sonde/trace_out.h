/* SPDX-License-Identifier: MIT */
/*
 * The files of a trace.dat recording (`sonde trace -o FILE`): the
 * trace.dat, written under a temporary name beside FILE and renamed over it
 * only at a good end (a failed run leaves an earlier FILE as it was), the
 * per-CPU page files the recorder fills (TMP.cpuN), and the run-folder
 * entry that lets a later run find them when this one is killed
 * (sonde/ftrace_leftover.h).  sonde_trace_out_recover() turns such
 * leftovers into the trace.dat they would have become.  Host side (decode
 * layer): the trace.dat is written with libtracecmd.
 */
#ifndef SONDE_TRACE_OUT_H
#define SONDE_TRACE_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include <sonde/error.h>
#include <sonde/ftrace.h>
#include <sonde/ftrace_leftover.h>
#include <sonde/outfile.h>
#include <sonde/trace_dat.h>

struct sonde_trace_out {
	struct sonde_outfile of;
	char **cpu_files; /* per CPU 0..ncpus-1, owned */
	int ncpus;
	const char *run_dir; /* borrowed: where the entry is noted */
	bool registered;
};

/**
 * sonde_trace_out_open() - create the temporary trace.dat, the page files and the entry
 * @run_dir: the run folder for the entry (SONDE_RUN_DIR); must outlive @to
 * @ncpus: page files TMP.cpu0 .. TMP.cpu(ncpus-1), one per CPU number
 * @events: the traced events, noted for a recovery
 * @err: the reason on failure (may stay empty when memory ran out)
 *
 * Return: 0 or a negative code; sonde_trace_out_close() either way.
 */
int sonde_trace_out_open(struct sonde_trace_out *to, const char *run_dir, const char *output,
			 int ncpus, const struct sonde_ftrace_event *events, size_t nevents,
			 struct sonde_errmsg *err);

/**
 * sonde_trace_out_commit() - write the trace.dat and rename it into place
 * @spec: formats and stats; its fd and page files are filled in from @to
 *
 * Return: 0, or a negative code with @err set.
 */
int sonde_trace_out_commit(struct sonde_trace_out *to, struct sonde_trace_dat_spec *spec,
			   struct sonde_errmsg *err);

/* Removes the page files and the entry, and the temporary trace.dat unless committed. */
void sonde_trace_out_close(struct sonde_trace_out *to);

/**
 * sonde_trace_out_recover() - write a killed recording's trace.dat
 * @lo: the leftover (sonde_trace_leftover_find()); removed once written
 * @tracefs: the formats come from this machine's tracefs now
 * @count: receives the events the written file holds
 * @err: the reason on failure
 *
 * The page files are cut to whole pages first: a kill can stop a write
 * inside one.  Return: 0, or a negative code with @err set.
 */
int sonde_trace_out_recover(const char *run_dir, const char *tracefs,
			    const struct sonde_trace_leftover *lo, uint64_t *count,
			    struct sonde_errmsg *err);

#endif
