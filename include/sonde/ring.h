/* SPDX-License-Identifier: MIT */
/*
 * A perf_event mmap ring: one metadata page and 2^n data pages the kernel
 * writes records into.  Draining hands out whole records in contiguous
 * runs (one call per run, not per record); a record that wraps around the
 * end of the buffer is copied into a bounce buffer first.
 */
#ifndef SONDE_RING_H
#define SONDE_RING_H

#include <stddef.h>
#include <stdint.h>

struct sonde_ring {
	void *base; /* the mapping: metadata page + data pages */
	size_t map_size;
	unsigned char *data;
	uint64_t mask; /* data size - 1 */
	int fd;	       /* borrowed: the event fd the ring belongs to */
	int cpu;
	unsigned char bounce[65536]; /* one wrapped record (sizes are 16-bit) */
};

/* Maps @pages data pages (a power of two) of event @fd. Return: 0 or -errno. */
int sonde_ring_open(struct sonde_ring *r, int fd, int cpu, unsigned int pages);
/**
 * sonde_ring_close() - unmap the ring (the event fd stays open: it is borrowed)
 * @r: the ring; closing twice is harmless
 */
void sonde_ring_close(struct sonde_ring *r);

/*
 * The sink of drained records: @buf holds whole records, @len bytes.
 * Returning non-zero stops the drain (the records handed over are consumed).
 */
typedef int (*sonde_ring_sink)(void *ctx, const void *buf, size_t len);

/**
 * sonde_ring_drain() - hand every record now in the ring to @sink
 * Return: bytes drained, or the sink's negative error.
 */
long sonde_ring_drain(struct sonde_ring *r, sonde_ring_sink sink, void *ctx);

#endif
