// SPDX-License-Identifier: MIT
/*
 * Synthesized records on fake trees: a proc/ with two processes (one with
 * three threads, one of them without Name: in its status so the comm file
 * answers; one kernel thread with a maps file that must be ignored; a
 * process that vanished), maps with every kind of line perf cares about,
 * kallsyms for x86 (_text, _etext) and for an Arm-like kernel (_stext only,
 * modules below and above it), /proc/modules with a hidden module, a
 * modules.dep and /sys/module sections.
 *
 * Expected records are written here field by field at their byte offsets
 * (not through the library's structs) and compared byte for byte with what
 * the emit callback got, trailer and padding included.  The callback also
 * checks that every record's length is a multiple of 8 and matches its
 * header.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sonde/synth.h>

#include "fake_tree.h"

#define MAXREC 128

/* ---- what the emit callback received ---- */
struct cap {
	unsigned char *rec[MAXREC];
	size_t len[MAXREC];
	size_t n;
	int fail_at; /* 1-based record to refuse with -EIO, 0 never */
};

static int cap_emit(void *ctx, const void *rec, size_t len)
{
	struct cap *c = ctx;
	uint16_t size;

	assert_true(len >= 8);
	assert_int_equal(len % 8, 0);
	memcpy(&size, (const unsigned char *)rec + 6, 2);
	assert_int_equal(size, len);
	assert_true(c->n < MAXREC);
	if (c->fail_at && (int)c->n + 1 == c->fail_at)
		return -EIO;
	c->rec[c->n] = malloc(len);
	assert_non_null(c->rec[c->n]);
	memcpy(c->rec[c->n], rec, len);
	c->len[c->n++] = len;
	return 0;
}

static void cap_free(struct cap *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->rec[i]);
	memset(c, 0, sizeof(*c));
}

/* ---- expected records, built at perf's byte offsets ---- */
struct exp {
	unsigned char b[512];
	size_t len;
};

static void put16(struct exp *e, size_t off, uint16_t v)
{
	memcpy(e->b + off, &v, 2);
}
static void put32(struct exp *e, size_t off, uint32_t v)
{
	memcpy(e->b + off, &v, 4);
}
static void put64(struct exp *e, size_t off, uint64_t v)
{
	memcpy(e->b + off, &v, 8);
}

/* Header, then the string at @off padded to 8, then @id zero bytes. */
static void finish(struct exp *e, uint32_t type, uint16_t misc, size_t off, const char *s,
		   size_t id)
{
	size_t n = s ? (strlen(s) + 1 + 7) / 8 * 8 : 0;

	if (s)
		memcpy(e->b + off, s, strlen(s) + 1);
	e->len = off + n + id;
	put32(e, 0, type);
	put16(e, 4, misc);
	put16(e, 6, (uint16_t)e->len);
}

static struct exp comm(size_t id, uint32_t pid, uint32_t tid, const char *name)
{
	struct exp e = {0};

	put32(&e, 8, pid);
	put32(&e, 12, tid);
	finish(&e, 3 /* PERF_RECORD_COMM */, 0, 16, name, id);
	return e;
}

static struct exp fork_rec(size_t id, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct exp e = {0};

	put32(&e, 8, pid);
	put32(&e, 12, ppid);
	put32(&e, 16, tid);
	put32(&e, 20, ptid);
	put64(&e, 24, 0);
	finish(&e, 7 /* PERF_RECORD_FORK */, 1 << 13 /* FORK_EXEC */, 32, NULL, id);
	return e;
}

static struct exp mmap1(size_t id, uint64_t start, uint64_t len, uint64_t pgoff, const char *name)
{
	struct exp e = {0};

	put32(&e, 8, (uint32_t)-1);
	put32(&e, 12, 0);
	put64(&e, 16, start);
	put64(&e, 24, len);
	put64(&e, 32, pgoff);
	finish(&e, 1 /* PERF_RECORD_MMAP */, 1 /* MISC_KERNEL */, 40, name, id);
	return e;
}

