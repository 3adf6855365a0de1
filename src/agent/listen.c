// SPDX-License-Identifier: MIT
/*
 * sonde-agent's accept loop: one process per connection, within limits.
 *
 * A session is a blocking conversation (a capture is its own ppoll loop
 * over the rings and the connection), so the agent gives each connection
 * its own process instead of multiplexing sessions in one poll() loop:
 * a slow or hostile peer then stalls only its own process, each process
 * gets plain per-socket limits, and a crash ends one session.  Forking a
 * small static program costs ~100 KB of page tables and private pages per
 * connection, and the number of connections is bounded:
 *
 *   - at most max_clients processes at once; when they are all taken, the
 *     oldest one still in its handshake is killed to make room (it holds no
 *     capture: a peer that hasn't authenticated owns nothing), so idle
 *     connections can't lock a legitimate host out; when every one has
 *     authenticated, the newcomer is told "busy" at once and closed;
 *   - a handshake deadline (SIGALRM, an absolute bound that a byte-a-second
 *     peer can't stretch), a send deadline per frame (a host that stops
 *     reading ends its session, and its capture; see sonde_agent_conn) and
 *     an idle timeout between requests;
 *   - one capture at a time, across processes: a word in a shared mapping
 *     holds the capturing process's pid (set with compare-and-swap in the
 *     session, cleared by this loop if that process dies with it held).
 *
 * Unix sockets (--listen unix:PATH) authenticate by the peer's credentials
 * (SO_PEERCRED): root, the agent's own user, or a member of --allow-group;
 * others are refused before the hello.  The socket file is made 0600
 * (0660 with the group), so the file system refuses them first.
 */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

/* What the sessions and this loop share (MAP_SHARED). */
struct shared {
	int capture_pid;	       /* the session capturing, or 0 */
	int authed[AGENT_MAX_CLIENTS]; /* slot i's session got past AUTH */
};

struct slot {
	pid_t pid; /* 0: free */
	struct timespec since;
};

/* The session's own slot, for the authentication hook (one per process). */
static struct shared *my_shared;
static unsigned my_slot;

static int parse_tcp(const char *arg, struct sockaddr_storage *ss, socklen_t *len, bool *loopback)
{
	char host[128];
	const char *colon = strrchr(arg, ':');
	unsigned long port;
	char *end;

	if (!colon || (size_t)(colon - arg) >= sizeof(host))
		return -1;
	port = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port > 65535)
		return -1;
	memcpy(host, arg, (size_t)(colon - arg));
	host[colon - arg] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		size_t n = strlen(host);

		if (n < 2 || host[n - 1] != ']')
			return -1;
		host[n - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return -1;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
		*len = sizeof(*s6);
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		return -1;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	*loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	*len = sizeof(*s4);
	return 0;
}

/* A socket file left by an agent that died is removed; a live one is not. */
static int clear_stale(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r = fd >= 0 ? connect(fd, (struct sockaddr *)&sun, sizeof(sun)) : -1;
	if (fd >= 0)
		close(fd);
	if (r == 0) {
		snprintf(err, errlen, "an agent already listens on %s", path);
		return -1;
	}
	unlink(path);
	return 0;
}

static int open_unix(struct agent_listen *l, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};

	if (!path[0] || strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "unix socket path '%s' is empty or too long", path);
		return -2;
	}
	if (clear_stale(path, err, errlen) < 0)
		return -1;
	strcpy(sun.sun_path, path);
	strcpy(l->path, path);
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		snprintf(err, errlen, "can't listen on unix:%s: %s", path, strerror(errno));
		l->path[0] = '\0';
		return -1;
	}
	/* The file system turns away whoever the credentials check would. */
	if ((l->have_group && chown(path, (uid_t)-1, l->allow_gid) < 0) ||
	    chmod(path, l->have_group ? 0660 : 0600) < 0) {
		snprintf(err, errlen, "unix:%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int agent_listen_open(struct agent_listen *l, const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	int one = 1;

	l->fd = -1;
	l->path[0] = '\0';
	if (!strncmp(spec, "unix:", 5)) {
		int r;

		l->is_unix = true;
		if ((r = open_unix(l, spec + 5, err, errlen)) < 0)
			return r;
	} else {
		if (parse_tcp(spec, &ss, &len, &l->loopback) < 0) {
			snprintf(err, errlen,
				 "--listen takes ADDR:PORT with a numeric address or unix:PATH, "
				 "not '%s'",
				 spec);
			return -2;
		}
		l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (l->fd >= 0)
			setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&ss, len) < 0) {
			snprintf(err, errlen, "can't listen on %s: %s", spec, strerror(errno));
			return -1;
		}
	}
	if (listen(l->fd, 64) < 0) {
		snprintf(err, errlen, "can't listen on %s: %s", spec, strerror(errno));
		return -1;
	}
	return 0;
}

