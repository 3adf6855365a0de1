// SPDX-License-Identifier: MIT
/*
 * The agent's wire protocol: frames, field encoders and decoders, and the
 * checks of names the agent serves.  Everything that reads bytes from the
 * other side goes through struct sonde_wmsg, whose every read checks the
 * bytes left first and sets a sticky error instead of reading further, so a
 * decoder is a straight list of field reads followed by one check.  Counts
 * of repeated fields are capped before any allocation, and each element
 * needs at least one byte of payload, so a lying count can't make the
 * receiver allocate more than the message justifies.  libc only: the
 * static agent links this.
 */
#include <sonde/agent_proto.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* ---- building ---- */

static uint8_t *reserve(struct sonde_wbuf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	b->len += n;
	return b->p + b->len - n;
}

void sonde_wbuf_begin(struct sonde_wbuf *b, uint16_t type)
{
	uint8_t *p;

	b->len = 0;
	b->err = 0;
	if ((p = reserve(b, SONDE_AGENT_FRAME_SIZE))) {
		put32(p, 0);
		put16(p + 4, type);
		put16(p + 6, SONDE_AGENT_PROTO_VERSION);
	}
}

void sonde_wbuf_u32(struct sonde_wbuf *b, uint32_t v)
{
	uint8_t *p = reserve(b, 4);

	if (p)
		put32(p, v);
}

void sonde_wbuf_u64(struct sonde_wbuf *b, uint64_t v)
{
	sonde_wbuf_u32(b, (uint32_t)v);
	sonde_wbuf_u32(b, (uint32_t)(v >> 32));
}

void sonde_wbuf_raw(struct sonde_wbuf *b, const void *src, size_t len)
{
	uint8_t *p = len ? reserve(b, len) : NULL;

	if (p)
		memcpy(p, src, len);
}

void sonde_wbuf_str(struct sonde_wbuf *b, const char *s)
{
	size_t n = strlen(s ? s : "");

	if (n >= SONDE_AGENT_MAX_STRING)
		n = SONDE_AGENT_MAX_STRING - 1; /* cut, as the receiver would refuse it */
	sonde_wbuf_u32(b, (uint32_t)n + 1);
	sonde_wbuf_raw(b, s ? s : "", n);
	sonde_wbuf_raw(b, "", 1);
}

void sonde_wbuf_blob(struct sonde_wbuf *b, const void *p, size_t len)
{
	if (len > UINT32_MAX) {
		b->err = -EMSGSIZE;
		return;
	}
	sonde_wbuf_u32(b, (uint32_t)len);
	sonde_wbuf_raw(b, p, len);
}

int sonde_wbuf_end(struct sonde_wbuf *b)
{
	if (!b->err && b->len - SONDE_AGENT_FRAME_SIZE > SONDE_AGENT_MAX_REPLY)
		b->err = -EMSGSIZE;
	if (!b->err)
		put32(b->p, (uint32_t)(b->len - SONDE_AGENT_FRAME_SIZE));
	return b->err;
}

