// SPDX-License-Identifier: MIT
/*
 * sonde-agent: the target daemon.  Serves one host at a time over TCP
 * (--listen) or stdin/stdout (--stdio, run by `ssh`).  Listening on anything
 * but loopback needs --token-file; running a workload needs --allow-exec.
 * A session that ends, however it ends, leaves no capture behind, and the
 * agent waits for the next connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/agent.h>
#include <sonde/fileio.h>

#ifndef SONDE_VERSION
#define SONDE_VERSION "0"
#endif

static const char usage[] =
    "usage: sonde-agent --listen ADDR:PORT | --stdio [options]\n"
    "\n"
    "Captures on this machine for `sonde record --target` on a host.\n"
    "\n"
    "  --listen ADDR:PORT   TCP address (127.0.0.1:4243; [::1]:PORT; 0.0.0.0:PORT needs a token;\n"
    "                       port 0 picks one, printed on stderr)\n"
    "  --stdio              one session on stdin/stdout (for ssh)\n"
    "  --token-file FILE    hosts must present this file's content (required off loopback)\n"
    "  --allow-exec         let hosts run a workload command\n"
    "  --max-bytes N        record bytes per capture (default 1 GiB; 0: no cap)\n"
    "  --max-rate N         record bytes per second (default 64 MiB; 0: no cap)\n"
    "  --once               exit after the first session\n"
    "  -h, --help           this help\n"
    "\n"
    "See sonde-agent(1).\n";

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("sonde-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end || end == s ? -1 : 0;
}

/* "ADDR:PORT", "[V6]:PORT", "localhost:PORT".  Numeric only: a static
 * binary has no resolver. */
static int parse_listen(const char *arg, struct sockaddr_storage *ss, socklen_t *len,
			bool *loopback)
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

static int read_token(const char *path, char **tok, size_t *len)
{
	struct stat st;
	int r = sonde_read_all(path, tok, len);

	if (r < 0)
		return r;
	while (*len &&
	       ((*tok)[*len - 1] == '\n' || (*tok)[*len - 1] == '\r' || (*tok)[*len - 1] == ' '))
		(*tok)[--*len] = '\0';
	if (!*len || *len > SONDE_AGENT_MAX_TOKEN)
		return -EINVAL;
	if (stat(path, &st) == 0 && (st.st_mode & 0004))
		fprintf(stderr, "sonde-agent: warning: %s is readable by everyone\n", path);
	return 0;
}

static void print_addr(const struct sockaddr_storage *ss)
{
	char buf[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof(buf));
		fprintf(stderr, "sonde-agent: listening on [%s]:%u\n", buf, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, buf, sizeof(buf));
		fprintf(stderr, "sonde-agent: listening on %s:%u\n", buf, ntohs(s4->sin_port));
	}
	fflush(stderr);
}

int main(int argc, char **argv)
{
	enum { OPT_LISTEN = 256, OPT_STDIO, OPT_TOKEN, OPT_EXEC, OPT_BYTES, OPT_RATE, OPT_ONCE };
	static const struct option opts[] = {
	    {"listen", required_argument, NULL, OPT_LISTEN},
	    {"stdio", no_argument, NULL, OPT_STDIO},
	    {"token-file", required_argument, NULL, OPT_TOKEN},
	    {"allow-exec", no_argument, NULL, OPT_EXEC},
	    {"max-bytes", required_argument, NULL, OPT_BYTES},
	    {"max-rate", required_argument, NULL, OPT_RATE},
	    {"once", no_argument, NULL, OPT_ONCE},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct sonde_agent_config cfg = {
	    .max_bytes = 1ull << 30,
	    .max_rate = 64ull << 20,
	    .listen_fd = -1,
	    .version = SONDE_VERSION,
	    .stop_signal = &stop_signal,
	};
	const char *listen_at = NULL, *token_file = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = 0;
	bool use_stdio = false, once = false, loopback = false;
	char *token = NULL;
	size_t token_len = 0;
	struct sigaction sa;
	int c, fd, one = 1;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			listen_at = optarg;
			break;
		case OPT_STDIO:
			use_stdio = true;
			break;
		case OPT_TOKEN:
			token_file = optarg;
			break;
		case OPT_EXEC:
			cfg.allow_exec = true;
			break;
		case OPT_BYTES:
			if (parse_u64(optarg, &cfg.max_bytes))
				return fail(2, "--max-bytes needs a number");
			break;
		case OPT_RATE:
			if (parse_u64(optarg, &cfg.max_rate))
				return fail(2, "--max-rate needs a number");
			break;
		case OPT_ONCE:
			once = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return fail(2, "bad option; see sonde-agent --help");
		}
	}
	if (optind < argc || !!listen_at == use_stdio)
		return fail(2, "give --listen ADDR:PORT or --stdio; see sonde-agent --help");
	if (token_file) {
		int r = read_token(token_file, &token, &token_len);

		if (r < 0)
			return fail(2, "token file %s: %s", token_file,
				    r == -EINVAL ? "empty or longer than 256 bytes" : sonde_strerror(r));
		cfg.token = (const uint8_t *)token;
		cfg.token_len = token_len;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (use_stdio) {
		struct sonde_errmsg why;
		int r = sonde_agent_serve(&cfg, 0, 1, &why);

		if (r < 0 && why.text[0])
			fprintf(stderr, "sonde-agent: session ended: %s\n", why.text);
		free(token);
		return r < 0 ? 1 : 0;
	}
	if (parse_listen(listen_at, &ss, &sslen, &loopback) < 0)
		return fail(2, "--listen takes ADDR:PORT with a numeric address, not '%s'",
			    listen_at);
	if (!loopback && !token)
		return fail(2,
			    "listening on %s (not loopback) needs --token-file: anyone who reaches "
			    "the port could run captures as this user",
			    listen_at);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(1, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, 4) < 0)
		return fail(1, "can't listen on %s: %s", listen_at, strerror(errno));
	sslen = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sslen);
	print_addr(&ss);
	cfg.listen_fd = fd;
	while (!stop_signal) {
		struct sonde_errmsg why;
		struct timeval tv = {30, 0};
		int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC), r;

		if (conn < 0) {
			if (errno == EINTR)
				continue;
			fail(0, "accept: %s", strerror(errno));
			sleep(1);
			continue;
		}
		/* A host that says nothing for 30 s between requests is gone. */
		setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(conn, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		r = sonde_agent_serve(&cfg, conn, conn, &why);
		close(conn);
		fprintf(stderr, "sonde-agent: session ended%s%s\n",
			r < 0 && why.text[0] ? ": " : "", r < 0 ? why.text : "");
		fflush(stderr);
		stop_signal = stop_signal == SIGINT || stop_signal == SIGTERM ? stop_signal : 0;
		if (once)
			break;
	}
	close(fd);
	free(token);
	return 0;
}
