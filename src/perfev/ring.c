// SPDX-License-Identifier: MIT
/*
 * Ring draining.  The kernel advances data_head (read with acquire
 * ordering); we consume up to it and publish data_tail with release
 * ordering, which is what lets the kernel overwrite the space.  Records
 * between tail and head are handed to the sink in as few calls as
 * possible: everything up to the wrap point in one run, a record that
 * straddles the wrap through the bounce buffer, then the rest.
 */
#include <sonde/ring.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int sonde_ring_open(struct sonde_ring *r, int fd, int cpu, unsigned int pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!pages || (pages & (pages - 1)))
		return -EINVAL;
	r->map_size = (pages + 1) * page;
	r->base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->data = (unsigned char *)r->base + page;
	r->mask = (uint64_t)pages * page - 1;
	r->fd = fd;
	r->cpu = cpu;
	return 0;
}

void sonde_ring_close(struct sonde_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_size);
	r->base = NULL;
}

long sonde_ring_drain(struct sonde_ring *r, sonde_ring_sink sink, void *ctx)
{
	struct perf_event_mmap_page *meta = r->base;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail, start = tail;
	uint64_t size = r->mask + 1;
	int ret = 0;

	while (tail < head && !ret) {
		uint64_t off = tail & r->mask, run = 0;

		/* Gather whole records that don't cross the end of the buffer. */
		while (tail + run < head) {
			/* Not masked: a run ends at the end of the buffer, never wraps. */
			uint64_t o = off + run;
			struct perf_event_header h;

			if (o + sizeof(h) > size)
				break;
			memcpy(&h, r->data + o, sizeof(h));
			if (!h.size) /* corrupt: never loop forever */
				goto out;
			if (o + h.size > size)
				break;
			run += h.size;
		}
		if (run) {
			ret = sink(ctx, r->data + off, run);
			tail += run;
			continue;
		}
		/* One record straddling the wrap: reassemble it. */
		struct perf_event_header h;
		unsigned char *hp = (unsigned char *)&h;

		for (size_t i = 0; i < sizeof(h); i++)
			hp[i] = r->data[(tail + i) & r->mask];
		if (!h.size)
			goto out;
		uint64_t first = size - off;

		memcpy(r->bounce, r->data + off, first);
		memcpy(r->bounce + first, r->data, h.size - first);
		ret = sink(ctx, r->bounce, h.size);
		tail += h.size;
	}
out:
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return ret < 0 ? ret : (long)(tail - start);
}