static struct exp mmap2(size_t id, uint16_t misc, uint32_t pid, uint64_t start, uint64_t end,
			uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino, uint32_t prot,
			uint32_t flags, const char *name)
{
	struct exp e = {0};

	put32(&e, 8, pid);
	put32(&e, 12, pid);
	put64(&e, 16, start);
	put64(&e, 24, end - start);
	put64(&e, 32, pgoff);
	put32(&e, 40, maj);
	put32(&e, 44, min);
	put64(&e, 48, ino);
	put64(&e, 56, 0);
	put32(&e, 64, prot);
	put32(&e, 68, flags);
	finish(&e, 10 /* PERF_RECORD_MMAP2 */, misc, 72, name, id);
	return e;
}

static void hexdump(const char *what, const unsigned char *b, size_t len)
{
	printf("%s (%zu):", what, len);
	for (size_t i = 0; i < len; i++)
		printf("%s%02x", i % 8 ? "" : " ", b[i]);
	printf("\n");
}

static void assert_rec(const struct cap *c, size_t i, const struct exp *e)
{
	assert_true(i < c->n);
	if (c->len[i] != e->len || memcmp(c->rec[i], e->b, e->len)) {
		hexdump("got", c->rec[i], c->len[i]);
		hexdump("want", e->b, e->len);
		fail_msg("record %zu differs", i);
	}
}

/* Index of the record equal to @e, which must be there exactly once. */
static size_t find_rec(const struct cap *c, const struct exp *e)
{
	size_t at = SIZE_MAX;

	for (size_t i = 0; i < c->n; i++)
		if (c->len[i] == e->len && !memcmp(c->rec[i], e->b, e->len)) {
			assert_true(at == SIZE_MAX);
			at = i;
		}
	if (at == SIZE_MAX) {
		hexdump("missing", e->b, e->len);
		for (size_t i = 0; i < c->n; i++)
			hexdump("have", c->rec[i], c->len[i]);
		fail_msg("record not emitted");
	}
	return at;
}

/* ---- the fake machine ---- */
struct fake {
	char *root;
	char proc[512], sys[512], mods[512];
	struct cap cap;
	struct sonde_synth_stats st;
	struct sonde_synth s;
};

#define STATUS_USER                                                                                \
	"Umask:\t0022\nState:\tS (sleeping)\nTgid:\t100\nNgid:\t0\nPid:\t%d\nPPid:\t1\n"           \
	"TracerPid:\t0\nVmPeak:\t  10000 kB\nThreads:\t3\n"

static const char app_maps[] =
    "55d0c0a00000-55d0c0a21000 r--p 00000000 fd:01 1234                       /usr/bin/app\n"
    "55d0c0a21000-55d0c0a80000 r-xp 00021000 fd:01 1234                       /usr/bin/app\n"
    "55d0c0a80000-55d0c0a90000 rw-p 00080000 fd:01 1234                       /usr/bin/app\n"
    "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0000010000 r-xs 00000000 00:05 777                        /memfd:jit "
    "(deleted)\n"
    "7f0000100000-7f0000200000 rwxp 00000000 00:00 0 \n"
    "7f0000200000-7f0000210000 r-xp 00000000 00:00 0\n"
    "7f0000300000-7f0000400000 r-xp 00000000 00:10 4242                       /dev/hugepages/big\n"
    "7f0000500000-7f0000600000 r-xp 00001000 103:02 99                        /opt/lib with "
    "space.so\n"
    "7f0000600000-7f0000601000 ---p 00000000 00:00 0 \n"
    "this is not a maps line\n"
    "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
    "7ffd00010000-7ffd00012000 r--p 00000000 00:00 0                          [vvar]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

