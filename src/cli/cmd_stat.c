// SPDX-License-Identifier: MIT
/*
 * sonde stat: count events of a command, of running processes or threads,
 * or of CPUs, in perf stat's conventions.
 *
 * This file is the options and the printing: the counting itself (runs,
 * intervals, reading and scaling) is the library's stat session
 * (sonde_stat_run(), src/perfev/stat_session.c), which calls back here for
 * each -I interval.  SIGINT, SIGTERM and SIGCHLD are blocked except inside
 * the session's wait, so none is lost between checks.  The workload's exit
 * status becomes ours; Ctrl-C is forwarded to it, and the counts so far
 * are printed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/counters.h>
#include <sonde/doctor.h>
#include <sonde/idlist.h>
#include <sonde/stat_session.h>

#include "cli.h"
#include "stat.h"

static const char stat_usage[] =
    "usage: sonde stat [options] [-- COMMAND [ARGS]]\n"
    "\n"
    "Counts events while COMMAND runs, or on running processes (-p), threads (-t)\n"
    "or CPUs (-a, -C) until Ctrl-C.  Output goes to stderr, as perf's does.\n"
    "\n"
    "  -e, --event SPEC       events to count (repeatable, comma-separated, groups {a,b});\n"
    "                         default: task-clock, context-switches, cpu-migrations,\n"
    "                         page-faults, cycles, instructions, branches, branch-misses\n"
    "  -p, --pid PID[,PID]    count existing processes (all their threads)\n"
    "  -t, --tid TID[,TID]    count existing threads\n"
    "  -a, --all-cpus         count on every CPU (system wide)\n"
    "  -C, --cpu CPUS         count on these CPUs only (e.g. 0-2,4); implies -a\n"
    "  -r, --repeat N         run COMMAND N times; print means and their variation\n"
    "  -I, --interval-print MS  print counts every MS milliseconds\n"
    "  -x, --field-separator SEP  CSV output with separator SEP\n"
    "      --json             JSON output, one object per line\n"
    "  -o, --output FILE      write the counts to FILE instead of stderr\n"
    "  -h, --help             this help\n"
    "\n"
    "The exit status is COMMAND's.  See sonde-stat(1).\n";

#define DEFAULT_EVENTS                                                                             \
	"context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses"

struct stat_opts {
	struct sonde_evlist events;
	pid_t *pids, *tids;
	size_t npids, ntids;
	bool all_cpus;
	const char *cpu_list;
	int repeat;
	long interval_ms;
	struct stat_printer pr;
	const char *output;
	char **argv;	      /* workload, or NULL */
	bool explicit_events; /* -e given: explain the ones not supported */
};

static void print_target(const struct stat_opts *o, char *buf, size_t len)
{
	if (o->cpu_list)
		snprintf(buf, len, "'CPU(s) %s'", o->cpu_list);
	else if (o->all_cpus)
		snprintf(buf, len, "'system wide'");
	else if (o->argv) {
		size_t used = 0;

		used += (size_t)snprintf(buf, len, "'");
		for (char **a = o->argv; *a && used < len; a++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 a == o->argv ? "" : " ", *a);
		if (used < len)
			snprintf(buf + used, len - used, "'");
	} else if (o->npids) {
		size_t used = (size_t)snprintf(buf, len, "process id '");

		for (size_t i = 0; i < o->npids && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "",
						 (int)o->pids[i]);
		if (used < len)
			snprintf(buf + used, len - used, "'");
	} else {
		size_t used = (size_t)snprintf(buf, len, "thread id '");

		for (size_t i = 0; i < o->ntids && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "",
						 (int)o->tids[i]);
		if (used < len)
			snprintf(buf + used, len - used, "'");
	}
}

/* A run's counters opened: the events that fell back to user space get
 * their ":u" and one warning. */
static void on_open(void *ctx, const struct sonde_counters *cs)
{
	struct stat_opts *o = ctx;
	bool user_only[cs->n ? cs->n : 1];

	for (size_t i = 0; i < cs->n; i++)
		user_only[i] = cs->c[i].user_only;
	cli_user_only(&o->events, user_only);
}

