// SPDX-License-Identifier: MIT
/*
 * sonde trace: an ftrace front end, what trace-cmd does.
 *
 *   sonde trace -l [GLOB]             tracers, events, filterable functions
 *   sonde trace [opts] [-- CMD]       live: the instance's trace_pipe to stdout
 *   sonde trace -o FILE [opts]        record: raw pages per CPU into trace.dat
 *   sonde trace report FILE           print a trace.dat
 *
 * Order of work: parse, fork the workload (held at its gate), block the
 * termination signals, create the session (instance, events, filters,
 * pids, tracer; tracing off), start the readers, tracing on, release the
 * workload.  The loop waits in ppoll() with signals unblocked only there.
 * Every way out (workload exit or crash, Ctrl-C, SIGTERM, a pid gone, an
 * error) goes through the same end: tracing off, drain, stats, destroy the
 * session (restore), and only then write trace.dat, so the kernel's state
 * is back whatever happens to the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/cpulist.h>
#include <sonde/doctor.h>
#include <sonde/fileio.h>
#include <sonde/ftrace.h>
#include <sonde/idlist.h>
#include <sonde/signals.h>
#include <sonde/strlist.h>
#include <sonde/tracefs.h>
#include <sonde/workload.h>

#include "cli.h"
#include "trace_dat.h"
#include "trace_out.h"

static const char trace_usage[] =
    "usage: sonde trace [options] [-- COMMAND [ARGS]]\n"
    "       sonde trace -l [GLOB]\n"
    "       sonde trace report FILE\n"
    "       sonde trace recover [FILE]\n"
    "\n"
    "Traces with ftrace in a tracefs instance of its own (instances/sonde-PID), printing\n"
    "events as they come, or saving them as a trace.dat that trace-cmd and KernelShark read.\n"
    "\n"
    "  -l, --list             list tracers, events (SYS:EVENT) and filterable functions,\n"
    "                         those matching GLOB only\n"
    "  -p, --tracer TRACER    function, function_graph, blk, nop (default: events only)\n"
    "  -f, --function GLOB    trace only matching kernel functions (set_ftrace_filter)\n"
    "      --notrace GLOB     don't trace matching functions (set_ftrace_notrace)\n"
    "  -e, --event SYS[:EVENT]  enable trace events (globs; repeatable)\n"
    "      --filter EXPR      kernel filter for the events of the preceding -e\n"
    "  -P, --pid PID[,PID]    trace only these processes and their children\n"
    "  -b, --buffer-size KB   ring buffer per CPU\n"
    "  -C, --cpu CPUS         trace these CPUs only (tracing_cpumask)\n"
    "  -d, --device DEV       blk tracer: the block device to trace (repeatable)\n"
    "  -o, --output FILE      record into a trace.dat instead of printing\n"
    "  -h, --help             this help\n"
    "\n"
    "With -- COMMAND, only the command and its children are traced; it starts once\n"
    "tracing is armed.  Stop with Ctrl-C or SIGTERM otherwise.  FILE is replaced only\n"
    "when the recording worked.  When a recording sonde is killed, 'sonde trace recover'\n"
    "writes its FILE from the pages it had saved.  See sonde-trace(1).\n";

struct trace_opts {
	const char *tracer;
	struct sonde_strlist functions, notrace, devices;
	struct sonde_ftrace_event *events;
	size_t nevents;
	pid_t *pids;
	size_t npids;
	unsigned int buffer_kb;
	const char *cpu_list;
	const char *output;
	char **argv;
};

static int add_event(struct trace_opts *o, const char *glob)
{
	struct sonde_ftrace_event *v = realloc(o->events, (o->nevents + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	o->events = v;
	v[o->nevents].glob = glob;
	v[o->nevents].filter = NULL;
	o->nevents++;
	return 0;
}

static void opts_fini(struct trace_opts *o)
{
	sonde_strlist_fini(&o->functions);
	sonde_strlist_fini(&o->notrace);
	sonde_strlist_fini(&o->devices);
	free(o->events);
	free(o->pids);
}

/* Return: 0, 1 for -l (with *list_glob set), or an exit code above 1 / -errno. */
static int parse_options(int argc, char **argv, struct trace_opts *o, bool *list,
			 const char **list_glob)
{
	enum { OPT_NOTRACE = 256, OPT_FILTER };
	static const struct option opts[] = {
	    {"list", no_argument, NULL, 'l'},
	    {"tracer", required_argument, NULL, 'p'},
	    {"plugin", required_argument, NULL, 'p'},
	    {"function", required_argument, NULL, 'f'},
	    {"notrace", required_argument, NULL, OPT_NOTRACE},
	    {"event", required_argument, NULL, 'e'},
	    {"filter", required_argument, NULL, OPT_FILTER},
	    {"pid", required_argument, NULL, 'P'},
	    {"buffer-size", required_argument, NULL, 'b'},
	    {"cpu", required_argument, NULL, 'C'},
	    {"device", required_argument, NULL, 'd'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, r;

	/* getopt_long() sets optarg for options that require one (see cmd_record.c). */
	// NOLINTBEGIN(clang-analyzer-core.NonNullParamChecker)
	while ((c = getopt_long(argc, argv, "+lp:f:e:P:b:C:d:o:h", opts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case 'l':
			*list = true;
			break;
		case 'p':
			o->tracer = optarg;
			break;
		case 'f':
			r = sonde_strlist_add(&o->functions, optarg);
			break;
		case OPT_NOTRACE:
			r = sonde_strlist_add(&o->notrace, optarg);
			break;
		case 'e':
			r = add_event(o, optarg);
			break;
		case OPT_FILTER:
			if (!o->nevents)
				return cli_usage_error("trace", "--filter applies to the preceding "
								"-e: put it after -e SYS:EVENT");
			if (o->events[o->nevents - 1].filter)
				return cli_usage_error("trace", "two --filter for -e %s",
						       o->events[o->nevents - 1].glob);
			o->events[o->nevents - 1].filter = optarg;
			break;
		case 'P':
			r = cli_ids("trace", "-P", optarg, &sonde_idkind_pid, &o->pids, &o->npids);
			break;
		case 'b': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !v || v > 16u * 1024 * 1024)
				return cli_usage_error("trace",
						       "-b takes KB per CPU (1..16777216), "
						       "not '%s'",
						       optarg);
			o->buffer_kb = (unsigned int)v;
			break;
		}
		case 'C':
			o->cpu_list = optarg;
			break;
		case 'd':
			r = sonde_strlist_add(&o->devices, optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			fputs(trace_usage, stdout);
			return EXIT_OK + 100;
		default:
			return cli_usage_error("trace", "bad option");
		}
		if (r)
			return r;
	}
	// NOLINTEND(clang-analyzer-core.NonNullParamChecker)
	if (*list) {
		if (optind < argc)
			*list_glob = argv[optind++];
		if (optind < argc)
			return cli_usage_error("trace", "-l takes one GLOB");
		return 1;
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->argv && o->npids)
		return cli_usage_error("trace", "-P and a COMMAND exclude each other");
	if (o->tracer && !strcmp(o->tracer, "blk") && !o->devices.n)
		return cli_usage_error("trace", "-p blk needs the device to trace: -d DEV "
						"(e.g. -d vda; see /sys/block)");
	if (o->devices.n && (!o->tracer || strcmp(o->tracer, "blk")))
		return cli_usage_error("trace", "-d applies to -p blk");
	if ((o->functions.n || o->notrace.n) && (!o->tracer || strncmp(o->tracer, "function", 8)))
		return cli_usage_error("trace", "-f and --notrace filter the function tracers: "
						"add -p function or -p function_graph");
	if (!o->tracer && !o->nevents)
		return cli_usage_error("trace", "nothing to trace: give -e SYS[:EVENT] or -p "
						"TRACER (sonde trace -l lists them)");
	return 0;
}

/* --- sonde trace -l ---------------------------------------------------------------------- */

static bool match(const char *glob, const char *name)
{
	return !glob || !fnmatch(glob, name, 0);
}

static int list_all(struct cli *cli, const char *glob)
{
	const struct sonde_roots *roots = cli_roots(cli);
	struct sonde_strlist words, events;
	struct sonde_doctor_config dcfg;
	char text[1024], path[PATH_MAX], line[512];
	FILE *f;
	int r;

	if (!roots->tracefs) {
		cli_error("tracefs is not mounted and could not be mounted (are you root?)");
		return EXIT_FAIL;
	}
	sonde_strlist_init(&words);
	r = sonde_tracefs_instance_read(roots->tracefs, NULL, "available_tracers", text,
					sizeof(text));
	printf("tracers:\n");
	if (r >= 0 && sonde_tracefs_split_words(text, &words) == 0)
		for (size_t i = 0; i < words.n; i++)
			if (match(glob, words.v[i]))
				printf("  %s\n", words.v[i]);
	sonde_strlist_fini(&words);

	sonde_strlist_init(&events);
	r = sonde_ftrace_match_events(roots->tracefs, "*:*", &events);
	printf("events:\n");
	for (size_t i = 0; r == 0 && i < events.n; i++)
		if (match(glob, events.v[i]))
			printf("  %s\n", events.v[i]);
	sonde_strlist_fini(&events);
	if (r < 0)
		cli_warn("listing events: %s", sonde_strerror(r));

	printf("functions:\n");
	if (sonde_path(path, sizeof(path), "%s/available_filter_functions", roots->tracefs) < 0)
		return EXIT_FAIL;
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		sonde_doctor_config_default(&dcfg);
		dcfg.tracefs = roots->tracefs;
		cli_warn("no filterable functions (%s): %s", strerror(e),
			 sonde_doctor_explain_tracer(&dcfg, "function", -e, text, sizeof(text)));
		return EXIT_OK;
	}
	while (fgets(line, sizeof(line), f)) {
		/* "name" or "name [module]" */
		char name[512];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(line, " \t\n"), line);
		if (match(glob, name))
			fputs(line, stdout);
	}
	fclose(f);
	return EXIT_OK;
}