void agent_listen_print(const struct agent_listen *l)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char buf[INET6_ADDRSTRLEN];

	memset(&ss, 0, sizeof(ss));
	if (l->is_unix) {
		fprintf(stderr, "sonde-agent: listening on unix:%s\n", l->path);
	} else if (getsockname(l->fd, (struct sockaddr *)&ss, &len) < 0) {
		/* Not expected on a bound socket; say nothing wrong rather than garbage. */
		fprintf(stderr, "sonde-agent: listening\n");
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof(buf));
		fprintf(stderr, "sonde-agent: listening on [%s]:%u\n", buf, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, buf, sizeof(buf));
		fprintf(stderr, "sonde-agent: listening on %s:%u\n", buf, ntohs(s4->sin_port));
	}
	fflush(stderr);
}

void agent_listen_close(struct agent_listen *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->path[0])
		unlink(l->path);
	l->path[0] = '\0';
}

int agent_group_id(const char *name, gid_t *gid)
{
	char line[1024], *end;
	unsigned long v = strtoul(name, &end, 10);
	FILE *f;
	int r = -ENOENT;

	if (*name && !*end) {
		*gid = (gid_t)v;
		return 0;
	}
	/* /etc/group read directly: a static binary has no NSS. */
	if (!(f = fopen("/etc/group", "re")))
		return -ENOENT;
	while (r && fgets(line, sizeof(line), f)) {
		char *save = NULL, *n = strtok_r(line, ":", &save);
		char *pw = n ? strtok_r(NULL, ":", &save) : NULL;
		char *id = pw ? strtok_r(NULL, ":\n", &save) : NULL;

		if (id && !strcmp(n, name)) {
			*gid = (gid_t)strtoul(id, NULL, 10);
			r = 0;
		}
	}
	fclose(f);
	return r;
}

/* Says no to a connection without waiting for it: the frame fits any
 * empty socket buffer, and a peer that doesn't read loses it. */
static void refuse(int fd, int code, const char *text)
{
	struct sonde_wbuf b = {0};

	sonde_agent_put_error(&b, code, text);
	if (!b.err && send(fd, b.p, b.len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		(void)0; /* nothing more to tell a peer that can't take it */
	sonde_wbuf_fini(&b);
}

/* A Unix socket's peer: root, this agent's user, or a member of the group. */
static bool peer_allowed(const struct agent_listen *l, int fd, char *why, size_t len)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);
	gid_t groups[256];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0) {
		snprintf(why, len, "refused: the peer's credentials can't be read");
		return false;
	}
	if (cr.uid == 0 || cr.uid == geteuid())
		return true;
	if (l->have_group) {
		if (cr.gid == l->allow_gid)
			return true;
		n = sizeof(groups);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &n) == 0)
			for (size_t i = 0; i < n / sizeof(gid_t); i++)
				if (groups[i] == l->allow_gid)
					return true;
	}
	snprintf(why, len,
		 "refused: uid %u may not use this agent (root%s only; see sonde-agent "
		 "--allow-group)",
		 (unsigned)cr.uid, l->have_group ? " and the allowed group" : "");
	return false;
}

static void on_authenticated(void *ctx)
{
	(void)ctx;
	alarm(0);
	__atomic_store_n(&my_shared->authed[my_slot], 1, __ATOMIC_SEQ_CST);
}

static void set_timeout(int fd, int opt, unsigned s)
{
	struct timeval tv = {(time_t)s, 0};

	setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/* The session process: never returns. */
static void session(struct agent_listen *l, struct sonde_agent_config *cfg, struct shared *sh,
		    unsigned slot, int conn)
{
	struct sonde_errmsg why;
	struct sigaction sa = {.sa_handler = SIG_DFL};
	int one = 1, r;

	close(l->fd);
	l->fd = -1;
	l->path[0] = '\0'; /* the socket file is the listener's to remove */
	sigaction(SIGCHLD, &sa, NULL);
	/* SIGALRM's default action ends the process: the handshake deadline. */
	sigaction(SIGALRM, &sa, NULL);
	my_shared = sh;
	my_slot = slot;
	cfg->authenticated = on_authenticated;
	cfg->capture_owner = &sh->capture_pid;
	cfg->send_timeout_s = l->send_timeout_s;
	set_timeout(conn, SO_RCVTIMEO, l->idle_s);
	setsockopt(conn, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	alarm(l->handshake_s);
	r = sonde_agent_serve(cfg, conn, conn, &why);
	close(conn);
	fprintf(stderr, "sonde-agent: session ended%s%s\n", r < 0 && why.text[0] ? ": " : "",
		r < 0 ? why.text : "");
	fflush(stderr);
	_exit(r < 0 ? 1 : 0);
}

static int reap(struct slot *slots, unsigned n, struct shared *sh, bool block)
{
	int reaped = 0, status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, block ? 0 : WNOHANG)) > 0) {
		for (unsigned i = 0; i < n; i++)
			if (slots[i].pid == pid) {
				slots[i].pid = 0;
				if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
					fprintf(stderr, "sonde-agent: a peer missed the handshake "
							"deadline\n");
			}
		/* A session that died capturing frees the capture. */
		__atomic_compare_exchange_n(&sh->capture_pid, &(int){pid}, 0, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		reaped++;
		block = false;
	}
	return reaped;
}

