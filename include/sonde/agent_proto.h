/* SPDX-License-Identifier: MIT */
/*
 * The wire protocol between `sonde record --target` (host) and
 * `sonde-agent` (target).  A message is an 8-byte frame header (payload
 * length u32, type u16, protocol version u16, little-endian) and a payload
 * of fields in a fixed order: u32/u64 little-endian, strings as u32 length
 * + bytes ending in one NUL (no other NUL), blobs as u32 length + bytes.
 * Every length is checked against what is left of the payload and against
 * a per-field cap before anything is trusted; a decoder never reads past
 * the payload and returns -EBADMSG on any mismatch, including bytes left
 * over.
 *
 * A session: agent HELLO; host AUTH (always, the token empty when none is
 * needed); agent OK or ERROR.  Then requests, one at a time:
 *   RECORD -> EVENTS, FEATURE..., DATA..., FEATURE..., END   (or ERROR)
 *             the host may send STOP at any time during the capture
 *   BUILDID -> BUILDID_REPLY (or ERROR);  FILE -> FILE_REPLY (or ERROR)
 *   LIST -> LIST_REPLY;  BYE ends the session.
 * DATA carries whole perf records (the target's byte order: the hello says
 * which) exactly as a perf.data data section holds them.
 */
#ifndef SONDE_AGENT_PROTO_H
#define SONDE_AGENT_PROTO_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SONDE_AGENT_PROTO_VERSION 1
#define SONDE_AGENT_FRAME_SIZE 8
/* Caps: what the agent accepts from a host, and what a host accepts. */
#define SONDE_AGENT_MAX_REQUEST (64u * 1024)
#define SONDE_AGENT_MAX_REPLY (64u * 1024 * 1024)
#define SONDE_AGENT_MAX_STRING 4096u
#define SONDE_AGENT_MAX_ARGS 256u
#define SONDE_AGENT_MAX_IDS 4096u
#define SONDE_AGENT_MAX_TOKEN 256u
#define SONDE_AGENT_DEFAULT_PORT 4243

/*
 * Every message type, once: X(NAME, number, sender, payload) makes the
 * enum, the name table (sonde_agent_msg_name()) and the count the unit
 * test's round trips are checked against.  The numbers are the wire's:
 * never renumber.  Payload fields in order: u32 'u', u64 'q', string 's',
 * blob 'b', raw records to the end 'r', and '#(...)' a u32 count then
 * that many of the group.
 */
#define SONDE_AGENT_MESSAGES(X)                                                                    \
	X(HELLO, 1, AGENT, "uusssuuuqq")                                                           \
	X(AUTH, 2, HOST, "ub")                                                                     \
	X(OK, 3, AGENT, "")                                                                        \
	X(ERROR, 4, EITHER, "us")                                                                  \
	X(RECORD, 5, HOST, "#(ss)qquuuus#(u)#(u)#(s)#(s)")                                         \
	X(EVENTS, 6, AGENT, "qqu#(sb#(q))")                                                        \
	X(FEATURE, 7, AGENT, "ub")                                                                 \
	X(DATA, 8, AGENT, "r")                                                                     \
	X(END, 9, AGENT, "uuq#(uqqq)s")                                                            \
	X(STOP, 10, HOST, "")                                                                      \
	X(BUILDID, 11, HOST, "uus")                                                                \
	X(BUILDID_REPLY, 12, AGENT, "b")                                                           \
	X(FILE, 13, HOST, "u")                                                                     \
	X(FILE_REPLY, 14, AGENT, "b")                                                              \
	X(LIST, 15, HOST, "s")                                                                     \
	X(LIST_REPLY, 16, AGENT, "#(ss)")                                                          \
	X(BYE, 17, HOST, "")

/* clang-format would indent SONDE_AM_MAX_ as a continuation of the macro. */
// clang-format off
enum sonde_agent_msg {
#define SONDE_AGENT_MSG_ENUM(name, num, sender, fields) SONDE_AM_##name = num,
	SONDE_AGENT_MESSAGES(SONDE_AGENT_MSG_ENUM)
#undef SONDE_AGENT_MSG_ENUM
	SONDE_AM_MAX_
};
// clang-format on

/* How many message types there are (numbered 1 to this). */
#define SONDE_AGENT_NR_MESSAGES (SONDE_AM_MAX_ - 1)

/* Hello flags. */
#define SONDE_AGENT_F_ALLOW_EXEC 0x1u
#define SONDE_AGENT_F_TOKEN 0x2u      /* a token is required */
#define SONDE_AGENT_F_BIG_ENDIAN 0x4u /* records are big-endian */
#define SONDE_AGENT_F_TRACEFS 0x8u    /* tracefs is mounted (tracepoints) */
#define SONDE_AGENT_F_HW_PMU 0x10u    /* hardware events open */