void sonde_wbuf_fini(struct sonde_wbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- reading ---- */

int sonde_wire_frame(const uint8_t hdr[SONDE_AGENT_FRAME_SIZE], uint32_t max, uint16_t *type,
		     uint32_t *len)
{
	*len = get32(hdr);
	*type = get16(hdr + 4);
	if (get16(hdr + 6) != SONDE_AGENT_PROTO_VERSION || *type == 0 || *type >= SONDE_AM_MAX_)
		return -EBADMSG;
	if (*len > max)
		return -EMSGSIZE;
	return 0;
}

void sonde_wmsg_init(struct sonde_wmsg *m, uint16_t type, const void *payload, size_t len)
{
	*m = (struct sonde_wmsg){
	    .type = type, .version = SONDE_AGENT_PROTO_VERSION, .p = payload, .len = len};
}

static const uint8_t *take(struct sonde_wmsg *m, size_t n)
{
	if (m->err || n > m->len - m->off) {
		m->err = -EBADMSG;
		return NULL;
	}
	m->off += n;
	return m->p + m->off - n;
}

uint32_t sonde_wmsg_u32(struct sonde_wmsg *m)
{
	const uint8_t *p = take(m, 4);

	return p ? get32(p) : 0;
}

uint64_t sonde_wmsg_u64(struct sonde_wmsg *m)
{
	uint64_t lo = sonde_wmsg_u32(m);

	return lo | (uint64_t)sonde_wmsg_u32(m) << 32;
}

const char *sonde_wmsg_str(struct sonde_wmsg *m, size_t max)
{
	uint32_t n = sonde_wmsg_u32(m);
	const uint8_t *p;

	if (!m->err && (n == 0 || n > max))
		m->err = -EBADMSG;
	p = take(m, n);
	if (!p)
		return "";
	/* Exactly one NUL, at the end. */
	if (memchr(p, '\0', n) != p + n - 1) {
		m->err = -EBADMSG;
		return "";
	}
	return (const char *)p;
}

const void *sonde_wmsg_blob(struct sonde_wmsg *m, size_t max, uint32_t *len)
{
	uint32_t n = sonde_wmsg_u32(m);
	const uint8_t *p;

	*len = 0;
	if (!m->err && n > max)
		m->err = -EBADMSG;
	p = take(m, n);
	if (p)
		*len = n;
	return p;
}

int sonde_wmsg_done(struct sonde_wmsg *m)
{
	if (!m->err && m->off != m->len)
		m->err = -EBADMSG;
	return m->err;
}

/* A count of elements that each take at least @min_each payload bytes. */
static uint32_t count(struct sonde_wmsg *m, uint32_t cap, size_t min_each)
{
	uint32_t n = sonde_wmsg_u32(m);

	if (!m->err && (n > cap || (size_t)n * min_each > m->len - m->off))
		m->err = -EBADMSG;
	return m->err ? 0 : n;
}

/* ---- messages ---- */

void sonde_agent_put_hello(struct sonde_wbuf *b, const struct sonde_agent_hello *h)
{
	sonde_wbuf_begin(b, SONDE_AM_HELLO);
	sonde_wbuf_u32(b, h->proto);
	sonde_wbuf_u32(b, h->flags);
	sonde_wbuf_str(b, h->version);
	sonde_wbuf_str(b, h->machine);
	sonde_wbuf_str(b, h->release);
	sonde_wbuf_u32(b, h->ncpus_online);
	sonde_wbuf_u32(b, h->ncpus_conf);
	sonde_wbuf_u32(b, h->kinds);
	sonde_wbuf_u64(b, h->max_bytes);
	sonde_wbuf_u64(b, h->max_rate);
	sonde_wbuf_end(b);
}

int sonde_agent_get_hello(struct sonde_wmsg *m, struct sonde_agent_hello *h)
{
	h->proto = sonde_wmsg_u32(m);
	h->flags = sonde_wmsg_u32(m);
	h->version = sonde_wmsg_str(m, 256);
	h->machine = sonde_wmsg_str(m, 256);
	h->release = sonde_wmsg_str(m, 256);
	h->ncpus_online = sonde_wmsg_u32(m);
	h->ncpus_conf = sonde_wmsg_u32(m);
	h->kinds = sonde_wmsg_u32(m);
	h->max_bytes = sonde_wmsg_u64(m);
	h->max_rate = sonde_wmsg_u64(m);
	if (!m->err && (h->ncpus_online == 0 || h->ncpus_online > 65536))
		m->err = -EBADMSG;
	return sonde_wmsg_done(m);
}

void sonde_agent_put_error(struct sonde_wbuf *b, int32_t code, const char *text)
{
	sonde_wbuf_begin(b, SONDE_AM_ERROR);
	sonde_wbuf_u32(b, (uint32_t)code);
	sonde_wbuf_str(b, text);
	sonde_wbuf_end(b);
}

int sonde_agent_get_error(struct sonde_wmsg *m, int32_t *code, const char **text)
{
	*code = (int32_t)sonde_wmsg_u32(m);
	*text = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
	return sonde_wmsg_done(m);
}

static void put_strs(struct sonde_wbuf *b, uint32_t n, const char *const *s)
{
	sonde_wbuf_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		sonde_wbuf_str(b, s[i]);
}

static void put_ids(struct sonde_wbuf *b, uint32_t n, const uint32_t *v)
{
	sonde_wbuf_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		sonde_wbuf_u32(b, v[i]);
}

void sonde_agent_put_record(struct sonde_wbuf *b, const struct sonde_agent_record_req *r)
{
	sonde_wbuf_begin(b, SONDE_AM_RECORD);
	sonde_wbuf_u32(b, r->nspecs);
	for (uint32_t i = 0; i < r->nspecs; i++) {
		sonde_wbuf_str(b, r->specs[i]);
		sonde_wbuf_str(b, r->filters ? r->filters[i] : "");
	}
	sonde_wbuf_u64(b, r->freq);
	sonde_wbuf_u64(b, r->period);
	sonde_wbuf_u32(b, r->callgraph);
	sonde_wbuf_u32(b, r->dwarf_size);
	sonde_wbuf_u32(b, r->pages);
	sonde_wbuf_u32(b, r->flags);
	sonde_wbuf_str(b, r->cpu_list);
	put_ids(b, r->npids, r->pids);
	put_ids(b, r->ntids, r->tids);
	put_strs(b, r->argc, r->argv);
	put_strs(b, r->cmdc, r->cmdline);
	sonde_wbuf_end(b);
}

/* Strings into a NULL-terminated array taken from @pool. */
static const char **get_strs(struct sonde_wmsg *m, uint32_t *n, const char ***pool)
{
	const char **v;

	*n = count(m, SONDE_AGENT_MAX_ARGS, 5);
	v = *pool;
	for (uint32_t i = 0; i < *n; i++)
		v[i] = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
	v[*n] = NULL;
	*pool += *n + 1;
	return v;
}

static uint32_t *get_ids(struct sonde_wmsg *m, uint32_t *n, uint32_t *dst)
{
	*n = count(m, SONDE_AGENT_MAX_IDS, 4);
	for (uint32_t i = 0; i < *n; i++)
		dst[i] = sonde_wmsg_u32(m);
	return dst;
}

int sonde_agent_get_record(struct sonde_wmsg *m, struct sonde_agent_record_req *r)
{
	/* Worst case of every capped array, allocated once: the caps are small. */
	size_t nstr = 4 * (SONDE_AGENT_MAX_ARGS + 1);
	const char **pool;
	uint32_t *ids;

	memset(r, 0, sizeof(*r));
	r->mem_ = calloc(1, nstr * sizeof(char *) + 2 * SONDE_AGENT_MAX_IDS * sizeof(uint32_t));
	if (!r->mem_)
		return -ENOMEM;
	pool = r->mem_;
	ids = (uint32_t *)(pool + nstr);
	r->nspecs = count(m, SONDE_AGENT_MAX_ARGS, 10);
	r->specs = pool;
	r->filters = pool + SONDE_AGENT_MAX_ARGS + 1;
	for (uint32_t i = 0; i < r->nspecs; i++) {
		r->specs[i] = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
		r->filters[i] = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
	}
	pool += 2 * (SONDE_AGENT_MAX_ARGS + 1);
	r->freq = sonde_wmsg_u64(m);
	r->period = sonde_wmsg_u64(m);
	r->callgraph = sonde_wmsg_u32(m);
	r->dwarf_size = sonde_wmsg_u32(m);
	r->pages = sonde_wmsg_u32(m);
	r->flags = sonde_wmsg_u32(m);
	r->cpu_list = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
	r->pids = get_ids(m, &r->npids, ids);
	r->tids = get_ids(m, &r->ntids, ids + SONDE_AGENT_MAX_IDS);
	r->argv = get_strs(m, &r->argc, &pool);
	pool = (const char **)r->mem_ + 3 * (SONDE_AGENT_MAX_ARGS + 1);
	r->cmdline = get_strs(m, &r->cmdc, &pool);
	if (sonde_wmsg_done(m) < 0) {
		sonde_agent_record_req_fini(r);
		return -EBADMSG;
	}
	return 0;
}

void sonde_agent_record_req_fini(struct sonde_agent_record_req *r)
{
	free(r->mem_);
	memset(r, 0, sizeof(*r));
}

void sonde_agent_put_events(struct sonde_wbuf *b, const struct sonde_agent_events *e)
{
	sonde_wbuf_begin(b, SONDE_AM_EVENTS);
	sonde_wbuf_u64(b, e->max_freq);
	sonde_wbuf_u64(b, e->freq_asked);
	sonde_wbuf_u32(b, e->flags);
	sonde_wbuf_u32(b, e->n);
	for (uint32_t i = 0; i < e->n; i++) {
		sonde_wbuf_str(b, e->ev[i].name);
		sonde_wbuf_blob(b, e->ev[i].attr, e->ev[i].attr_len);
		sonde_wbuf_u32(b, e->ev[i].nids);
		for (uint32_t j = 0; j < e->ev[i].nids; j++)
			sonde_wbuf_u64(b, e->ev[i].ids[j]);
	}
	sonde_wbuf_end(b);
}

int sonde_agent_get_events(struct sonde_wmsg *m, struct sonde_agent_events *e)
{
	memset(e, 0, sizeof(*e));
	e->max_freq = sonde_wmsg_u64(m);
	e->freq_asked = sonde_wmsg_u64(m);
	e->flags = sonde_wmsg_u32(m);
	/* name (>= 5 bytes), attr (>= 4), nids (4) */
	e->n = count(m, 1024, 13);
	if (e->n && !(e->ev = calloc(e->n, sizeof(*e->ev))))
		return -ENOMEM;
	for (uint32_t i = 0; i < e->n && !m->err; i++) {
		struct sonde_agent_event *ev = &e->ev[i];

		ev->name = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
		ev->attr = sonde_wmsg_blob(m, 4096, &ev->attr_len);
		ev->nids = count(m, 1u << 20, 8);
		if (ev->nids && !(ev->ids = malloc(ev->nids * sizeof(*ev->ids)))) {
			sonde_agent_events_fini(e);
			return -ENOMEM;
		}
		for (uint32_t j = 0; j < ev->nids; j++)
			ev->ids[j] = sonde_wmsg_u64(m);
		if (!m->err && ev->attr_len < 64) /* PERF_ATTR_SIZE_VER0 */
			m->err = -EBADMSG;
	}
	if (sonde_wmsg_done(m) < 0) {
		sonde_agent_events_fini(e);
		return -EBADMSG;
	}
	return 0;
}

void sonde_agent_events_fini(struct sonde_agent_events *e)
{
	for (uint32_t i = 0; e->ev && i < e->n; i++)
		free(e->ev[i].ids);
	free(e->ev);
	memset(e, 0, sizeof(*e));
}

void sonde_agent_put_end(struct sonde_wbuf *b, const struct sonde_agent_end *e)
{
	sonde_wbuf_begin(b, SONDE_AM_END);
	sonde_wbuf_u32(b, e->reason);
	sonde_wbuf_u32(b, (uint32_t)e->status);
	sonde_wbuf_u64(b, e->bytes);
	sonde_wbuf_u32(b, e->nrings);
	for (uint32_t i = 0; i < e->nrings; i++) {
		sonde_wbuf_u32(b, (uint32_t)e->rings[i].cpu);
		sonde_wbuf_u64(b, e->rings[i].samples);
		sonde_wbuf_u64(b, e->rings[i].lost);
		sonde_wbuf_u64(b, e->rings[i].throttles);
	}
	sonde_wbuf_str(b, e->message);
	sonde_wbuf_end(b);
}

int sonde_agent_get_end(struct sonde_wmsg *m, struct sonde_agent_end *e)
{
	memset(e, 0, sizeof(*e));
	e->reason = sonde_wmsg_u32(m);
	e->status = (int32_t)sonde_wmsg_u32(m);
	e->bytes = sonde_wmsg_u64(m);
	e->nrings = count(m, 65536, 28);
	if (e->nrings && !(e->rings = calloc(e->nrings, sizeof(*e->rings))))
		return -ENOMEM;
	for (uint32_t i = 0; i < e->nrings; i++) {
		e->rings[i].cpu = (int32_t)sonde_wmsg_u32(m);
		e->rings[i].samples = sonde_wmsg_u64(m);
		e->rings[i].lost = sonde_wmsg_u64(m);
		e->rings[i].throttles = sonde_wmsg_u64(m);
	}
	e->message = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
	if (!m->err && e->reason > SONDE_AGENT_END_ERROR)
		m->err = -EBADMSG;
	if (sonde_wmsg_done(m) < 0) {
		sonde_agent_end_fini(e);
		return -EBADMSG;
	}
	return 0;
}

void sonde_agent_end_fini(struct sonde_agent_end *e)
{
	free(e->rings);
	e->rings = NULL;
	e->nrings = 0;
}

int sonde_agent_check_records(const void *buf, size_t len, bool big_endian)
{
	const uint8_t *p = buf;
	size_t off = 0;

	while (off < len) {
		uint16_t size;

		if (len - off < 8)
			return -EBADMSG;
		/* struct perf_event_header: u32 type, u16 misc, u16 size */
		size = big_endian ? (uint16_t)(p[off + 6] << 8 | p[off + 7]) : get16(p + off + 6);
		if (size < 8 || size > len - off)
			return -EBADMSG;
		off += size;
	}
	return 0;
}

/* ---- names ---- */

bool sonde_agent_path_ok(const char *path)
{
	const char *c = path;

	if (path[0] != '/' || strlen(path) >= SONDE_AGENT_MAX_STRING)
		return false;
	while (*c) {
		const char *end;
		size_t n;

		c++; /* past '/' */
		end = strchrnul(c, '/');
		n = (size_t)(end - c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		for (const char *k = c; k < end; k++)
			if ((unsigned char)*k < 0x20 || *k == 0x7f)
				return false;
		c = end;
	}
	return true;
}

bool sonde_agent_module_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return false;
	return true;
}

bool sonde_agent_token_eq(const void *a, size_t alen, const void *b, size_t blen)
{
	const volatile uint8_t *x = a, *y = b;
	size_t n = alen > blen ? alen : blen;
	uint8_t diff = alen != blen;

	/* Every byte of the longer one is looked at, whatever matched. */
	for (size_t i = 0; i < n; i++)
		diff |= (uint8_t)((i < alen ? x[i] : 0) ^ (i < blen ? y[i] : 0));
	return diff == 0;
}

/* ---- I/O ---- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Bytes of @fd's stream the TCP peer has acknowledged, or -1 (not TCP).
 * Read from the kernel's struct tcp_info by offset: libc's copy of the
 * struct predates the field, and the kernel's layout only grows. */
static int64_t bytes_acked(int fd)
{
	uint8_t info[232];
	socklen_t len = sizeof(info);
	uint64_t v;

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &len) < 0 || len < 128)
		return -1;
	memcpy(&v, info + 120, sizeof(v)); /* tcpi_bytes_acked (Linux 4.1) */
	return (int64_t)(v & INT64_MAX);
}

