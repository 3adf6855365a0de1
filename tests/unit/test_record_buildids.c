// SPDX-License-Identifier: MIT
/*
 * record's build-id pass (src/capture/record_buildids.c) over a capture
 * written with pd_gen.h: exactly the objects that got samples are listed
 * in HEADER_BUILD_ID, each once, in the order their MMAPs came, kernel
 * ones with the kernel's misc.  A fake build-id source answers every
 * lookup with an id that names what was asked (kind, name), and logs the
 * pid a file was asked for.
 *
 * The capture holds the cases a map model gets wrong: a parent's MMAP
 * after a fork (not the child's), an exec (the old image's maps serve the
 * samples until the new image's MMAPs replace them, as perf's do), a pid
 * reused by a fork after its first process exited (the child is a copy
 * of its parent, not of the dead process), overlapping maps (the newer
 * one wins where they overlap, the older one's remains elsewhere), a
 * thread of a process, two processes sampling one file, the vDSO,
 * kernel and module samples (by cpumode, not by address), and an MMAP2
 * that carries its file's build id (used as it is, no lookup).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/record.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pd_gen.h"

#define KTEXT 0xffffffff81000000ull
#define KMOD 0xffffffffc0000000ull

static char path[] = "/tmp/sonde-buildids-XXXXXX";

/* The fake source's log of file lookups: name and pid. */
static struct {
	char name[64];
	uint32_t pid;
} asked[64];
static size_t nasked;

static int fake_lookup(void *ctx, enum sonde_bid_kind kind, const char *name, uint32_t pid,
		       uint8_t id[20])
{
	static const char tag[] = "KMFV";

	(void)ctx;
	memset(id, 0, 20);
	id[0] = (uint8_t)tag[kind];
	if (name)
		memcpy(id + 1, name, strnlen(name, 19));
	if (kind == SONDE_BID_FILE && name && nasked < 64) {
		snprintf(asked[nasked].name, sizeof(asked[0].name), "%s", name);
		asked[nasked++].pid = pid;
	}
	/* An object the source can't read: no id. */
	if (name && !strcmp(name, "/unreadable"))
		return -ENOENT;
	return 20;
}

static void put(struct sonde_pd_writer *w, const struct pdg_buf *b)
{
	assert_int_equal(pdg_write(w, b), 0);
}

static uint64_t now = 1;

static void mmap2(struct sonde_pd_writer *w, uint32_t pid, uint64_t start, uint64_t len,
		  uint64_t ino, const char *file)
{
	struct pdg_buf b;

	pdg_mmap2(&b, pid, start, len, pid == UINT32_MAX ? start : 0, ino, file, now++);
	put(w, &b);
}

/* An MMAP2 carrying the file's build id (PERF_RECORD_MISC_MMAP_BUILD_ID):
 * 20 bytes of @byte, in place of device and inode. */