static bool older(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* A free slot, making one by killing the oldest unauthenticated session
 * when needed; -1 when every session has authenticated. */
static int free_slot(struct slot *slots, unsigned n, struct shared *sh, bool evict)
{
	int victim = -1;

	for (unsigned i = 0; i < n; i++) {
		if (!slots[i].pid)
			return (int)i;
		if (!__atomic_load_n(&sh->authed[i], __ATOMIC_SEQ_CST) &&
		    (victim < 0 || older(&slots[i].since, &slots[victim].since)))
			victim = (int)i;
	}
	if (victim < 0 || !evict)
		return -1;
	kill(slots[victim].pid, SIGKILL);
	while (slots[victim].pid && reap(slots, n, sh, true) > 0)
		;
	return slots[victim].pid ? -1 : victim;
}

static void accept_one(struct agent_listen *l, struct sonde_agent_config *cfg, struct slot *slots,
		       struct shared *sh, bool *served)
{
	char why[256];
	int conn = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC), i;
	pid_t pid;

	if (conn < 0)
		return;
	if (l->is_unix && !peer_allowed(l, conn, why, sizeof(why))) {
		refuse(conn, -EACCES, why);
		close(conn);
		return;
	}
	i = l->once && *served ? -1 : free_slot(slots, l->max_clients, sh, !l->once);
	if (i < 0) {
		refuse(conn, -EBUSY,
		       "sonde-agent is busy: it serves as many hosts as it takes "
		       "(--max-clients); try again later");
		close(conn);
		return;
	}
	sh->authed[i] = 0;
	pid = fork();
	if (pid == 0)
		session(l, cfg, sh, (unsigned)i, conn);
	close(conn);
	if (pid < 0) {
		fprintf(stderr, "sonde-agent: fork: %s\n", strerror(errno));
		return;
	}
	slots[i].pid = pid;
	clock_gettime(CLOCK_MONOTONIC, &slots[i].since);
	*served = true;
}

static unsigned running(const struct slot *slots, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += slots[i].pid != 0;
	return k;
}

/* SIGTERM to every session (each closes its capture), then SIGKILL to
 * those still there after a few seconds. */
static void stop_all(struct slot *slots, unsigned n, struct shared *sh)
{
	for (unsigned i = 0; i < n; i++)
		if (slots[i].pid)
			kill(slots[i].pid, SIGTERM);
	for (int t = 0; t < 50 && running(slots, n); t++) {
		struct timespec ts = {0, 100000000};

		reap(slots, n, sh, false);
		nanosleep(&ts, NULL);
	}
	for (unsigned i = 0; i < n; i++)
		if (slots[i].pid)
			kill(slots[i].pid, SIGKILL);
	while (running(slots, n) && reap(slots, n, sh, true) > 0)
		;
}

static void on_child(int sig)
{
	(void)sig; /* only wakes poll() */
}

int agent_listen_run(struct agent_listen *l, struct sonde_agent_config *cfg)
{
	struct slot slots[AGENT_MAX_CLIENTS] = {0};
	struct sigaction sa = {.sa_handler = on_child};
	struct shared *sh;
	bool served = false;

	if (l->once)
		l->max_clients = 1;
	if (!l->max_clients || l->max_clients > AGENT_MAX_CLIENTS)
		return -EINVAL;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	sigaction(SIGCHLD, &sa, NULL);
	while (!*cfg->stop_signal) {
		struct pollfd p = {.fd = l->fd, .events = POLLIN};

		reap(slots, l->max_clients, sh, false);
		if (l->once && served && !running(slots, l->max_clients))
			break;
		if (poll(&p, 1, 1000) > 0 && (p.revents & POLLIN))
			accept_one(l, cfg, slots, sh, &served);
	}
	stop_all(slots, l->max_clients, sh);
	munmap(sh, sizeof(*sh));
	return 0;
}
