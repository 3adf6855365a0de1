/* SPDX-License-Identifier: MIT */
/*
 * Shared by synth.c (processes), synth_kernel.c (kernel image, kallsyms)
 * and synth_modules.c (modules): the on-disk record layouts perf uses for
 * the records sonde synthesizes, the record builders, a line reader over
 * a caller's buffer (no allocation, so the process walk can keep its
 * buffers on the stack) and a growable text buffer for the blobs.
 *
 * Records are in host byte order, like the kernel's own ring buffer
 * records and perf.data files written on the same machine.
 */
#ifndef SONDE_SYNTH_INTERNAL_H
#define SONDE_SYNTH_INTERNAL_H

#include <sonde/synth.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* perf_event_header followed by the fixed part of each record type. */
struct sonde_rec_header {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
};

struct sonde_rec_mmap { /* PERF_RECORD_MMAP: then filename, padded to 8 */
	struct sonde_rec_header h;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
};

struct sonde_rec_mmap2 { /* PERF_RECORD_MMAP2: then filename, padded to 8 */
	struct sonde_rec_header h;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

struct sonde_rec_comm { /* PERF_RECORD_COMM: then comm, padded to 8 */
	struct sonde_rec_header h;
	uint32_t pid, tid;
};

struct sonde_rec_fork { /* PERF_RECORD_FORK */
	struct sonde_rec_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

_Static_assert(sizeof(struct sonde_rec_mmap) == 40, "perf_record_mmap layout");
_Static_assert(sizeof(struct sonde_rec_mmap2) == 72, "perf_record_mmap2 layout");
_Static_assert(sizeof(struct sonde_rec_comm) == 16, "perf_record_comm layout");
_Static_assert(sizeof(struct sonde_rec_fork) == 32, "perf_record_fork layout");

/* Largest record built here: MMAP2 with a full path and the largest trailer. */
#define SONDE_SYNTH_REC_MAX                                                                        \
	(sizeof(struct sonde_rec_mmap2) + SONDE_SYNTH_PATH_MAX + SONDE_SYNTH_ID_HDR_MAX)

/* A record buffer, aligned for the u64 fields. */
union sonde_rec_buf {
	uint64_t align;
	unsigned char b[SONDE_SYNTH_REC_MAX];
};

/* -EINVAL unless s has an emit function and a usable id_hdr_size. */
int sonde_synth_check(const struct sonde_synth *s);

/*
 * Completes the record whose fixed part of @fixed bytes is in @buf: copies
 * @name (NUL-terminated, padded with zeros to 8 bytes; NULL for none),
 * appends s->id_hdr_size zero bytes, sets header.size and emits it.
 * Return: what emit returned, or -EINVAL when the record can't fit.
 */
int sonde_synth_finish(const struct sonde_synth *s, union sonde_rec_buf *buf, size_t fixed,
		       const char *name);

/* The PERF_RECORD_MMAP of the kernel and modules: pid -1, tid 0, misc KERNEL. */
int sonde_synth_emit_kmmap(const struct sonde_synth *s, uint64_t start, uint64_t len,
			   uint64_t pgoff, const char *name);

/* Line reader over an fd and a caller's buffer. */
struct sonde_lines {
	int fd;
	char *buf;
	size_t cap, pos, len;
	bool eof, skip;
};

/* Opens @path for reading into @buf (@cap bytes; lines longer than cap-1 are cut). */
int sonde_lines_open(struct sonde_lines *l, const char *path, char *buf, size_t cap);
void sonde_lines_close(struct sonde_lines *l);
/*
 * Next line, NUL-terminated without its newline, borrowed until the next
 * call.  *cut (optional) tells that the line was longer than the buffer and
 * was cut; the rest of it is skipped.  Return: 1 line, 0 end, or -errno.
 */
int sonde_lines_next(struct sonde_lines *l, char **line, size_t *len, bool *cut);

/* A growing text buffer with a sticky error: append many times, check once. */
struct sonde_sbuf {
	char *p;
	size_t len, cap;
	int err;
};
void sonde_sbuf_printf(struct sonde_sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Loaded modules from /proc/modules, with their .ko paths when found. */
struct sonde_kmod {
	char name[64];
	uint64_t base, size;
	char *path; /* owned, or NULL when modules.dep doesn't know it */
};

/*
 * Reads procfs/modules and resolves paths through
 * MODULES_DIR/RELEASE/modules.dep (release from procfs/sys/kernel/osrelease).
 * A missing procfs/modules is no module.
 * Return: 0 with *mods new (sonde_kmods_free()) and *n, or -errno.
 */
int sonde_kmods_read(const char *procfs, const char *modules_dir, struct sonde_kmod **mods,
		     size_t *n);
void sonde_kmods_free(struct sonde_kmod *mods, size_t n);

#endif
