// SPDX-License-Identifier: MIT
/*
 * sonde-agent: the target daemon.  Serves hosts over TCP or a Unix socket
 * (--listen; each connection in its own process, see listen.c) or one
 * session on stdin/stdout (--stdio, run by `ssh`).  Every TCP connection
 * authenticates with a token (--token-file, or one made at start in a file
 * only this user can read); Unix peers by their credentials (root, this
 * user, --allow-group); running a workload needs --allow-exec.  A session
 * that ends, however it ends, leaves no capture behind.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/agent.h>

#include "listen.h"

#ifndef SONDE_VERSION
#define SONDE_VERSION "0"
#endif

static const char usage[] =
    "usage: sonde-agent --listen ADDR:PORT|unix:PATH | --stdio [options]\n"
    "\n"
    "Captures on this machine for `sonde record --target` on a host.\n"
    "\n"
    "  --listen ADDR:PORT   TCP address (127.0.0.1:4243, [::1]:PORT, 0.0.0.0:PORT; port 0 picks\n"
    "                       one, printed on stderr); hosts always need the token\n"
    "  --listen unix:PATH   Unix socket: root and this user only (no token), see --allow-group\n"
    "  --stdio              one session on stdin/stdout (for ssh, which authenticates)\n"
    "  --token-file FILE    the token hosts must present; made (mode 0600) when FILE is\n"
    "                       missing; default /run/sonde-agent/token (root) or\n"
    "                       $XDG_RUNTIME_DIR/sonde-agent/token\n"
    "  --allow-group GROUP  members of GROUP may use the Unix socket too\n"
    "  --allow-exec         let hosts run a workload command\n"
    "  --max-bytes N        record bytes per capture (default 1 GiB; 0: no cap)\n"
    "  --max-rate N         record bytes per second (default 64 MiB; 0: no cap)\n"
    "  --max-clients N      connections served at once (default 8; more are told busy)\n"
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

/* The token for TCP: the given file's, or the default file's (made when
 * missing).  Return: 0, or an exit code. */
static int load_token(const char *token_file, char **tok, size_t *len)
{
	char buf[4096];
	const char *path = token_file ? token_file
				      : sonde_agent_token_default_path(getenv("XDG_RUNTIME_DIR"),
								       buf, sizeof(buf));
	struct stat st;
	int r;

	if (!path)
		return fail(2, "no place for a token (not root and no XDG_RUNTIME_DIR): give "
			       "--token-file FILE");
	r = sonde_agent_token_load(path, !token_file, tok, len);
	if (r < 0)
		return fail(2, "token file %s: %s", path,
			    r == -EINVAL ? "empty, longer than 256 bytes or not a regular file"
			    : r == -EPERM
				? "not this user's, or others may read it or its directory"
				: sonde_strerror(r));
	if (token_file && stat(path, &st) == 0 && (st.st_mode & 0044))
		fprintf(stderr, "sonde-agent: warning: %s is readable by others\n", path);
	fprintf(stderr,
		"sonde-agent: %s token in %s (hosts: --token-file, or read there on this "
		"machine)\n",
		r == 1 ? "new" : "the", path);
	return 0;
}

int main(int argc, char **argv)
{
	enum {
		OPT_LISTEN = 256,
		OPT_STDIO,
		OPT_TOKEN,
		OPT_GROUP,
		OPT_EXEC,
		OPT_BYTES,
		OPT_RATE,
		OPT_CLIENTS,
		OPT_ONCE
	};
	static const struct option opts[] = {
	    {"listen", required_argument, NULL, OPT_LISTEN},
	    {"stdio", no_argument, NULL, OPT_STDIO},
	    {"token-file", required_argument, NULL, OPT_TOKEN},
	    {"allow-group", required_argument, NULL, OPT_GROUP},
	    {"allow-exec", no_argument, NULL, OPT_EXEC},
	    {"max-bytes", required_argument, NULL, OPT_BYTES},
	    {"max-rate", required_argument, NULL, OPT_RATE},
	    {"max-clients", required_argument, NULL, OPT_CLIENTS},
	    {"once", no_argument, NULL, OPT_ONCE},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct sonde_agent_config cfg = {
	    .max_bytes = 1ull << 30,
	    .max_rate = 64ull << 20,
	    .version = SONDE_VERSION,
	    .stop_signal = &stop_signal,
	};
	struct agent_listen l = {
	    .fd = -1, .max_clients = 8, .handshake_s = 5, .send_timeout_s = 10, .idle_s = 30};
	const char *listen_at = NULL, *token_file = NULL, *group = NULL;
	bool use_stdio = false;
	char *token = NULL, err[512];
	size_t token_len = 0;
	struct sigaction sa;
	uint64_t n;
	int c, r;

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
		case OPT_GROUP:
			group = optarg;
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
		case OPT_CLIENTS:
			if (parse_u64(optarg, &n) || !n || n > AGENT_MAX_CLIENTS)
				return fail(2, "--max-clients takes 1 to %u", AGENT_MAX_CLIENTS);
			l.max_clients = (unsigned)n;
			break;
		case OPT_ONCE:
			l.once = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return fail(2, "bad option; see sonde-agent --help");
		}
	}
	if (optind < argc || !!listen_at == use_stdio)
		return fail(2,
			    "give --listen ADDR:PORT|unix:PATH or --stdio; see sonde-agent --help");
	if (group && (!listen_at || strncmp(listen_at, "unix:", 5)))
		return fail(2, "--allow-group goes with --listen unix:PATH");
	if (group && agent_group_id(group, &l.allow_gid) < 0)
		return fail(2, "--allow-group: no group '%s' in /etc/group", group);
	l.have_group = group != NULL;
	/* TCP always takes a token; stdio (ssh) and Unix peers are authenticated
	 * by their transport, and take one too when it is given. */
	if ((listen_at && strncmp(listen_at, "unix:", 5)) || token_file) {
		if ((r = load_token(token_file, &token, &token_len)) != 0)
			return r;
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

		r = sonde_agent_serve(&cfg, 0, 1, &why);
		if (r < 0 && why.text[0])
			fprintf(stderr, "sonde-agent: session ended: %s\n", why.text);
		free(token);
		return r < 0 ? 1 : 0;
	}
	if ((r = agent_listen_open(&l, listen_at, err, sizeof(err))) < 0) {
		agent_listen_close(&l);
		free(token);
		return fail(-r, "%s", err);
	}
	agent_listen_print(&l);
	r = agent_listen_run(&l, &cfg);
	agent_listen_close(&l);
	free(token);
	return r < 0 ? fail(1, "%s", sonde_strerror(r)) : 0;
}
