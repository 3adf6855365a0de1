// SPDX-License-Identifier: MIT
/*
 * Every agent message type, encoded with the encoder the agent or the
 * host sends it with, then: its frame passes sonde_wire_frame(), its
 * payload has the fields the message table (SONDE_AGENT_MESSAGES) says,
 * it decodes to the values put in, and every shorter payload and one
 * byte more are refused.  A tripwire: the cases below must cover every
 * type of the table, once, so a new message can't land without its
 * round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/agent_proto.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table's field description, walked over a payload ---------------- */

static size_t walk(const char **f, const uint8_t *p, size_t len, size_t off, int *bad);

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Consumes the fields of @f up to its end or a ')'; returns the new offset. */
static size_t walk(const char **f, const uint8_t *p, size_t len, size_t off, int *bad)
{
	while (**f && **f != ')' && !*bad) {
		char c = *(*f)++;

		if (c == 'u' || c == 'q') {
			size_t n = c == 'u' ? 4 : 8;

			if (len - off < n)
				*bad = 1;
			off += n;
		} else if (c == 's' || c == 'b') {
			uint32_t n;

			if (len - off < 4) {
				*bad = 1;
				break;
			}
			n = le32(p + off);
			off += 4;
			if (len - off < n || (c == 's' && (n == 0 || p[off + n - 1] != 0)))
				*bad = 1;
			off += n;
		} else if (c == 'r') {
			off = len;
		} else if (c == '#') {
			const char *group = *f + 1; /* after '(' */
			uint32_t n;

			assert_int_equal(**f, '(');
			if (len - off < 4) {
				*bad = 1;
				break;
			}
			n = le32(p + off);
			off += 4;
			*f = group;
			for (uint32_t i = 0; i < n && !*bad; i++) {
				*f = group;
				off = walk(f, p, len, off, bad);
			}
			if (!n) { /* skip the group's text */
				int depth = 1;

				while (depth) {
					depth += **f == '(';
					depth -= **f == ')';
					(*f)++;
				}
				(*f)--;
			}
			assert_int_equal(**f, ')');
			(*f)++;
		} else {
			fail_msg("bad field letter '%c'", c);
		}
	}
	return off;
}

/* The payload of @b (a whole message) has exactly the table's fields. */
static void check_fields(const struct sonde_wbuf *b)
{
	uint16_t type;
	uint32_t len;
	const char *f;
	int bad = 0;

	assert_int_equal(b->err, 0);
	assert_int_equal(sonde_wire_frame(b->p, SONDE_AGENT_MAX_REPLY, &type, &len), 0);
	assert_int_equal(len, b->len - SONDE_AGENT_FRAME_SIZE);
	f = sonde_agent_msg_fields(type);
	assert_non_null(f);
	assert_int_equal(walk(&f, b->p + SONDE_AGENT_FRAME_SIZE, len, 0, &bad), len);
	assert_int_equal(bad, 0);
	assert_int_equal(*f, '\0');
}

/* ---- one case per message type ------------------------------------------- */

/* Decodes @len payload bytes of @b; Return: the decoder's result. */
typedef int (*decode_fn)(const uint8_t *payload, size_t len, uint16_t type, bool check);

static void init(struct sonde_wmsg *m, uint16_t type, const uint8_t *p, size_t len)
{
	sonde_wmsg_init(m, type, p, len);
}

/* Decoding the whole payload works (and checks values); every cut and one
 * byte more fail. */
static void round_trip(struct sonde_wbuf *b, decode_fn decode)
{
	uint16_t type;
	uint32_t len;
	uint8_t *more;

	check_fields(b);
	sonde_wire_frame(b->p, SONDE_AGENT_MAX_REPLY, &type, &len);
	assert_int_equal(decode(b->p + SONDE_AGENT_FRAME_SIZE, len, type, true), 0);
	/* DATA may end at any record's end: its cuts are checked by its case. */
	for (uint32_t cut = 0; cut < len && type != SONDE_AM_DATA; cut++)
		assert_int_equal(decode(b->p + SONDE_AGENT_FRAME_SIZE, cut, type, false), -EBADMSG);
	assert_non_null(more = calloc(len + 1, 1));
	memcpy(more, b->p + SONDE_AGENT_FRAME_SIZE, len);
	assert_int_equal(decode(more, len + 1, type, false), -EBADMSG);
	free(more);
	sonde_wbuf_fini(b);
}