static void on_start(void *ctx)
{
	struct stat_opts *o = ctx;

	if (o->interval_ms > 0)
		stat_print_interval_header(&o->pr);
}

static void on_interval(void *ctx, const struct sonde_stat_interval *iv)
{
	struct stat_opts *o = ctx;

	stat_print_rows(&o->pr, iv->counts, iv->n, iv->covered_ns, iv->since_start_s);
	fflush(o->pr.out);
}

/* Every run; a failure is told here.  Return: EXIT_OK, or the exit code. */
static int count(struct stat_opts *o, struct sonde_stat *s)
{
	struct sonde_cpulist cpus = {0};
	struct sonde_stat_opts so = {
	    .events = &o->events,
	    .target = {.procfs = "/proc",
		       .pids = o->pids,
		       .npids = o->npids,
		       .tids = o->tids,
		       .ntids = o->ntids},
	    .argv = o->argv,
	    .repeat = o->repeat,
	    .interval_ms = o->interval_ms,
	    .stop_signal = &cli_stop_signal,
	    .child_exited = &cli_child_exited,
	    .on_open = on_open,
	    .on_start = on_start,
	    .on_interval = on_interval,
	    .ctx = o,
	};
	sigset_t block, waitmask;
	int r, ret = EXIT_OK;

	if (o->all_cpus) {
		r = o->cpu_list ? sonde_cpulist_parse(o->cpu_list, &cpus)
				: sonde_cpulist_online("/sys", &cpus);
		if (r < 0) {
			cli_error("bad CPU list '%s'", o->cpu_list ? o->cpu_list : "(online)");
			return EXIT_USAGE;
		}
		so.target.cpus = &cpus;
	}
	/* Stop signals and SIGCHLD reach us only inside the session's wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGCHLD);
	so.waitmask = &waitmask;
	if (sonde_stat_run(s, &so) < 0) {
		char why[512];

		if (s->failed == SONDE_STAT_OPEN && s->cs.failed)
			cli_error("%s\n  %s", s->err.text,
				  sonde_doctor_explain_open_error(
				      &s->cs.failed->attr, s->cs.failed_err, why, sizeof(why)));
		else
			cli_error("%s", s->err.text);
		ret = s->failed == SONDE_STAT_EXEC ? 127 : EXIT_FAIL;
	}
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	sonde_cpulist_fini(&cpus);
	return ret;
}

/* perf only prints <not supported>; say why once per event the user asked for. */
static void explain_unsupported(const struct sonde_stat_count *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char why[512];

		if (rows[i].err >= 0)
			continue;
		cli_warn("'%s' is not supported here: %s", rows[i].ev->name,
			 sonde_doctor_explain_open_error(&rows[i].ev->attr, rows[i].err, why,
							 sizeof(why)));
	}
}

