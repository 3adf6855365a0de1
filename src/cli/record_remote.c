// SPDX-License-Identifier: MIT
/*
 * sonde record --target and sonde list --target: the host side of a remote
 * capture.  Connect, check the options against the target's hello (so a
 * bad option fails before anything runs there), stream the capture into a
 * local perf.data, then fetch the build ids of the objects that got
 * samples from the target.  Ctrl-C sends STOP from the signal handler; a
 * connection that drops keeps a valid file of what came and says so.
 */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sonde/agent.h>
#include <sonde/buildid.h>
#include <sonde/cpulist.h>
#include <sonde/outfile.h>
#include <sonde/perf_data.h>
#include <sonde/record.h>
#include <sonde/vdso.h>

#include "cli.h"

#define MIB (1024.0 * 1024.0)

static volatile sig_atomic_t stop_fd = -1;

static void on_stop(int sig)
{
	(void)sig;
	if (stop_fd >= 0 && write(stop_fd, sonde_agent_stop_frame, SONDE_AGENT_FRAME_SIZE) < 0)
		stop_fd = -1;
}

/* Is @target an agent on this machine's loopback? */
static bool loopback_target(const char *target)
{
	return !strncmp(target, "127.", 4) || !strncmp(target, "localhost:", 10) ||
	       !strncmp(target, "[::1]:", 6);
}

/*
 * Is every listener on TCP port @port of this machine owned by @uid (and
 * is there one)?  From /proc/net/tcp and tcp6: LISTEN sockets (state 0A),
 * local port in hex, owner in the uid column.  Any local user can listen
 * on a free loopback port; this keeps a local agent's token from going to
 * a process that is not its user's (a fake agent, or a port forward run
 * by someone else).
 */
static bool port_owned_by(unsigned port, uid_t uid)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	char line[512];
	bool any = false, others = false;

	for (size_t i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "re");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char local[64], remote[64], st[8];
			unsigned long owner;
			const char *colon;

			if (sscanf(line, " %*s %63s %63s %7s %*s %*s %*s %lu", local, remote, st,
				   &owner) != 4 ||
			    strcmp(st, "0A") || !(colon = strrchr(local, ':')) ||
			    strtoul(colon + 1, NULL, 16) != port)
				continue;
			any = true;
			others |= owner != (unsigned long)uid;
		}
		fclose(f);
	}
	return any && !others;
}

/*
 * The token, from the first of: --token, --token-file, $SONDE_AGENT_TOKEN,
 * and for a loopback target the file a local agent keeps it in (readable by
 * its user only, so only that user or root get this far), sent only when
 * the port's listener belongs to the file's owner.  A local token is never
 * sent to another user's process.  Return: 0 (*tok new or NULL), or -1.
 */
static int find_token(const char *target, const struct cli_agent_auth *auth, char **tok,
		      size_t *len)
{
	const char *env = getenv("SONDE_AGENT_TOKEN");
	char path[4096];
	struct stat st;
	int r;

	*tok = NULL;
	*len = 0;
	if (auth->token || (!auth->token_file && env && *env)) {
		const char *t = auth->token ? auth->token : env;

		*len = strlen(t);
		*tok = strdup(t);
		return *tok ? 0 : -1;
	}
	if (auth->token_file) {
		r = sonde_agent_token_read(auth->token_file, tok, len);
		if (r < 0) {
			cli_error("token file %s: %s", auth->token_file,
				  r == -EINVAL ? "empty or longer than 256 bytes"
					       : sonde_strerror(r));
			return -1;
		}
		return 0;
	}
	if (!loopback_target(target) || !strrchr(target, ':') ||
	    !sonde_agent_token_default_path(getenv("XDG_RUNTIME_DIR"), path, sizeof(path)) ||
	    stat(path, &st) < 0 ||
	    !port_owned_by((unsigned)atoi(strrchr(target, ':') + 1), st.st_uid))
		return 0;
	if (sonde_agent_token_read(path, tok, len) < 0)
		*tok = NULL;
	return 0;
}