static int dec_hello(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	struct sonde_agent_hello h;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_hello(&m, &h);
	if (check && !r) {
		assert_int_equal(h.proto, SONDE_AGENT_PROTO_VERSION);
		assert_int_equal(h.flags, SONDE_AGENT_F_TOKEN | SONDE_AGENT_F_TRACEFS);
		assert_string_equal(h.version, "0.1.0");
		assert_string_equal(h.machine, "aarch64");
		assert_string_equal(h.release, "6.1.0-sonde");
		assert_int_equal(h.ncpus_online, 4);
		assert_int_equal(h.ncpus_conf, 8);
		assert_int_equal(h.kinds, 0x1f);
		assert_int_equal(h.max_bytes, 1ull << 40);
		assert_int_equal(h.max_rate, 123456789ull);
	}
	return r;
}

static void case_hello(void)
{
	struct sonde_wbuf b = {0};
	struct sonde_agent_hello h = {SONDE_AGENT_PROTO_VERSION,
				      SONDE_AGENT_F_TOKEN | SONDE_AGENT_F_TRACEFS,
				      "0.1.0",
				      "aarch64",
				      "6.1.0-sonde",
				      4,
				      8,
				      0x1f,
				      1ull << 40,
				      123456789ull};

	sonde_agent_put_hello(&b, &h);
	round_trip(&b, dec_hello);
}

static int dec_auth(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	uint32_t proto, tlen;
	const void *tok;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_auth(&m, &proto, &tok, &tlen);
	if (check && !r) {
		assert_int_equal(proto, SONDE_AGENT_PROTO_VERSION);
		assert_int_equal(tlen, 6);
		assert_memory_equal(tok, "s3cr3t", 6);
	}
	return r;
}

static void case_auth(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_auth(&b, SONDE_AGENT_PROTO_VERSION, "s3cr3t", 6);
	round_trip(&b, dec_auth);
}

static int dec_empty(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;

	(void)check;
	init(&m, type, p, len);
	return sonde_wmsg_done(&m);
}

static void case_ok(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_empty(&b, SONDE_AM_OK);
	round_trip(&b, dec_empty);
}

static void case_stop(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_empty(&b, SONDE_AM_STOP);
	/* the frame the host's signal handler writes as it is */
	assert_memory_equal(b.p, sonde_agent_stop_frame, SONDE_AGENT_FRAME_SIZE);
	round_trip(&b, dec_empty);
}

static void case_bye(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_empty(&b, SONDE_AM_BYE);
	round_trip(&b, dec_empty);
}

static int dec_error(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	int32_t code;
	const char *text;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_error(&m, &code, &text);
	if (check && !r) {
		assert_int_equal(code, -EACCES);
		assert_string_equal(text, "refused");
	}
	return r;
}

static void case_error(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_error(&b, -EACCES, "refused");
	round_trip(&b, dec_error);
}

static int dec_record(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	struct sonde_agent_record_req r;
	int ret;

	init(&m, type, p, len);
	ret = sonde_agent_get_record(&m, &r);
	if (check && !ret) {
		assert_int_equal(r.nspecs, 2);
		assert_string_equal(r.specs[0], "cpu-clock");
		assert_string_equal(r.specs[1], "sched:sched_switch");
		assert_string_equal(r.filters[0], "");
		assert_string_equal(r.filters[1], "prev_pid != 0");
		assert_int_equal(r.freq, 999);
		assert_int_equal(r.period, 0);
		assert_int_equal(r.callgraph, 2);
		assert_int_equal(r.dwarf_size, 4096);
		assert_int_equal(r.pages, 64);
		assert_int_equal(r.flags, SONDE_AGENT_R_SYSTEM_WIDE | SONDE_AGENT_R_KALLSYMS);
		assert_string_equal(r.cpu_list, "0-1");
		assert_int_equal(r.npids, 2);
		assert_int_equal(r.pids[1], 43);
		assert_int_equal(r.ntids, 1);
		assert_int_equal(r.tids[0], 44);
		assert_int_equal(r.argc, 2);
		assert_string_equal(r.argv[0], "/bin/sleep");
		assert_string_equal(r.argv[1], "1");
		assert_null(r.argv[2]);
		assert_int_equal(r.cmdc, 1);
		assert_string_equal(r.cmdline[0], "sonde");
	}
	if (!ret)
		sonde_agent_record_req_fini(&r);
	return ret;
}