/*
 * With a send timeout, the peer must take data: a sender that waits on a
 * full socket fails with -ETIMEDOUT once nothing was taken for that long.
 * On TCP "taken" means acknowledged (tcpi_bytes_acked grew), not "the
 * socket accepted more": the kernel keeps growing the send buffer of a
 * peer that reads nothing, which would otherwise let it stall the sender
 * by steps for minutes.  A slow but reading peer keeps acknowledging, so
 * it has all the time it needs.  Elsewhere (Unix sockets) accepted bytes
 * are the progress.
 */
static int write_all(struct sonde_agent_conn *c, const uint8_t *p, size_t len)
{
	int fd = c->wfd;
	int flags = MSG_NOSIGNAL | (c->send_timeout_s ? MSG_DONTWAIT : 0);

	while (len) {
		ssize_t r = send(fd, p, len, flags);

		if (r < 0 && errno == ENOTSOCK)
			r = write(fd, p, len);
		if (r < 0 && errno == EINTR && !(c->stop && *c->stop))
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && c->send_timeout_s) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			int64_t acked = bytes_acked(fd);
			uint64_t t = now_ms();

			if (!c->stall_since_ms || acked != c->stall_acked) {
				c->stall_since_ms = t;
				c->stall_acked = acked;
			} else if (t - c->stall_since_ms >= c->send_timeout_s * 1000ull) {
				return -ETIMEDOUT;
			}
			/* Wake up each second to look at the acknowledgements. */
			if (poll(&pfd, 1, 1000) < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		if (r <= 0)
			return r < 0 ? -errno : -EPIPE;
		if (c->stall_acked < 0)
			c->stall_since_ms = 0; /* not TCP: accepted bytes are progress */
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

int sonde_agent_send(struct sonde_agent_conn *c, const struct sonde_wbuf *b)
{
	if (b->err)
		return b->err;
	return write_all(c, b->p, b->len);
}

/* Return: 1 read all, 0 EOF before any byte, -EPIPE EOF inside, -errno. */
static int read_all(struct sonde_agent_conn *c, uint8_t *p, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(c->rfd, p + got, len - got);

		if (r < 0 && errno == EINTR && !(c->stop && *c->stop))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) {
			c->eof = true;
			return got ? -EPIPE : 0;
		}
		got += (size_t)r;
	}
	return 1;
}

