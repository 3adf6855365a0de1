// SPDX-License-Identifier: MIT
/*
 * The host side of the agent protocol: connecting (TCP, or ssh running
 * `sonde-agent --stdio`), the hello and authentication, and a remote
 * capture turned into a local perf.data writer's calls: EVENTS become
 * attrs, FEATURE blobs are set as they are (the agent serialized them with
 * the same writer code), DATA records are checked (whole records only) and
 * appended.  A connection that drops mid-capture leaves the writer with
 * every whole record received; the caller closes it into a valid file.
 */
#include <sonde/agent.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sonde/perf_data.h>

static int tcp_connect(struct sonde_agent_client *c, const char *target)
{
	char host[256];
	const char *colon = strrchr(target, ':'), *h = host;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int fd = -1, r;

	if (!colon || colon == target || !colon[1] || (size_t)(colon - target) >= sizeof(host))
		return sonde_errmsg_set(
		    &c->err, -EINVAL,
		    "--target takes HOST:PORT or ssh://[USER@]HOST[:PORT], not '%s'", target);
	memcpy(host, target, (size_t)(colon - target));
	host[colon - target] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		host[strlen(host) - 1] = '\0';
		h = host + 1;
	}
	r = getaddrinfo(h, colon + 1, &hints, &res);
	if (r)
		return sonde_errmsg_set(&c->err, -EHOSTUNREACH, "%s: %s", target, gai_strerror(r));
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		r = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return sonde_errmsg_set(&c->err, r ? r : -ECONNREFUSED,
					"can't connect to the agent at %s: %s", target,
					sonde_strerror(r ? r : -ECONNREFUSED));
	c->conn.rfd = c->conn.wfd = fd;
	return 0;
}

/* unix:PATH: an agent on this machine that checks its peers' credentials. */
static int unix_connect(struct sonde_agent_client *c, const char *target)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	const char *path = target + 5;
	int fd;

	if (!path[0] || strlen(path) >= sizeof(sun.sun_path))
		return sonde_errmsg_set(&c->err, -EINVAL, "bad unix socket target '%s'", target);
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return sonde_errmsg_set(&c->err, -e, "can't connect to the agent at %s: %s", target,
					strerror(e));
	}
	c->conn.rfd = c->conn.wfd = fd;
	return 0;
}

