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

/* What the synthesizers made and what they had to skip. */
struct sonde_synth_stats {
	unsigned long processes, threads, mmaps; /* records' subjects emitted */
	unsigned long vanished;	      /* threads or processes that exited during the walk */
	unsigned long modules;	      /* module MMAPs emitted */
	unsigned long modules_hidden; /* modules skipped: address 0 (kptr_restrict) */
};

struct sonde_synth {
	const char *procfs; /* "/proc", or a fake tree */
	const char *sysfs;  /* "/sys", or a fake tree */
	size_t id_hdr_size; /* zeroed sample_id trailer bytes appended to every record
			       (the attrs' sample_id_all trailer size; 0 when not set) */
	sonde_emit_fn emit;
	void *ctx;
	/* Extensions (zero is the default): */
	const char *modules_dir; /* "/lib/modules" when NULL (modules.dep lives in RELEASE/) */
	bool mmap_data;		 /* also readable non-executable mappings, misc
				    PERF_RECORD_MISC_MMAP_DATA, like perf record -d */
	struct sonde_synth_stats *stats; /* optional: counts, added to (not reset) */
	bool namespaces; /* NAMESPACES of every task too (perf record --namespaces) */
};

/* Largest id_hdr_size accepted (the sample_id trailer is at most 6 u64s). */
#define SONDE_SYNTH_ID_HDR_MAX 64
/* perf's filename buffer (PATH_MAX): longer names become "//toolong". */
#define SONDE_SYNTH_PATH_MAX 4096

/*
 * PERF_RECORD_MMAP of "[kernel.kallsyms]_text" for pid -1, tid 0, misc KERNEL,
 * as perf 6.1 makes it: start = pgoff = address of _text (else _stext, and
 * the name says which), end = _etext, else the lowest module above start,
 * else ~0ULL.  Return: 0, -EACCES when kallsyms hides addresses
 * (kptr_restrict), -ENOENT without _text/_stext, or -errno.
 */
int sonde_synth_kernel_mmap(const struct sonde_synth *s);
/* One PERF_RECORD_MMAP per loaded module (start and size from /proc/modules),
 * in address order, pid -1, tid 0, pgoff 0, misc KERNEL, named by its .ko path
 * or "[name]".  Modules at address 0 (kptr_restrict) are skipped and counted
 * in stats->modules_hidden.  No /proc/modules is no module.  Return: 0 or -errno. */
int sonde_synth_modules(const struct sonde_synth *s);
/* What perf record -p does: PERF_RECORD_COMM for each thread of @pid (pid =
 * tgid, tid) and, after the leader's COMM, PERF_RECORD_MMAP2 for each
 * executable mapping (misc USER, with device, inode and protection).  No FORK.
 * Return: 0, -ESRCH when the process is gone, or -errno. */
int sonde_synth_process(const struct sonde_synth *s, pid_t pid);
/* What perf record -a does, per thread of every process in procfs:
 * PERF_RECORD_FORK (misc PERF_RECORD_MISC_FORK_EXEC; parent from PPid for a
 * leader, the leader for other threads), PERF_RECORD_COMM, and for a leader
 * that is not a kernel thread its MMAP2s.  Processes that exit meanwhile are
 * skipped (stats->vanished).  Return: 0 or -errno (procfs unreadable, emit error). */
int sonde_synth_all_processes(const struct sonde_synth *s);

/* The text symbols of /proc/kallsyms: its "addr t name\t[module]" lines of
 * types t, T, w and W, as they are, each ending in a newline.
 * Return: 0 with *blob new (free()), or -errno. */
int sonde_kallsyms_snapshot(const char *procfs, char **blob, size_t *len);
/*
 * Module load addresses: for each module of /proc/modules (in its order,
 * hidden addresses included as read), a line "name 0xbase size path"
 * (size in decimal) then one line per section of /sys/module/NAME/sections,
 * sorted by name: "\t.section 0xaddr".  Path is the .ko path from
 * /lib/modules/RELEASE/modules.dep when found (RELEASE from
 * procfs/sys/kernel/osrelease), else "[name]".  No /proc/modules: "".
 * Return: 0 with *blob new (free()), or -errno.
 */
int sonde_module_sections(const char *procfs, const char *sysfs, char **blob, size_t *len);
/* The same with s->procfs, s->sysfs and s->modules_dir (emit is not used). */
int sonde_synth_module_sections(const struct sonde_synth *s, char **blob, size_t *len);

/**
 * sonde_synth_namespaces() - the PERF_RECORD_NAMESPACES of task @tid of
 * process @pid, from its /proc ns links (perf record --namespaces)
 * Return: what emit returned, or -EINVAL for a bad @s.
 */
int sonde_synth_namespaces(const struct sonde_synth *s, pid_t pid, pid_t tid);

#endif