static void mmap2_bid(struct sonde_pd_writer *w, uint32_t pid, uint64_t start, uint64_t len,
		      uint8_t byte, const char *file)
{
	char name[64] = {0};
	uint8_t id[20];
	struct pdg_buf b;

	memset(id, byte, sizeof(id));
	pdg_hdr(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	pdg_put32(&b, pid);
	pdg_put32(&b, pid);
	pdg_put64(&b, start);
	pdg_put64(&b, len);
	pdg_put64(&b, 0);
	pdg_put32(&b, sizeof(id)); /* u8 size, 3 bytes reserved (little endian) */
	pdg_put(&b, id, sizeof(id));
	pdg_put32(&b, 5);
	pdg_put32(&b, 2);
	snprintf(name, sizeof(name), "%s", file);
	pdg_put(&b, name, (strlen(name) + 8) & ~7ul);
	pdg_trailer(&b, pid, pid, now++);
	pdg_end(&b);
	put(w, &b);
}

static void comm(struct sonde_pd_writer *w, uint32_t pid, const char *name, bool exec)
{
	struct pdg_buf b;

	pdg_comm(&b, pid, pid, name, exec, now++);
	put(w, &b);
}

static void task(struct sonde_pd_writer *w, uint32_t type, uint32_t pid, uint32_t ppid,
		 uint32_t tid, uint32_t ptid)
{
	struct pdg_buf b;

	pdg_task(&b, type, pid, ppid, tid, ptid, now++);
	put(w, &b);
}

static void sample(struct sonde_pd_writer *w, uint16_t cpumode, uint32_t pid, uint32_t tid,
		   uint64_t ip)
{
	struct pdg_buf b;

	pdg_sample(&b, cpumode, pid, tid, now++, 0, ip, 1000, NULL, 0);
	put(w, &b);
}

#define USER PERF_RECORD_MISC_USER
#define KERNEL PERF_RECORD_MISC_KERNEL

/* The capture; the comments say which object each sample must mark. */
static void write_records(struct sonde_pd_writer *w)
{
	struct pdg_buf b;

	mmap2(w, UINT32_MAX, KTEXT, 0x1000000, 0, "[kernel.kallsyms]_text");
	mmap2(w, UINT32_MAX, KMOD, 0x8000, 0, "[mod_a]");
	mmap2(w, UINT32_MAX, KMOD + 0x10000, 0x8000, 0, "/lib/modules/6.1.0/kernel/mod-b.ko");

	/* fork: 101 copies 100's maps; 100's later MMAP is its own */
	comm(w, 100, "parent", true);
	mmap2(w, 100, 0x400000, 0x1000, 1, "/bin/p");
	mmap2(w, 100, 0x7f0000, 0x1000, 2, "/lib/c.so");
	task(w, PERF_RECORD_FORK, 101, 100, 101, 100);
	mmap2(w, 100, 0x700000, 0x1000, 3, "/lib/late.so");
	sample(w, USER, 101, 101, 0x400010);	    /* /bin/p, through the fork */
	sample(w, USER, 101, 101, 0x700010);	    /* nothing: the child has no late.so */
	sample(w, KERNEL, 101, 101, KTEXT + 0x100); /* the kernel */
	sample(w, KERNEL, 101, 101, 0x7f0010);	    /* nothing: no kernel map there */
	sample(w, USER, 101, 101, KMOD + 0x10);	    /* nothing: a user address space */
	/* a thread of 100 shares its maps */
	task(w, PERF_RECORD_FORK, 100, 100, 105, 100);
	sample(w, USER, 100, 105, 0x7f0020); /* /lib/c.so */
	pdg_round(&b);
	put(w, &b);

	/* exec: the old image serves the samples until the new one's MMAPs */
	comm(w, 200, "sh", true);
	mmap2(w, 200, 0x400000, 0x1000, 4, "/bin/sh");
	mmap2(w, 200, 0x7e0000, 0x1000, 5, "/lib/libc-old.so");
	comm(w, 200, "prog", true);
	sample(w, USER, 200, 200, 0x7e0010); /* /lib/libc-old.so: still mapped in execve */
	mmap2(w, 200, 0x400000, 0x2000, 6, "/bin/prog");
	mmap2(w, 200, 0x7e0000, 0x1000, 7, "/lib/c.so"); /* the same file as 100's */
	sample(w, USER, 200, 200, 0x400010);		 /* /bin/prog, not /bin/sh */
	sample(w, USER, 200, 200, 0x7e0010);		 /* /lib/c.so (listed once) */
	mmap2(w, 200, 0x7fff0000, 0x2000, 0, "[vdso]");
	sample(w, USER, 200, 200, 0x7fff0100); /* [vdso] */

	/* pid reuse: 300 (/bin/old) exits; 310's child gets pid 300 again */
	comm(w, 300, "old", true);
	mmap2(w, 300, 0x400000, 0x1000, 8, "/bin/old");
	task(w, PERF_RECORD_EXIT, 300, 1, 300, 1);
	comm(w, 310, "new", true);
	mmap2(w, 310, 0x400000, 0x1000, 9, "/bin/new");
	task(w, PERF_RECORD_FORK, 300, 310, 300, 310);
	sample(w, USER, 300, 300, 0x400010); /* /bin/new, not /bin/old */
	pdg_round(&b);
	put(w, &b);

	/* overlap: /big at [0x10000,0x50000), /mid inside it */
	comm(w, 400, "overlap", true);
	mmap2(w, 400, 0x10000, 0x40000, 10, "/big");
	mmap2(w, 400, 0x20000, 0x10000, 11, "/mid");
	mmap2(w, 400, 0x60000, 0x1000, 12, "/gone");
	mmap2(w, 400, 0x60000, 0x1000, 13, "/unreadable"); /* replaces /gone */
	sample(w, USER, 400, 400, 0x20010);		   /* /mid */
	sample(w, USER, 400, 400, 0x60010);		   /* /unreadable: no id, not listed */
	sample(w, USER, 400, 400, 0x90000);		   /* nothing */
	sample(w, KERNEL, 400, 400, KMOD + 0x20);	   /* [mod_a] */
	sample(w, USER, 400, 400, 0x40010);		   /* /big, its right piece */

	/* the kernel put the build id in the MMAP2: no lookup */
	comm(w, 500, "bid", true);
	mmap2_bid(w, 500, 0x400000, 0x1000, 0xab, "/bin/bid");
	sample(w, USER, 500, 500, 0x400010); /* /bin/bid, id 0xab... */
}

struct want {
	const char *name;
	uint16_t misc;
	uint8_t tag;
	const char *asked; /* what the id names (the lookup's name) */
};

static void test_marked_objects(void **state)
{
	static const struct want want[] = {
	    {"[kernel.kallsyms]", PERF_RECORD_MISC_KERNEL, 'K', ""},
	    {"[mod_a]", PERF_RECORD_MISC_KERNEL, 'M', "mod_a"},
	    {"/bin/p", PERF_RECORD_MISC_USER, 'F', "/bin/p"},
	    {"/lib/c.so", PERF_RECORD_MISC_USER, 'F', "/lib/c.so"},
	    {"/lib/libc-old.so", PERF_RECORD_MISC_USER, 'F', "/lib/libc-old.so"},
	    {"/bin/prog", PERF_RECORD_MISC_USER, 'F', "/bin/prog"},
	    {"[vdso]", PERF_RECORD_MISC_USER, 'V', ""},
	    {"/bin/new", PERF_RECORD_MISC_USER, 'F', "/bin/new"},
	    {"/big", PERF_RECORD_MISC_USER, 'F', "/big"},
	    {"/mid", PERF_RECORD_MISC_USER, 'F', "/mid"},
	    {"/bin/bid", PERF_RECORD_MISC_USER, 0xab, "\xab\xab\xab\xab"},
	};
	const struct sonde_buildid_source src = {fake_lookup, NULL};
	int fd = mkstemp(path);
	struct sonde_pd_writer *w;
	struct sonde_record_bids found;
	struct sonde_pd_reader *r;
	const struct sonde_pd_features *f;
	size_t n = sizeof(want) / sizeof(want[0]);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = pdg_writer_open(path, PDG_FILE);
	assert_non_null(w);
	write_records(w);
	assert_int_equal(sonde_record_build_ids_from(w, path, &src, &found), 0);
	assert_int_equal(sonde_pd_writer_close(w, NULL), 0);
	assert_int_equal(sonde_pd_reader_open(&r, path, NULL), 0);
	f = sonde_pd_reader_features(r);
	for (size_t i = 0; i < f->nr_build_ids; i++)
		printf("build id %zu: %s\n", i, f->build_ids[i].filename);
	assert_int_equal(f->nr_build_ids, n);
	for (size_t i = 0; i < n; i++) {
		const struct sonde_pd_build_id *b = &f->build_ids[i];

		assert_string_equal(b->filename, want[i].name);
		assert_int_equal(b->misc & PERF_RECORD_MISC_CPUMODE_MASK, want[i].misc);
		assert_int_equal(b->size, 20);
		assert_int_equal(b->id[0], want[i].tag);
		assert_memory_equal(b->id + 1, want[i].asked, strlen(want[i].asked));
	}
	/* the vDSO's id comes back to the recorder */
	assert_int_equal(found.vdso_len, 20);
	assert_int_equal(found.vdso[0], 'V');
	sonde_pd_reader_close(r);
	unlink(path);

	/* files were asked for as the process that mapped them sees them,
	 * /lib/c.so once (its first mapping's id serves the second) */
	assert_int_equal(nasked, 8);
	for (size_t i = 0; i < nasked; i++) {
		if (!strcmp(asked[i].name, "/lib/libc-old.so") ||
		    !strcmp(asked[i].name, "/bin/prog"))
			assert_int_equal(asked[i].pid, 200);
		if (!strcmp(asked[i].name, "/bin/new"))
			assert_int_equal(asked[i].pid, 310);
		if (!strcmp(asked[i].name, "/bin/p") || !strcmp(asked[i].name, "/lib/c.so"))
			assert_int_equal(asked[i].pid, 100);
		assert_string_not_equal(asked[i].name, "/lib/late.so");
		assert_string_not_equal(asked[i].name, "/bin/old");
		assert_string_not_equal(asked[i].name, "/bin/sh");
		assert_string_not_equal(asked[i].name, "/gone");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_marked_objects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
