/* SPDX-License-Identifier: MIT */
/*
 * The blk tracer's records as text.  With current_tracer=blk the kernel
 * writes each block event into the ftrace ring buffer as a raw
 * struct blk_io_trace (include/uapi/linux/blktrace_api.h) whose first
 * 8 bytes are overlaid by the ftrace entry header (type, flags,
 * preempt count, pid), followed by an optional cgroup id and a payload.
 * trace-cmd stores these as the event ftrace/blktrace with no usable
 * print format; this decoder prints them as the kernel's own blk tracer
 * prints them in /sys/kernel/tracing/trace (kernel/trace/blktrace.c,
 * default, non-classic, non-verbose output), e.g.
 *   "  7,0    Q  WS 2048 + 8 [dd]"
 * Libc only; bytes are read in the file's byte order, every length checked.
 */
#ifndef SONDE_BLKDECODE_H
#define SONDE_BLKDECODE_H

#include <stdbool.h>
#include <stddef.h>

/* Size of the fixed part of a record (struct blk_io_trace). */
#define SONDE_BLK_RECORD_MIN 48

/**
 * sonde_blk_record_pid() - the pid of the ftrace entry header of a record
 * Return: the pid, or -1 when @size is too small for a record.
 */
int sonde_blk_record_pid(const void *data, size_t size, bool big_endian);

/**
 * sonde_blk_format() - one blk tracer record as the kernel's text, no newline
 * @data: the record payload (ftrace entry header included), @size bytes
 * @big_endian: the byte order of the capture
 * @comm: the command name of the record's pid (the kernel prints its saved
 *        cmdline, "<...>" when it has none); NULL prints "<...>"
 * @out: receives the NUL-terminated text, truncated to @len
 * Return: the length of the full text (as snprintf), or -1 when @size is
 * smaller than SONDE_BLK_RECORD_MIN.
 */
int sonde_blk_format(const void *data, size_t size, bool big_endian, const char *comm, char *out,
		     size_t len);

#endif