/* Hello kinds: bit (1 << enum sonde_event_kind) for each kind the target can open. */

struct sonde_agent_hello {
	uint32_t proto, flags;
	const char *version, *machine, *release; /* borrowed from the message */
	uint32_t ncpus_online, ncpus_conf;
	uint32_t kinds;
	uint64_t max_bytes, max_rate; /* the agent's caps: capture bytes, bytes per second */
};

/* Record request flags. */
#define SONDE_AGENT_R_SYSTEM_WIDE 0x1u
#define SONDE_AGENT_R_KALLSYMS 0x2u

struct sonde_agent_record_req {
	uint32_t nspecs;
	const char **specs;   /* -e arguments, in order */
	const char **filters; /* per spec: --filter for its tracepoints, "" for none */
	uint64_t freq, period;
	uint32_t callgraph, dwarf_size, pages, flags;
	const char *cpu_list; /* "" for every online CPU */
	uint32_t npids, ntids;
	uint32_t *pids, *tids;
	uint32_t argc;	   /* the workload, or 0 */
	const char **argv; /* NULL-terminated */
	uint32_t cmdc;	   /* the host's command line, for HEADER_CMDLINE */
	const char **cmdline;
	void *mem_; /* owned: every array above */
};

struct sonde_agent_event {
	const char *name;
	const void *attr; /* struct perf_event_attr bytes, attr_len long */
	uint32_t attr_len;
	uint32_t nids;
	uint64_t *ids;
};

struct sonde_agent_events {
	uint32_t n;
	struct sonde_agent_event *ev; /* owned */
	uint64_t max_freq, freq_asked;
	uint32_t flags; /* SONDE_AGENT_E_* */
};
#define SONDE_AGENT_E_KMAP_HIDDEN 0x1u

enum sonde_agent_end_reason {
	SONDE_AGENT_END_WORKLOAD, /* the workload exited */
	SONDE_AGENT_END_STOPPED,  /* the host said STOP, or attached targets went */
	SONDE_AGENT_END_SIZE_CAP, /* the agent's --max-bytes was reached */
	SONDE_AGENT_END_ERROR,
};

struct sonde_agent_ring {
	int32_t cpu;
	uint64_t samples, lost, throttles;
};

struct sonde_agent_end {
	uint32_t reason;
	int32_t status; /* workload wait status, -1 without one */
	uint64_t bytes; /* record bytes sent */
	uint32_t nrings;
	struct sonde_agent_ring *rings; /* owned */
	const char *message;		/* borrowed; "" */
};

enum sonde_agent_buildid_kind {
	SONDE_AGENT_BID_KERNEL,
	SONDE_AGENT_BID_MODULE, /* name: a module name */
	SONDE_AGENT_BID_FILE,	/* name: an absolute path named in the last capture */
};

enum sonde_agent_file_kind {
	SONDE_AGENT_FILE_KALLSYMS, /* the text symbols of /proc/kallsyms */
	SONDE_AGENT_FILE_MODULES,  /* module load and section addresses */
	SONDE_AGENT_FILE_VDSO,	   /* the agent's vDSO image: every process's on its kernel */
};

/* A message being built: a growing buffer with a sticky error. */
struct sonde_wbuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

/**
 * sonde_wbuf_begin() - start a message: the frame header (length filled in by sonde_wbuf_end())
 * @b: the buffer; reused, its previous content and error dropped
 * @type: SONDE_AM_* message type
 */
void sonde_wbuf_begin(struct sonde_wbuf *b, uint16_t type);
/**
 * sonde_wbuf_u32() - append a u32, little-endian
 * @b: the buffer; an allocation failure is kept as its sticky error
 * @v: the value
 */
void sonde_wbuf_u32(struct sonde_wbuf *b, uint32_t v);
/**
 * sonde_wbuf_u64() - append a u64, little-endian (low word first)
 * @b: the buffer
 * @v: the value
 */
void sonde_wbuf_u64(struct sonde_wbuf *b, uint64_t v);
/**
 * sonde_wbuf_str() - append a string: u32 length with the NUL, bytes, NUL
 * @b: the buffer
 * @s: the string (NULL: ""); cut below SONDE_AGENT_MAX_STRING, as the
 *      receiver would refuse a longer one
 */
void sonde_wbuf_str(struct sonde_wbuf *b, const char *s);
/**
 * sonde_wbuf_blob() - append a blob: u32 length, bytes
 * @b: the buffer; -EMSGSIZE (sticky) above 4 GiB
 * @p: the bytes
 * @len: their number
 */