static void make_procs(struct fake *f)
{
	char *r = f->root;

	assert_int_equal(fake_tree_write(r, "proc/mounts",
					 "proc /proc proc rw 0 0\n"
					 "hugetlbfs /dev/hugepages hugetlbfs rw,relatime 0 0\n"),
			 0);
	/* process 100: leader, a worker, and a thread whose status lacks Name: */
	assert_int_equal(
	    fake_tree_printf(r, "proc/100/task/100/status", "Name:\tapp\n" STATUS_USER, 100), 0);
	assert_int_equal(fake_tree_write(r, "proc/100/task/100/maps", app_maps), 0);
	assert_int_equal(fake_tree_printf(r, "proc/100/task/101/status",
					  "Name:\tapp-worker-long-name\n" STATUS_USER, 101),
			 0);
	assert_int_equal(fake_tree_printf(r, "proc/100/task/102/status", STATUS_USER, 102), 0);
	assert_int_equal(fake_tree_write(r, "proc/100/task/102/comm", "fromcomm\n"), 0);
	/* process 200: a kernel thread (no VmPeak), whose maps must not be read */
	assert_int_equal(
	    fake_tree_write(r, "proc/200/task/200/status",
			    "Name:\tkworker/0:1\nUmask:\t0000\nState:\tI (idle)\n"
			    "Tgid:\t200\nNgid:\t0\nPid:\t200\nPPid:\t2\nThreads:\t1\n"),
	    0);
	assert_int_equal(fake_tree_write(r, "proc/200/task/200/maps",
					 "00400000-00401000 r-xp 00000000 fd:01 1 /bin/no\n"),
			 0);
	/* process 300 exited: its folder is there, its task/ empty */
	assert_int_equal(fake_tree_mkdir(r, "proc/300/task"), 0);
	/* not processes */
	assert_int_equal(fake_tree_write(r, "proc/self", "x"), 0);
	assert_int_equal(fake_tree_mkdir(r, "proc/12ab/task"), 0);
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->root = fake_tree_new();
	assert_non_null(f->root);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	snprintf(f->mods, sizeof(f->mods), "%s/lib/modules", f->root);
	assert_int_equal(fake_tree_mkdir(f->root, "proc"), 0);
	assert_int_equal(fake_tree_mkdir(f->root, "sys"), 0);
	f->s.procfs = f->proc;
	f->s.sysfs = f->sys;
	f->s.modules_dir = f->mods;
	f->s.emit = cap_emit;
	f->s.ctx = &f->cap;
	f->s.stats = &f->st;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	cap_free(&f->cap);
	fake_tree_remove(f->root);
	free(f);
	return 0;
}

/* The MMAP2s of app_maps, in order, for trailer @id (mmap_data: with -d's extras). */
static size_t app_mmaps(struct exp *e, size_t id, bool data)
{
	const uint32_t R = PROT_READ, W = PROT_WRITE, X = PROT_EXEC;
	const uint16_t U = 2, D = 2 | (1 << 13);
	size_t n = 0;

	if (data)
		e[n++] = mmap2(id, D, 100, 0x55d0c0a00000, 0x55d0c0a21000, 0, 0xfd, 1, 1234, R,
			       MAP_PRIVATE, "/usr/bin/app");
	e[n++] = mmap2(id, U, 100, 0x55d0c0a21000, 0x55d0c0a80000, 0x21000, 0xfd, 1, 1234, R | X,
		       MAP_PRIVATE, "/usr/bin/app");
	if (data) {
		e[n++] = mmap2(id, D, 100, 0x55d0c0a80000, 0x55d0c0a90000, 0x80000, 0xfd, 1, 1234,
			       R | W, MAP_PRIVATE, "/usr/bin/app");
		e[n++] = mmap2(id, D, 100, 0x55d0c1000000, 0x55d0c1021000, 0, 0, 0, 0, R | W,
			       MAP_PRIVATE, "[heap]");
	}
	e[n++] = mmap2(id, U, 100, 0x7f0000000000, 0x7f0000010000, 0, 0, 5, 777, R | X, MAP_SHARED,
		       "/memfd:jit (deleted)");
	e[n++] = mmap2(id, U, 100, 0x7f0000100000, 0x7f0000200000, 0, 0, 0, 0, R | W | X,
		       MAP_PRIVATE, "//anon");
	e[n++] = mmap2(id, U, 100, 0x7f0000200000, 0x7f0000210000, 0, 0, 0, 0, R | X, MAP_PRIVATE,
		       "//anon");
	e[n++] = mmap2(id, U, 100, 0x7f0000300000, 0x7f0000400000, 0, 0, 0x10, 4242, R | X,
		       MAP_PRIVATE | MAP_HUGETLB, "//anon");
	e[n++] = mmap2(id, U, 100, 0x7f0000500000, 0x7f0000600000, 0x1000, 0x103, 2, 99, R | X,
		       MAP_PRIVATE, "/opt/lib with space.so");
	e[n++] = mmap2(id, U, 100, 0x7ffd00000000, 0x7ffd00002000, 0, 0, 0, 0, R | X, MAP_PRIVATE,
		       "[vdso]");
	if (data)
		e[n++] = mmap2(id, D, 100, 0x7ffd00010000, 0x7ffd00012000, 0, 0, 0, 0, R,
			       MAP_PRIVATE, "[vvar]");
	e[n++] = mmap2(id, U, 100, 0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, X,
		       MAP_PRIVATE, "[vsyscall]");
	return n;
}

