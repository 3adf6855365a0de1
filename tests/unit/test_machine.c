// SPDX-License-Identifier: MIT
/*
 * The machine's names for threads it never saw a COMM for, as perf's
 * thread__new() makes them: ":TID" with TID signed, so a sample without a
 * task (pid/tid -1) reads ":-1", and tid 0 is "swapper" (machine__init).
 * find_thread gives the latest comm, which --sort pid shows.
 *
 * Then the model the side-band records build, fed records by hand: maps
 * trimmed and split by an overlapping MMAP (with the file offsets of the
 * pieces kept), forks copying maps (also into a pid the system reused),
 * threads sharing their process's maps, exec and prctl comm changes, and
 * tables grown past their first size.  The machine is libc only: these
 * tests give it a factory of their own (one object per MMAP, naming the
 * file), and check what the factory was told (kind, pid, names).  Last,
 * the host's factory (machine_symbols.c): one dso per file, resolved to
 * file offsets and kernel addresses.  Expected values follow from the
 * records each test writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/machine.h>
#include <sonde/machine_symbols.h>
#include <sonde/symbols.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tests' objects: one per MMAP record, kept in a list to free. */
struct tobj {
	struct tobj *next;
	char path[64];
	enum sonde_object_kind kind;
	uint32_t pid;
};

static struct tobj *objs;

static void *tobj_new(void *ctx, const struct sonde_object_desc *d)
{
	struct tobj *o = calloc(1, sizeof(*o));

	(void)ctx;
	if (!o)
		return NULL;
	snprintf(o->path, sizeof(o->path), "%s", d->filename);
	o->kind = d->kind;
	o->pid = d->pid;
	o->next = objs;
	objs = o;
	return o;
}

static void tobjs_free(void)
{
	while (objs) {
		struct tobj *o = objs;

		objs = o->next;
		free(o);
	}
}

static void test_unnamed_threads(void **state)
{
	struct sonde_machine *m;
	struct sonde_thread *t;

	assert_int_equal(sonde_machine_new(&m, tobj_new, NULL), 0);
	t = sonde_machine_findnew_thread(m, UINT32_MAX, UINT32_MAX);
	assert_non_null(t);
	assert_string_equal(sonde_machine_str(m, t->comm), ":-1");
	t = sonde_machine_findnew_thread(m, 4242, 4243);
	assert_string_equal(sonde_machine_str(m, t->comm), ":4243");
	t = sonde_machine_findnew_thread(m, 0, 0);
	assert_string_equal(sonde_machine_str(m, t->comm), "swapper");
	assert_ptr_equal(sonde_machine_find_thread(m, 4243)->comm,
			 sonde_machine_findnew_thread(m, 4242, 4243)->comm);
	assert_null(sonde_machine_find_thread(m, 777));
	sonde_machine_free(m);
}

/* ---- records by hand -------------------------------------------------- */

static void mmap_rec(struct sonde_machine *m, uint32_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, uint64_t ino, const char *path)
{
	struct sonde_pd_record rec = {.type = PERF_RECORD_MMAP2, .misc = PERF_RECORD_MISC_USER};
	struct sonde_pd_event ev = {.type = PERF_RECORD_MMAP2};

	ev.mmap = (struct sonde_pd_mmap){.pid = pid,
					 .tid = pid,
					 .start = start,
					 .len = len,
					 .pgoff = pgoff,
					 .maj = 8,
					 .min = 1,
					 .ino = ino,
					 .filename = path};
	assert_int_equal(sonde_machine_process(m, &rec, &ev), 0);
}

/* A kernel-space MMAP (pid -1, kernel cpumode), as perf writes the kernel's and modules'. */
static void kmmap_rec(struct sonde_machine *m, uint64_t start, uint64_t len, const char *path)
{
	struct sonde_pd_record rec = {.type = PERF_RECORD_MMAP, .misc = PERF_RECORD_MISC_KERNEL};
	struct sonde_pd_event ev = {.type = PERF_RECORD_MMAP};

	ev.mmap = (struct sonde_pd_mmap){.pid = UINT32_MAX,
					 .tid = 0,
					 .start = start,
					 .len = len,
					 .pgoff = start,
					 .filename = path};
	assert_int_equal(sonde_machine_process(m, &rec, &ev), 0);
}