static int parse_options(int argc, char **argv, struct stat_opts *o, struct cli *cli)
{
	enum { OPT_JSON = 256 };
	static const struct option opts[] = {
	    {"event", required_argument, NULL, 'e'},
	    {"pid", required_argument, NULL, 'p'},
	    {"tid", required_argument, NULL, 't'},
	    {"all-cpus", no_argument, NULL, 'a'},
	    {"cpu", required_argument, NULL, 'C'},
	    {"repeat", required_argument, NULL, 'r'},
	    {"interval-print", required_argument, NULL, 'I'},
	    {"field-separator", required_argument, NULL, 'x'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c, r;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:p:t:aC:r:I:x:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->explicit_events = true;
			r = sonde_evlist_parse(&o->events, optarg, cli_roots(cli));
			if (r < 0) {
				cli_error("%s", o->events.err.text);
				return EXIT_USAGE;
			}
			break;
		case 'p':
			if ((r = cli_ids("stat", "-p", optarg, &sonde_idkind_pid, &o->pids,
					 &o->npids)) != 0)
				return r < 0 ? EXIT_FAIL : r;
			break;
		case 't':
			if ((r = cli_ids("stat", "-t", optarg, &sonde_idkind_tid, &o->tids,
					 &o->ntids)) != 0)
				return r < 0 ? EXIT_FAIL : r;
			break;
		case 'a':
			o->all_cpus = true;
			break;
		case 'C':
			o->cpu_list = optarg;
			o->all_cpus = true;
			break;
		case 'r':
			o->repeat = (int)strtol(optarg, &end, 10);
			if (*end || o->repeat < 1)
				return cli_usage_error("stat", "-r needs a positive count");
			break;
		case 'I':
			o->interval_ms = strtol(optarg, &end, 10);
			if (*end || o->interval_ms < 10)
				return cli_usage_error("stat",
						       "-I needs milliseconds, at least 10");
			break;
		case 'x':
			o->pr.fmt = STAT_CSV;
			o->pr.sep = optarg;
			break;
		case OPT_JSON:
			o->pr.fmt = STAT_JSON;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			fputs(stat_usage, stdout);
			return -1;
		default:
			return cli_usage_error("stat", "bad option");
		}
	}
	if (optind < argc)
		o->argv = &argv[optind];
	if (cli_check_target("stat", o->argv != NULL, o->npids, o->ntids, o->all_cpus))
		return EXIT_USAGE;
	if (o->repeat > 1 && !o->argv)
		return cli_usage_error("stat", "-r repeats a command: give one after --");
	if (o->repeat > 1 && o->interval_ms)
		return cli_usage_error("stat", "-r and -I can't be combined");
	if (!o->events.n) {
		const char *clock = o->all_cpus ? "cpu-clock," : "task-clock,";
		char spec[256];

		snprintf(spec, sizeof(spec), "%s%s", clock, DEFAULT_EVENTS);
		if (sonde_evlist_parse(&o->events, spec, cli_roots(cli)) < 0) {
			cli_error("%s", o->events.err.text);
			return EXIT_FAIL;
		}
	}
	return 0;
}

int cmd_stat(int argc, char **argv, struct cli *cli)
{
	struct stat_opts o = {.repeat = 1};
	struct sonde_stat s = {0};
	double user = -1, sys = -1;
	char target[512];
	int ret;

	sonde_evlist_init(&o.events);
	o.pr.out = stderr;
	ret = parse_options(argc, argv, &o, cli);
	if (ret != 0) {
		ret = ret < 0 ? EXIT_OK : ret;
		goto out;
	}
	o.pr.runs = o.repeat;
	o.pr.system_wide = o.all_cpus;
	if (o.output) {
		o.pr.out = fopen(o.output, "we");
		if (!o.pr.out) {
			cli_error("can't write %s: %s", o.output, strerror(errno));
			ret = EXIT_FAIL;
			goto out;
		}
	}
	cli_catch_stop_signals(false);

	print_target(&o, target, sizeof(target));
	ret = count(&o, &s);
	if (ret != EXIT_OK)
		goto out;
	if (o.interval_ms <= 0) {
		stat_print_header(&o.pr, target);
		stat_print_rows(&o.pr, s.counts, s.n, s.elapsed_mean_s * 1e9, -1);
		if (o.argv && s.status >= 0) {
			user = (double)s.ru.ru_utime.tv_sec + s.ru.ru_utime.tv_usec / 1e6;
			sys = (double)s.ru.ru_stime.tv_sec + s.ru.ru_stime.tv_usec / 1e6;
		}
		stat_print_footer(&o.pr, s.elapsed_mean_s, sonde_stat_elapsed_sd(&s), user, sys);
	}
	/* Machine-readable output stays parseable: explain in table mode only. */
	if (o.explicit_events && o.pr.fmt == STAT_TABLE)
		explain_unsupported(s.counts, s.n);
	ret = o.argv ? cli_workload_exit_code(s.status) : EXIT_OK;
out:
	if (o.pr.out && o.pr.out != stderr && fclose(o.pr.out) != 0) {
		cli_error("can't write %s: %s", o.output, strerror(errno));
		ret = EXIT_FAIL;
	}
	sonde_stat_fini(&s);
	free(o.pids);
	free(o.tids);
	sonde_evlist_fini(&o.events);
	return ret;
}
