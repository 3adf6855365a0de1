// SPDX-License-Identifier: MIT
/*
 * blk tracer records to the kernel's text (see include/sonde/blkdecode.h).
 *
 * Record layout (struct blk_io_trace, fields in the capture's byte order):
 *   0 ftrace entry header (u16 type, u8 flags, u8 preempt, s32 pid)
 *   8 time (unset by the ftrace path)   16 u64 sector   24 u32 bytes
 *  28 u32 action   32 u32 pid   36 u32 device (kernel dev_t)   40 u32 cpu
 *  44 u16 error    46 u16 pdu_len
 *  48 u64 cgroup id when action has the cgroup bit, then the payload
 *     (big-endian words for unplug depth, split sector, remap source).
 * The action word: low byte the action (queue, merge, ...), bit 8 the
 * cgroup flag, high 16 bits the category mask (read, write, sync, ...)
 * that makes the RWBS column.  The kernel reads past a short payload;
 * here missing bytes read as zero so a damaged record still prints.
 */
#include <sonde/blkdecode.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Category bits (action >> 16). */
enum {
	TC_WRITE = 1 << 1,
	TC_FLUSH = 1 << 2,
	TC_SYNC = 1 << 3,
	TC_PC = 1 << 9,
	TC_NOTIFY = 1 << 10,
	TC_AHEAD = 1 << 11,
	TC_META = 1 << 12,
	TC_DISCARD = 1 << 13,
	TC_FUA = 1 << 15,
};

#define ACT_CGROUP 0x100u
#define TN_MESSAGE (2u | (uint32_t)TC_NOTIFY << 16)

struct blk_rec {
	const unsigned char *data;
	size_t size;
	bool be;
	uint64_t sector;
	uint32_t bytes, action, device;
	uint16_t error;
	bool has_cg;
	uint64_t cgid;
	size_t pdu_off, pdu_len; /* payload after the cgroup id, within size */
};

/* Output that keeps counting past the buffer, as snprintf does. */
struct out {
	char *p;
	size_t len;
	size_t used;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	size_t room = o->used < o->len ? o->len - o->used : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->p + o->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
}

static uint64_t rd(const struct blk_rec *r, size_t off, size_t n, bool be)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = be ? i : n - 1 - i;
		unsigned char b = off + k < r->size ? r->data[off + k] : 0;

		v = v << 8 | b;
	}
	return v;
}

/* A big-endian payload word (the kernel stores them with cpu_to_be64). */
static uint64_t pdu_u64(const struct blk_rec *r, size_t off)
{
	return off + 8 <= r->pdu_len ? rd(r, r->pdu_off + off, 8, true) : 0;
}

static void fill_rwbs(char rwbs[8], const struct blk_rec *r)
{
	uint32_t tc = r->action >> 16;
	int i = 0;

	if ((r->action & ~ACT_CGROUP) == TN_MESSAGE) {
		rwbs[i++] = 'N';
	} else {
		if (tc & TC_FLUSH)
			rwbs[i++] = 'F';
		if (tc & TC_DISCARD)
			rwbs[i++] = 'D';
		else if (tc & TC_WRITE)
			rwbs[i++] = 'W';
		else
			rwbs[i++] = r->bytes ? 'R' : 'N';
		if (tc & TC_FUA)
			rwbs[i++] = 'F';
		if (tc & TC_AHEAD)
			rwbs[i++] = 'A';
		if (tc & TC_SYNC)
			rwbs[i++] = 'S';
		if (tc & TC_META)
			rwbs[i++] = 'M';
	}
	rwbs[i] = '\0';
}

/* "MAJ,MIN [cgroup] ACT RWBS ": device as the kernel's dev_t (20 minor bits). */
static void log_action(struct out *o, const struct blk_rec *r, const char *act)
{
	char rwbs[8];

	fill_rwbs(rwbs, r);
	put(o, "%3u,%-3u ", r->device >> 20, r->device & 0xfffffu);
	/* The kernel prints the id as "LOW32,HIGH32" (blk_cgname is not recorded). */
	if (r->has_cg)
		put(o, "%llx,%-llx ", (unsigned long long)(r->cgid & 0xffffffffu),
		    (unsigned long long)(r->cgid >> 32));
	put(o, "%2s %3s ", act, rwbs);
}

/* Payload bytes in hex, trailing zeros after the last non-zero byte as " ..". */
static void dump_pdu(struct out *o, const struct blk_rec *r)
{
	const unsigned char *p = r->data + r->pdu_off;
	size_t end = r->pdu_len;

	if (!r->pdu_len)
		return;
	while (end > 0 && !p[end - 1])
		end--;
	put(o, "(");
	for (size_t i = 0; i < r->pdu_len; i++) {
		put(o, "%s%02x", i ? " " : "", p[i]);
		if (i == end && end != r->pdu_len - 1) {
			put(o, " ..) ");
			return;
		}
	}
	put(o, ") ");
}

static void log_generic(struct out *o, const struct blk_rec *r, const char *comm)
{
	if (r->action & (uint32_t)TC_PC << 16) {
		put(o, "%u ", r->bytes);
		dump_pdu(o, r);
		put(o, "[%s]", comm);
	} else if (r->bytes >> 9) {
		put(o, "%llu + %u [%s]", (unsigned long long)r->sector, r->bytes >> 9, comm);
	} else {
		put(o, "[%s]", comm);
	}
}