static void case_record(void)
{
	struct sonde_wbuf b = {0};
	const char *specs[] = {"cpu-clock", "sched:sched_switch"};
	const char *filters[] = {"", "prev_pid != 0"};
	const char *argv[] = {"/bin/sleep", "1", NULL};
	const char *cmdline[] = {"sonde"};
	uint32_t pids[] = {42, 43}, tids[] = {44};
	struct sonde_agent_record_req r = {
	    .nspecs = 2,
	    .specs = specs,
	    .filters = filters,
	    .freq = 999,
	    .callgraph = 2,
	    .dwarf_size = 4096,
	    .pages = 64,
	    .flags = SONDE_AGENT_R_SYSTEM_WIDE | SONDE_AGENT_R_KALLSYMS,
	    .cpu_list = "0-1",
	    .npids = 2,
	    .ntids = 1,
	    .pids = pids,
	    .tids = tids,
	    .argc = 2,
	    .argv = argv,
	    .cmdc = 1,
	    .cmdline = cmdline,
	};

	sonde_agent_put_record(&b, &r);
	round_trip(&b, dec_record);
}

static struct perf_event_attr attr = {.type = PERF_TYPE_SOFTWARE,
				      .size = sizeof(attr),
				      .config = PERF_COUNT_SW_CPU_CLOCK,
				      .sample_period = 4000};

static int dec_events(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	struct sonde_agent_events e;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_events(&m, &e);
	if (check && !r) {
		assert_int_equal(e.n, 2);
		assert_int_equal(e.max_freq, 100000);
		assert_int_equal(e.freq_asked, 200000);
		assert_int_equal(e.flags, SONDE_AGENT_E_KMAP_HIDDEN);
		assert_string_equal(e.ev[0].name, "cpu-clock");
		assert_int_equal(e.ev[0].attr_len, sizeof(attr));
		assert_memory_equal(e.ev[0].attr, &attr, sizeof(attr));
		assert_int_equal(e.ev[0].nids, 2);
		assert_int_equal(e.ev[0].ids[1], 8);
		assert_string_equal(e.ev[1].name, "dummy:HG");
		assert_int_equal(e.ev[1].nids, 0);
	}
	if (!r)
		sonde_agent_events_fini(&e);
	return r;
}

static void case_events(void)
{
	struct sonde_wbuf b = {0};
	uint64_t ids[] = {7, 8};
	struct sonde_agent_event ev[] = {{"cpu-clock", &attr, sizeof(attr), 2, ids},
					 {"dummy:HG", &attr, sizeof(attr), 0, NULL}};
	struct sonde_agent_events e = {2, ev, 100000, 200000, SONDE_AGENT_E_KMAP_HIDDEN};

	sonde_agent_put_events(&b, &e);
	round_trip(&b, dec_events);
}

static int dec_feature(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	uint32_t bit, n;
	const void *data;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_feature(&m, &bit, &data, &n);
	if (check && !r) {
		assert_int_equal(bit, 7);
		assert_int_equal(n, 5);
		assert_memory_equal(data, "x86\0\0", 5);
	}
	return r;
}

static void case_feature(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_feature(&b, 7, "x86\0\0", 5);
	round_trip(&b, dec_feature);
}

/* Two records: a 16-byte and an 8-byte one, as the kernel lays them out. */
static const uint64_t records[] = {(uint64_t)PERF_RECORD_SAMPLE | (uint64_t)16 << 48, 0x1234,
				   (uint64_t)PERF_RECORD_THROTTLE | (uint64_t)8 << 48};