void sonde_wbuf_blob(struct sonde_wbuf *b, const void *p, size_t len);
/* Appends raw bytes with no length (the DATA payload). */
void sonde_wbuf_raw(struct sonde_wbuf *b, const void *p, size_t len);
/* Fills in the frame's length.  Return: 0 or the sticky error. */
int sonde_wbuf_end(struct sonde_wbuf *b);
/**
 * sonde_wbuf_fini() - free the buffer's memory
 * @b: the buffer; empty afterwards, reusable
 */
void sonde_wbuf_fini(struct sonde_wbuf *b);

/* A received message: a cursor over its payload, with a sticky error. */
struct sonde_wmsg {
	uint16_t type, version;
	const uint8_t *p; /* borrowed: the payload */
	size_t len, off;
	int err;
};

/**
 * sonde_wire_frame() - check a frame header
 * Return: 0 with *type and *len set, or -EBADMSG (unknown type, wrong
 * version) or -EMSGSIZE (longer than @max).
 */
int sonde_wire_frame(const uint8_t hdr[SONDE_AGENT_FRAME_SIZE], uint32_t max, uint16_t *type,
		     uint32_t *len);

/**
 * sonde_wmsg_init() - a cursor over a received payload
 * @m: caller's storage
 * @type: the frame's message type
 * @payload: the bytes after the frame header, borrowed
 * @len: their number
 */
void sonde_wmsg_init(struct sonde_wmsg *m, uint16_t type, const void *payload, size_t len);
/**
 * sonde_wmsg_u32() - take a u32 (little-endian)
 * @m: the cursor; reading past the end sets its sticky -EBADMSG
 * Return: the value, or 0 after an error.
 */
uint32_t sonde_wmsg_u32(struct sonde_wmsg *m);
/**
 * sonde_wmsg_u64() - take a u64 (little-endian, low word first)
 * @m: the cursor
 * Return: the value, or 0 after an error.
 */
uint64_t sonde_wmsg_u64(struct sonde_wmsg *m);
/* Borrowed string (NUL-terminated in the payload), "" after an error. */
const char *sonde_wmsg_str(struct sonde_wmsg *m, size_t max);
/**
 * sonde_wmsg_blob() - take a blob (u32 length, bytes)
 * @m: the cursor
 * @max: the longest accepted (longer: -EBADMSG)
 * @len: receives the length (0 after an error)
 * Return: borrowed bytes in the payload, or NULL after an error.
 */
const void *sonde_wmsg_blob(struct sonde_wmsg *m, size_t max, uint32_t *len);
/* Return: 0 when every field fit and nothing is left over, else -EBADMSG. */
int sonde_wmsg_done(struct sonde_wmsg *m);

/* Encoders (append one whole message to @b) and decoders (0 or -EBADMSG;
 * decoded strings are borrowed from the message, arrays owned: _fini). */
void sonde_agent_put_hello(struct sonde_wbuf *b, const struct sonde_agent_hello *h);
/**
 * sonde_agent_get_hello() - decode HELLO
 * @m: the received message; strings are borrowed from it
 * @h: receives the agent's protocol, flags, version, machine and release
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_hello(struct sonde_wmsg *m, struct sonde_agent_hello *h);
/**
 * sonde_agent_put_error() - encode ERROR
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @code: a negative error code
 * @text: what went wrong, for the user
 */
void sonde_agent_put_error(struct sonde_wbuf *b, int32_t code, const char *text);
/**
 * sonde_agent_get_error() - decode ERROR
 * @m: the received message; strings are borrowed from it
 * @code: receives the code
 * @text: receives the text, borrowed
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_error(struct sonde_wmsg *m, int32_t *code, const char **text);
/**
 * sonde_agent_put_record() - encode RECORD: what to capture on the target
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @r: the request
 */
void sonde_agent_put_record(struct sonde_wbuf *b, const struct sonde_agent_record_req *r);
/**
 * sonde_agent_get_record() - decode RECORD
 * @m: the received message; strings are borrowed from it
 * @r: receives the request; its arrays are owned: sonde_agent_record_req_fini()
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_record(struct sonde_wmsg *m, struct sonde_agent_record_req *r);
/**
 * sonde_agent_record_req_fini() - free a decoded request's arrays
 * @r: the request; zeroed afterwards
 */
void sonde_agent_record_req_fini(struct sonde_agent_record_req *r);
/**
 * sonde_agent_put_events() - encode EVENTS: the attrs and kernel ids of the opened events
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @e: the events
 */