int sonde_agent_recv(struct sonde_agent_conn *c, uint32_t max, struct sonde_wmsg *m)
{
	uint8_t hdr[SONDE_AGENT_FRAME_SIZE];
	uint16_t type;
	uint32_t len;
	int r = read_all(c, hdr, sizeof(hdr));

	if (r <= 0)
		return r;
	r = sonde_wire_frame(hdr, max, &type, &len);
	if (r < 0)
		return r;
	if (len > c->cap) {
		uint8_t *p = realloc(c->buf, len);

		if (!p)
			return -ENOMEM;
		c->buf = p;
		c->cap = len;
	}
	if (len && (r = read_all(c, c->buf, len)) <= 0)
		return r ? r : -EPIPE;
	sonde_wmsg_init(m, type, c->buf, len);
	return 1;
}

void sonde_agent_conn_fini(struct sonde_agent_conn *c)
{
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
}

static const struct {
	const char *name, *fields;
} msgs[] = {
#define SONDE_AGENT_MSG_ROW(name, num, sender, fields) [num] = {#name, fields},
    SONDE_AGENT_MESSAGES(SONDE_AGENT_MSG_ROW)
#undef SONDE_AGENT_MSG_ROW
};

_Static_assert(sizeof(msgs) / sizeof(msgs[0]) == SONDE_AM_MAX_,
	       "message numbers run from 1 without gaps");

