// SPDX-License-Identifier: MIT
/*
 * sonde stat: count events of a command, of running processes or threads,
 * or of CPUs, in perf stat's conventions.
 *
 * One run: open counters (disabled), start the workload or enable them,
 * then wait (sonde_wait_until()) on pidfds of what we count, with SIGINT,
 * SIGTERM and SIGCHLD blocked except inside ppoll so none is lost between
 * checks.  An interval (-I) is the wait's timeout.  The workload's exit status becomes
 * ours; Ctrl-C is forwarded to it, and the counts so far are printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/counters.h>
#include <sonde/doctor.h>
#include <sonde/idlist.h>
#include <sonde/wait.h>
#include <sonde/workload.h>

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
	char **argv; /* workload, or NULL */
	bool explicit_events; /* -e given: explain the ones not supported */
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

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
			used += (size_t)snprintf(buf + used, len - used, "%s%s", a == o->argv ? "" : " ",
						 *a);
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

struct run_result {
	double elapsed_ns;
	struct rusage ru;
	int status; /* workload wait status, or -1 */
	bool stopped_by_signal;
};

static void rows_from_counters(struct stat_row *rows, const struct sonde_counters *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		double v;

		rows[i].err = cs->c[i].err;
		if (!cs->c[i].err && sonde_counter_scaled(&cs->c[i], &v))
			stat_row_add(&rows[i], v, cs->c[i].enabled, cs->c[i].running);
		else {
			rows[i].enabled = cs->c[i].enabled;
			rows[i].running = cs->c[i].running;
		}
	}
}

/* Whether any counter moved since the values in @prev (as last read). */
static bool counted_since(const struct sonde_counters *cs, uint64_t (*prev)[3])
{
	for (size_t i = 0; i < cs->n; i++)
		if (!cs->c[i].err && cs->c[i].value != prev[i][0])
			return true;
	return false;
}

/* Prints the counts of the last interval: the deltas from @prev. */
static void print_interval(struct stat_opts *o, struct sonde_counters *cs, uint64_t (*prev)[3],
			   double t0, double last_ns)
{
	struct stat_row *rows = calloc(cs->n, sizeof(*rows));
	double now = now_ns();

	if (!rows || sonde_counters_read(cs) < 0) {
		free(rows);
		return;
	}
	for (size_t i = 0; i < cs->n; i++) {
		struct sonde_counter d = cs->c[i];
		double v;

		d.value -= prev[i][0];
		d.enabled -= prev[i][1];
		d.running -= prev[i][2];
		prev[i][0] = cs->c[i].value;
		prev[i][1] = cs->c[i].enabled;
		prev[i][2] = cs->c[i].running;
		rows[i].ev = d.ev;
		rows[i].err = d.err;
		rows[i].enabled = d.enabled;
		rows[i].running = d.running;
		if (!d.err && sonde_counter_scaled(&d, &v))
			stat_row_add(&rows[i], v, d.enabled, d.running);
	}
	stat_print_rows(&o->pr, rows, cs->n, now - last_ns, (now - t0) / 1e9);
	fflush(o->pr.out);
	free(rows);
}

static int run_once(struct stat_opts *o, struct cli *cli, struct stat_row *rows,
		    struct run_result *res)
{
	struct sonde_workload wl = {.pid = -1, .go_fd = -1, .err_fd = -1};
	struct sonde_cpulist cpus = {0};
	struct sonde_target t = {.procfs = "/proc"};
	struct sonde_counters cs;
	sigset_t block, waitmask;
	struct sonde_wait w = {.wl_pidfd = -1};
	int r, ret = EXIT_FAIL;
	uint64_t(*prev)[3] = NULL;
	double t0, last, deadline = 0;

