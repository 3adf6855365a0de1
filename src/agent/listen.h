/* SPDX-License-Identifier: MIT */
/*
 * sonde-agent's listening side (the agent program only): the socket
 * (TCP or a Unix socket), and the accept loop that gives every connection
 * its own process, within limits.  See listen.c.
 */
#ifndef SONDE_AGENT_LISTEN_H
#define SONDE_AGENT_LISTEN_H

#include <stdbool.h>
#include <sys/types.h>

#include <sonde/agent.h>

#define AGENT_MAX_CLIENTS 64u

struct agent_listen {
	int fd;
	bool is_unix;		 /* "unix:PATH": peers are checked by their credentials */
	bool loopback;		 /* a TCP address on loopback */
	char path[108];		 /* the Unix socket's path, removed at the end */
	bool have_group;	 /* --allow-group */
	gid_t allow_gid;	 /* its members may use a Unix socket too */
	unsigned max_clients;	 /* connections served at once (1..AGENT_MAX_CLIENTS) */
	unsigned handshake_s;	 /* from accept to a valid AUTH */
	unsigned send_timeout_s; /* a host that reads nothing this long is dropped */
	unsigned idle_s;	 /* a host that asks nothing this long is dropped */
	bool once;		 /* exit after the first session */
};

/* Opens @spec ("ADDR:PORT", "[V6]:PORT", "unix:PATH") into l->fd, keeping
 * l's limits.  Return: 0, or -2 (usage) or -1 (the system refused) with
 * @err saying why. */
int agent_listen_open(struct agent_listen *l, const char *spec, char *err, size_t errlen);

/* Prints "sonde-agent: listening on ..." on stderr. */
void agent_listen_print(const struct agent_listen *l);

/* Serves connections until *cfg->stop_signal (or, with once, the first
 * session's end).  Return: 0, or -errno. */
int agent_listen_run(struct agent_listen *l, struct sonde_agent_config *cfg);

void agent_listen_close(struct agent_listen *l);

/* The gid of group @name ("NAME" from /etc/group, or a number).
 * Return: 0, or -ENOENT. */
int agent_group_id(const char *name, gid_t *gid);

#endif
