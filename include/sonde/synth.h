/* SPDX-License-Identifier: MIT */
/*
 * Synthesized state: the records a capture needs about what already ran
 * before it started (the kernel image, modules, existing processes, their
 * threads and executable mappings), made from /proc and /sys the way perf
 * synthesizes them, plus the blobs sonde keeps for offline symbolization
 * (a kallsyms snapshot, module section addresses).  libc only: this runs
 * on targets.
 */
#ifndef SONDE_SYNTH_H
#define SONDE_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Receives one whole record (perf_event_header + payload). Return 0 or -errno. */
typedef int (*sonde_emit_fn)(void *ctx, const void *rec, size_t len);

struct sonde_synth {
	const char *procfs;  /* "/proc", or a fake tree */
	const char *sysfs;   /* "/sys", or a fake tree */
	size_t id_hdr_size;  /* zeroed sample_id trailer bytes appended to every record
				(the attrs' sample_id_all trailer size; 0 when not set) */
	sonde_emit_fn emit;
	void *ctx;
};

/* PERF_RECORD_MMAP of "[kernel.kallsyms]_text" for pid -1 (start at _text
 * from kallsyms, pgoff = that address, length to the end of the address space). */
int sonde_synth_kernel_mmap(const struct sonde_synth *s);
/* One PERF_RECORD_MMAP per loaded module (start and size from /proc/modules). */
int sonde_synth_modules(const struct sonde_synth *s);
/* PERF_RECORD_COMM for each thread of @pid and PERF_RECORD_MMAP2 for each of
 * its executable mappings (with device, inode and protection). */
int sonde_synth_process(const struct sonde_synth *s, pid_t pid);
/* sonde_synth_process() for every process in procfs (kernel threads get COMM only). */
int sonde_synth_all_processes(const struct sonde_synth *s);

/* The text symbols of /proc/kallsyms ("addr t name [module]" lines).
 * Return: 0 with *blob new (free()), or -errno. */
int sonde_kallsyms_snapshot(const char *procfs, char **blob, size_t *len);
/*
 * Module load addresses: for each module of /proc/modules, a line
 * "name base size path" then one line per section of
 * /sys/module/NAME/sections: "\t.section addr".  Path is the .ko path from
 * /lib/modules/RELEASE/modules.dep when found, else "[name]".
 * Return: 0 with *blob new (free()), or -errno.
 */
int sonde_module_sections(const char *procfs, const char *sysfs, char **blob, size_t *len);

#endif