/* --- sonde trace report ------------------------------------------------------------------ */

static int report(int argc, char **argv)
{
	char err[512];
	uint64_t n = 0;

	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc == 2) {
			fputs(trace_usage, stdout);
			return EXIT_OK;
		}
		return cli_usage_error("trace", "usage: sonde trace report FILE");
	}
	if (trace_dat_report(argv[1], stdout, &n, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* --- tracing ----------------------------------------------------------------------------- */

struct run {
	struct trace_opts *o;
	struct cli *cli;
	struct sonde_cpulist cpus;   /* recorded: every online CPU */
	struct sonde_cpulist traced; /* -C: the CPUs traced (n 0: all of cpus) */
	int max_cpu;		     /* highest online CPU */
	struct sonde_ftrace *ft;
	struct sonde_ftrace_recorder *rec;
	struct trace_out out; /* -o: the trace.dat and the page files */
	struct sonde_workload wl;
	int status;  /* the workload's wait status, -1 if none */
	int pipe_fd; /* live: trace_pipe */
	bool interrupted;
	int stop_sig; /* the signal that interrupted, forwarded to the workload */
	uint64_t live_lines;
};

/*
 * A stop request must be seen whatever the event rate: the loop copies at
 * most this much per wake-up before it looks at signals again, the
 * workload gets this long to exit after the signal before SIGKILL, and the
 * final drain of the live pipe (tracing already off) stops after this long.
 */
#define PUMP_BUDGET (1 << 20)
#define WORKLOAD_GRACE_MS 3000
#define DRAIN_SECONDS 5

/* Copies up to @budget bytes of trace_pipe to stdout.  Return: bytes, 0 when empty, or -errno. */
static long pump(struct run *t, long budget)
{
	char buf[65536];
	long total = 0;

	while (total < budget) {
		ssize_t n = read(t->pipe_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? total : -errno;
		if (n == 0)
			return total;
		for (ssize_t i = 0; i < n; i++)
			t->live_lines += buf[i] == '\n';
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return -EIO;
		total += n;
		if ((size_t)n < sizeof(buf))
			return total;
	}
	return total;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Tracing is off: what is left is finite, but stdout may be slow; bounded anyway. */
static void drain_live(struct run *t)
{
	double end = now_seconds() + DRAIN_SECONDS;

	while (pump(t, PUMP_BUDGET) > 0)
		if (now_seconds() > end) {
			cli_warn("stopped printing the rest of the buffer after %d s",
				 DRAIN_SECONDS);
			break;
		}
}

/* Whether every -P process has exited. */
static bool pids_gone(const struct run *t)
{
	for (size_t i = 0; i < t->o->npids; i++)
		if (kill(t->o->pids[i], 0) == 0 || errno != ESRCH)
			return false;
	return true;
}

static void loop(struct run *t, const sigset_t *waitmask)
{
	struct pollfd pfd[2] = {{0}}; /* revents is read before the first ppoll */
	nfds_t n = 0;
	int pidfd = -1, pipe_slot = -1, pid_slot = -1;
	struct timespec tick = {0, 200 * 1000 * 1000};

	if (t->pipe_fd >= 0) {
		pfd[n].fd = t->pipe_fd;
		pfd[n].events = POLLIN;
		pipe_slot = (int)n++;
	}
	if (t->wl.pid > 0) {
		pidfd = sonde_pidfd_open(t->wl.pid, false);
		if (pidfd >= 0) {
			pfd[n].fd = pidfd;
			pfd[n].events = POLLIN;
			pid_slot = (int)n++;
		}
	}
	for (;;) {
		int pr;

		if (cli_stop_signal) {
			/* The workload gets the signal in the teardown, after tracing off. */
			t->interrupted = true;
			t->stop_sig = cli_stop_signal;
			cli_stop_signal = 0;
			break;
		}
		if (t->wl.pid > 0 &&
		    (cli_child_exited || (pid_slot >= 0 && pfd[pid_slot].revents))) {
			int status;

			cli_child_exited = 0;
			if (sonde_workload_reaped(&t->wl, &status, NULL)) {
				t->status = status;
				break;
			}
		}
		if (t->o->npids && pids_gone(t))
			break;
		for (nfds_t i = 0; i < n; i++)
			pfd[i].revents = 0;
		pr = ppoll(pfd, n, &tick, waitmask);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0)
			sonde_signals_deliver(waitmask);
		if (pipe_slot >= 0 && pfd[pipe_slot].revents && pump(t, PUMP_BUDGET) < 0)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
}

/* The summary: "[ sonde trace: N events on CPUs 0-1, 12 overrun on CPU 1 ]". */
static void summary(struct run *t, uint64_t events, bool counted,
		    const struct sonde_ftrace_stats *st, const bool *have)
{
	char cpus[128], lost[512] = "";
	uint64_t overrun = 0, dropped = 0;
	size_t used = 0;

	sonde_cpulist_format(t->traced.n ? &t->traced : &t->cpus, cpus, sizeof(cpus));
	for (int c = 0; c <= t->max_cpu; c++) {
		uint64_t o, d;

		if (!have[c])
			continue;
		o = st[c].overrun + st[c].commit_overrun;
		d = st[c].dropped;
		overrun += o;
		dropped += d;
		if (o && used < sizeof(lost))
			used +=
			    (size_t)snprintf(lost + used, sizeof(lost) - used,
					     ", %llu overrun on CPU %d", (unsigned long long)o, c);
		if (d && used < sizeof(lost))
			used +=
			    (size_t)snprintf(lost + used, sizeof(lost) - used,
					     ", %llu dropped on CPU %d", (unsigned long long)d, c);
	}
	fflush(stdout);
	fprintf(stderr, "[ sonde trace: %s%llu events on CPUs %s", counted ? "" : "~",
		(unsigned long long)events, cpus);
	if (t->o->output)
		fprintf(stderr, " written to %s", t->o->output);
	fprintf(stderr, "%s%s ]\n", lost, overrun || dropped ? " (a bigger -b keeps them)" : "");
}

static int start_recorder(struct run *t, struct sonde_errmsg *err)
{
	const char **paths = calloc(t->cpus.n, sizeof(*paths));
	int r;

	if (!paths)
		return -ENOMEM;
	for (size_t i = 0; i < t->cpus.n; i++)
		paths[i] = t->out.cpu_files[t->cpus.cpus[i]];
	r = sonde_ftrace_recorder_start(t->ft, t->cpus.cpus, paths, t->cpus.n, &t->rec, err);
	free(paths);
	return r;
}

static int open_live(struct run *t, struct sonde_errmsg *err)
{
	char path[PATH_MAX];
	int r = sonde_ftrace_path(t->ft, "trace_pipe", path, sizeof(path));

	if (r < 0)
		return r;
	t->pipe_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (t->pipe_fd < 0)
		return sonde_errmsg_set(err, -errno, "%s: %s", path, strerror(errno));
	return 0;
}

/* Explains a failed setup: the doctor's words for a refused tracer. */
static void setup_error(struct run *t, int r, const struct sonde_errmsg *err)
{
	const char *tracer = t->o->tracer;
	char why[1024];

	if (tracer && r == -EPERM && !strncmp(tracer, "function", 8)) {
		struct sonde_doctor_config dcfg;

		sonde_doctor_config_default(&dcfg);
		dcfg.tracefs = t->cli->roots.tracefs;
		cli_error("%s", sonde_doctor_explain_tracer(&dcfg, tracer, r, why, sizeof(why)));
		cli_error("(%s)", err->text);
		return;
	}
	cli_error("%s", err->text[0] ? err->text : sonde_strerror(r));
}

static int write_dat(struct run *t, const char **stats_text)
{
	struct trace_dat_spec spec = {0};
	const char **globs = calloc(t->o->nevents + 1, sizeof(*globs));
	char err[512];
	int r;

	if (!globs)
		return -ENOMEM;
	for (size_t i = 0; i < t->o->nevents; i++)
		globs[i] = t->o->events[i].glob;
	spec.tracefs = t->cli->roots.tracefs;
	spec.event_globs = globs;
	spec.nglobs = t->o->nevents;
	spec.cpu_stats = stats_text;
	r = trace_out_commit(&t->out, &spec, err, sizeof(err));
	free(globs);
	if (r < 0)
		cli_error("%s", err);
	return r;
}

static int run_trace(struct run *t)
{
	struct trace_opts *o = t->o;
	struct sonde_ftrace_config cfg = {0};
	struct sonde_errmsg err = {{0}};
	struct sonde_ftrace_stats *st = NULL;
	bool *have = NULL;
	char **stats_text = NULL;
	char mask[1200];
	sigset_t block, waitmask;
	uint64_t events = 0;
	bool counted = false;
	int r, ret = EXIT_FAIL;

	cfg.tracefs = t->cli->roots.tracefs;
	cfg.sysfs = "/sys";
	cfg.tracer = o->tracer;
	cfg.top_level = o->tracer && !strcmp(o->tracer, "blk");
	cfg.functions = (const char *const *)o->functions.v;
	cfg.nfunctions = o->functions.n;
	cfg.notrace = (const char *const *)o->notrace.v;
	cfg.nnotrace = o->notrace.n;
	cfg.events = o->events;
	cfg.nevents = o->nevents;
	cfg.pids = o->pids;
	cfg.npids = o->npids;
	cfg.devices = (const char *const *)o->devices.v;
	cfg.ndevices = o->devices.n;
	cfg.buffer_kb = o->buffer_kb;
	if (o->cpu_list) {
		struct sonde_cpulist only;

		if (sonde_cpulist_parse(o->cpu_list, &only) < 0 ||
		    sonde_ftrace_cpumask(only.cpus, only.n, mask, sizeof(mask)) < 0) {
			sonde_cpulist_fini(&only);
			return cli_usage_error("trace", "bad CPU list '%s'", o->cpu_list);
		}
		for (size_t i = 0; i < only.n; i++) {
			bool online = false;

			for (size_t k = 0; k < t->cpus.n; k++)
				online |= t->cpus.cpus[k] == only.cpus[i];
			if (!online) {
				sonde_cpulist_fini(&only);
				return cli_usage_error("trace", "CPU %d is not online",
						       only.cpus[i]);
			}
		}
		/* The summary names these: the other CPUs' files stay empty. */
		t->traced = only;
		cfg.cpumask = mask;
	}
	if (o->tracer && strcmp(o->tracer, "nop")) {
		char text[1024], why[1024];
		struct sonde_strlist avail;
		bool listed;

		sonde_strlist_init(&avail);
		sonde_tracefs_instance_read(cfg.tracefs, NULL, "available_tracers", text,
					    sizeof(text));
		listed = sonde_tracefs_split_words(text, &avail) == 0 &&
			 sonde_strlist_contains(&avail, o->tracer);
		sonde_strlist_fini(&avail);
		if (!listed) {
			struct sonde_doctor_config dcfg;

			sonde_doctor_config_default(&dcfg);
			dcfg.tracefs = cfg.tracefs;
			cli_error("%s", sonde_doctor_explain_tracer(&dcfg, o->tracer, -ENOENT, why,
								    sizeof(why)));
			return EXIT_FAIL;
		}
	}
	if (o->output && !trace_dat_available()) {
		char e[256];

		trace_dat_write(o->output, NULL, e, sizeof(e));
		cli_error("%s", e);
		return EXIT_FAIL;
	}
	trace_out_check_leftovers();
	if (o->output &&
	    trace_out_open(&t->out, o->output, t->max_cpu + 1, o->events, o->nevents) < 0)
		goto out;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGHUP);
	sigdelset(&waitmask, SIGCHLD);

	if (o->argv) {
		r = sonde_workload_prepare(&t->wl, o->argv);
		if (r < 0) {
			cli_error("can't start %s: %s", o->argv[0], sonde_strerror(r));
			goto unblock;
		}
		cfg.pids = &t->wl.pid;
		cfg.npids = 1;
	}
	r = sonde_ftrace_create(&cfg, &t->ft, &err);
	if (r == -EINVAL && !cfg.top_level && o->tracer && !strcmp(o->tracer, "function_graph")) {
		/* Kernels before 6.11 run function_graph in the top-level instance only. */
		cli_warn("this kernel refuses function_graph in an instance: using the top-level "
			 "instance (its state is saved and restored)");
		cfg.top_level = true;
		memset(&err, 0, sizeof(err));
		r = sonde_ftrace_create(&cfg, &t->ft, &err);
	}
	if (r < 0) {
		setup_error(t, r, &err);
		if (o->argv)
			sonde_workload_abort(&t->wl);
		goto unblock;
	}
	r = o->output ? start_recorder(t, &err) : open_live(t, &err);
	if (r == 0)
		r = sonde_ftrace_start(t->ft);
	if (r < 0) {
		cli_error("%s", err.text[0] ? err.text : sonde_strerror(r));
		if (o->argv)
			sonde_workload_abort(&t->wl);
		goto teardown;
	}
	if (o->argv) {
		r = sonde_workload_start(&t->wl);
		if (r < 0) {
			cli_error("can't run %s: %s", o->argv[0], sonde_strerror(r));
			goto teardown;
		}
	}
	loop(t, &waitmask);
	ret = EXIT_OK;
teardown:
	/* Tracing off first: from here on what the buffers hold is finite. */
	if (t->ft)
		sonde_ftrace_stop(t->ft);
	if (t->wl.pid > 0) {
		/* Stopped early (a signal, an error): pass the signal on, reap within a bound. */
		int sig = t->interrupted ? t->stop_sig : SIGTERM;
		bool killed;

		t->status = sonde_workload_end(&t->wl, sig, WORKLOAD_GRACE_MS, &killed);
		/* A workload ran: o->argv is its command. */
		if (killed) /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
			cli_warn("%s did not exit within %d s of %s: killed", o->argv[0],
				 WORKLOAD_GRACE_MS / 1000, strsignal(sig));
	}
	if (t->pipe_fd >= 0) {
		drain_live(t);
		close(t->pipe_fd);
		t->pipe_fd = -1;
	}
	if (t->rec) {
		struct sonde_errmsg rerr = {{0}};

		if (sonde_ftrace_recorder_stop(t->rec, NULL, &rerr) < 0) {
			cli_error("recording: %s", rerr.text);
			ret = EXIT_FAIL;
		}
		t->rec = NULL;
	}
	st = calloc((size_t)t->max_cpu + 1, sizeof(*st));
	have = calloc((size_t)t->max_cpu + 1, sizeof(*have));
	stats_text = calloc((size_t)t->max_cpu + 1, sizeof(*stats_text));
	for (size_t i = 0; t->ft && st && have && stats_text && i < t->cpus.n; i++) {
		int c = t->cpus.cpus[i];
		char file[64], path[PATH_MAX];

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", c);
		if (sonde_ftrace_path(t->ft, file, path, sizeof(path)) == 0 &&
		    sonde_read_all(path, &stats_text[c], NULL) == 0 &&
		    sonde_ftrace_stats_parse(stats_text[c], &st[c]) == 0) {
			have[c] = true;
			events += st[c].read;
		}
	}
	if (t->ft) {
		struct sonde_errmsg derr = {{0}};

		if (sonde_ftrace_destroy(t->ft, &derr) < 0) {
			cli_error("could not restore tracefs: %s", derr.text);
			ret = EXIT_FAIL;
		}
		t->ft = NULL;
	}
	if (ret == EXIT_OK && o->output) {
		/* "read events": what the kernel handed to the recorder, i.e. what the file holds.
		 */
		counted = true;
		if (write_dat(t, (const char **)stats_text) < 0)
			ret = EXIT_FAIL;
	} else if (!o->output) {
		events = t->live_lines;
		counted = true;
	}
	if (ret == EXIT_OK && st && have)
		summary(t, events, counted, st, have);
	if (ret == EXIT_OK && t->status >= 0)
		ret = cli_workload_exit_code(t->status);
unblock:
	sigprocmask(SIG_SETMASK, &waitmask, NULL);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
out:
	for (int c = 0; stats_text && c <= t->max_cpu; c++)
		free(stats_text[c]);
	free(stats_text);
	free(st);
	free(have);
	trace_out_close(&t->out);
	return ret;
}

int cmd_trace(int argc, char **argv, struct cli *cli)
{
	struct trace_opts o = {0};
	struct run t = {0};
	const char *list_glob = NULL;
	bool list = false;
	int r, ret;

	if (argc >= 2 && !strcmp(argv[1], "report"))
		return report(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "recover"))
		return trace_recover(argc - 1, argv + 1, cli);
	sonde_strlist_init(&o.functions);
	sonde_strlist_init(&o.notrace);
	sonde_strlist_init(&o.devices);
	r = parse_options(argc, argv, &o, &list, &list_glob);
	if (r == EXIT_OK + 100) {
		opts_fini(&o);
		return EXIT_OK;
	}
	if (r < 0) {
		cli_error("%s", sonde_strerror(r));
		opts_fini(&o);
		return EXIT_FAIL;
	}
	if (r > 1) {
		opts_fini(&o);
		return r;
	}
	if (!cli_roots(cli)->tracefs) {
		cli_error("tracefs is not mounted and could not be mounted (are you root?)");
		opts_fini(&o);
		return EXIT_FAIL;
	}
	if (list) {
		ret = list_all(cli, list_glob);
		opts_fini(&o);
		return ret;
	}
	/* As stat -p does: a pid that names no process is an error, not an empty trace. */
	for (size_t i = 0; i < o.npids; i++)
		if (kill(o.pids[i], 0) < 0 && errno == ESRCH) {
			cli_error("no process with pid %d", (int)o.pids[i]);
			opts_fini(&o);
			return EXIT_FAIL;
		}
	t.o = &o;
	t.cli = cli;
	t.status = -1;
	t.pipe_fd = -1;
	t.wl.pid = -1;
	t.wl.go_fd = t.wl.err_fd = -1;
	if (sonde_cpulist_online("/sys", &t.cpus) < 0 || !t.cpus.n) {
		cli_error("can't read the online CPUs from /sys/devices/system/cpu/online");
		opts_fini(&o);
		return EXIT_FAIL;
	}
	t.max_cpu = t.cpus.cpus[t.cpus.n - 1];
	cli_catch_stop_signals(true);
	/* A closed stdout (sonde trace | head) must end the trace through the restore, not kill it. */
	signal(SIGPIPE, SIG_IGN);
	ret = run_trace(&t);
	sonde_cpulist_fini(&t.cpus);
	sonde_cpulist_fini(&t.traced);
	opts_fini(&o);
	return ret;
}
