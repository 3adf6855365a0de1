// SPDX-License-Identifier: MIT
/*
 * The blk tracer decoder on hand-built records: every action of the
 * kernel's table with the printer it uses (kernel/trace/blktrace.c:
 * generic, with error, plug, unplug, split, remap), the RWBS letters, a
 * cgroup id, a SCSI-style payload dump, a message, unknown actions, both
 * byte orders, short records and truncated output.  Expected strings are
 * written from the kernel's format strings, not from sonde's output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sonde/blkdecode.h>

/* Action words as include/uapi/linux/blktrace_api.h builds them. */
#define TC(bit) ((uint32_t)(bit) << 16)
#define TC_READ TC(1 << 0)
#define TC_WRITE TC(1 << 1)
#define TC_FLUSH TC(1 << 2)
#define TC_SYNC TC(1 << 3)
#define TC_QUEUE TC(1 << 4)
#define TC_REQUEUE TC(1 << 5)
#define TC_ISSUE TC(1 << 6)
#define TC_COMPLETE TC(1 << 7)
#define TC_PC TC(1 << 9)
#define TC_NOTIFY TC(1 << 10)
#define TC_AHEAD TC(1 << 11)
#define TC_META TC(1 << 12)
#define TC_DISCARD TC(1 << 13)
#define TC_FUA TC(1 << 15)
#define CGROUP 0x100u
#define DEV(ma, mi) ((uint32_t)(ma) << 20 | (mi))

struct rec {
	unsigned char b[128];
	size_t size;
	bool be;
};

static void put(struct rec *r, size_t off, uint64_t v, size_t n, bool be)
{
	for (size_t i = 0; i < n; i++)
		r->b[off + (be ? n - 1 - i : i)] = (unsigned char)(v >> (8 * i));
}

/* A record as the ftrace path writes it: entry header, then the fields. */
static struct rec mk(bool be, uint32_t action, uint64_t sector, uint32_t bytes, uint16_t error,
		     const void *pdu, uint16_t pdu_len)
{
	struct rec r = {.be = be, .size = SONDE_BLK_RECORD_MIN + pdu_len};

	memset(r.b, 0, sizeof(r.b));
	put(&r, 0, 0x1234, 2, be); /* common_type: not read */
	put(&r, 4, 4242, 4, be);   /* common_pid */
	put(&r, 16, sector, 8, be);
	put(&r, 24, bytes, 4, be);
	put(&r, 28, action, 4, be);
	put(&r, 32, 4242, 4, be);
	put(&r, 36, DEV(7, 3), 4, be);
	put(&r, 44, error, 2, be);
	put(&r, 46, pdu_len, 2, be);
	if (pdu_len)
		memcpy(r.b + SONDE_BLK_RECORD_MIN, pdu, pdu_len);
	return r;
}

static void expect(const struct rec *r, const char *want)
{
	char out[256];
	int n = sonde_blk_format(r->b, r->size, r->be, "dd", out, sizeof(out));

	assert_string_equal(out, want);
	assert_int_equal(n, (int)strlen(want));
}

static void test_generic_actions(void **state)
{
	static const struct {
		uint32_t act;
		const char *text;
	} acts[] = {
	    {1 | TC_QUEUE, "Q"}, {2 | TC_QUEUE, "M"}, {3 | TC_QUEUE, "F"},  {4 | TC_QUEUE, "G"},
	    {5 | TC_QUEUE, "S"}, {7 | TC_ISSUE, "D"}, {12 | TC_QUEUE, "I"},
	};
	char want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		for (int be = 0; be < 2; be++) {
			struct rec r =
			    mk(be, acts[i].act | TC_WRITE | TC_SYNC, 123456, 4096, 0, NULL, 0);

			snprintf(want, sizeof(want), "  7,3   %2s  WS 123456 + 8 [dd]",
				 acts[i].text);
			expect(&r, want);
		}
	}
	/* no sectors: only the command */
	struct rec r = mk(false, 1 | TC_QUEUE | TC_READ, 99, 511, 0, NULL, 0);
	expect(&r, "  7,3    Q   R [dd]");
}

static void test_rwbs(void **state)
{
	(void)state;
	struct rec r = mk(false, 7 | TC_ISSUE | TC_FLUSH | TC_WRITE | TC_FUA | TC_SYNC | TC_META, 8,
			  512, 0, NULL, 0);
	expect(&r, "  7,3    D FWFSM 8 + 1 [dd]");
	r = mk(false, 7 | TC_ISSUE | TC_DISCARD | TC_WRITE | TC_SYNC, 2048, 1 << 20, 0, NULL, 0);
	expect(&r, "  7,3    D  DS 2048 + 2048 [dd]");
	r = mk(false, 7 | TC_ISSUE | TC_READ | TC_AHEAD, 16, 8192, 0, NULL, 0);
	expect(&r, "  7,3    D  RA 16 + 16 [dd]");
	/* a flush without data: F, then N for no direction and no bytes */
	r = mk(false, 7 | TC_ISSUE | TC_FLUSH, 0, 0, 0, NULL, 0);
	expect(&r, "  7,3    D  FN [dd]");
}

static void test_with_error(void **state)
{
	(void)state;
	struct rec r = mk(false, 8 | TC_COMPLETE | TC_WRITE, 40, 4096, 0, NULL, 0);
	expect(&r, "  7,3    C   W 40 + 8 [0]");
	r = mk(true, 6 | TC_REQUEUE | TC_READ, 40, 0, 5, NULL, 0);
	expect(&r, "  7,3    R   N 40 [5]");
	r = mk(false, 8 | TC_COMPLETE | TC_WRITE, 40, 4096, 65535, NULL, 0);
	expect(&r, "  7,3    C   W 40 + 8 [65535]");
}

