// SPDX-License-Identifier: MIT
/*
 * The tracing data blob on a fake tracefs.  The tree holds real format
 * files (copied from a 6.18 x86_64 kernel), so the test can check the blob
 * twice: field by field and offset by offset with a small parser of its
 * own that knows only the documented layout (perf's trace-event-read.c,
 * trace-cmd.dat(5)), and then by handing the pieces to libtraceevent, the
 * decoder perf and sonde's analysis use, down to printing a hand-made
 * sched_switch record.  Errors: a missing tracepoint names itself, optional
 * files may be absent, names can't escape the events folder.
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
#include <unistd.h>

#include <traceevent/event-parse.h>

#include <sonde/tracing_data.h>

#include "fake_tree.h"

static const char header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
				  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
				  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char header_event[] = "# compressed entry header\n"
				   "\ttype_len    :    5 bits\n"
				   "\ttime_delta  :   27 bits\n"
				   "\tarray       :   32 bits\n"
				   "\n"
				   "\tpadding     : type == 29\n"
				   "\ttime_extend : type == 30\n"
				   "\ttime_stamp : type == 31\n"
				   "\tdata max type_len  == 28\n";

#define COMMON_FIELDS                                                                              \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                     \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                     \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"             \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

#define TASK_MASK                                                                                  \
	"((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "       \
	"0x00000020 | 0x00000040) + 1) << 1) - 1)"

static const char sched_switch_fmt[] =
    "name: sched_switch\nID: 372\nformat:\n" COMMON_FIELDS
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
    "next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
    "(REC->prev_state & " TASK_MASK ") ? __print_flags(REC->prev_state & " TASK_MASK
    ", \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, "
    "{ 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, "
    "{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & "
    "(((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
    "0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, "
    "REC->next_prio\n";

static const char sched_wakeup_fmt[] =
    "name: sched_wakeup\nID: 374\nformat:\n" COMMON_FIELDS
    "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, "
    "REC->target_cpu\n";

static const char sys_enter_write_fmt[] =
    "name: sys_enter_write\nID: 840\nformat:\n" COMMON_FIELDS
    "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n\n"
    "print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", ((unsigned long)(REC->fd)), "
    "((unsigned long)(REC->buf)), ((unsigned long)(REC->count))\n";

static const char ftrace_print_fmt[] = "name: print\nID: 5\nformat:\n" COMMON_FIELDS
				       "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
				       "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n\n"
				       "print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n";

static const char printk_formats[] = "0xffffffff8281a8ff : \"thaw_processes\"\n"
				     "0xffffffff8281b739 : \"rcu_preempt-GPS\"\n";

static const char saved_cmdlines[] = "1 systemd\n4242 writer\n";

struct fixture {
	char *root;
	char tfs[512];
};

static void write_file(struct fixture *f, const char *rel, const char *text)
{
	assert_int_equal(fake_tree_write(f->tfs, rel, text), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->root = fake_tree_new();
	assert_non_null(f->root);
	snprintf(f->tfs, sizeof(f->tfs), "%s/tracefs", f->root);
	write_file(f, "events/header_page", header_page);
	write_file(f, "events/header_event", header_event);
	write_file(f, "events/sched/sched_switch/format", sched_switch_fmt);
	write_file(f, "events/sched/sched_wakeup/format", sched_wakeup_fmt);
	write_file(f, "events/sched/sched_waking/enable", "0\n"); /* not asked for */
	write_file(f, "events/syscalls/sys_enter_write/format", sys_enter_write_fmt);
	write_file(f, "events/ftrace/print/format", ftrace_print_fmt);
	write_file(f, "printk_formats", printk_formats);
	write_file(f, "saved_cmdlines", saved_cmdlines);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	fake_tree_remove(f->root);
	free(f);
	return 0;
}

/* ---- an independent reader of the documented layout ---- */

struct cur {
	const char *p;
	size_t len, off;
};

static const char *take(struct cur *c, size_t n)
{
	const char *at = c->p + c->off;

	assert_true(n <= c->len - c->off);
	c->off += n;
	return at;
}

static uint8_t get_u8(struct cur *c)
{
	return (uint8_t)*take(c, 1);
}

/* The blob is in host order (the test checks the endian byte says so). */
static uint32_t get_u32(struct cur *c)
{
	uint32_t v;

	memcpy(&v, take(c, 4), 4);
	return v;
}