static void log_with_error(struct out *o, const struct blk_rec *r, const char *comm)
{
	(void)comm;
	if (r->action & (uint32_t)TC_PC << 16) {
		dump_pdu(o, r);
		put(o, "[%u]", r->error);
	} else if (r->bytes >> 9) {
		put(o, "%llu + %u [%u]", (unsigned long long)r->sector, r->bytes >> 9, r->error);
	} else {
		put(o, "%llu [%u]", (unsigned long long)r->sector, r->error);
	}
}

/* struct blk_io_trace_remap: be32 device_from, be32 device_to, be64 sector_from. */
static void log_remap(struct out *o, const struct blk_rec *r, const char *comm)
{
	uint32_t from = r->pdu_len >= 4 ? (uint32_t)rd(r, r->pdu_off, 4, true) : 0;
	uint64_t sector = r->pdu_len >= 16 ? rd(r, r->pdu_off + 8, 8, true) : 0;

	(void)comm;
	put(o, "%llu + %u <- (%u,%u) %llu", (unsigned long long)r->sector, r->bytes >> 9,
	    from >> 20, from & 0xfffffu, (unsigned long long)sector);
}

static void log_plug(struct out *o, const struct blk_rec *r, const char *comm)
{
	(void)r;
	put(o, "[%s]", comm);
}

/* The payload is the plug's request depth. */
static void log_unplug(struct out *o, const struct blk_rec *r, const char *comm)
{
	put(o, "[%s] %llu", comm, (unsigned long long)pdu_u64(r, 0));
}

/* The payload is the sector where the second half starts. */
static void log_split(struct out *o, const struct blk_rec *r, const char *comm)
{
	put(o, "%llu / %llu [%s]", (unsigned long long)r->sector, (unsigned long long)pdu_u64(r, 0),
	    comm);
}

typedef void log_fn(struct out *o, const struct blk_rec *r, const char *comm);

/* Indexed by the action number; the kernel's table has no bounce (14). */
static const struct {
	const char *act;
	log_fn *print;
} actions[] = {
    [1] = {"Q", log_generic}, [2] = {"M", log_generic},	   [3] = {"F", log_generic},
    [4] = {"G", log_generic}, [5] = {"S", log_generic},	   [6] = {"R", log_with_error},
    [7] = {"D", log_generic}, [8] = {"C", log_with_error}, [9] = {"P", log_plug},
    [10] = {"U", log_unplug}, [11] = {"UT", log_unplug},   [12] = {"I", log_generic},
    [13] = {"X", log_split},  [15] = {"A", log_remap},
};

int sonde_blk_record_pid(const void *data, size_t size, bool big_endian)
{
	struct blk_rec r = {.data = data, .size = size};

	if (size < SONDE_BLK_RECORD_MIN)
		return -1;
	return (int)(int32_t)rd(&r, 4, 4, big_endian);
}

static void parse(struct blk_rec *r)
{
	size_t pdu = rd(r, 46, 2, r->be);
	size_t avail = r->size - SONDE_BLK_RECORD_MIN;

	r->sector = rd(r, 16, 8, r->be);
	r->bytes = (uint32_t)rd(r, 24, 4, r->be);
	r->action = (uint32_t)rd(r, 28, 4, r->be);
	r->device = (uint32_t)rd(r, 36, 4, r->be);
	r->error = (uint16_t)rd(r, 44, 2, r->be);
	r->has_cg = r->action & ACT_CGROUP;
	if (pdu > avail)
		pdu = avail;
	r->pdu_off = SONDE_BLK_RECORD_MIN;
	if (r->has_cg) {
		/* pdu_len counts the cgroup id too. */
		r->cgid = pdu >= 8 ? rd(r, SONDE_BLK_RECORD_MIN, 8, r->be) : 0;
		r->pdu_off += 8;
		pdu = pdu >= 8 ? pdu - 8 : 0;
	}
	r->pdu_len = pdu;
}

int sonde_blk_format(const void *data, size_t size, bool big_endian, const char *comm, char *out,
		     size_t len)
{
	struct blk_rec r = {.data = data, .size = size, .be = big_endian};
	struct out o = {.p = out, .len = len};
	uint32_t what;

	if (len)
		out[0] = '\0';
	if (size < SONDE_BLK_RECORD_MIN)
		return -1;
	if (!comm)
		comm = "<...>";
	parse(&r);
	what = r.action & 0xffu;
	if ((r.action & ~ACT_CGROUP) == TN_MESSAGE) {
		const char *msg = (const char *)r.data + r.pdu_off;

		log_action(&o, &r, "m");
		put(&o, "%.*s", (int)strnlen(msg, r.pdu_len), msg);
	} else if (what < sizeof(actions) / sizeof(actions[0]) && actions[what].act &&
		   !(r.action & 0xfe00u)) {
		log_action(&o, &r, actions[what].act);
		actions[what].print(&o, &r, comm);
	} else {
		/* The kernel's own words for an action it has no text for. */
		put(&o, "Unknown action %x", r.action & 0xfeffu);
	}
	return o.used > (size_t)INT32_MAX ? INT32_MAX : (int)o.used;
}