static void test_plug_unplug_split_remap(void **state)
{
	static const unsigned char depth[8] = {0, 0, 0, 0, 0, 0, 0, 3};
	static const unsigned char split[8] = {0, 0, 0, 0, 0, 0, 0x10, 0x00};
	/* from 8,16 sector 0x100000001 (big-endian words) */
	static const unsigned char remap[16] = {0, 0x80, 0, 0x10, 0, 0x70, 0, 3,
						0, 0,	 0, 1,	  0, 0,	   0, 1};

	(void)state;
	struct rec r = mk(false, 9 | TC_QUEUE, 0, 0, 0, NULL, 0);
	expect(&r, "  7,3    P   N [dd]");
	r = mk(false, 10 | TC_QUEUE, 0, 0, 0, depth, 8);
	expect(&r, "  7,3    U   N [dd] 3");
	r = mk(true, 11 | TC_QUEUE, 0, 0, 0, depth, 8);
	expect(&r, "  7,3   UT   N [dd] 3");
	r = mk(false, 13 | TC_WRITE, 2048, 1 << 20, 0, split, 8);
	expect(&r, "  7,3    X   W 2048 / 4096 [dd]");
	r = mk(false, 15 | TC_QUEUE | TC_READ, 100, 4096, 0, remap, 16);
	expect(&r, "  7,3    A   R 100 + 8 <- (8,16) 4294967297");
}

static void test_cgroup_pc_message(void **state)
{
	unsigned char cg[8 + 8];
	static const unsigned char cdb[10] = {0x28, 0, 0, 0, 0, 8, 0, 0, 0, 0};
	static const unsigned char cdb_full[4] = {0x12, 0, 0, 0x24};
	static const char msg[] = "hello blk";

	(void)state;
	/* cgroup id 0x500000001 before the payload: "LOW32,HIGH32" in hex */
	memset(cg, 0, sizeof(cg));
	cg[0] = 1;
	cg[4] = 5;
	cg[15] = 3;
	struct rec r = mk(false, 10 | TC_QUEUE | CGROUP, 0, 0, 0, cg, 16);
	expect(&r, "  7,3   1,5  U   N [dd] 3");
	/* SCSI passthrough: bytes, then the payload, zeros after the last non-zero byte cut */
	r = mk(false, 7 | TC_ISSUE | TC_PC | TC_READ, 0, 36, 0, cdb, 10);
	expect(&r, "  7,3    D   R 36 (28 00 00 00 00 08 00 ..) [dd]");
	r = mk(false, 8 | TC_COMPLETE | TC_PC | TC_READ, 0, 36, 0, cdb_full, 4);
	expect(&r, "  7,3    C   R (12 00 00 24) [0]");
	/* a message: action "m", RWBS "N", the text */
	r = mk(false, 2 | TC_NOTIFY, 0, 0, 0, msg, sizeof(msg) - 1);
	expect(&r, "  7,3    m   N hello blk");
}

static void test_unknown_and_short(void **state)
{
	char out[64];
	struct rec r = mk(false, 14 | TC_QUEUE, 0, 0, 0, NULL, 0);

	(void)state;
	expect(&r, "Unknown action e");
	r = mk(false, 0x7f | TC_QUEUE, 0, 0, 0, NULL, 0);
	expect(&r, "Unknown action 7f");
	r = mk(false, 0x201 | TC_QUEUE, 0, 0, 0, NULL, 0);
	expect(&r, "Unknown action 201");
	assert_int_equal(
	    sonde_blk_format(r.b, SONDE_BLK_RECORD_MIN - 1, false, "dd", out, sizeof(out)), -1);
	assert_string_equal(out, "");
	assert_int_equal(sonde_blk_record_pid(r.b, 47, false), -1);
	assert_int_equal(sonde_blk_record_pid(r.b, 48, false), 4242);
	r = mk(true, 1 | TC_QUEUE, 0, 0, 0, NULL, 0);
	assert_int_equal(sonde_blk_record_pid(r.b, 48, true), 4242);
	/* a pdu_len past the record: only the bytes there are read */
	r = mk(false, 10 | TC_QUEUE, 0, 0, 0, NULL, 0);
	put(&r, 46, 8, 2, false);
	expect(&r, "  7,3    U   N [dd] 0");
	/* no comm known: the kernel's "<...>" */
	r = mk(false, 9 | TC_QUEUE, 0, 0, 0, NULL, 0);
	sonde_blk_format(r.b, r.size, false, NULL, out, sizeof(out));
	assert_string_equal(out, "  7,3    P   N [<...>]");
}

static void test_truncated_output(void **state)
{
	char out[8];
	struct rec r = mk(false, 1 | TC_QUEUE | TC_WRITE, 123456, 4096, 0, NULL, 0);
	int n = sonde_blk_format(r.b, r.size, false, "dd", out, sizeof(out));

	(void)state;
	assert_int_equal(n, (int)strlen("  7,3    Q   W 123456 + 8 [dd]"));
	assert_string_equal(out, "  7,3  ");
	assert_int_equal(sonde_blk_format(r.b, r.size, false, "dd", NULL, 0), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_generic_actions),
	    cmocka_unit_test(test_rwbs),
	    cmocka_unit_test(test_with_error),
	    cmocka_unit_test(test_plug_unplug_split_remap),
	    cmocka_unit_test(test_cgroup_pc_message),
	    cmocka_unit_test(test_unknown_and_short),
	    cmocka_unit_test(test_truncated_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