/* perf record -p: COMM per thread, the leader's MMAP2s right after its COMM. */
static void check_process(void **state, size_t id, bool data)
{
	struct fake *f = *state;
	struct exp e[16], c;
	size_t n, at, i;

	make_procs(f);
	f->s.id_hdr_size = id;
	f->s.mmap_data = data;
	assert_int_equal(sonde_synth_process(&f->s, 100), 0);
	n = app_mmaps(e, id, data);
	assert_int_equal(f->cap.n, 3 + n);
	c = comm(id, 100, 100, "app");
	at = find_rec(&f->cap, &c);
	for (i = 0; i < n; i++)
		assert_rec(&f->cap, at + 1 + i, &e[i]);
	/* Name: is 15 bytes at most, like the kernel's comm */
	c = comm(id, 100, 101, "app-worker-long");
	find_rec(&f->cap, &c);
	c = comm(id, 100, 102, "fromcomm");
	find_rec(&f->cap, &c);
	assert_int_equal(f->st.processes, 1);
	assert_int_equal(f->st.threads, 3);
	assert_int_equal(f->st.mmaps, n);
}

static void test_process(void **state)
{
	check_process(state, 0, false);
}

static void test_process_trailer(void **state)
{
	check_process(state, 32, false);
}

static void test_process_mmap_data(void **state)
{
	check_process(state, 24, true);
}

static void test_process_gone(void **state)
{
	struct fake *f = *state;

	make_procs(f);
	assert_int_equal(sonde_synth_process(&f->s, 300), -ESRCH);
	assert_int_equal(sonde_synth_process(&f->s, 999), -ESRCH);
	assert_int_equal(f->cap.n, 0);
}

/* perf record -a: FORK then COMM per thread; no MMAP2 for kernel threads. */
static void test_all_processes(void **state)
{
	struct fake *f = *state;
	const size_t id = 40;
	struct exp e[16], r;
	size_t n, at, i;

	make_procs(f);
	f->s.id_hdr_size = id;
	assert_int_equal(sonde_synth_all_processes(&f->s), 0);
	n = app_mmaps(e, id, false);
	assert_int_equal(f->cap.n, 2 * 3 + n + 2);

	r = fork_rec(id, 100, 1, 100, 1); /* a leader's parent is PPid */
	at = find_rec(&f->cap, &r);
	r = comm(id, 100, 100, "app");
	assert_rec(&f->cap, at + 1, &r);
	for (i = 0; i < n; i++)
		assert_rec(&f->cap, at + 2 + i, &e[i]);
	r = fork_rec(id, 100, 100, 101, 100); /* another thread's parent is its leader */
	at = find_rec(&f->cap, &r);
	r = comm(id, 100, 101, "app-worker-long");
	assert_rec(&f->cap, at + 1, &r);
	r = fork_rec(id, 100, 100, 102, 100);
	at = find_rec(&f->cap, &r);
	r = comm(id, 100, 102, "fromcomm");
	assert_rec(&f->cap, at + 1, &r);

	r = fork_rec(id, 200, 2, 200, 2);
	at = find_rec(&f->cap, &r);
	r = comm(id, 200, 200, "kworker/0:1");
	assert_rec(&f->cap, at + 1, &r);

	assert_int_equal(f->st.processes, 2);
	assert_int_equal(f->st.threads, 4);
	assert_int_equal(f->st.vanished, 1); /* 300 */
}

