// SPDX-License-Identifier: MIT
/*
 * sonde's own sections of a perf.data file (kallsyms at capture time,
 * module section addresses): a trailer after everything perf points at.
 *
 * They used to be header features with bits 224 and up.  perf's reader
 * skips bits it doesn't know, but its writers don't: `perf inject` (and
 * any command that rewrites the header) walks every set bit of the input's
 * feature map and calls feat_ops[bit].write, an array of perf's 32
 * features, so a bit of 224 reads past the array and jumps through a wild
 * pointer (SIGSEGV).  So the header carries no sonde bit any more; the
 * sections sit after the last thing the header points to, found from the
 * end of the file:
 *
 *   [blob]...  [index: u32 n, u32 0, n x {u32 id, u32 0, u64 offset, u64 size}]
 *   [footer: u64 index offset, "SONDEXT1"]
 *
 * perf never reads bytes nothing points to, and a file perf rewrites
 * simply loses them.  The reader still takes the old high feature bits of
 * earlier sonde files; either way the sections are reached as features
 * SONDE_PD_FEAT_SONDE_BASE + id.
 */
#include <inttypes.h>
#include <string.h>

#include "pd_le.h"
#include "pd_reader_internal.h"
#include "pd_writer_internal.h"

#define TRAILER_MAGIC 0x31545845444e4f53ULL /* "SONDEXT1" read as LE u64 */
#define ENTRY_SIZE 24u

int sonde_pd_trailer_write(struct sonde_pd_writer *w, uint64_t pos)
{
	uint8_t index[8 + SONDE_PD_FEAT_SONDE_MAX * ENTRY_SIZE], foot[16];
	uint32_t n = 0;
	int err;

	pos = (pos + 7) & ~7ull;
	for (unsigned id = 0; id < SONDE_PD_FEAT_SONDE_MAX; id++) {
		const struct blob *b = &w->feat[SONDE_PD_FEAT_SONDE_BASE + id];
		uint8_t *e = index + 8 + n * ENTRY_SIZE;

		if (!b->set)
			continue;
		memset(e, 0, ENTRY_SIZE);
		pd_put32(e, id);
		pd_put64(e + 8, pos);
		pd_put64(e + 16, b->len);
		if ((err = sonde_pd_writer_put(w, b->data, b->len, pos, "a sonde section")))
			return err;
		pos = (pos + b->len + 7) & ~7ull;
		n++;
	}
	if (!n)
		return 0;
	pd_put32(index, n);
	pd_put32(index + 4, 0);
	pd_put64(foot, pos);
	pd_put64(foot + 8, TRAILER_MAGIC);
	if ((err = sonde_pd_writer_put(w, index, 8 + n * ENTRY_SIZE, pos, "the sonde index")))
		return err;
	return sonde_pd_writer_put(w, foot, sizeof(foot), pos + 8 + n * ENTRY_SIZE,
				   "the sonde footer");
}

void sonde_pd_trailer_read(struct sonde_pd_reader *r)
{
	const uint8_t *p = r->base;
	uint64_t len = r->len, idx, n;

	if (len < 16 || pd_get64(p + len - 8) != TRAILER_MAGIC)
		return;
	idx = pd_get64(p + len - 16);
	/* The index lies between the end of the data and the footer. */
	if (idx < r->data_start || idx > len - 16 || len - 16 - idx < 8)
		return;
	n = pd_get32(p + idx);
	if (n > SONDE_PD_FEAT_SONDE_MAX || n * ENTRY_SIZE > len - 16 - idx - 8)
		return;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *e = p + idx + 8 + i * ENTRY_SIZE;
		uint32_t id = pd_get32(e);
		uint64_t off = pd_get64(e + 8), size = pd_get64(e + 16);
		unsigned bit = SONDE_PD_FEAT_SONDE_BASE + id;

		if (id >= SONDE_PD_FEAT_SONDE_MAX || off > idx || size > idx - off ||
		    r->feat_present[bit])
			continue;
		r->feat_present[bit] = true;
		r->feat_ptr[bit] = p + off;
		r->feat_sec[bit].offset = off;
		r->feat_sec[bit].size = size;
	}
}