const char *sonde_agent_msg_name(uint16_t type)
{
	return type && type < SONDE_AM_MAX_ ? msgs[type].name : "?";
}

const char *sonde_agent_msg_fields(uint16_t type)
{
	return type && type < SONDE_AM_MAX_ ? msgs[type].fields : NULL;
}

const uint8_t sonde_agent_stop_frame[SONDE_AGENT_FRAME_SIZE] = {
    0, 0, 0, 0, SONDE_AM_STOP, 0, SONDE_AGENT_PROTO_VERSION, 0};

void sonde_agent_put_empty(struct sonde_wbuf *b, uint16_t type)
{
	sonde_wbuf_begin(b, type);
	sonde_wbuf_end(b);
}

void sonde_agent_put_auth(struct sonde_wbuf *b, uint32_t proto, const void *token, size_t len)
{
	sonde_wbuf_begin(b, SONDE_AM_AUTH);
	sonde_wbuf_u32(b, proto);
	sonde_wbuf_blob(b, token, len);
	sonde_wbuf_end(b);
}

int sonde_agent_get_auth(struct sonde_wmsg *m, uint32_t *proto, const void **token, uint32_t *len)
{
	*proto = sonde_wmsg_u32(m);
	*token = sonde_wmsg_blob(m, SONDE_AGENT_MAX_TOKEN, len);
	return sonde_wmsg_done(m);
}