static void test_toolong_and_errors(void **state)
{
	struct fake *f = *state;
	char name[5000], *maps;
	struct exp r;

	memset(name, 'a', sizeof(name));
	name[0] = '/';
	name[sizeof(name) - 1] = '\0';
	assert_true(asprintf(&maps,
			     "00400000-00401000 r-xp 00000000 fd:01 7 %s\n"
			     "00500000-00501000 r-xp 00000000 fd:01 8 /bin/short\n",
			     name) > 0);
	assert_int_equal(fake_tree_write(f->root, "proc/7/task/7/status",
					 "Name:\tlong\nTgid:\t7\nPPid:\t1\nVmPeak:\t1 kB\n"),
			 0);
	assert_int_equal(fake_tree_write(f->root, "proc/7/task/7/maps", maps), 0);
	free(maps);
	f->s.id_hdr_size = 8;
	assert_int_equal(sonde_synth_process(&f->s, 7), 0);
	assert_int_equal(f->cap.n, 3);
	r = mmap2(8, 2, 7, 0x400000, 0x401000, 0, 0xfd, 1, 7, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		  "//toolong");
	assert_rec(&f->cap, 1, &r);
	r = mmap2(8, 2, 7, 0x500000, 0x501000, 0, 0xfd, 1, 8, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		  "/bin/short");
	assert_rec(&f->cap, 2, &r);
	cap_free(&f->cap);

	/* the emit function's error stops the walk and comes back */
	f->cap.fail_at = 2;
	assert_int_equal(sonde_synth_process(&f->s, 7), -EIO);
	f->cap.fail_at = 0;
	cap_free(&f->cap);

	/* trailers are whole u64s, and at most SONDE_SYNTH_ID_HDR_MAX */
	f->s.id_hdr_size = 12;
	assert_int_equal(sonde_synth_process(&f->s, 7), -EINVAL);
	f->s.id_hdr_size = SONDE_SYNTH_ID_HDR_MAX + 8;
	assert_int_equal(sonde_synth_kernel_mmap(&f->s), -EINVAL);
	f->s.id_hdr_size = 0;
	f->s.emit = NULL;
	assert_int_equal(sonde_synth_modules(&f->s), -EINVAL);
}

/* ---- kernel and modules ---- */

static const char x86_kallsyms[] =
    "0000000000000000 A fixed_percpu_data\n"
    "ffffffffc0001000 t _text\t[fakemod]\n" /* a module's: not the kernel's */
    "ffffffff81000000 T _text\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000040 T startup_64\n"
    "ffffffff81e00000 D _etext_data_not_text\n"
    "ffffffff81c02a51 T _etext\n"
    "ffffffff82000000 D _sdata\n"
    "ffffffffc0002000 t helper\t[fakemod]\n";

static void test_kernel_x86(void **state)
{
	struct fake *f = *state;
	struct exp r;

	assert_int_equal(fake_tree_write(f->root, "proc/kallsyms", x86_kallsyms), 0);
	f->s.id_hdr_size = 32;
	assert_int_equal(sonde_synth_kernel_mmap(&f->s), 0);
	assert_int_equal(f->cap.n, 1);
	/*
	 * perf 6.1 scans to _etext ([0xffffffff81000000(0x1276508) @ 0xffffffff81000000]
	 * on this VM); sonde stops past _text to keep captures fast and takes
	 * perf's own fallback end: the next module, else ~0ULL.
	 */
	r = mmap1(32, 0xffffffff81000000, ~0ULL - 0xffffffff81000000, 0xffffffff81000000,
		  "[kernel.kallsyms]_text");
	assert_int_equal(r.len, 96);
	assert_rec(&f->cap, 0, &r);
}

/* An arm64-like kernel: _stext only, no _etext; modules below and above it. */
static const char arm_kallsyms[] = "ffff800008000000 T _head\n"
				   "ffff800008010000 T _stext\n"
				   "ffff800008010000 T __exception_text_start\n"
				   "ffff800009ab0000 D _sdata\n";

static void test_kernel_arm(void **state)
{
	struct fake *f = *state;
	struct exp r;

	assert_int_equal(fake_tree_write(f->root, "proc/kallsyms", arm_kallsyms), 0);
	/* no modules: the map reaches the end of the address space */
	assert_int_equal(sonde_synth_kernel_mmap(&f->s), 0);
	r = mmap1(0, 0xffff800008010000, ~0ULL - 0xffff800008010000, 0xffff800008010000,
		  "[kernel.kallsyms]_stext");
	assert_rec(&f->cap, 0, &r);
	cap_free(&f->cap);

	/* with modules: up to the lowest one above the kernel */
	assert_int_equal(
	    fake_tree_write(f->root, "proc/modules",
			    "nft_ct 20480 0 - Live 0xffff80000a200000\n"
			    "below 8192 0 - Live 0xffff800001000000\n"
			    "nf_tables 245760 1 nft_ct, Live 0xffff80000a100000 (E)\n"),
	    0);
	assert_int_equal(sonde_synth_kernel_mmap(&f->s), 0);
	r = mmap1(0, 0xffff800008010000, 0xffff80000a100000 - 0xffff800008010000,
		  0xffff800008010000, "[kernel.kallsyms]_stext");
	assert_rec(&f->cap, 0, &r);
}