static void comm_rec(struct sonde_machine *m, uint32_t pid, uint32_t tid, const char *comm,
		     bool exec)
{
	struct sonde_pd_record rec = {.type = PERF_RECORD_COMM,
				      .misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0};
	struct sonde_pd_event ev = {.type = PERF_RECORD_COMM};

	ev.comm = (struct sonde_pd_comm){pid, tid, comm};
	assert_int_equal(sonde_machine_process(m, &rec, &ev), 0);
}

static void task_rec(struct sonde_machine *m, uint32_t type, uint32_t pid, uint32_t ppid,
		     uint32_t tid, uint32_t ptid)
{
	struct sonde_pd_record rec = {.type = type};
	struct sonde_pd_event ev = {.type = type};

	ev.fork = (struct sonde_pd_fork){pid, ppid, tid, ptid, 0};
	assert_int_equal(sonde_machine_process(m, &rec, &ev), 0);
}

/* Asserts that @ip in @pid lands in @path at file offset @off (no map: @path NULL). */
static void expect(struct sonde_machine *m, uint32_t pid, uint64_t ip, const char *path,
		   uint64_t off)
{
	const struct sonde_map *map = sonde_machine_find_map(m, pid, PERF_RECORD_MISC_USER, ip);
	const struct tobj *o = map ? map->object : NULL;
	uint64_t got = map ? ip - map->start + map->pgoff : 0;

	if (!path) {
		if (map)
			fail_msg("pid %u ip %#llx: in %s, want no map", pid, (unsigned long long)ip,
				 o->path);
		return;
	}
	if (!map || !o) {
		fail_msg("pid %u ip %#llx: no map, want %s", pid, (unsigned long long)ip, path);
		return;
	}
	if (strcmp(o->path, path) || got != off || o->kind != SONDE_OBJECT_USER)
		fail_msg("pid %u ip %#llx: %s+%#llx, want %s+%#llx", pid, (unsigned long long)ip,
			 o->path, (unsigned long long)got, path, (unsigned long long)off);
}

static int setup(void **state)
{
	static struct sonde_machine *m;

	if (sonde_machine_new(&m, tobj_new, NULL))
		return -1;
	*state = m;
	return 0;
}

static int teardown(void **state)
{
	sonde_machine_free(*state);
	tobjs_free();
	return 0;
}

/*
 * /a at [0x10000,0x50000) offset 0x1000, then /b inside it splits it; /c
 * over its tail trims the right piece; /d over everything replaces all.
 */
static void test_map_overlap(void **state)
{
	struct sonde_machine *m = *state;

	mmap_rec(m, 100, 0x10000, 0x40000, 0x1000, 1, "/a");
	expect(m, 100, 0x10000, "/a", 0x1000);
	expect(m, 100, 0x4ffff, "/a", 0x40fff);
	expect(m, 100, 0x50000, NULL, 0);
	expect(m, 100, 0xffff, NULL, 0);

	mmap_rec(m, 100, 0x20000, 0x10000, 0x200, 2, "/b");
	expect(m, 100, 0x1ffff, "/a", 0x10fff);
	expect(m, 100, 0x20000, "/b", 0x200);
	expect(m, 100, 0x2ffff, "/b", 0x101ff);
	/* the right piece of /a keeps its file offsets: 0x1000 + 0x20000 */
	expect(m, 100, 0x30000, "/a", 0x21000);
	expect(m, 100, 0x4ffff, "/a", 0x40fff);

	mmap_rec(m, 100, 0x48000, 0x10000, 0, 3, "/c");
	expect(m, 100, 0x47fff, "/a", 0x38fff);
	expect(m, 100, 0x48000, "/c", 0);
	expect(m, 100, 0x57fff, "/c", 0xffff);
	expect(m, 100, 0x58000, NULL, 0);
	/* over the left edge of /b and the right edge of /a's first piece */
	mmap_rec(m, 100, 0x1f000, 0x2000, 0, 4, "/e");
	expect(m, 100, 0x1efff, "/a", 0xffff);
	expect(m, 100, 0x1f000, "/e", 0);
	expect(m, 100, 0x20fff, "/e", 0x1fff);
	expect(m, 100, 0x21000, "/b", 0x1200);

	mmap_rec(m, 100, 0x0, 0x100000, 0, 5, "/d");
	expect(m, 100, 0x10000, "/d", 0x10000);
	expect(m, 100, 0x20000, "/d", 0x20000);
	expect(m, 100, 0x50000, "/d", 0x50000);
	/* another process sees none of it */
	expect(m, 101, 0x10000, NULL, 0);
}