static int dec_data(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	(void)type;
	if (check)
		assert_memory_equal(p, records, sizeof(records));
	return sonde_agent_check_records(p, len, false) < 0 ? -EBADMSG : 0;
}

static void case_data(void)
{
	struct sonde_wbuf b = {0};

	sonde_wbuf_begin(&b, SONDE_AM_DATA);
	sonde_wbuf_raw(&b, records, sizeof(records));
	sonde_wbuf_end(&b);
	/* Whole records only: a payload may end after either record, nowhere else. */
	for (size_t cut = 0; cut < sizeof(records); cut++)
		assert_int_equal(sonde_agent_check_records(records, cut, false) < 0,
				 cut != 0 && cut != 16);
	round_trip(&b, dec_data);
}

static int dec_end(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	struct sonde_agent_end e;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_end(&m, &e);
	if (check && !r) {
		assert_int_equal(e.reason, SONDE_AGENT_END_SIZE_CAP);
		assert_int_equal(e.status, -1);
		assert_int_equal(e.bytes, 1ull << 33);
		assert_int_equal(e.nrings, 2);
		assert_int_equal(e.rings[1].cpu, 3);
		assert_int_equal(e.rings[1].samples, 100);
		assert_int_equal(e.rings[1].lost, 2);
		assert_int_equal(e.rings[1].throttles, 1);
		assert_string_equal(e.message, "size cap");
	}
	if (!r)
		sonde_agent_end_fini(&e);
	return r;
}

static void case_end(void)
{
	struct sonde_wbuf b = {0};
	struct sonde_agent_ring rings[] = {{0, 5, 0, 0}, {3, 100, 2, 1}};
	struct sonde_agent_end e = {SONDE_AGENT_END_SIZE_CAP, -1, 1ull << 33, 2, rings, "size cap"};

	sonde_agent_put_end(&b, &e);
	round_trip(&b, dec_end);
}

static int dec_buildid(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	uint32_t kind, pid;
	const char *name;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_buildid(&m, &kind, &pid, &name);
	if (check && !r) {
		assert_int_equal(kind, SONDE_AGENT_BID_FILE);
		assert_int_equal(pid, 77);
		assert_string_equal(name, "/usr/lib/libc.so.6");
	}
	return r;
}

static void case_buildid(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_buildid(&b, SONDE_AGENT_BID_FILE, 77, "/usr/lib/libc.so.6");
	round_trip(&b, dec_buildid);
}

static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
				7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};

static int dec_blob(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	const void *blob;
	uint32_t n;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_reply_blob(
	    &m, type == SONDE_AM_BUILDID_REPLY ? 20 : SONDE_AGENT_MAX_REPLY, &blob, &n);
	if (check && !r) {
		assert_int_equal(n, type == SONDE_AM_BUILDID_REPLY ? 20 : 12);
		assert_memory_equal(
		    blob, type == SONDE_AM_BUILDID_REPLY ? (const void *)bid : "ffff T _text", n);
	}
	return r;
}

static void case_buildid_reply(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_reply_blob(&b, SONDE_AM_BUILDID_REPLY, bid, sizeof(bid));
	round_trip(&b, dec_blob);
}

static int dec_file(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	uint32_t kind;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_file(&m, &kind);
	if (check && !r)
		assert_int_equal(kind, SONDE_AGENT_FILE_VDSO);
	return r;
}

static void case_file(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_file(&b, SONDE_AGENT_FILE_VDSO);
	round_trip(&b, dec_file);
}

static void case_file_reply(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_reply_blob(&b, SONDE_AM_FILE_REPLY, "ffff T _text", 12);
	round_trip(&b, dec_blob);
}

static int dec_list(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	const char *what;
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_list(&m, &what);
	if (check && !r)
		assert_string_equal(what, "tracepoint");
	return r;
}

static void case_list(void)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_list(&b, "tracepoint");
	round_trip(&b, dec_list);
}

static void list_line(void *ctx, const char *name, const char *kind)
{
	char *seen = ctx;

	strcat(seen, name);
	strcat(seen, "=");
	strcat(seen, kind);
	strcat(seen, ";");
}