static void test_kernel_hidden(void **state)
{
	struct fake *f = *state;

	assert_int_equal(fake_tree_write(f->root, "proc/kallsyms",
					 "0000000000000000 T _text\n0000000000000000 T _etext\n"),
			 0);
	assert_int_equal(sonde_synth_kernel_mmap(&f->s), -EACCES);
	assert_int_equal(fake_tree_write(f->root, "proc/kallsyms", "0000000000000000 D x\n"), 0);
	assert_int_equal(sonde_synth_kernel_mmap(&f->s), -ENOENT);
	assert_int_equal(f->cap.n, 0);
}

static void make_modules(struct fake *f)
{
	char *r = f->root;

	assert_int_equal(fake_tree_write(r, "proc/sys/kernel/osrelease", "6.1.0-test\n"), 0);
	assert_int_equal(fake_tree_write(r, "proc/modules",
					 "snd_hda_intel 57344 0 - Live 0xffffffffc0a40000\n"
					 "ext4 1007616 2 - Live 0xffffffffc0800000\n"
					 "oot 16384 0 - Live 0xffffffffc0100000 (OE)\n"
					 "hidden 4096 0 - Live 0x0000000000000000\n"
					 "nvme 61440 3 nvme_core, Live 0xffffffffc0200000\n"),
			 0);
	assert_int_equal(
	    fake_tree_write(r, "lib/modules/6.1.0-test/modules.dep",
			    "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz\n"
			    "kernel/fs/jbd2/jbd2.ko.xz:\n"
			    "kernel/sound/pci/hda/snd-hda-intel.ko: kernel/sound/snd.ko\n"
			    "/opt/drivers/nvme.ko:\n"
			    "kernel/drivers/nvme/host/nvme.ko.zst:\n" /* the first one wins */
			    "kernel/extra/hidden.ko:\n"
			    "broken line without colon\n"),
	    0);
	assert_int_equal(
	    fake_tree_write(r, "sys/module/ext4/sections/.text", "0xffffffffc0800000\n"), 0);
	assert_int_equal(
	    fake_tree_write(r, "sys/module/ext4/sections/.init.text", "0xffffffffc0900000\n"), 0);
	assert_int_equal(
	    fake_tree_write(r, "sys/module/ext4/sections/__mcount_loc", "0xffffffffc0950000\n"), 0);
	assert_int_equal(
	    fake_tree_write(r, "sys/module/oot/sections/.text", "0xffffffffc0100000\n"), 0);
	assert_int_equal(fake_tree_write(r, "sys/module/hidden/sections/.text", "0x0\n"), 0);
}

static void test_modules(void **state)
{
	struct fake *f = *state;
	const size_t id = 16;
	struct exp r;

	make_modules(f);
	f->s.id_hdr_size = id;
	assert_int_equal(sonde_synth_modules(&f->s), 0);
	assert_int_equal(f->cap.n, 4);
	/* address order, as perf walks its kernel maps */
	r = mmap1(id, 0xffffffffc0100000, 16384, 0, "[oot]");
	assert_rec(&f->cap, 0, &r);
	r = mmap1(id, 0xffffffffc0200000, 61440, 0, "/opt/drivers/nvme.ko");
	assert_rec(&f->cap, 1, &r);
	{
		char path[1024];

		snprintf(path, sizeof(path), "%s/6.1.0-test/kernel/fs/ext4/ext4.ko.xz", f->mods);
		r = mmap1(id, 0xffffffffc0800000, 1007616, 0, path);
		assert_rec(&f->cap, 2, &r);
		snprintf(path, sizeof(path), "%s/6.1.0-test/kernel/sound/pci/hda/snd-hda-intel.ko",
			 f->mods);
		r = mmap1(id, 0xffffffffc0a40000, 57344, 0, path);
		assert_rec(&f->cap, 3, &r);
	}
	assert_int_equal(f->st.modules, 4);
	assert_int_equal(f->st.modules_hidden, 1);
}

