/* SPDX-License-Identifier: MIT */
/*
 * sonde-agent's server (target side) and client (host side) over the wire
 * protocol of sonde/agent_proto.h.
 *
 * Server: one session at a time on a connection (a TCP socket, or stdin and
 * stdout under ssh).  A capture runs the same sonde_capture as a local
 * `sonde record`, with a sink that sends records as DATA messages; the
 * connection is polled with the rings, so a host that goes away ends the
 * capture at once, and every way out closes the events and kills the
 * workload it started before the next session.
 *
 * Client: connects (TCP, or `ssh ... sonde-agent --stdio`), checks the
 * hello, and turns a remote capture into a local perf.data writer's calls.
 */
#ifndef SONDE_AGENT_H
#define SONDE_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sonde/agent_proto.h>
#include <sonde/error.h>

struct sonde_pd_writer;

struct sonde_agent_config {
	const uint8_t *token; /* borrowed; NULL: no token needed (stdio, a checked Unix peer) */
	size_t token_len;
	bool allow_exec;
	uint64_t max_bytes; /* record bytes per capture; 0: no cap */
	uint64_t max_rate;  /* record bytes per second; 0: no cap */
	const char *version;
	volatile sig_atomic_t *stop_signal; /* set by a signal handler: ends a capture; or NULL */
	/* Shared by the sessions of one agent (a MAP_SHARED word): the pid of
	 * the session capturing, 0 when none; NULL when sessions can't overlap. */
	int *capture_owner;
	unsigned send_timeout_s;	  /* see sonde_agent_conn; 0: none */
	void (*authenticated)(void *ctx); /* called once AUTH passed; or NULL */
	void *ctx;
};

/* Serves one session on @rfd/@wfd (not closed).  Return: 0 when the host
 * said BYE or closed, or -errno; *why (optional) says what happened. */
int sonde_agent_serve(const struct sonde_agent_config *cfg, int rfd, int wfd,
		      struct sonde_errmsg *why);

/* ---- tokens (token.c, both sides) ---- */

/* The file a local agent keeps its token in when none is given:
 * /run/sonde-agent/token for root, else @runtime_dir/sonde-agent/token
 * (callers pass $XDG_RUNTIME_DIR; NULL or relative: none).
 * Return: @buf, or NULL when there is no such place. */
const char *sonde_agent_token_default_path(const char *runtime_dir, char *buf, size_t len);

/* Reads a token file (trailing newlines and spaces dropped).
 * Return: 0 with *tok new (free()), -EINVAL when empty or longer than
 * SONDE_AGENT_MAX_TOKEN, or -errno. */
int sonde_agent_token_read(const char *path, char **tok, size_t *len);

/**
 * sonde_agent_token_load() - the agent's token from @path, made if missing
 * @strict: refuse a file that isn't a regular file of this user, unreadable
 *          by others (for the default path, which nobody chose)
 *
 * A missing file gets a new random token (64 hex digits, mode 0600, its
 * directory made 0700), linked into place so agents starting together
 * agree on one.
 * Return: 1 made, 0 read (*tok new), or a negative code.
 */
int sonde_agent_token_load(const char *path, bool strict, char **tok, size_t *len);

/* ---- host side ---- */

struct sonde_agent_client {
	struct sonde_agent_conn conn;
	pid_t ssh_pid;			/* the ssh child, or -1 */
	struct sonde_agent_hello hello; /* strings borrowed from hello_buf */
	uint8_t *hello_buf;		/* owned */
	struct sonde_errmsg err;
	char error[SONDE_AGENT_MAX_STRING]; /* the agent's last ERROR, whole */
	/* Set by sonde_agent_client_record(): */
	bool cut;	   /* the connection ended before END */
	uint64_t received; /* record bytes written */
	struct sonde_agent_end end;
	struct sonde_agent_events events;
	bool kernel_map_hidden;
};

/* Optional settings of sonde_agent_client_open(). */
struct sonde_agent_client_opts {
	const char *ssh;    /* the ssh program (NULL or "": "ssh") */
	const char *remote; /* the agent on the far side (NULL or "": "sonde-agent") */
};

/**
 * sonde_agent_client_open() - connect to @target and authenticate
 * @target: "HOST:PORT", "[V6ADDR]:PORT" or "ssh://[USER@]HOST[:PORT]" (runs
 *          @o->ssh with the remote command @o->remote and "--stdio")
 * @token: the token (NULL or length 0 for none)
 * @o: optional; the CLI fills it from $SONDE_SSH and $SONDE_AGENT_REMOTE
 * Return: 0, or a negative code with c->err saying why.
 */
int sonde_agent_client_open(struct sonde_agent_client *c, const char *target, const void *token,
			    size_t token_len, const struct sonde_agent_client_opts *o);
/**
 * sonde_agent_client_close() - end the connection: close its fds, wait for ssh, free what it received
 * @c: the client; safe after a failed open
 */
void sonde_agent_client_close(struct sonde_agent_client *c);
/* The last error's text: c->err's, or the agent's ERROR whole when it came
 * from the agent (c->err keeps 512 bytes).  Borrowed from @c. */
const char *sonde_agent_client_strerror(const struct sonde_agent_client *c);

/**
 * sonde_agent_client_record() - run @req on the target into @w
 * @stop_fd_out: receives the fd to write a STOP frame to (for a signal handler)
 *
 * Declares the events, copies the features and writes every record
 * received.  A connection that ends before END sets c->cut and returns 0:
 * the writer holds everything received.
 * Return: 0, or a negative code with c->err (the agent refused the request,
 * a malformed message, a write error).
 */
int sonde_agent_client_record(struct sonde_agent_client *c,
			      const struct sonde_agent_record_req *req, struct sonde_pd_writer *w);

/* Build id of a kernel/module/file on the target (enum sonde_bid_kind).
 * Return: its length (> 0), -ENOENT, or -EACCES when refused. */
int sonde_agent_client_build_id(struct sonde_agent_client *c, int kind, const char *name,
				uint32_t pid, uint8_t id[20]);

/* FILE request.  Return: 0 with *blob new (free()), or a negative code. */
int sonde_agent_client_file(struct sonde_agent_client *c, uint32_t kind, char **blob, size_t *len);

/* LIST: calls @line for each entry (name NULL: a note).  Return: 0 or negative. */
int sonde_agent_client_list(struct sonde_agent_client *c, const char *what,
			    void (*line)(void *ctx, const char *name, const char *kind), void *ctx);

/**
 * sonde_agent_client_bye() - tell the agent this host is done (BYE), before closing
 * @c: the connected client; a failed send is ignored (the agent sees EOF)
 */
void sonde_agent_client_bye(struct sonde_agent_client *c);

#endif
