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
 * tables grown past their first size.  Expected values follow from the
 * records each test writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/machine.h>
#include <sonde/symbols.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void test_unnamed_threads(void **state)
{
	struct sonde_symtab *st;
	struct sonde_machine *m;
	struct sonde_thread *t;

	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	assert_int_equal(sonde_machine_new(&m, st), 0);
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
	sonde_symtab_free(st);
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
	struct sonde_location loc;

	sonde_machine_resolve(m, pid, PERF_RECORD_MISC_USER, ip, &loc);
	if (!path) {
		if (loc.map)
			fail_msg("pid %u ip %#llx: in %s, want no map", pid, (unsigned long long)ip,
				 sonde_dso_long_name(loc.dso));
		return;
	}
	if (!loc.map)
		fail_msg("pid %u ip %#llx: no map, want %s", pid, (unsigned long long)ip, path);
	if (strcmp(sonde_dso_long_name(loc.dso), path) || loc.addr != off)
		fail_msg("pid %u ip %#llx: %s+%#llx, want %s+%#llx", pid, (unsigned long long)ip,
			 sonde_dso_long_name(loc.dso), (unsigned long long)loc.addr, path,
			 (unsigned long long)off);
}

struct fixture {
	struct sonde_symtab *st;
	struct sonde_machine *m;
};

static int setup(void **state)
{
	static struct fixture f;
	/* No file exists: objects map addresses to file offsets and stop there. */
	static const struct sonde_symtab_opts so = {.symfs = "/nonexistent",
						    .no_proc_kallsyms = true};

	if (sonde_symtab_new(&f.st, &so) || sonde_machine_new(&f.m, f.st))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sonde_machine_free(f->m);
	sonde_symtab_free(f->st);
	return 0;
}

/*
 * /a at [0x10000,0x50000) offset 0x1000, then /b inside it splits it; /c
 * over its tail trims the right piece; /d over everything replaces all.
 */
static void test_map_overlap(void **state)
{
	struct sonde_machine *m = ((struct fixture *)*state)->m;

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
	struct sonde_machine *m = ((struct fixture *)*state)->m;

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
	struct sonde_machine *m = ((struct fixture *)*state)->m;

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
	struct sonde_machine *m = ((struct fixture *)*state)->m;
	char path[32], comm[16];

	for (uint32_t pid = 1000; pid < 1700; pid++) {
		snprintf(path, sizeof(path), "/bin/p%u", pid);
		snprintf(comm, sizeof(comm), "p%u", pid);
		comm_rec(m, pid, pid, comm, true);
		mmap_rec(m, pid, 0x400000 + pid * 0x1000ull, 0x1000, 0, pid, path);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unnamed_threads),
	    cmocka_unit_test_setup_teardown(test_map_overlap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fork_exec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pid_reuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many_processes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