/* ssh://[user@]host[:port]: SSH [-p PORT] [user@]host REMOTE --stdio */
static int ssh_connect(struct sonde_agent_client *c, const char *target,
		       const struct sonde_agent_client_opts *o)
{
	const char *ssh = o ? o->ssh : NULL, *remote = o ? o->remote : NULL;
	char dest[256], port[16] = "", cmd[512];
	const char *rest = target + 6, *colon;
	int to[2], from[2];
	pid_t pid;

	ssh = ssh && *ssh ? ssh : "ssh";
	remote = remote && *remote ? remote : "sonde-agent";
	colon = strrchr(rest, ':');
	if (!*rest ||
	    (colon && (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))))
		return sonde_errmsg_set(&c->err, -EINVAL, "bad ssh target '%s'", target);
	snprintf(dest, sizeof(dest), "%.*s", colon ? (int)(colon - rest) : (int)strlen(rest), rest);
	if (colon)
		snprintf(port, sizeof(port), "%s", colon + 1);
	/* An ssh destination starting with '-' would be an option. */
	if (dest[0] == '-' || !dest[0])
		return sonde_errmsg_set(&c->err, -EINVAL, "bad ssh target '%s'", target);
	snprintf(cmd, sizeof(cmd), "%s --stdio", remote);
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return sonde_errmsg_set(&c->err, -errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return sonde_errmsg_set(&c->err, -errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		if (port[0])
			execlp(ssh, ssh, "-p", port, "--", dest, cmd, (char *)NULL);
		else
			execlp(ssh, ssh, "--", dest, cmd, (char *)NULL);
		fprintf(stderr, "sonde: can't run %s: %s\n", ssh, strerror(errno));
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->ssh_pid = pid;
	c->conn.rfd = from[0];
	c->conn.wfd = to[1];
	return 0;
}

/* The agent's ERROR text: kept whole in c->error, as c->err's 512 bytes
 * would cut an explanation mid-sentence. */
static int agent_error(struct sonde_agent_client *c, int code, const char *prefix, const char *text)
{
	snprintf(c->error, sizeof(c->error), "%s%s", prefix, text);
	return sonde_errmsg_set(&c->err, code, "%s", c->error);
}

const char *sonde_agent_client_strerror(const struct sonde_agent_client *c)
{
	size_t n = strlen(c->err.text);

	/* c->error only while c->err is (the start of) it: the last error. */
	return n && !strncmp(c->error, c->err.text, n) ? c->error : c->err.text;
}

static int expect(struct sonde_agent_client *c, uint16_t type, struct sonde_wmsg *m,
		  const char *what)
{
	int r = sonde_agent_recv(&c->conn, SONDE_AGENT_MAX_REPLY, m);

	if (r == 0)
		return sonde_errmsg_set(&c->err, -EPIPE, "the agent closed the connection (%s)",
					what);
	if (r < 0)
		return sonde_errmsg_set(&c->err, r, "reading from the agent (%s): %s", what,
					sonde_strerror(r));
	if (m->type == SONDE_AM_ERROR && type != SONDE_AM_ERROR) {
		int32_t code;
		const char *text;

		if (sonde_agent_get_error(m, &code, &text) < 0)
			return sonde_errmsg_set(&c->err, -EBADMSG,
						"malformed ERROR from the agent");
		agent_error(c, code < 0 ? code : -EIO, "", text);
		return code < 0 ? code : -EIO;
	}
	if (m->type != type)
		return sonde_errmsg_set(&c->err, -EPROTO, "expected %s from the agent, got %s",
					sonde_agent_msg_name(type), sonde_agent_msg_name(m->type));
	return 0;
}

int sonde_agent_client_open(struct sonde_agent_client *c, const char *target, const void *token,
			    size_t token_len, const struct sonde_agent_client_opts *o)
{
	struct sonde_wbuf b = {0};
	struct sonde_wmsg m;
	int r;

	memset(c, 0, sizeof(*c));
	c->ssh_pid = -1;
	c->conn.rfd = c->conn.wfd = -1;
	r = !strncmp(target, "ssh://", 6)  ? ssh_connect(c, target, o)
	    : !strncmp(target, "unix:", 5) ? unix_connect(c, target)
					   : tcp_connect(c, target);
	if (r < 0)
		return r;
	if ((r = expect(c, SONDE_AM_HELLO, &m, "hello")) < 0)
		return r;
	/* Keep the hello: its strings point into the message. */
	if (!(c->hello_buf = malloc(m.len ? m.len : 1)))
		return -ENOMEM;
	memcpy(c->hello_buf, m.p, m.len);
	sonde_wmsg_init(&m, SONDE_AM_HELLO, c->hello_buf, m.len);
	if (sonde_agent_get_hello(&m, &c->hello) < 0)
		return sonde_errmsg_set(&c->err, -EBADMSG, "malformed hello from the agent");
	if (c->hello.proto != SONDE_AGENT_PROTO_VERSION)
		return sonde_errmsg_set(&c->err, -EPROTO, "the agent speaks protocol %u, not %u",
					c->hello.proto, SONDE_AGENT_PROTO_VERSION);
	if (c->hello.flags & SONDE_AGENT_F_BIG_ENDIAN)
		return sonde_errmsg_set(&c->err, -ENOTSUP,
					"big-endian targets are not supported yet");
	if ((c->hello.flags & SONDE_AGENT_F_TOKEN) && !token_len)
		return sonde_errmsg_set(&c->err, -EACCES,
					"the agent at %s requires a token: give --token-file, "
					"--token or SONDE_AGENT_TOKEN (an agent on this machine "
					"keeps it in /run/sonde-agent/token, readable by root)",
					target);
	sonde_agent_put_auth(&b, SONDE_AGENT_PROTO_VERSION, token, token_len);
	r = sonde_agent_send(&c->conn, &b);
	sonde_wbuf_fini(&b);
	if (r < 0)
		return sonde_errmsg_set(&c->err, r, "sending to the agent: %s", sonde_strerror(r));
	return expect(c, SONDE_AM_OK, &m, "authentication");
}

void sonde_agent_client_bye(struct sonde_agent_client *c)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_empty(&b, SONDE_AM_BYE);
	sonde_agent_send(&c->conn, &b);
	sonde_wbuf_fini(&b);
}