static uint64_t get_u64(struct cur *c)
{
	uint64_t v;

	memcpy(&v, take(c, 8), 8);
	return v;
}

static const char *get_str(struct cur *c)
{
	const char *s = c->p + c->off;
	const char *nul = memchr(s, '\0', c->len - c->off);

	assert_non_null(nul);
	c->off += (size_t)(nul - s) + 1;
	return s;
}

/* A u64 size then that many bytes, which must equal @want. */
static void expect_file64(struct cur *c, const char *want)
{
	uint64_t n = get_u64(c);

	assert_int_equal(n, strlen(want));
	assert_memory_equal(take(c, (size_t)n), want, n);
}

static void expect_file32(struct cur *c, const char *want)
{
	uint32_t n = get_u32(c);

	assert_int_equal(n, strlen(want));
	assert_memory_equal(take(c, n), want, n);
}

/* Checks magic through header_event; returns the offset after them. */
static void expect_head(struct cur *c)
{
	const uint16_t one = 1;

	assert_memory_equal(take(c, 10), "\x17\x08\x44tracing", 10);
	assert_string_equal(get_str(c), "0.6");
	assert_int_equal(c->off, 14);
	assert_int_equal(get_u8(c), *(const uint8_t *)&one == 0 ? 1 : 0);
	assert_int_equal(get_u8(c), sizeof(long));
	assert_int_equal(get_u32(c), (uint32_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(c->off, 20);
	assert_memory_equal(take(c, 12), "header_page", 12);
	expect_file64(c, header_page);
	assert_int_equal(c->off, 20 + 12 + 8 + strlen(header_page));
	assert_memory_equal(take(c, 13), "header_event", 13);
}

static void build_ok(struct fixture *f, const struct sonde_tp_name *tps, size_t n, char **blob,
		     size_t *len)
{
	struct sonde_errmsg err = {{0}};
	int ret = sonde_tracing_data_build(f->tfs, tps, n, blob, len, &err);

	if (ret < 0)
		fail_msg("build: %d %s", ret, err.text);
	assert_non_null(*blob);
}

/* Duplicates, interleaved systems and an ftrace event, as a -e list might give them. */
static const struct sonde_tp_name mixed[] = {
    {"sched", "sched_switch"}, {"syscalls", "sys_enter_write"},
    {"sched", "sched_wakeup"}, {"sched", "sched_switch"},
    {"ftrace", "print"},       {"syscalls", "sys_enter_write"},
};

static void test_layout(void **state)
{
	struct fixture *f = *state;
	char *blob;
	size_t len;
	struct cur c;

	build_ok(f, mixed, sizeof(mixed) / sizeof(mixed[0]), &blob, &len);
	c = (struct cur){blob, len, 0};
	expect_head(&c);
	expect_file64(&c, header_event);

	/* ftrace section: its own count, no system name */
	assert_int_equal(get_u32(&c), 1);
	expect_file64(&c, ftrace_print_fmt);

	/* systems in first-mention order, events in given order, each once */
	assert_int_equal(get_u32(&c), 2);
	assert_string_equal(get_str(&c), "sched");
	assert_int_equal(get_u32(&c), 2);
	expect_file64(&c, sched_switch_fmt);
	expect_file64(&c, sched_wakeup_fmt);
	assert_string_equal(get_str(&c), "syscalls");
	assert_int_equal(get_u32(&c), 1);
	expect_file64(&c, sys_enter_write_fmt);

	assert_int_equal(get_u32(&c), 0); /* kallsyms: none */
	expect_file32(&c, printk_formats);
	expect_file64(&c, saved_cmdlines);
	assert_int_equal(c.off, len); /* nothing after, no padding */
	free(blob);
}

/* The blob's pieces are what libtraceevent needs to decode a record. */
static void test_libtraceevent(void **state)
{
	struct fixture *f = *state;
	struct tep_handle *tep = tep_alloc();
	struct tep_event *ev;
	struct tep_format_field *field;
	struct trace_seq s;
	struct tep_record rec;
	unsigned char raw[64];
	char *blob, *text;
	size_t len;
	struct cur c;
	uint8_t endian, long_size;
	uint64_t n;
	uint32_t nsys;

	assert_non_null(tep);
	build_ok(f, mixed, sizeof(mixed) / sizeof(mixed[0]), &blob, &len);
	c = (struct cur){blob, len, 0};
	take(&c, 10);
	get_str(&c);
	endian = get_u8(&c);
	long_size = get_u8(&c);
	tep_set_file_bigendian(tep, endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, long_size);
	tep_set_page_size(tep, (int)get_u32(&c));

	take(&c, 12);
	n = get_u64(&c);
	text = (char *)take(&c, n);
	assert_int_equal(tep_parse_header_page(tep, text, n, long_size), 0);
	assert_int_equal(tep_get_header_page_size(tep), 8); /* the commit field */
	take(&c, 13);
	take(&c, get_u64(&c));

	for (uint32_t i = get_u32(&c); i > 0; i--) {
		n = get_u64(&c);
		assert_int_equal(tep_parse_event(tep, take(&c, n), n, "ftrace"), 0);
	}
	nsys = get_u32(&c);
	for (uint32_t i = 0; i < nsys; i++) {
		const char *sys = get_str(&c);

		for (uint32_t j = get_u32(&c); j > 0; j--) {
			n = get_u64(&c);
			assert_int_equal(tep_parse_event(tep, take(&c, n), n, sys), 0);
		}
	}
	assert_int_equal(get_u32(&c), 0);
	n = get_u32(&c);
	text = strndup(take(&c, n), n);
	assert_int_equal(tep_parse_printk_formats(tep, text), 0);
	free(text);
	n = get_u64(&c);
	text = strndup(take(&c, n), n);
	assert_int_equal(tep_parse_saved_cmdlines(tep, text), 0);
	free(text);
	assert_int_equal(c.off, len);

	assert_non_null(tep_find_event_by_name(tep, "sched", "sched_wakeup"));
	assert_non_null(tep_find_event_by_name(tep, "syscalls", "sys_enter_write"));
	assert_non_null(tep_find_event_by_name(tep, "ftrace", "print"));
	assert_null(tep_find_event_by_name(tep, "sched", "sched_waking"));
	ev = tep_find_event_by_name(tep, "sched", "sched_switch");
	assert_non_null(ev);
	assert_int_equal(ev->id, 372);
	assert_ptr_equal(tep_find_event(tep, 372), ev);
	field = tep_find_field(ev, "next_pid");
	assert_non_null(field);
	assert_int_equal(field->offset, 56);
	assert_int_equal(field->size, 4);
	assert_string_equal(tep_data_comm_from_pid(tep, 4242), "writer");

	/* a sched_switch record made by hand, decoded through the parsed format */
	memset(raw, 0, sizeof(raw));
	{
		uint16_t type = 372;
		int32_t pid = 4242, prio = 120, next_pid = 0;
		int64_t state = 1; /* TASK_INTERRUPTIBLE: "S" */

		memcpy(raw, &type, 2);
		memcpy(raw + 4, &pid, 4);
		memcpy(raw + 8, "writer", 6);
		memcpy(raw + 24, &pid, 4);
		memcpy(raw + 28, &prio, 4);
		memcpy(raw + 32, &state, 8);
		memcpy(raw + 40, "swapper/0", 9);
		memcpy(raw + 56, &next_pid, 4);
		memcpy(raw + 60, &prio, 4);
	}
	memset(&rec, 0, sizeof(rec));
	rec.data = raw;
	rec.size = sizeof(raw);
	trace_seq_init(&s);
	tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	assert_string_equal(s.buffer, "prev_comm=writer prev_pid=4242 prev_prio=120 prev_state=S "
				      "==> next_comm=swapper/0 next_pid=0 next_prio=120");
	trace_seq_destroy(&s);
	tep_free(tep);
	free(blob);
}

static void test_missing_tracepoint(void **state)
{
	struct fixture *f = *state;
	const struct sonde_tp_name tps[] = {{"sched", "sched_switch"}, {"sched", "no_such_event"}};
	const struct sonde_tp_name nosys[] = {{"nosys", "ev"}};
	struct sonde_errmsg err = {{0}};
	char *blob = (char *)1;
	size_t len = 1;
	int ret;

	ret = sonde_tracing_data_build(f->tfs, tps, 2, &blob, &len, &err);
	assert_int_equal(ret, SONDE_E_UNKNOWN_EVENT);
	assert_null(blob);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err.text, "sched:no_such_event"));

	ret = sonde_tracing_data_build(f->tfs, nosys, 1, &blob, &len, &err);
	assert_int_equal(ret, SONDE_E_UNKNOWN_EVENT);
	assert_non_null(strstr(err.text, "nosys:ev"));
}