void sonde_agent_put_feature(struct sonde_wbuf *b, uint32_t bit, const void *data, size_t len)
{
	sonde_wbuf_begin(b, SONDE_AM_FEATURE);
	sonde_wbuf_u32(b, bit);
	sonde_wbuf_blob(b, data, len);
	sonde_wbuf_end(b);
}

int sonde_agent_get_feature(struct sonde_wmsg *m, uint32_t *bit, const void **data, uint32_t *len)
{
	*bit = sonde_wmsg_u32(m);
	*data = sonde_wmsg_blob(m, SONDE_AGENT_MAX_REPLY, len);
	return sonde_wmsg_done(m);
}

void sonde_agent_put_buildid(struct sonde_wbuf *b, uint32_t kind, uint32_t pid, const char *name)
{
	sonde_wbuf_begin(b, SONDE_AM_BUILDID);
	sonde_wbuf_u32(b, kind);
	sonde_wbuf_u32(b, pid);
	sonde_wbuf_str(b, name ? name : "");
	sonde_wbuf_end(b);
}

int sonde_agent_get_buildid(struct sonde_wmsg *m, uint32_t *kind, uint32_t *pid, const char **name)
{
	*kind = sonde_wmsg_u32(m);
	*pid = sonde_wmsg_u32(m);
	*name = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
	return sonde_wmsg_done(m);
}