void sonde_agent_client_close(struct sonde_agent_client *c)
{
	if (c->conn.rfd >= 0)
		close(c->conn.rfd);
	if (c->conn.wfd >= 0 && c->conn.wfd != c->conn.rfd)
		close(c->conn.wfd);
	c->conn.rfd = c->conn.wfd = -1;
	if (c->ssh_pid > 0)
		waitpid(c->ssh_pid, NULL, 0);
	c->ssh_pid = -1;
	sonde_agent_conn_fini(&c->conn);
	sonde_agent_events_fini(&c->events);
	sonde_agent_end_fini(&c->end);
	free(c->hello_buf);
	c->hello_buf = NULL;
}

static int declare(struct sonde_agent_client *c, struct sonde_pd_writer *w)
{
	for (uint32_t i = 0; i < c->events.n; i++) {
		const struct sonde_agent_event *ev = &c->events.ev[i];
		struct perf_event_attr attr;
		int r;

		memset(&attr, 0, sizeof(attr));
		memcpy(&attr, ev->attr, ev->attr_len < sizeof(attr) ? ev->attr_len : sizeof(attr));
		attr.size = sizeof(attr);
		r = sonde_pd_writer_add_attr(w, &attr, ev->name, ev->ids, ev->nids);
		if (r < 0)
			return sonde_errmsg_set(&c->err, r, "%s", sonde_pd_writer_errmsg(w));
	}
	return 0;
}

int sonde_agent_client_record(struct sonde_agent_client *c,
			      const struct sonde_agent_record_req *req, struct sonde_pd_writer *w)
{
	struct sonde_wbuf b = {0};
	struct sonde_wmsg m;
	int r;

	c->cut = false;
	c->received = 0;
	sonde_agent_put_record(&b, req);
	r = sonde_agent_send(&c->conn, &b);
	sonde_wbuf_fini(&b);
	if (r < 0)
		return sonde_errmsg_set(&c->err, r, "sending to the agent: %s", sonde_strerror(r));
	if ((r = expect(c, SONDE_AM_EVENTS, &m, "the capture's events")) < 0)
		return r;
	if (sonde_agent_get_events(&m, &c->events) < 0)
		return sonde_errmsg_set(&c->err, -EBADMSG, "malformed EVENTS from the agent");
	if ((r = declare(c, w)) < 0)
		return r;
	for (;;) {
		r = sonde_agent_recv(&c->conn, SONDE_AGENT_MAX_REPLY, &m);
		if (r <= 0) {
			/* The agent or the link died: keep what came. */
			c->cut = true;
			sonde_errmsg_set(&c->err, r ? r : -EPIPE, "%s",
					 r ? sonde_strerror(r) : "the connection closed");
			return 0;
		}
		switch (m.type) {
		case SONDE_AM_DATA:
			if (sonde_agent_check_records(m.p, m.len, false) < 0)
				return sonde_errmsg_set(
				    &c->err, -EBADMSG,
				    "malformed records from the agent after %llu "
				    "bytes",
				    (unsigned long long)c->received);
			r = sonde_pd_writer_write(w, m.p, m.len);
			if (r < 0)
				return sonde_errmsg_set(&c->err, r, "%s",
							sonde_pd_writer_errmsg(w));
			c->received += m.len;
			break;
		case SONDE_AM_FEATURE: {
			uint32_t bit, len;
			const void *blob;

			if (sonde_agent_get_feature(&m, &bit, &blob, &len) < 0 ||
			    bit >= SONDE_PD_FEAT_BITS)
				return sonde_errmsg_set(&c->err, -EBADMSG,
							"malformed FEATURE from the agent");
			r = sonde_pd_writer_set_feature(w, bit, blob, len);
			if (r < 0)
				return sonde_errmsg_set(&c->err, r, "%s",
							sonde_pd_writer_errmsg(w));
			break;
		}
		case SONDE_AM_END:
			if (sonde_agent_get_end(&m, &c->end) < 0)
				return sonde_errmsg_set(&c->err, -EBADMSG,
							"malformed END from the agent");
			return 0;
		case SONDE_AM_ERROR: {
			int32_t code;
			const char *text;

			if (sonde_agent_get_error(&m, &code, &text) < 0)
				text = "(malformed)";
			return agent_error(c, -EIO, "the agent: ", text);
		}
		default:
			return sonde_errmsg_set(&c->err, -EPROTO, "unexpected %s during a capture",
						sonde_agent_msg_name(m.type));
		}
	}
}