static void test_bad_names(void **state)
{
	struct fixture *f = *state;
	const struct sonde_tp_name bad[][1] = {{{"..", "header_page"}},
					       {{"sched", "../sched_switch"}},
					       {{"", "x"}},
					       {{"sched", NULL}}};
	struct sonde_errmsg err = {{0}};
	char *blob;
	size_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sonde_tracing_data_build(f->tfs, bad[i], 1, &blob, &len, &err),
				 -EINVAL);
		assert_null(blob);
		assert_non_null(strstr(err.text, "bad tracepoint name"));
	}
}

/* No printk_formats, saved_cmdlines nor header_event: sizes 0 and the known header_event. */
static void test_optional_files(void **state)
{
	struct fixture *f = *state;
	const struct sonde_tp_name tps[] = {{"sched", "sched_wakeup"}};
	char path[600], *blob;
	size_t len;
	struct cur c;

	snprintf(path, sizeof(path), "%s/printk_formats", f->tfs);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/saved_cmdlines", f->tfs);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/events/header_event", f->tfs);
	assert_int_equal(unlink(path), 0);

	build_ok(f, tps, 1, &blob, &len);
	c = (struct cur){blob, len, 0};
	expect_head(&c);
	expect_file64(&c, header_event);
	assert_int_equal(get_u32(&c), 0); /* ftrace */
	assert_int_equal(get_u32(&c), 1);
	assert_string_equal(get_str(&c), "sched");
	assert_int_equal(get_u32(&c), 1);
	expect_file64(&c, sched_wakeup_fmt);
	assert_int_equal(get_u32(&c), 0); /* kallsyms */
	assert_int_equal(get_u32(&c), 0); /* printk_formats */
	assert_int_equal(get_u64(&c), 0); /* saved_cmdlines */
	assert_int_equal(c.off, len);
	free(blob);
}