void sonde_agent_put_events(struct sonde_wbuf *b, const struct sonde_agent_events *e);
/**
 * sonde_agent_get_events() - decode EVENTS
 * @m: the received message; strings are borrowed from it
 * @e: receives the events; arrays owned: sonde_agent_events_fini()
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_events(struct sonde_wmsg *m, struct sonde_agent_events *e);
/**
 * sonde_agent_events_fini() - free decoded events' arrays
 * @e: the events; zeroed afterwards
 */
void sonde_agent_events_fini(struct sonde_agent_events *e);
/**
 * sonde_agent_put_end() - encode END: why the capture stopped, the workload's status, ring stats
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @e: the end
 */
void sonde_agent_put_end(struct sonde_wbuf *b, const struct sonde_agent_end *e);
/**
 * sonde_agent_get_end() - decode END
 * @m: the received message; strings are borrowed from it
 * @e: receives the end; its rings are owned: sonde_agent_end_fini()
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_end(struct sonde_wmsg *m, struct sonde_agent_end *e);
/**
 * sonde_agent_end_fini() - free a decoded END's ring array
 * @e: the end
 */
void sonde_agent_end_fini(struct sonde_agent_end *e);
/* The small messages, one encoder and decoder each (decoded strings and
 * blobs are borrowed from the message).  OK, STOP and BYE carry nothing:
 * sonde_agent_put_empty(). */
void sonde_agent_put_empty(struct sonde_wbuf *b, uint16_t type);
/**
 * sonde_agent_put_auth() - encode AUTH: the host's protocol version and token
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @proto: SONDE_AGENT_PROTO_VERSION
 * @token: the token's bytes
 * @len: their number
 */
void sonde_agent_put_auth(struct sonde_wbuf *b, uint32_t proto, const void *token, size_t len);
/**
 * sonde_agent_get_auth() - decode AUTH
 * @m: the received message; strings are borrowed from it
 * @proto: receives the host's protocol version
 * @token: receives the token, borrowed
 * @len: receives its length
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_auth(struct sonde_wmsg *m, uint32_t *proto, const void **token, uint32_t *len);
/**
 * sonde_agent_put_feature() - encode FEATURE: one perf.data header feature, serialized
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @bit: the feature's bit
 * @data: its bytes, as the perf.data writer serialized them
 * @len: their number
 */
void sonde_agent_put_feature(struct sonde_wbuf *b, uint32_t bit, const void *data, size_t len);
/**
 * sonde_agent_get_feature() - decode FEATURE
 * @m: the received message; strings are borrowed from it
 * @bit: receives the feature's bit
 * @data: receives its bytes, borrowed
 * @len: receives their number
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_feature(struct sonde_wmsg *m, uint32_t *bit, const void **data, uint32_t *len);
/**
 * sonde_agent_put_buildid() - encode BUILDID: ask the target for an object's build id
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @kind: enum sonde_agent_buildid_kind
 * @pid: the process that mapped it (files)
 * @name: a module name or an absolute path
 */
void sonde_agent_put_buildid(struct sonde_wbuf *b, uint32_t kind, uint32_t pid, const char *name);
/**
 * sonde_agent_get_buildid() - decode BUILDID
 * @m: the received message; strings are borrowed from it
 * @kind: receives enum sonde_agent_buildid_kind
 * @pid: receives the pid
 * @name: receives the name, borrowed
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_buildid(struct sonde_wmsg *m, uint32_t *kind, uint32_t *pid, const char **name);
/* BUILDID_REPLY and FILE_REPLY: one blob (@type says which). */
void sonde_agent_put_reply_blob(struct sonde_wbuf *b, uint16_t type, const void *p, size_t len);
/**
 * sonde_agent_get_reply_blob() - decode BUILDID_REPLY or FILE_REPLY
 * @m: the received message; strings are borrowed from it
 * @max: the longest blob accepted
 * @p: receives the blob, borrowed
 * @len: receives its length
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_reply_blob(struct sonde_wmsg *m, uint32_t max, const void **p, uint32_t *len);
/**
 * sonde_agent_put_file() - encode FILE: ask the target for one of its files
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @kind: enum sonde_agent_file_kind
 */
void sonde_agent_put_file(struct sonde_wbuf *b, uint32_t kind);
/**
 * sonde_agent_get_file() - decode FILE
 * @m: the received message; strings are borrowed from it
 * @kind: receives enum sonde_agent_file_kind
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_file(struct sonde_wmsg *m, uint32_t *kind);
/**
 * sonde_agent_put_list() - encode LIST: ask what the target can capture
 * @b: the buffer; the message replaces what it held (errors stay sticky in it)
 * @what: the list asked for (as sonde list takes it)
 */