int sonde_agent_client_build_id(struct sonde_agent_client *c, int kind, const char *name,
				uint32_t pid, uint8_t id[20])
{
	struct sonde_wbuf b = {0};
	struct sonde_wmsg m;
	const void *blob;
	uint32_t len;
	int r;

	sonde_agent_put_buildid(&b, (uint32_t)kind, pid, name);
	r = sonde_agent_send(&c->conn, &b);
	sonde_wbuf_fini(&b);
	if (r < 0)
		return r;
	if ((r = expect(c, SONDE_AM_BUILDID_REPLY, &m, "a build id")) < 0)
		return r == -EIO ? -EACCES : r;
	if (sonde_agent_get_reply_blob(&m, 20, &blob, &len) < 0)
		return -EBADMSG;
	if (!len)
		return -ENOENT;
	memcpy(id, blob, len);
	return (int)len;
}

int sonde_agent_client_file(struct sonde_agent_client *c, uint32_t kind, char **blob, size_t *len)
{
	struct sonde_wbuf b = {0};
	struct sonde_wmsg m;
	const void *p;
	uint32_t n;
	int r;

	sonde_agent_put_file(&b, kind);
	r = sonde_agent_send(&c->conn, &b);
	sonde_wbuf_fini(&b);
	if (r < 0)
		return r;
	if ((r = expect(c, SONDE_AM_FILE_REPLY, &m, "a file")) < 0)
		return r;
	if (sonde_agent_get_reply_blob(&m, SONDE_AGENT_MAX_REPLY, &p, &n) < 0)
		return -EBADMSG;
	if (!(*blob = malloc(n + 1)))
		return -ENOMEM;
	memcpy(*blob, p, n);
	(*blob)[n] = '\0';
	*len = n;
	return 0;
}

int sonde_agent_client_list(struct sonde_agent_client *c, const char *what,
			    void (*line)(void *ctx, const char *name, const char *kind), void *ctx)
{
	struct sonde_wbuf b = {0};
	struct sonde_wmsg m;
	int r;

	sonde_agent_put_list(&b, what);
	r = sonde_agent_send(&c->conn, &b);
	sonde_wbuf_fini(&b);
	if (r < 0)
		return r;
	if ((r = expect(c, SONDE_AM_LIST_REPLY, &m, "the event list")) < 0)
		return r;
	return sonde_agent_get_list_reply(&m, line, ctx) < 0
		   ? sonde_errmsg_set(&c->err, -EBADMSG, "malformed list")
		   : 0;
}