/*
 * A fork copies the parent's maps and comm; the child's later MMAP is its
 * own; a new thread shares its process's maps; an exec renames and keeps
 * the maps until the new image's MMAP replaces them.
 */
static void test_fork_exec(void **state)
{
	struct sonde_machine *m = *state;

	comm_rec(m, 200, 200, "parent", true);
	mmap_rec(m, 200, 0x400000, 0x1000, 0, 10, "/bin/parent");
	task_rec(m, PERF_RECORD_FORK, 201, 200, 201, 200);
	assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, 201)->comm),
			    "parent");
	assert_int_equal(sonde_machine_find_thread(m, 201)->pid, 201);
	expect(m, 201, 0x400010, "/bin/parent", 0x10);

	mmap_rec(m, 201, 0x7f0000, 0x1000, 0, 11, "/lib/child.so");
	expect(m, 201, 0x7f0010, "/lib/child.so", 0x10);
	expect(m, 200, 0x7f0010, NULL, 0);

	/* a thread of the child: same maps, its own tid, the comm of its creator */
	task_rec(m, PERF_RECORD_FORK, 201, 201, 202, 201);
	assert_int_equal(sonde_machine_find_thread(m, 202)->pid, 201);
	assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, 202)->comm),
			    "parent");
	mmap_rec(m, 201, 0x800000, 0x1000, 0, 12, "/lib/thread.so");
	expect(m, 201, 0x800000, "/lib/thread.so", 0);

	/* exec: the comm changes at once, the old image stays until replaced */
	comm_rec(m, 201, 201, "child", true);
	assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, 201)->comm), "child");
	expect(m, 201, 0x400010, "/bin/parent", 0x10);
	mmap_rec(m, 201, 0x400000, 0x2000, 0, 13, "/bin/child");
	expect(m, 201, 0x400010, "/bin/child", 0x10);
	expect(m, 201, 0x401010, "/bin/child", 0x1010);
	expect(m, 200, 0x400010, "/bin/parent", 0x10);

	/* prctl(PR_SET_NAME) of one thread: only that thread is renamed */
	comm_rec(m, 201, 202, "worker", false);
	assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, 202)->comm),
			    "worker");
	assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, 201)->comm), "child");
	assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, 200)->comm),
			    "parent");
}

/*
 * pid 300 ran /bin/old and exited; later pid 310 (/bin/new) forks a child
 * that gets pid 300 again.  The child is a copy of its parent, not of the
 * dead process that had its number (perf drops the old thread on fork).
 */
