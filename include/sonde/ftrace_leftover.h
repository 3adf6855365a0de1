/* SPDX-License-Identifier: MIT */
/*
 * What a `sonde trace -o` leaves behind if it is killed (SIGKILL, a crash,
 * a power cut is out of scope: /run is gone then), so that the next run,
 * `sonde doctor` and `sonde trace recover` can find it.
 *
 * While it records, a trace keeps one small text file per process in a run
 * folder (/run/sonde/trace-PID): the output it was asked for, the
 * temporary file beside it that becomes the output (see sonde/outfile.h),
 * the number of per-CPU page files (TMP.cpuN, raw ring-buffer pages) and
 * the events it traced.  A clean end removes the entry; an entry whose PID
 * is dead marks a capture that can still be saved: its page files hold
 * every page spliced before the kill.
 */
#ifndef SONDE_FTRACE_LEFTOVER_H
#define SONDE_FTRACE_LEFTOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sonde/strlist.h>

#define SONDE_RUN_DIR "/run/sonde"

struct sonde_trace_leftover {
	pid_t pid;
	char *output;		     /* owned: the trace.dat asked for (absolute) */
	char *tmp;		     /* owned: the temporary trace.dat; page files are TMP.cpuN */
	int ncpus;		     /* page files TMP.cpu0 .. TMP.cpu(ncpus-1) */
	struct sonde_strlist events; /* "SYS:EVENT" globs traced */
};

/* Frees what @lo owns. */
void sonde_trace_leftover_fini(struct sonde_trace_leftover *lo);

/**
 * sonde_trace_leftover_register() - note a recording in progress
 * @dir: the run folder (created if missing), normally SONDE_RUN_DIR
 *
 * Return: 0 or -errno (the caller records anyway: this is a safety net).
 */
int sonde_trace_leftover_register(const char *dir, const struct sonde_trace_leftover *lo);

/* Removes @pid's entry (a clean end, or a leftover dealt with). */
void sonde_trace_leftover_unregister(const char *dir, pid_t pid);

/* The page file of @cpu: TMP.cpuN.  Return: 0 or -ENAMETOOLONG. */
int sonde_trace_leftover_cpu_file(const char *tmp, int cpu, char *buf, size_t len);

/**
 * sonde_trace_leftover_find() - the entries of processes that are gone
 * @out: receives a new array of @n entries (free each with _fini, then the array)
 *
 * Entries that can't be parsed are skipped.  Return: 0 or -errno
 * (a missing folder is 0 entries).
 */
int sonde_trace_leftover_find(const char *dir, struct sonde_trace_leftover **out, size_t *n);

/* Bytes of pages the leftover's page files hold (0: nothing to recover). */
uint64_t sonde_trace_leftover_bytes(const struct sonde_trace_leftover *lo);

/* Removes the leftover's page files, its temporary trace.dat and its entry. */
void sonde_trace_leftover_remove(const char *dir, const struct sonde_trace_leftover *lo);

/**
 * sonde_trace_dead_instances() - instances/sonde-PID whose PID no longer runs
 * @out: receives the instance names
 *
 * Return: 0 or -errno.
 */
int sonde_trace_dead_instances(const char *tracefs, struct sonde_strlist *out);

#endif