void sonde_agent_put_reply_blob(struct sonde_wbuf *b, uint16_t type, const void *p, size_t len)
{
	sonde_wbuf_begin(b, type);
	sonde_wbuf_blob(b, p, len);
	sonde_wbuf_end(b);
}

int sonde_agent_get_reply_blob(struct sonde_wmsg *m, uint32_t max, const void **p, uint32_t *len)
{
	*p = sonde_wmsg_blob(m, max, len);
	return sonde_wmsg_done(m);
}

void sonde_agent_put_file(struct sonde_wbuf *b, uint32_t kind)
{
	sonde_wbuf_begin(b, SONDE_AM_FILE);
	sonde_wbuf_u32(b, kind);
	sonde_wbuf_end(b);
}

int sonde_agent_get_file(struct sonde_wmsg *m, uint32_t *kind)
{
	*kind = sonde_wmsg_u32(m);
	return sonde_wmsg_done(m);
}

void sonde_agent_put_list(struct sonde_wbuf *b, const char *what)
{
	sonde_wbuf_begin(b, SONDE_AM_LIST);
	sonde_wbuf_str(b, what ? what : "");
	sonde_wbuf_end(b);
}

int sonde_agent_get_list(struct sonde_wmsg *m, const char **what)
{
	*what = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
	return sonde_wmsg_done(m);
}

void sonde_agent_list_reply_begin(struct sonde_wbuf *b, struct sonde_agent_list_reply *lr)
{
	sonde_wbuf_begin(b, SONDE_AM_LIST_REPLY);
	lr->count_at = b->len;
	lr->n = 0;
	sonde_wbuf_u32(b, 0);
}

void sonde_agent_list_reply_add(struct sonde_wbuf *b, struct sonde_agent_list_reply *lr,
				const char *name, const char *kind)
{
	sonde_wbuf_str(b, name);
	sonde_wbuf_str(b, kind);
	lr->n++;
}

void sonde_agent_list_reply_end(struct sonde_wbuf *b, const struct sonde_agent_list_reply *lr)
{
	if (!b->err)
		for (int i = 0; i < 4; i++)
			b->p[lr->count_at + (size_t)i] = (uint8_t)(lr->n >> (8 * i));
	sonde_wbuf_end(b);
}

int sonde_agent_get_list_reply(struct sonde_wmsg *m,
			       void (*line)(void *ctx, const char *name, const char *kind),
			       void *ctx)
{
	uint32_t n = sonde_wmsg_u32(m);

	for (uint32_t i = 0; i < n && !m->err; i++) {
		const char *name = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);
		const char *kind = sonde_wmsg_str(m, SONDE_AGENT_MAX_STRING);

		if (!m->err)
			line(ctx, name, kind);
	}
	return sonde_wmsg_done(m);
}