/* header_page is what a reader sizes its pages by: no blob without it. */
static void test_no_header_page(void **state)
{
	struct fixture *f = *state;
	struct sonde_errmsg err = {{0}};
	char path[600], *blob;
	size_t len;

	snprintf(path, sizeof(path), "%s/events/header_page", f->tfs);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(sonde_tracing_data_build(f->tfs, NULL, 0, &blob, &len, &err), -ENOENT);
	assert_null(blob);
	assert_non_null(strstr(err.text, "header_page"));
}

/* No tracepoints: a valid blob with empty sections. */
static void test_empty(void **state)
{
	struct fixture *f = *state;
	char *blob;
	size_t len;
	struct cur c;

	build_ok(f, NULL, 0, &blob, &len);
	c = (struct cur){blob, len, 0};
	expect_head(&c);
	expect_file64(&c, header_event);
	assert_int_equal(get_u32(&c), 0);
	assert_int_equal(get_u32(&c), 0);
	assert_int_equal(get_u32(&c), 0);
	expect_file32(&c, printk_formats);
	expect_file64(&c, saved_cmdlines);
	assert_int_equal(c.off, len);
	free(blob);
}

/* A format larger than one read buffer comes through whole (pseudo files stat as 0). */
static void test_large_format(void **state)
{
	struct fixture *f = *state;
	const struct sonde_tp_name tps[] = {{"big", "ev"}};
	size_t n = 100000;
	char *text = malloc(n + 1), *blob;
	size_t len;
	struct cur c;

	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		text[i] = (char)('a' + i % 26);
	text[n] = '\0';
	write_file(f, "events/big/ev/format", text);
	build_ok(f, tps, 1, &blob, &len);
	c = (struct cur){blob, len, 0};
	expect_head(&c);
	expect_file64(&c, header_event);
	assert_int_equal(get_u32(&c), 0);
	assert_int_equal(get_u32(&c), 1);
	assert_string_equal(get_str(&c), "big");
	assert_int_equal(get_u32(&c), 1);
	expect_file64(&c, text);
	free(text);
	free(blob);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_libtraceevent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_tracepoint, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_optional_files, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_header_page, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_large_format, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