	res->status = -1;
	res->stopped_by_signal = false;
	memset(&res->ru, 0, sizeof(res->ru));
	if (o->all_cpus) {
		r = o->cpu_list ? sonde_cpulist_parse(o->cpu_list, &cpus)
				: sonde_cpulist_online("/sys", &cpus);
		if (r < 0) {
			cli_error("bad CPU list '%s'", o->cpu_list ? o->cpu_list : "(online)");
			return EXIT_USAGE;
		}
		t.cpus = &cpus;
	}
	t.pids = o->pids;
	t.npids = o->npids;
	t.tids = o->tids;
	t.ntids = o->ntids;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGCHLD);

	if (o->argv) {
		r = sonde_workload_prepare(&wl, o->argv);
		if (r < 0) {
			cli_error("can't start '%s': %s", o->argv[0], sonde_strerror(r));
			goto out;
		}
		t.workload = wl.pid;
	}
	r = sonde_counters_open(&cs, &o->events, &t);
	if (r < 0) {
		char why[512];

		if (cs.failed)
			cli_error("%s\n  %s", cs.err.text,
				  sonde_doctor_explain_open_error(&cs.failed->attr, cs.failed_err, why,
								  sizeof(why)));
		else
			cli_error("%s", cs.err.text);
		sonde_workload_abort(&wl);
		goto out;
	}
	{
		bool user_only[cs.n ? cs.n : 1];

		for (size_t i = 0; i < cs.n; i++)
			user_only[i] = cs.c[i].user_only;
		cli_user_only(&o->events, user_only);
	}
	for (size_t i = 0; i < cs.n; i++)
		rows[i].ev = cs.c[i].ev;
	prev = calloc(cs.n ? cs.n : 1, sizeof(*prev));
	if (!prev) {
		cli_error("out of memory");
		sonde_workload_abort(&wl);
		goto close;
	}
	/* The workload, or else the attached tasks: their end ends the run. */
	if (sonde_wait_init(&w, &(struct sonde_wait_opts){
				    .wl = wl.pid > 0 ? &wl : NULL,
				    .pids = wl.pid > 0 ? NULL : o->pids,
				    .npids = wl.pid > 0 ? 0 : o->npids,
				    .tids = wl.pid > 0 ? NULL : o->tids,
				    .ntids = wl.pid > 0 ? 0 : o->ntids,
				    .waitmask = &waitmask,
				    .stop_signal = &cli_stop_signal,
				    .child_exited = &cli_child_exited,
			    }) < 0) {
		cli_error("out of memory");
		sonde_workload_abort(&wl);
		goto close;
	}
	if (wl.pid > 0) {
		if (t.cpus)
			sonde_counters_enable(&cs);
		t0 = now_ns();
		r = sonde_workload_start(&wl);
		if (r < 0) {
			cli_error("can't run '%s': %s", o->argv[0], sonde_strerror(r));
			ret = 127;
			goto close;
		}
	} else {
		sonde_counters_enable(&cs);
		t0 = now_ns();
	}
	last = t0;
	if (o->interval_ms > 0) {
		deadline = t0 + (double)o->interval_ms * 1e6;
		stat_print_interval_header(&o->pr);
	}
	for (;;) {
		int64_t timeout = -1;
		int ev;

		if (o->interval_ms > 0) {
			double left = deadline - now_ns();

			timeout = left > 0 ? (int64_t)left : 0;
		}
		ev = sonde_wait_until(&w, NULL, 0, timeout);
		if (ev < 0)
			break;
		if (ev & SONDE_WAIT_SIGNAL) {
			/* Ctrl-C: the workload stops too, and we print what we have. */
			if (wl.pid > 0 && !res->stopped_by_signal)
				kill(wl.pid, w.signal);
			res->stopped_by_signal = true;
			if (wl.pid <= 0 && !(ev & SONDE_WAIT_EXITED))
				break;
		}
		if (ev & SONDE_WAIT_EXITED) {
			res->status = w.status;
			res->ru = w.ru;
			break;
		}
		if (ev & SONDE_WAIT_GONE)
			break;
		if ((ev & SONDE_WAIT_TICK) && o->interval_ms > 0) {
			print_interval(o, &cs, prev, t0, last);
			last = now_ns();
			deadline += (double)o->interval_ms * 1e6;
		}
	}
	res->elapsed_ns = now_ns() - t0;
	sonde_counters_disable(&cs);
	if (sonde_counters_read(&cs) < 0) {
		cli_error("%s", cs.err.text);
		goto close;
	}
	if (o->interval_ms > 0) {
		/* The tail since the last tick, unless it is empty: a short tail
		 * that still counted is printed, or the intervals would not add
		 * up to what ran. */
		if (res->elapsed_ns - (last - t0) > 1e6 || counted_since(&cs, prev))
			print_interval(o, &cs, prev, t0, last);
	} else {
		rows_from_counters(rows, &cs);
	}
	ret = EXIT_OK;
close:
	free(prev);
	sonde_counters_close(&cs);
out:
	sonde_wait_fini(&w);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	sonde_cpulist_fini(&cpus);
	(void)cli;
	return ret;
}

/* perf only prints <not supported>; say why once per event the user asked for. */
static void explain_unsupported(const struct stat_row *rows, size_t n)
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
				return cli_usage_error("stat", "-I needs milliseconds, at least 10");
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
	struct stat_row *rows = NULL;
	struct run_result res = {0};
	double el_mean = 0, el_m2 = 0, user = -1, sys = -1;
	char target[512];
	int ret, code = EXIT_OK;

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
	rows = calloc(o.events.n, sizeof(*rows));
	if (!rows) {
		ret = EXIT_FAIL;
		goto out;
	}
	cli_catch_stop_signals(false);

	print_target(&o, target, sizeof(target));
	for (int run = 0; run < o.repeat; run++) {
		ret = run_once(&o, cli, rows, &res);
		if (ret != EXIT_OK)
			goto out;
		double d = res.elapsed_ns / 1e9 - el_mean;

		el_mean += d / (run + 1);
		el_m2 += d * (res.elapsed_ns / 1e9 - el_mean);
		code = o.argv ? cli_workload_exit_code(res.status) : EXIT_OK;
		if (res.stopped_by_signal)
			break;
	}
	if (o.interval_ms <= 0) {
		stat_print_header(&o.pr, target);
		stat_print_rows(&o.pr, rows, o.events.n, el_mean * 1e9, -1);
		if (o.argv && res.status >= 0) {
			user = (double)res.ru.ru_utime.tv_sec + res.ru.ru_utime.tv_usec / 1e6;
			sys = (double)res.ru.ru_stime.tv_sec + res.ru.ru_stime.tv_usec / 1e6;
		}
		stat_print_footer(&o.pr, el_mean,
				  o.repeat > 1 ? sqrt(el_m2 / (o.repeat - 1)) / sqrt(o.repeat) : 0,
				  user, sys);
	}
	/* Machine-readable output stays parseable: explain in table mode only. */
	if (o.explicit_events && o.pr.fmt == STAT_TABLE)
		explain_unsupported(rows, o.events.n);
	ret = code;
out:
	if (o.pr.out && o.pr.out != stderr && fclose(o.pr.out) != 0) {
		cli_error("can't write %s: %s", o.output, strerror(errno));
		ret = EXIT_FAIL;
	}
	free(rows);
	free(o.pids);
	free(o.tids);
	sonde_evlist_fini(&o.events);
	return ret;
}