static void test_pid_reuse(void **state)
{
	struct sonde_machine *m = *state;

	comm_rec(m, 300, 300, "old", true);
	mmap_rec(m, 300, 0x400000, 0x1000, 0, 20, "/bin/old");
	task_rec(m, PERF_RECORD_EXIT, 300, 1, 300, 1);
	comm_rec(m, 310, 310, "new", true);
	mmap_rec(m, 310, 0x400000, 0x1000, 0, 21, "/bin/new");
	mmap_rec(m, 310, 0x500000, 0x1000, 0, 22, "/lib/new.so");
	task_rec(m, PERF_RECORD_FORK, 300, 310, 300, 310);
	assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, 300)->comm), "new");
	expect(m, 300, 0x400010, "/bin/new", 0x10);
	expect(m, 300, 0x500010, "/lib/new.so", 0x10);
}

/* More processes and threads than the tables' first sizes, each with its map. */
static void test_many_processes(void **state)
{
	struct sonde_machine *m = *state;
	char path[32], comm[16];

	for (uint32_t pid = 1000; pid < 1700; pid++) {
		snprintf(path, sizeof(path), "/bin/p%u", pid);
		snprintf(comm, sizeof(comm), "p%u", pid);
		comm_rec(m, pid, pid, comm, true);
		mmap_rec(m, pid, 0x400000 + pid * 0x1000ull, 0x1000, 0, pid, path);
		/* the first process, looked up between growths of the table */
		expect(m, 1000, 0x400000 + 1000 * 0x1000ull + 8, "/bin/p1000", 8);
	}
	for (uint32_t pid = 1000; pid < 1700; pid++) {
		snprintf(path, sizeof(path), "/bin/p%u", pid);
		snprintf(comm, sizeof(comm), "p%u", pid);
		expect(m, pid, 0x400000 + pid * 0x1000ull + 8, path, 8);
		expect(m, pid, 0x400000 + (pid + 1) * 0x1000ull, NULL, 0);
		assert_string_equal(sonde_machine_str(m, sonde_machine_find_thread(m, pid)->comm),
				    comm);
		assert_int_equal(sonde_machine_find_thread(m, pid)->pid, pid);
	}
}

/* The object of @ip's map as the factory made it, or NULL. */
static const struct tobj *obj_at(struct sonde_machine *m, uint32_t pid, uint16_t cpumode,
				 uint64_t ip)
{
	const struct sonde_map *map = sonde_machine_find_map(m, pid, cpumode, ip);

	return map ? map->object : NULL;
}

#define KTEXT 0xffffffff81000000ull
#define KMOD 0xffffffffc0000000ull

/*
 * Kernel space: the factory is told the kernel image's map by perf's
 * "[kernel.kallsyms]" (the "_text" suffix dropped) and every other kernel
 * map as a module, with pid -1; samples find them by cpumode, and a
 * sample of unknown mode tries the space its address suggests first, then
 * the other.
 */
static void test_kernel_maps(void **state)
{
	struct sonde_machine *m = *state;
	const struct tobj *o;

	kmmap_rec(m, KTEXT, 0x1000000, "[kernel.kallsyms]_text");
	kmmap_rec(m, KMOD, 0x8000, "/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko");
	kmmap_rec(m, KMOD + 0x10000, 0x4000, "[sonde_chardev]");
	mmap_rec(m, 400, 0x400000, 0x1000, 0, 40, "/bin/user");

	o = obj_at(m, 400, PERF_RECORD_MISC_KERNEL, KTEXT + 0x10);
	assert_non_null(o);
	assert_string_equal(o->path, "[kernel.kallsyms]");
	assert_int_equal(o->kind, SONDE_OBJECT_KERNEL);
	assert_int_equal(o->pid, UINT32_MAX);
	o = obj_at(m, 400, PERF_RECORD_MISC_KERNEL, KMOD + 0x7fff);
	assert_non_null(o);
	assert_string_equal(o->path, "/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko");
	assert_int_equal(o->kind, SONDE_OBJECT_MODULE);
	o = obj_at(m, 1, PERF_RECORD_MISC_KERNEL, KMOD + 0x10000);
	assert_non_null(o);
	assert_string_equal(o->path, "[sonde_chardev]");
	assert_int_equal(o->kind, SONDE_OBJECT_MODULE);
	assert_null(obj_at(m, 400, PERF_RECORD_MISC_KERNEL, KMOD + 0x8000));

	/* the user map is the process's, with the process's pid */
	o = obj_at(m, 400, PERF_RECORD_MISC_USER, 0x400010);
	assert_non_null(o);
	assert_int_equal(o->kind, SONDE_OBJECT_USER);
	assert_int_equal(o->pid, 400);
	/* a given cpumode looks in its own space only */
	assert_null(obj_at(m, 400, PERF_RECORD_MISC_USER, KTEXT + 0x10));
	assert_null(obj_at(m, 400, PERF_RECORD_MISC_KERNEL, 0x400010));
	/* mode 0: the address's space, then the other */
	assert_string_equal(obj_at(m, 400, 0, KTEXT + 0x10)->path, "[kernel.kallsyms]");
	assert_string_equal(obj_at(m, 400, 0, 0x400010)->path, "/bin/user");
	assert_true(sonde_machine_kernel_ip(0, KTEXT));
	assert_false(sonde_machine_kernel_ip(0, 0x400010));
	assert_true(sonde_machine_kernel_ip(PERF_RECORD_MISC_KERNEL, 0x400010));
	assert_false(sonde_machine_kernel_ip(PERF_RECORD_MISC_USER, KTEXT));
}

