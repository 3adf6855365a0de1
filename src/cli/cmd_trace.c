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
 * workload.  The loop waits in sonde_wait_until() (ppoll() with the
 * signals unblocked only there) and pumps the live session's text.
 * Every way out (workload exit or crash, Ctrl-C, SIGTERM, a pid gone, an
 * error) goes through the same end: tracing off, drain, stats, destroy the
 * session (restore), and only then write trace.dat, so the kernel's state
 * is back whatever happens to the file.
 */
#include <errno.h>
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
#include <unistd.h>

#include <sonde/cpulist.h>
#include <sonde/doctor.h>
#include <sonde/fileio.h>
#include <sonde/ftrace.h>
#include <sonde/ftrace_session.h>
#include <sonde/idlist.h>
#include <sonde/strlist.h>
#include <sonde/trace_dat.h>
#include <sonde/trace_out.h>
#include <sonde/tracefs.h>
#include <sonde/wait.h>
#include <sonde/workload.h>

#include "cli.h"
#include "trace_recover.h"

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
	struct sonde_errmsg err = {{0}};
	uint64_t n = 0;

	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc == 2) {
			fputs(trace_usage, stdout);
			return EXIT_OK;
		}
		return cli_usage_error("trace", "usage: sonde trace report FILE");
	}
	if (sonde_trace_dat_report(argv[1], stdout, &n, &err) < 0) {
		cli_error("%s", err.text);
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
	struct sonde_ftrace_session *fs;
	struct sonde_trace_out out; /* -o: the trace.dat and the page files */
	struct sonde_workload wl;
	int status; /* the workload's wait status, -1 if none */
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

/* Live: the session's text goes to stdout as it comes.  Return: 0 or -EIO. */
static int print_text(void *ctx, const char *buf, size_t len)
{
	struct run *t = ctx;

	for (size_t i = 0; i < len; i++)
		t->live_lines += buf[i] == '\n';
	return fwrite(buf, 1, len, stdout) == len ? 0 : -EIO;
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
	struct sonde_wait_opts wo = {
	    .wl = t->wl.pid > 0 ? &t->wl : NULL,
	    .pids = t->o->pids,
	    .npids = t->o->npids,
	    .waitmask = waitmask,
	    .stop_signal = &cli_stop_signal,
	    .child_exited = &cli_child_exited,
	};
	struct pollfd pfd = {.fd = sonde_ftrace_session_fd(t->fs), .events = POLLIN};
	struct sonde_wait w;

	if (sonde_wait_init(&w, &wo) < 0) {
		sonde_wait_fini(&w);
		return;
	}
	for (;;) {
		int ev = sonde_wait_until(&w, &pfd, pfd.fd >= 0 ? 1 : 0, 200 * 1000 * 1000);

		if (ev < 0)
			break;
		if ((ev & SONDE_WAIT_READY) && sonde_ftrace_session_pump(t->fs, PUMP_BUDGET) < 0)
			break;
		if (ev & SONDE_WAIT_SIGNAL) {
			/* The workload gets the signal in the teardown, after tracing off. */
			t->interrupted = true;
			t->stop_sig = w.signal;
			break;
		}
		if (ev & SONDE_WAIT_EXITED) {
			t->status = w.status;
			break;
		}
		/* A -P process whose pidfd could not open is looked for by its pid. */
		if ((ev & SONDE_WAIT_GONE) || (t->o->npids && pids_gone(t)))
			break;
	}
	sonde_wait_fini(&w);
}

/* The summary: "[ sonde trace: N events on CPUs 0-1, 12 overrun on CPU 1 ]". */
static void summary(struct run *t, uint64_t events, bool counted,
		    const struct sonde_ftrace_session_stats *st)
{
	char cpus[128], lost[512] = "";
	uint64_t overrun = 0, dropped = 0;
	size_t used = 0;

	sonde_cpulist_format(t->traced.n ? &t->traced : &t->cpus, cpus, sizeof(cpus));
	for (int c = 0; c < st->ncpus; c++) {
		uint64_t o, d;

		if (!st->have[c])
			continue;
		o = st->cpu[c].overrun + st->cpu[c].commit_overrun;
		d = st->cpu[c].dropped;
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
	struct sonde_trace_dat_spec spec = {0};
	const char **globs = calloc(t->o->nevents + 1, sizeof(*globs));
	struct sonde_errmsg err = {{0}};
	int r;

	if (!globs)
		return -ENOMEM;
	for (size_t i = 0; i < t->o->nevents; i++)
		globs[i] = t->o->events[i].glob;
	spec.tracefs = t->cli->roots.tracefs;
	spec.event_globs = globs;
	spec.nglobs = t->o->nevents;
	spec.cpu_stats = stats_text;
	r = sonde_trace_out_commit(&t->out, &spec, &err);
	free(globs);
	if (r < 0)
		cli_error("%s", err.text);
	return r;
}

/* The session's configuration from the options.  Return: 0 or an exit code (printed). */
static int session_config(struct run *t, struct sonde_ftrace_session_config *scfg, char *mask,
			  size_t masklen)
{
	struct trace_opts *o = t->o;
	struct sonde_ftrace_config *cfg = &scfg->ftrace;

	cfg->tracefs = t->cli->roots.tracefs;
	cfg->sysfs = "/sys";
	cfg->tracer = o->tracer;
	cfg->top_level = o->tracer && !strcmp(o->tracer, "blk");
	cfg->functions = (const char *const *)o->functions.v;
	cfg->nfunctions = o->functions.n;
	cfg->notrace = (const char *const *)o->notrace.v;
	cfg->nnotrace = o->notrace.n;
	cfg->events = o->events;
	cfg->nevents = o->nevents;
	cfg->pids = o->pids;
	cfg->npids = o->npids;
	cfg->devices = (const char *const *)o->devices.v;
	cfg->ndevices = o->devices.n;
	cfg->buffer_kb = o->buffer_kb;
	scfg->cpus = t->cpus.cpus;
	scfg->ncpus = t->cpus.n;
	scfg->on_text = print_text;
	scfg->ctx = t;
	if (o->cpu_list) {
		struct sonde_cpulist only;

		if (sonde_cpulist_parse(o->cpu_list, &only) < 0 ||
		    sonde_ftrace_cpumask(only.cpus, only.n, mask, masklen) < 0) {
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
		cfg->cpumask = mask;
	}
	if (o->tracer && strcmp(o->tracer, "nop")) {
		char text[1024], why[1024];
		struct sonde_strlist avail;
		bool listed;

		sonde_strlist_init(&avail);
		sonde_tracefs_instance_read(cfg->tracefs, NULL, "available_tracers", text,
					    sizeof(text));
		listed = sonde_tracefs_split_words(text, &avail) == 0 &&
			 sonde_strlist_contains(&avail, o->tracer);
		sonde_strlist_fini(&avail);
		if (!listed) {
			struct sonde_doctor_config dcfg;

			sonde_doctor_config_default(&dcfg);
			dcfg.tracefs = cfg->tracefs;
			cli_error("%s", sonde_doctor_explain_tracer(&dcfg, o->tracer, -ENOENT, why,
								    sizeof(why)));
			return EXIT_FAIL;
		}
	}
	return 0;
}

static int run_trace(struct run *t)
{
	struct trace_opts *o = t->o;
	struct sonde_ftrace_session_config scfg = {0};
	struct sonde_errmsg err = {{0}};
	struct sonde_ftrace_session_stats st = {0};
	char mask[1200];
	sigset_t block, waitmask;
	uint64_t events = 0;
	bool counted = false, cut;
	int r, ret = EXIT_FAIL;

	r = session_config(t, &scfg, mask, sizeof(mask));
	if (r)
		return r;
	if (o->output && !sonde_trace_dat_available()) {
		struct sonde_errmsg e = {{0}};

		sonde_trace_dat_write(o->output, NULL, &e);
		cli_error("%s", e.text);
		return EXIT_FAIL;
	}
	trace_check_leftovers();
	if (o->output && sonde_trace_out_open(&t->out, SONDE_RUN_DIR, o->output, t->max_cpu + 1,
					      o->events, o->nevents, &err) < 0) {
		if (err.text[0])
			cli_error("%s", err.text);
		goto out;
	}
	if (o->output)
		scfg.cpu_files = (const char *const *)t->out.cpu_files;

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
		scfg.ftrace.pids = &t->wl.pid;
		scfg.ftrace.npids = 1;
	}
	r = sonde_ftrace_session_open(&scfg, &t->fs, &err);
	if (r == -EINVAL && !scfg.ftrace.top_level && o->tracer &&
	    !strcmp(o->tracer, "function_graph")) {
		/* Kernels before 6.11 run function_graph in the top-level instance only. */
		cli_warn("this kernel refuses function_graph in an instance: using the top-level "
			 "instance (its state is saved and restored)");
		scfg.ftrace.top_level = true;
		memset(&err, 0, sizeof(err));
		r = sonde_ftrace_session_open(&scfg, &t->fs, &err);
	}
	if (r < 0) {
		setup_error(t, r, &err);
		if (o->argv)
			sonde_workload_abort(&t->wl);
		goto unblock;
	}
	r = sonde_ftrace_session_start(t->fs, &err);
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
	sonde_ftrace_session_stop(t->fs);
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
	memset(&err, 0, sizeof(err));
	if (sonde_ftrace_session_drain(t->fs, DRAIN_SECONDS, &cut, &err) < 0) {
		cli_error("recording: %s", err.text);
		ret = EXIT_FAIL;
	}
	if (cut)
		cli_warn("stopped printing the rest of the buffer after %d s", DRAIN_SECONDS);
	memset(&err, 0, sizeof(err));
	if (sonde_ftrace_session_close(t->fs, &st, &err) < 0) {
		cli_error("could not restore tracefs: %s", err.text);
		ret = EXIT_FAIL;
	}
	t->fs = NULL;
	events = st.read;
	if (ret == EXIT_OK && o->output) {
		/* "read events": what the kernel handed to the recorder, i.e. what the file holds.
		 */
		counted = true;
		if (write_dat(t, (const char **)st.text) < 0)
			ret = EXIT_FAIL;
	} else if (!o->output) {
		events = t->live_lines;
		counted = true;
	}
	if (ret == EXIT_OK && st.cpu && st.have)
		summary(t, events, counted, &st);
	if (ret == EXIT_OK && t->status >= 0)
		ret = cli_workload_exit_code(t->status);
unblock:
	sigprocmask(SIG_SETMASK, &waitmask, NULL);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
out:
	sonde_ftrace_session_stats_fini(&st);
	sonde_trace_out_close(&t->out);
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