static int connect_target(struct sonde_agent_client *c, const char *target,
			  const struct cli_agent_auth *auth)
{
	/* the CLI reads the environment, the library takes parameters */
	struct sonde_agent_client_opts o = {getenv("SONDE_SSH"), getenv("SONDE_AGENT_REMOTE")};
	char *token = NULL;
	size_t len = 0;
	int r;

	/* Closable whatever fails below. */
	memset(c, 0, sizeof(*c));
	c->conn.rfd = c->conn.wfd = c->ssh_pid = -1;
	if (find_token(target, auth, &token, &len) < 0)
		return -1;
	r = sonde_agent_client_open(c, target, token, len, &o);
	free(token);
	if (r < 0) {
		cli_error("%s: %s", target, sonde_agent_client_strerror(c));
		return -1;
	}
	return 0;
}

/* Is @spec (one comma-separated term) a tracepoint, "sys:event[:mods]"? */
static bool looks_tracepoint(const char *t)
{
	const char *colon = strchr(t, ':');

	if (!colon || strchr(t, '/') || !strncmp(t, "mem:", 4))
		return false;
	/* "cycles:u" is an event with modifiers: only modifier letters follow. */
	return strspn(colon + 1, "ukhGHpIDSe") != strlen(colon + 1);
}

/* The checks the hello allows before anything runs on the target. */
static int check_against_hello(const struct sonde_agent_client *c,
			       const struct sonde_agent_record_req *req, const char *target)
{
	const struct sonde_agent_hello *h = &c->hello;

	if (req->argc && !(h->flags & SONDE_AGENT_F_ALLOW_EXEC)) {
		cli_error("the agent at %s does not run commands: start it with --allow-exec, "
			  "or record -a, -p or -t there",
			  target);
		return EXIT_USAGE;
	}
	for (uint32_t i = 0; i < req->nspecs; i++) {
		char *copy = strdup(req->specs[i]), *save = NULL;

		if (!copy)
			return EXIT_FAIL;
		for (char *t = strtok_r(copy, ",{}", &save); t; t = strtok_r(NULL, ",{}", &save)) {
			char name[128];
			const struct sonde_named_event *ne;

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(t, ":/"), t);
			if (looks_tracepoint(t) && !(h->flags & SONDE_AGENT_F_TRACEFS)) {
				cli_error("'%s' is a tracepoint, and the target (%s %s) has no "
					  "tracefs",
					  t, h->machine, h->release);
				free(copy);
				return EXIT_USAGE;
			}
			ne = sonde_named_event_find(name);
			if (ne && ne->type == PERF_TYPE_HARDWARE &&
			    !(h->flags & SONDE_AGENT_F_HW_PMU)) {
				cli_error(
				    "the target (%s, %u CPUs) has no usable hardware PMU: '%s' "
				    "can't be sampled there; use cpu-clock",
				    h->machine, h->ncpus_online, t);
				free(copy);
				return EXIT_USAGE;
			}
		}
		free(copy);
	}
	if (req->cpu_list[0]) {
		struct sonde_cpulist cpus;
		int last;

		if (sonde_cpulist_parse(req->cpu_list, &cpus) < 0) {
			cli_error("bad CPU list '%s'", req->cpu_list);
			return EXIT_USAGE;
		}
		/* Ascending: the last one is the largest. */
		last = cpus.cpus[cpus.n - 1];
		sonde_cpulist_fini(&cpus);
		if ((unsigned)last >= h->ncpus_conf) {
			cli_error("CPU %d is not on the target: it has %u CPUs", last,
				  h->ncpus_conf);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* The build-id pass's source: the agent's answers; the [vdso]'s id is read
 * from the agent's vDSO image, fetched once and kept for the cache. */
struct remote_bids {
	struct sonde_agent_client *c;
	int vdso_fd; /* memfd of the target's image; -errno until fetched well */
};

static int remote_vdso_build_id(struct remote_bids *rb, uint8_t id[20])
{
	char path[64], *blob = NULL;
	size_t len = 0;
	int r;

	if (rb->vdso_fd == -EAGAIN) {
		r = sonde_agent_client_file(rb->c, SONDE_AGENT_FILE_VDSO, &blob, &len);
		/* An agent from before the vDSO was served refuses the kind. */
		rb->vdso_fd = r < 0 ? r : sonde_memfd_of("sonde-target-vdso", blob, len);
		free(blob);
	}
	if (rb->vdso_fd < 0)
		return rb->vdso_fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rb->vdso_fd);
	return sonde_build_id_of_file(path, id);
}

static int remote_build_id(void *ctx, enum sonde_bid_kind kind, const char *name, uint32_t pid,
			   uint8_t id[20])
{
	struct remote_bids *rb = ctx;
	int k;

	if (kind == SONDE_BID_VDSO)
		return remote_vdso_build_id(rb, id);
	k = kind == SONDE_BID_KERNEL   ? SONDE_AGENT_BID_KERNEL
	    : kind == SONDE_BID_MODULE ? SONDE_AGENT_BID_MODULE
				       : SONDE_AGENT_BID_FILE;

	return sonde_agent_client_build_id(rb->c, k, name, pid, id);
}

static void summary(const struct sonde_agent_client *c, struct sonde_pd_writer *w,
		    const char *target, const char *output)
{
	uint64_t samples = 0, lost = 0;

	for (uint32_t i = 0; i < c->end.nrings; i++) {
		samples += c->end.rings[i].samples;
		lost += c->end.rings[i].lost;
	}
	sonde_pd_writer_sync(w);
	if (cli_quiet)
		return;
	fprintf(stderr, "[ sonde record: captured on %s (%s %s) and wrote %.3f MB %s (%llu samples",
		target, c->hello.machine, c->hello.release,
		(double)sonde_pd_writer_file_data_size(w) / MIB, output,
		(unsigned long long)samples);
	if (lost)
		fprintf(stderr, ", %llu lost", (unsigned long long)lost);
	fprintf(stderr, ") ]\n");
}

int record_remote(const char *target, const struct cli_agent_auth *auth,
		  struct sonde_agent_record_req *req, const char *output, int zlevel,
		  const char *cache_dir)
{
	struct sonde_agent_client c;
	struct sonde_pd_writer *w = NULL;
	struct sonde_outfile of = {.fd = -1};
	struct sonde_errmsg err = {{0}};
	bool keep = false; /* something arrived: the file replaces the old one */
	struct sigaction sa, old_int, old_term, old_pipe;
	int ret = EXIT_FAIL, r;

	if (connect_target(&c, target, auth) < 0)
		goto out;
	if ((ret = check_against_hello(&c, req, target)) != 0)
		goto out;
	ret = EXIT_FAIL;
	/* Written beside the target and renamed at the end, so a capture
	 * that fails on the target leaves the previous file alone. */
	if (sonde_outfile_open(&of, output, 0600, SONDE_OUTFILE_KEEP_OLD, &err) < 0 ||
	    sonde_pd_writer_open_fd(&w, of.fd, &err) < 0) {
		cli_error("%s", err.text);
		goto out;
	}
	if (zlevel && sonde_pd_writer_set_compression(w, zlevel) < 0) {
		cli_error("%s", sonde_pd_writer_errmsg(w));
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old_pipe);
	stop_fd = c.conn.wfd;
	r = sonde_agent_client_record(&c, req, w);
	stop_fd = -1;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (r < 0) {
		cli_error("%s: %s", target, sonde_agent_client_strerror(&c));
		if (!c.received)
			goto out;
	}
	keep = true;
	if (c.events.freq_asked)
		cli_warn("the target caps the sampling rate at %llu Hz: throttled from %llu Hz",
			 (unsigned long long)c.events.max_freq,
			 (unsigned long long)c.events.freq_asked);
	if (c.cut) {
		cli_error("the capture was cut: the connection to %s ended (%s) after %.3f MB; %s "
			  "keeps every record received",
			  target, c.err.text, (double)c.received / MIB, output);
	} else if (r == 0) {
		struct remote_bids rb = {&c, -EAGAIN};
		struct sonde_buildid_source src = {remote_build_id, &rb};
		struct sonde_record_bids found;

		if (c.end.reason == SONDE_AGENT_END_SIZE_CAP ||
		    c.end.reason == SONDE_AGENT_END_ERROR)
			cli_warn("the capture ended early on the target: %s", c.end.message);
		r = sonde_record_build_ids_from(w, of.tmp ? of.tmp : output, &src, &found);
		if (r < 0)
			cli_warn("build ids: %s", sonde_strerror(r));
		else
			cli_cache_vdso(cache_dir, &found, rb.vdso_fd);
		if (rb.vdso_fd >= 0)
			close(rb.vdso_fd);
		summary(&c, w, target, output);
		sonde_agent_client_bye(&c);
		ret = EXIT_OK;
		if (req->argc)
			ret = cli_workload_exit_code(c.end.status);
	}
out:
	if (w && sonde_pd_writer_close(w, &err) < 0) {
		cli_error("closing %s: %s", output, err.text);
		ret = EXIT_FAIL;
	}
	if (!keep) {
		sonde_outfile_abort(&of);
	} else if (sonde_outfile_commit(&of, &err) < 0) {
		cli_error("%s", err.text);
		ret = EXIT_FAIL;
	}
	sonde_agent_client_close(&c);
	return ret;
}

/* What list_line keeps: names matching a glob, or one class of events
 * (the local list's hw, sw, cache, pmu, tracepoint) by the agent's kinds. */
struct list_filter {
	const char *glob;
	const char *kind; /* kind prefix of the class, or NULL */
	bool any;
};

static const struct {
	const char *name, *kind;
} list_classes[] = {
    {"hw", "Hardware event"},		{"sw", "Software event"},
    {"cache", "Hardware cache event"},	{"pmu", "Kernel PMU event"},
    {"tracepoint", "Tracepoint event"},
};

static void list_line(void *ctx, const char *name, const char *kind)
{
	struct list_filter *f = ctx;

	if (f->kind ? strncmp(kind, f->kind, strlen(f->kind)) &&
			  !(!strcmp(f->kind, "Tracepoint event") && !strcmp(name, "tracepoints"))
		    : f->glob && fnmatch(f->glob, name, 0))
		return;
	printf("  %-50s [%s]\n", name, kind);
	f->any = true;
}

int list_remote(const char *target, const struct cli_agent_auth *auth, const char *glob)
{
	struct sonde_agent_client c;
	struct list_filter f = {.glob = glob};
	int ret = EXIT_FAIL;

	for (size_t i = 0; glob && i < sizeof(list_classes) / sizeof(list_classes[0]); i++)
		if (!strcmp(glob, list_classes[i].name))
			f.kind = list_classes[i].kind;
	if (glob && !strcmp(glob, "probe")) {
		cli_error("the agent does not list dynamic probes");
		return EXIT_FAIL;
	}
	if (connect_target(&c, target, auth) < 0)
		goto out;
	printf("\nEvents of %s (%s %s, %u CPUs; %s%s):\n\n", target, c.hello.machine,
	       c.hello.release, c.hello.ncpus_online,
	       c.hello.flags & SONDE_AGENT_F_HW_PMU ? "hardware PMU" : "no hardware PMU",
	       c.hello.flags & SONDE_AGENT_F_TRACEFS ? ", tracefs" : ", no tracefs");
	if (sonde_agent_client_list(&c, glob, list_line, &f) < 0) {
		cli_error("%s: %s", target, sonde_agent_client_strerror(&c));
		goto out;
	}
	sonde_agent_client_bye(&c);
	ret = EXIT_OK;
	if (glob && !f.any) {
		cli_error("no event of %s matches '%s'", target, glob);
		ret = EXIT_FAIL;
	}
out:
	sonde_agent_client_close(&c);
	return ret;
}
