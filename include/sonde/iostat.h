/* SPDX-License-Identifier: MIT */
/*
 * I/O per process from syscall tracepoints (sonde script --io): calls,
 * bytes and failed calls of read and write, from the payloads of
 * syscalls:sys_enter_{read,write} (requested bytes) and
 * syscalls:sys_exit_{read,write} (bytes done, or -errno), the pread64,
 * readv, preadv, preadv2 and pwrite64, writev, pwritev, pwritev2 variants
 * counted with them.  Calls are the exit events when the capture has exit
 * events for that direction (a call is done when it returns), the entry
 * events otherwise.  Host side (payloads decoded with tpdecode).
 */
#ifndef SONDE_IOSTAT_H
#define SONDE_IOSTAT_H

#include <stddef.h>
#include <stdint.h>

#include <sonde/tpdecode.h>

struct sonde_iostat;

struct sonde_io_dir {
	uint64_t calls, bytes, failed;
	uint64_t requested; /* sum of the entry events' counts */
};

struct sonde_io_row {
	uint32_t pid;
	uint32_t comm; /* the caller's interned id of the last comm seen */
	struct sonde_io_dir read, write;
};

/**
 * sonde_iostat_new() - an empty table over the events of @tp
 * @tp: borrowed; must outlive the table
 * Return: 0 with *out new (free with sonde_iostat_free()), or -ENOMEM.
 */
int sonde_iostat_new(struct sonde_iostat **out, const struct sonde_tp_decoder *tp);
void sonde_iostat_free(struct sonde_iostat *st);

/*
 * Counts one tracepoint payload of process @pid (others are ignored).
 * Return: 1 when it was an I/O event, 0 when not, or -ENOMEM.
 */
int sonde_iostat_add(struct sonde_iostat *st, uint32_t pid, uint32_t comm, const void *raw,
		     size_t size);

/* Borrowed: the rows, most bytes (read + written) first; valid until the next add. */
size_t sonde_iostat_rows(struct sonde_iostat *st, const struct sonde_io_row **rows);

#endif