static int dec_list_reply(const uint8_t *p, size_t len, uint16_t type, bool check)
{
	struct sonde_wmsg m;
	char seen[256] = "";
	int r;

	init(&m, type, p, len);
	r = sonde_agent_get_list_reply(&m, list_line, seen);
	if (check && !r)
		assert_string_equal(seen, "cpu-clock=Software event;sched:sched_switch=Tracepoint "
					  "event;");
	return r;
}

static void case_list_reply(void)
{
	struct sonde_wbuf b = {0};
	struct sonde_agent_list_reply lr;

	sonde_agent_list_reply_begin(&b, &lr);
	sonde_agent_list_reply_add(&b, &lr, "cpu-clock", "Software event");
	sonde_agent_list_reply_add(&b, &lr, "sched:sched_switch", "Tracepoint event");
	sonde_agent_list_reply_end(&b, &lr);
	round_trip(&b, dec_list_reply);
}

static const struct {
	uint16_t type;
	void (*run)(void);
} cases[] = {
    {SONDE_AM_HELLO, case_hello},     {SONDE_AM_AUTH, case_auth},
    {SONDE_AM_OK, case_ok},	      {SONDE_AM_ERROR, case_error},
    {SONDE_AM_RECORD, case_record},   {SONDE_AM_EVENTS, case_events},
    {SONDE_AM_FEATURE, case_feature}, {SONDE_AM_DATA, case_data},
    {SONDE_AM_END, case_end},	      {SONDE_AM_STOP, case_stop},
    {SONDE_AM_BUILDID, case_buildid}, {SONDE_AM_BUILDID_REPLY, case_buildid_reply},
    {SONDE_AM_FILE, case_file},	      {SONDE_AM_FILE_REPLY, case_file_reply},
    {SONDE_AM_LIST, case_list},	      {SONDE_AM_LIST_REPLY, case_list_reply},
    {SONDE_AM_BYE, case_bye},
};

/* The tripwire: one case for every type of the table, none twice. */
static void test_every_type_has_a_round_trip(void **state)
{
	bool seen[SONDE_AM_MAX_] = {false};

	(void)state;
	assert_int_equal(sizeof(cases) / sizeof(cases[0]), SONDE_AGENT_NR_MESSAGES);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(cases[i].type >= 1 && cases[i].type < SONDE_AM_MAX_);
		assert_false(seen[cases[i].type]);
		seen[cases[i].type] = true;
		assert_string_not_equal(sonde_agent_msg_name(cases[i].type), "?");
	}
	assert_string_equal(sonde_agent_msg_name(0), "?");
	assert_string_equal(sonde_agent_msg_name(SONDE_AM_MAX_), "?");
	assert_null(sonde_agent_msg_fields(SONDE_AM_MAX_));
}

static void test_round_trips(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cases[i].run();
}

static void test_frame_checks(void **state)
{
	uint8_t hdr[SONDE_AGENT_FRAME_SIZE] = {
	    4, 0, 0, 0, SONDE_AM_MAX_, 0, SONDE_AGENT_PROTO_VERSION, 0};
	uint16_t type;
	uint32_t len;

	(void)state;
	assert_int_equal(sonde_wire_frame(hdr, 64, &type, &len), -EBADMSG); /* unknown type */
	hdr[4] = SONDE_AM_OK;
	hdr[6] = SONDE_AGENT_PROTO_VERSION + 1;
	assert_int_equal(sonde_wire_frame(hdr, 64, &type, &len), -EBADMSG); /* version */
	hdr[6] = SONDE_AGENT_PROTO_VERSION;
	hdr[0] = 65;
	assert_int_equal(sonde_wire_frame(hdr, 64, &type, &len), -EMSGSIZE);
	hdr[0] = 64;
	assert_int_equal(sonde_wire_frame(hdr, 64, &type, &len), 0);
	assert_int_equal(type, SONDE_AM_OK);
	assert_int_equal(len, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_type_has_a_round_trip),
	    cmocka_unit_test(test_round_trips),
	    cmocka_unit_test(test_frame_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
