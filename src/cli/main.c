// SPDX-License-Identifier: MIT
/*
 * sonde's entry point: a table of subcommands, each a thin file over the
 * library.  This is the only place that turns errors into exit codes, and
 * it checks that stdout really flushed (a full disk or a closed pipe must
 * not pass for success).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/evspec.h>
#include <sonde/fileio.h>
#include <sonde/idlist.h>
#include <sonde/log.h>
#include <sonde/strlist.h>
#include <sonde/tracefs.h>

#include "cli.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct cli *cli);
	const char *summary;
};

static const struct command commands[] = {
    {"stat", cmd_stat, "count events of a command, processes or the whole system"},
    {"record", cmd_record, "sample events into perf.data"},
    {"report", cmd_report, "show where the samples of a capture went, by function and object"},
    {"script", cmd_script, "every sample of a capture in time order, tracepoints decoded"},
    {"sched", cmd_sched, "scheduler analyses of a capture: sched latency"},
    {"annotate", cmd_annotate, "show the hot source lines and instructions of a function"},
    {"trace", cmd_trace, "trace with ftrace: live, or into a trace.dat (trace-cmd's format)"},
    {"list", cmd_list, "list the events this machine can count and sample"},
    {"evlist", cmd_evlist, "list the events of a capture"},
    {"buildid-list", cmd_buildid_list, "list the build ids of a capture's objects"},
    {"version", cmd_version, "the version, and the optional libraries of this build"},
    {"doctor", cmd_doctor, "tell what works on this machine, and how to fix what does not"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: sonde [--version] [--help] COMMAND [ARGS]\n\n"
		     "sonde is a profiler and tracer for Linux.  Commands:\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "   %-14s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun 'sonde COMMAND --help' for a command's options.\n");
}

static int unknown_command(const char *name)
{
	const char *names[sizeof(commands) / sizeof(commands[0])];
	char close[256];

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	sonde_suggest_among(name, names, sizeof(names) / sizeof(names[0]), close, sizeof(close));
	if (close[0])
		cli_error("'%s' is not a sonde command; did you mean %s?", name, close);
	else
		cli_error("'%s' is not a sonde command", name);
	usage(stderr);
	return EXIT_USAGE;
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "sonde: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

bool cli_quiet;

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	if (cli_quiet)
		return;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

int cli_check_target(const char *cmd, bool workload, size_t npids, size_t ntids, bool all_cpus)
{
	if (!workload && !npids && !ntids && !all_cpus)
		return cli_usage_error(cmd, "give a command (-- CMD), -p, -t, -a or -C");
	if ((npids || ntids) && (all_cpus || workload))
		return cli_usage_error(cmd, "-p/-t can't be combined with -a, -C or a command");
	return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Run 'sonde %s --help' for usage.\n", cmd);
	return EXIT_USAGE;
}

static int ids_result(const char *cmd, const char *opt, int r, const struct sonde_errmsg *err)
{
	if (r == -ENOMEM || r == 0)
		return r;
	return cli_usage_error(cmd, "%s: %s", opt, err->text);
}

int cli_ids(const char *cmd, const char *opt, const char *arg, const struct sonde_idkind *kind,
	    int **v, size_t *n)
{
	struct sonde_errmsg err;

	return ids_result(cmd, opt, sonde_idlist_add(arg, kind, v, n, &err), &err);
}

int cli_ids_u32(const char *cmd, const char *opt, const char *arg, const struct sonde_idkind *kind,
		uint32_t **v, size_t *n)
{
	struct sonde_errmsg err;

	return ids_result(cmd, opt, sonde_idlist_add_u32(arg, kind, v, n, &err), &err);
}

void cli_user_only(struct sonde_evlist *l, const bool *user_only)
{
	char names[256] = "", paranoid[32] = "?";
	size_t used = 0, n = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (!user_only[i] || sonde_evlist_set_user_only(l, i) < 0)
			continue;
		if (used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 n ? ", " : "", l->events[i].name);
		n++;
	}
	if (!n)
		return;
	if (sonde_read_text("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof(paranoid)) >=
	    0)
		paranoid[strcspn(paranoid, "\n")] = '\0';
	cli_warn("kernel.perf_event_paranoid=%s keeps unprivileged users out of the kernel: "
		 "counting user space only (%s%s); run as root, grant CAP_PERFMON or "
		 "sysctl -w kernel.perf_event_paranoid=1 to count the kernel too",
		 paranoid, names, used >= sizeof(names) ? "..." : "");
}

const struct sonde_roots *cli_roots(struct cli *cli)
{
	if (!cli->roots_ready) {
		cli->roots.sysfs = "/sys";
		cli->roots.tracefs = NULL;
		if (sonde_tracefs_find("/proc/mounts", cli->tracefs, sizeof(cli->tracefs), true) ==
		    0)
			cli->roots.tracefs = cli->tracefs;
		cli->roots_ready = true;
	}
	return &cli->roots;
}

static void log_to_stderr(enum sonde_log_level level, const char *msg, void *data)
{
	int debug = *(int *)data;

	if (level == SONDE_LOG_DEBUG && !debug)
		return;
	fprintf(stderr, "sonde: %s%s\n", level <= SONDE_LOG_WARN ? "warning: " : "", msg);
}

int main(int argc, char **argv)
{
	static char help_flag[] = "--help";
	char *help_argv[3] = {NULL, help_flag, NULL};
	struct cli cli = {0};
	int ret = EXIT_USAGE;

	cli.debug = getenv("SONDE_DEBUG") != NULL;
	sonde_log_set(log_to_stderr, &cli.debug);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			help_argv[0] = argv[2];
			argv = help_argv;
			argc = 2;
			goto dispatch;
		}
		usage(stdout);
		ret = EXIT_OK;
		goto out;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("sonde %s\n", SONDE_VERSION);
		ret = EXIT_OK;
		goto out;
	}
	argv++;
	argc--;
dispatch:
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[0], commands[i].name)) {
			ret = commands[i].fn(argc, argv, &cli);
			goto out;
		}
	}
	return unknown_command(argv[0]);
out:
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "sonde: error writing output: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	return ret;
}