/*
 * The host's factory: one dso per file (two processes mapping the same
 * device and inode share it), file offsets for user addresses, kernel
 * addresses kept as they are, and the kernel flag from the dso's kind.
 */
static void test_symbols_factory(void **state)
{
	/* No file exists: objects map addresses to file offsets and stop there. */
	static const struct sonde_symtab_opts so = {.symfs = "/nonexistent",
						    .no_proc_kallsyms = true};
	struct sonde_symtab *st;
	struct sonde_machine *m;
	struct sonde_location a, b, k;

	(void)state;
	assert_int_equal(sonde_symtab_new(&st, &so), 0);
	assert_int_equal(sonde_machine_symbols_new(&m, st), 0);
	mmap_rec(m, 500, 0x400000, 0x2000, 0x1000, 50, "/lib/x.so");
	mmap_rec(m, 501, 0x600000, 0x2000, 0, 50, "/lib/x.so");
	kmmap_rec(m, KTEXT, 0x1000000, "[kernel.kallsyms]_text");

	sonde_machine_resolve(m, 500, PERF_RECORD_MISC_USER, 0x400010, &a);
	sonde_machine_resolve(m, 501, PERF_RECORD_MISC_USER, 0x600020, &b);
	assert_non_null(a.map);
	assert_non_null(a.dso);
	assert_ptr_equal(a.dso, b.dso);
	assert_string_equal(sonde_dso_long_name(a.dso), "/lib/x.so");
	assert_int_equal(a.addr, 0x1010);
	assert_int_equal(b.addr, 0x20);
	assert_int_equal(a.map->start, 0x400000);
	assert_false(a.kernel);
	assert_null(a.sym);

	sonde_machine_resolve(m, 500, PERF_RECORD_MISC_KERNEL, KTEXT + 0x42, &k);
	assert_non_null(k.dso);
	assert_int_equal(sonde_dso_kind(k.dso), SONDE_DSO_KERNEL);
	assert_true(k.kernel);
	assert_int_equal(k.addr, KTEXT + 0x42);

	/* no map: the ip, the space its mode names */
	sonde_machine_resolve(m, 500, PERF_RECORD_MISC_KERNEL, 0x1234, &k);
	assert_null(k.map);
	assert_null(k.dso);
	assert_true(k.kernel);
	assert_int_equal(k.addr, 0x1234);
	sonde_machine_free(m);
	sonde_symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unnamed_threads),
	    cmocka_unit_test_setup_teardown(test_map_overlap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fork_exec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pid_reuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many_processes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_kernel_maps, setup, teardown),
	    cmocka_unit_test(test_symbols_factory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