static void test_no_modules(void **state)
{
	struct fake *f = *state;
	char *blob;
	size_t len = 99;

	/* a kernel without loadable modules has no /proc/modules */
	assert_int_equal(sonde_synth_modules(&f->s), 0);
	assert_int_equal(f->cap.n, 0);
	assert_int_equal(sonde_module_sections(f->proc, f->sys, &blob, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(blob, "");
	free(blob);
}

static void test_module_sections(void **state)
{
	struct fake *f = *state;
	char *blob, want[4096];
	size_t len;

	make_modules(f);
	assert_int_equal(sonde_synth_module_sections(&f->s, &blob, &len), 0);
	snprintf(want, sizeof(want),
		 "snd_hda_intel 0xffffffffc0a40000 57344 %s/6.1.0-test/kernel/sound/pci/hda/"
		 "snd-hda-intel.ko\n"
		 "ext4 0xffffffffc0800000 1007616 %s/6.1.0-test/kernel/fs/ext4/ext4.ko.xz\n"
		 "\t.init.text 0xffffffffc0900000\n"
		 "\t.text 0xffffffffc0800000\n"
		 "\t__mcount_loc 0xffffffffc0950000\n"
		 "oot 0xffffffffc0100000 16384 [oot]\n"
		 "\t.text 0xffffffffc0100000\n"
		 "hidden 0x0 4096 %s/6.1.0-test/kernel/extra/hidden.ko\n"
		 "\t.text 0x0\n"
		 "nvme 0xffffffffc0200000 61440 /opt/drivers/nvme.ko\n",
		 f->mods, f->mods, f->mods);
	assert_string_equal(blob, want);
	assert_int_equal(len, strlen(want));
	free(blob);
}

/* An Arm board: modules below the kernel, sections Arm kernels add (.plt). */
static void test_module_sections_arm(void **state)
{
	struct fake *f = *state;
	char *blob;
	size_t len;
	struct exp r;

	assert_int_equal(fake_tree_write(f->root, "proc/sys/kernel/osrelease", "6.1.0-rpi\n"), 0);
	assert_int_equal(fake_tree_write(f->root, "proc/modules",
					 "brcmfmac 339968 0 - Live 0xffffd3bf7a530000\n"
					 "vc4 294912 2 - Live 0xffffd3bf7a3f0000 (C)\n"),
			 0);
	assert_int_equal(
	    fake_tree_write(
		f->root, "lib/modules/6.1.0-rpi/modules.dep",
		"kernel/drivers/net/wireless/broadcom/brcm80211/brcmfmac/brcmfmac.ko.xz:\n"
		"kernel/drivers/gpu/drm/vc4/vc4.ko.xz: kernel/drivers/gpu/drm/drm.ko.xz\n"),
	    0);
	assert_int_equal(
	    fake_tree_write(f->root, "sys/module/vc4/sections/.plt", "0xffffd3bf7a430000\n"), 0);
	assert_int_equal(fake_tree_write(f->root, "sys/module/vc4/sections/.text.ftrace_trampoline",
					 "0xffffd3bf7a431000\n"),
			 0);
	assert_int_equal(
	    fake_tree_write(f->root, "sys/module/vc4/sections/.text", "0xffffd3bf7a3f0000\n"), 0);
	assert_int_equal(sonde_synth_module_sections(&f->s, &blob, &len), 0);
	{
		char want[2048];

		snprintf(
		    want, sizeof(want),
		    "brcmfmac 0xffffd3bf7a530000 339968 %s/6.1.0-rpi/kernel/drivers/net/wireless/"
		    "broadcom/brcm80211/brcmfmac/brcmfmac.ko.xz\n"
		    "vc4 0xffffd3bf7a3f0000 294912 %s/6.1.0-rpi/kernel/drivers/gpu/drm/vc4/"
		    "vc4.ko.xz\n"
		    "\t.plt 0xffffd3bf7a430000\n"
		    "\t.text 0xffffd3bf7a3f0000\n"
		    "\t.text.ftrace_trampoline 0xffffd3bf7a431000\n",
		    f->mods, f->mods);
		assert_string_equal(blob, want);
	}
	free(blob);
	assert_int_equal(sonde_synth_modules(&f->s), 0);
	assert_int_equal(f->cap.n, 2);
	{
		char path[1024];

		snprintf(path, sizeof(path), "%s/6.1.0-rpi/kernel/drivers/gpu/drm/vc4/vc4.ko.xz",
			 f->mods);
		r = mmap1(0, 0xffffd3bf7a3f0000, 294912, 0, path);
		assert_rec(&f->cap, 0, &r);
	}
}

/* ---- kallsyms ---- */

static void test_kallsyms_filter(void **state)
{
	struct fake *f = *state;
	char *blob;
	size_t len;

	assert_int_equal(fake_tree_write(f->root, "proc/kallsyms",
					 "0000000000000000 A fixed_percpu_data\n"
					 "ffffffff81000000 T _text\n"
					 "ffffffff81000100 t local_fn\n"
					 "ffffffff81000200 W weak_fn\n"
					 "ffffffff81000300 w weak_local\n"
					 "ffffffff82000000 D some_data\n"
					 "ffffffff82100000 b bss_thing\n"
					 "ffffffff82200000 R rodata\n"
					 "ffffffffc0001000 t mod_fn\t[ext4]\n"
					 "ffffffffc0002000 d mod_data\t[ext4]\n"
					 "ffffffffc0003000 T last_no_newline\t[xfs]"),
			 0);
	assert_int_equal(sonde_kallsyms_snapshot(f->proc, &blob, &len), 0);
	assert_string_equal(blob, "ffffffff81000000 T _text\n"
				  "ffffffff81000100 t local_fn\n"
				  "ffffffff81000200 W weak_fn\n"
				  "ffffffff81000300 w weak_local\n"
				  "ffffffffc0001000 t mod_fn\t[ext4]\n"
				  "ffffffffc0003000 T last_no_newline\t[xfs]\n");
	assert_int_equal(len, strlen(blob));
	free(blob);

	assert_int_equal(fake_tree_write(f->root, "proc/kallsyms", ""), 0);
	assert_int_equal(sonde_kallsyms_snapshot(f->proc, &blob, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(blob, "");
	free(blob);
	assert_int_equal(sonde_kallsyms_snapshot("/nonexistent", &blob, &len), -ENOENT);
}

/* Bigger than the first buffer and a read chunk: lines cut across reads. */
static void test_kallsyms_big(void **state)
{
	struct fake *f = *state;
	const char types[] = "TtDdWwbRrA";
	size_t n = 200000, i, w = 0, in = 0;
	char *text = malloc(n * 64), *want = malloc(n * 64), path[600], *blob;
	size_t len;
	FILE *fp;

	assert_non_null(text);
	assert_non_null(want);
	for (i = 0; i < n; i++) {
		char line[96];
		char t = types[i % (sizeof(types) - 1)];
		int k =
		    snprintf(line, sizeof(line), "ffffffff%08zx %c sym_%zu_%.*s%s\n", i * 16, t, i,
			     (int)(i % 23), "abcdefghijklmnopqrstuvwxyz", i % 7 ? "" : "\t[mod]");

		memcpy(text + in, line, (size_t)k);
		in += (size_t)k;
		if (strchr("tTwW", t)) {
			memcpy(want + w, line, (size_t)k);
			w += (size_t)k;
		}
	}
	want[w] = '\0';
	snprintf(path, sizeof(path), "%s/kallsyms", f->proc);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, in, fp), in);
	fclose(fp);
	assert_true(in > 3 * 1024 * 1024);
	assert_int_equal(sonde_kallsyms_snapshot(f->proc, &blob, &len), 0);
	assert_int_equal(len, w);
	assert_true(!memcmp(blob, want, w));
	assert_int_equal(blob[len], '\0');
	free(blob);
	free(text);
	free(want);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_process),
	    T(test_process_trailer),
	    T(test_process_mmap_data),
	    T(test_process_gone),
	    T(test_all_processes),
	    T(test_toolong_and_errors),
	    T(test_kernel_x86),
	    T(test_kernel_arm),
	    T(test_kernel_hidden),
	    T(test_modules),
	    T(test_no_modules),
	    T(test_module_sections),
	    T(test_module_sections_arm),
	    T(test_kallsyms_filter),
	    T(test_kallsyms_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