void sonde_agent_put_list(struct sonde_wbuf *b, const char *what);
/**
 * sonde_agent_get_list() - decode LIST
 * @m: the received message; strings are borrowed from it
 * @what: receives the list asked for, borrowed
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_list(struct sonde_wmsg *m, const char **what);
/* LIST_REPLY, built a line at a time: begin, add..., end (the count is
 * filled in at the end); read back with a callback per line. */
struct sonde_agent_list_reply {
	size_t count_at;
	uint32_t n;
};
/**
 * sonde_agent_list_reply_begin() - start a LIST_REPLY
 * @b: the buffer
 * @lr: caller's storage: where the count goes, and the count
 */
void sonde_agent_list_reply_begin(struct sonde_wbuf *b, struct sonde_agent_list_reply *lr);
/**
 * sonde_agent_list_reply_add() - add one line to a LIST_REPLY
 * @b: the buffer
 * @lr: the reply begun
 * @name: the entry's name
 * @kind: what it is ("Hardware event" ...)
 */
void sonde_agent_list_reply_add(struct sonde_wbuf *b, struct sonde_agent_list_reply *lr,
				const char *name, const char *kind);
/**
 * sonde_agent_list_reply_end() - finish a LIST_REPLY: the count, then the frame's length
 * @b: the buffer
 * @lr: the reply begun
 */
void sonde_agent_list_reply_end(struct sonde_wbuf *b, const struct sonde_agent_list_reply *lr);
/**
 * sonde_agent_get_list_reply() - decode LIST_REPLY, a line at a time
 * @m: the received message; strings are borrowed from it
 * @line: called with each entry's name and kind (borrowed)
 * @ctx: passed to @line
 * Return: 0, or -EBADMSG when a field is missing, too long or left over.
 */
int sonde_agent_get_list_reply(struct sonde_wmsg *m,
			       void (*line)(void *ctx, const char *name, const char *kind),
			       void *ctx);

/* DATA: whole records, each perf_event_header.size >= 8 and inside the payload. */
int sonde_agent_check_records(const void *p, size_t len, bool big_endian);

/* Checks of names the agent serves files for: an absolute path with no
 * "." or ".." component, no "//" and no control character; a module name
 * of [A-Za-z0-9_-]. */
bool sonde_agent_path_ok(const char *path);
/**
 * sonde_agent_module_ok() - whether a module name may be served
 * @name: the name asked for
 * Return: true for 1..64 characters of [A-Za-z0-9_-].
 */
bool sonde_agent_module_ok(const char *name);

/* Constant-time comparison of two tokens (time depends only on the lengths). */
bool sonde_agent_token_eq(const void *a, size_t alen, const void *b, size_t blen);

/* Blocking I/O of whole messages on a socket or pipe. */
struct sonde_agent_conn {
	int rfd, wfd;
	uint8_t *buf; /* owned: the last message received */
	size_t cap;
	bool eof;
	/* Set by a signal handler: a read interrupted by a signal then fails
	 * with -EINTR instead of waiting on.  Or NULL. */
	volatile sig_atomic_t *stop;
	/* 0, or: sending fails with -ETIMEDOUT when the peer took nothing
	 * (acknowledged nothing, on TCP) for this many seconds. */
	unsigned send_timeout_s;
	uint64_t stall_since_ms; /* when the peer last took data, while stalled */
	int64_t stall_acked;	 /* its acknowledged bytes then (-1: not TCP) */
};

/* Return: 0 or -errno (EPIPE when the peer is gone). */
int sonde_agent_send(struct sonde_agent_conn *c, const struct sonde_wbuf *b);
/* Return: 1 with *m set (borrowed until the next receive), 0 at a clean
 * end of stream (before a frame), or -errno / -EBADMSG / -EMSGSIZE. */
int sonde_agent_recv(struct sonde_agent_conn *c, uint32_t max, struct sonde_wmsg *m);
/**
 * sonde_agent_conn_fini() - free the connection's receive buffer (the fds are the caller's)
 * @c: the connection
 */
void sonde_agent_conn_fini(struct sonde_agent_conn *c);

/* A STOP frame's bytes, for writing from a signal handler. */
extern const uint8_t sonde_agent_stop_frame[SONDE_AGENT_FRAME_SIZE];

/* "HELLO", "AUTH", ... from the table; "?" for a number it lacks. */
const char *sonde_agent_msg_name(uint16_t type);
/* The payload's fields as the table gives them (see above); NULL when unknown. */
const char *sonde_agent_msg_fields(uint16_t type);

#endif
