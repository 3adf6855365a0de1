// SPDX-License-Identifier: MIT
/*
 * sonde record: sample events into perf.data.
 *
 * Order of work: parse options, open the writer, open the capture (the
 * workload forked and held at its gate, events and rings, see
 * sonde/capture.h: the loop is shared with sonde-agent), declare the events
 * to the writer, synthesize what already runs, then run.  Every way out
 * (workload exit or crash, Ctrl-C, SIGTERM, a write error) goes through the
 * same end: disable, final drain, features, close.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/agent.h>
#include <sonde/capture.h>
#include <sonde/doctor.h>
#include <sonde/evprobe.h>
#include <sonde/idlist.h>
#include <sonde/outfile.h>
#include <sonde/perf_data.h>
#include <sonde/record.h>
#include <sonde/regs.h>
#include <sonde/synth.h>
#include <sonde/tracing_data.h>
#include <sonde/vdso.h>
#include <sonde/workload.h>

#include "analysis_opts.h"
#include "cli.h"

static const char record_usage[] =
    "usage: sonde record [options] [-- COMMAND [ARGS]]\n"
    "\n"
    "Samples events into a perf.data file that sonde report and perf report read.\n"
    "\n"
    "  -e, --event SPEC       events to sample (default: cycles, or cpu-clock without a PMU)\n"
    "      --filter EXPR      kernel filter for the tracepoints of the last -e\n"
    "  -F, --freq HZ          samples per second (default 4000)\n"
    "  -c, --count N          sample every N events\n"
    "  -g                     call chains (frame pointers)\n"
    "      --call-graph MODE  fp, or dwarf[,SIZE] (user stack copy, default 8192 bytes)\n"
    "  -p, --pid PID[,PID]    record existing processes (and threads they create)\n"
    "  -t, --tid TID[,TID]    record existing threads\n"
    "  -a, --all-cpus         record every CPU (system wide)\n"
    "  -C, --cpu CPUS         record these CPUs only; implies -a\n"
    "  -o, --output FILE      output file (default perf.data; the old one becomes FILE.old);\n"
    "                         - or a FIFO: perf's pipe format, streamed (perf report -i -)\n"
    "  -m, --mmap-pages N     ring size per CPU in pages (a power of two, default 128)\n"
    "  -z, --compression-level[=N]\n"
    "                         compress records with zstd level N (default 1), as perf -z\n"
    "      --kallsyms         keep a kallsyms snapshot in the file (default with -a)\n"
    "      --no-kallsyms      don't\n"
    "      --buildid-dir DIR  perf's build-id cache, where the [vdso] image is kept\n"
    "                         (default ~/.debug)\n"
    "  -N, --no-buildid-cache don't keep the [vdso] image there\n"
    "  -B, --no-buildid       don't collect build ids of the objects with samples\n"
    "  -T, --timestamp        sample times (always on: sonde's samples carry them)\n"
    "  -d, --data             sample data addresses (and record data mappings)\n"
    "      --switch-events    record context switches (PERF_RECORD_SWITCH)\n"
    "      --namespaces       record the namespaces of new tasks\n"
    "      --user-regs[=REGS] sample user registers (comma-separated, default all;\n"
    "                         perf's names: --user-regs=? lists them)\n"
    "      --intr-regs[=REGS] sample the registers at the interrupt (same names)\n"
    "  -D, --delay MSECS      start the events MSECS after the command starts\n"
    "      --max-size SIZE    stop when the records reach SIZE (B, K, M, G suffix)\n"
    "      --target HOST:PORT|ssh://[USER@]HOST[:PORT]|unix:PATH\n"
    "                         capture on a target running sonde-agent (the command\n"
    "                         runs there); the file is written here\n"
    "      --token-file FILE  the agent's token (or --token TOKEN, or $SONDE_AGENT_TOKEN;\n"
    "                         a local agent's default file is read when none is given)\n"
    "  -q, --quiet            no summary line and no warnings\n"
    "  -h, --help             this help\n"
    "\n"
    "Stop a system-wide or attached capture with Ctrl-C or SIGTERM.  See sonde-record(1).\n";

struct record_opts {
	struct sonde_evlist events;
	char **filters; /* per event, owned strings or NULL */
	pid_t *pids, *tids;
	size_t npids, ntids;
	bool all_cpus;
	const char *cpu_list;
	uint64_t freq, period;
	enum sonde_callgraph cg;
	uint32_t dwarf_size;
	unsigned int pages;
	const char *output;
	int kallsyms;		 /* -1 default, 0 no, 1 yes */
	const char *buildid_dir; /* --buildid-dir */
	bool no_buildid_cache;
	bool no_buildid; /* -B */
	bool sample_addr, switch_events, namespaces;
	uint64_t user_regs, intr_regs;
	unsigned int delay_ms;
	uint64_t max_size; /* --max-size: bytes of records, 0: none */
	bool size_reached;
	int zlevel; /* 0: no compression */
	char **argv;
	/* --target: the -e and --filter arguments go to the target as they are */
	const char *target;
	struct cli_agent_auth auth;
	const char **specs, **spec_filters;
	size_t nspecs;
};

static int writer_sink(void *ctx, const void *buf, size_t len)
{
	return sonde_pd_writer_write(ctx, buf, len);
}

static int writer_emit(void *ctx, const void *rec, size_t len)
{
	return sonde_pd_writer_write(ctx, rec, len);
}

static int parse_callgraph(const char *arg, struct record_opts *o)
{
	if (!strcmp(arg, "fp")) {
		o->cg = SONDE_CG_FP;
		return 0;
	}
	if (!strncmp(arg, "dwarf", 5) && (arg[5] == '\0' || arg[5] == ',')) {
		o->cg = SONDE_CG_DWARF;
		if (arg[5] == ',') {
			char *end;
			unsigned long v = strtoul(arg + 6, &end, 0);

			if (*end || !v || v > SONDE_RECORD_MAX_DWARF)
				return cli_usage_error("record",
						       "dwarf stack size must be 1..%u bytes",
						       SONDE_RECORD_MAX_DWARF);
			/* The kernel wants a multiple of 8. */
			o->dwarf_size = (uint32_t)((v + 7) & ~7ul);
			if (o->dwarf_size > SONDE_RECORD_MAX_DWARF)
				o->dwarf_size = SONDE_RECORD_MAX_DWARF;
		}
		return 0;
	}
	return cli_usage_error("record", "--call-graph takes fp or dwarf[,SIZE], not '%s'", arg);
}

static int set_filter(struct record_opts *o, size_t first, const char *expr)
{
	bool any = false;

	for (size_t i = first; i < o->events.n; i++) {
		if (o->events.events[i].kind != SONDE_EV_TRACEPOINT)
			continue;
		free(o->filters[i]);
		o->filters[i] = strdup(expr);
		if (!o->filters[i])
			return -ENOMEM;
		any = true;
	}
	if (!any)
		return cli_usage_error(
		    "record", "--filter applies to a tracepoint: put it after -e SYS:EVENT");
	return 0;
}

static int grow_filters(struct record_opts *o)
{
	char **f = realloc(o->filters, (o->events.n ? o->events.n : 1) * sizeof(*f));

	if (!f)
		return -ENOMEM;
	o->filters = f;
	return 0;
}

static int add_remote_spec(struct record_opts *o, const char *spec)
{
	const char **v = realloc(o->specs, (o->nspecs + 1) * sizeof(*v));
	const char **f;

	if (!v)
		return -ENOMEM;
	o->specs = v;
	f = realloc(o->spec_filters, (o->nspecs + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	o->spec_filters = f;
	o->specs[o->nspecs] = spec;
	o->spec_filters[o->nspecs++] = "";
	return 0;
}

/* perf's --user-regs/--intr-regs: names, or every register without any. */
static int parse_regs(const char *opt, const char *arg, uint64_t *mask)
{
	char bad[32];
	int r;

	if (arg && !strcmp(arg, "?")) {
		printf("available registers: %s\n", sonde_regs_list());
		return -1;
	}
	r = sonde_regs_parse(arg, mask, bad, sizeof(bad));
	if (r == -ENOTSUP)
		return cli_usage_error("record", "%s: this build knows no registers of its machine",
				       opt);
	if (r < 0)
		return cli_usage_error("record", "%s: unknown register '%s' (available: %s)", opt,
				       bad, sonde_regs_list());
	return 0;
}

/* perf's size argument: a number with an optional B, K, M or G. */
static int parse_size(const char *arg, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	unsigned int shift = 0;

	if (end == arg || arg[0] == '-')
		return -EINVAL;
	if (*end && strchr("BbKkMmGg", *end)) {
		const char *units = "BKMG";

		shift = (unsigned int)(strchr(units, toupper((unsigned char)*end)) - units) * 10;
		end++;
	}
	if (*end || !v || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_options(int argc, char **argv, struct record_opts *o, struct cli *cli)
{
	enum {
		OPT_CG = 256,
		OPT_FILTER,
		OPT_KALLSYMS,
		OPT_NO_KALLSYMS,
		OPT_TARGET,
		OPT_TOKEN,
		OPT_TOKEN_STR,
		OPT_BUILDID_DIR,
		OPT_SWITCH,
		OPT_NS,
		OPT_UREGS,
		OPT_IREGS,
		OPT_MAX_SIZE
	};
	static const struct option opts[] = {
	    {"event", required_argument, NULL, 'e'},
	    {"filter", required_argument, NULL, OPT_FILTER},
	    {"freq", required_argument, NULL, 'F'},
	    {"count", required_argument, NULL, 'c'},
	    {"call-graph", required_argument, NULL, OPT_CG},
	    {"pid", required_argument, NULL, 'p'},
	    {"tid", required_argument, NULL, 't'},
	    {"all-cpus", no_argument, NULL, 'a'},
	    {"cpu", required_argument, NULL, 'C'},
	    {"output", required_argument, NULL, 'o'},
	    {"mmap-pages", required_argument, NULL, 'm'},
	    {"compression-level", optional_argument, NULL, 'z'},
	    {"kallsyms", no_argument, NULL, OPT_KALLSYMS},
	    {"no-kallsyms", no_argument, NULL, OPT_NO_KALLSYMS},
	    {"buildid-dir", required_argument, NULL, OPT_BUILDID_DIR},
	    {"no-buildid-cache", no_argument, NULL, 'N'},
	    {"no-buildid", no_argument, NULL, 'B'},
	    {"timestamp", no_argument, NULL, 'T'},
	    {"data", no_argument, NULL, 'd'},
	    {"switch-events", no_argument, NULL, OPT_SWITCH},
	    {"namespaces", no_argument, NULL, OPT_NS},
	    {"user-regs", optional_argument, NULL, OPT_UREGS},
	    {"intr-regs", optional_argument, NULL, OPT_IREGS},
	    {"delay", required_argument, NULL, 'D'},
	    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
	    {"target", required_argument, NULL, OPT_TARGET},
	    {"token-file", required_argument, NULL, OPT_TOKEN},
	    {"token", required_argument, NULL, OPT_TOKEN_STR},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	size_t last_first = 0;
	char *end;
	int c, r;

	/* A remote capture's events are the target's: find --target first. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--target", 8) && (argv[i][8] == '=' || !argv[i][8]))
			o->target =
			    argv[i][8] == '=' ? argv[i] + 9 : (i + 1 < argc ? argv[i + 1] : "");
	optind = 1;
	/*
	 * getopt_long() sets optarg for every option that requires an argument;
	 * the analyzer keeps the NULL an optional one (-z) had in an earlier
	 * round and reports the next option's strtoull(optarg).
	 */
	// NOLINTBEGIN(clang-analyzer-core.NonNullParamChecker)
	while ((c = getopt_long(argc, argv, "+e:F:c:gp:t:aC:o:m:z::NBTdD:qh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_TARGET:
			o->target = optarg;
			break;
		case OPT_TOKEN:
			o->auth.token_file = optarg;
			break;
		case OPT_TOKEN_STR:
			o->auth.token = optarg;
			break;
		case 'q':
			cli_quiet = true;
			break;
		case 'e': {
			size_t before = o->events.n;

			if (o->target) {
				if (add_remote_spec(o, optarg) < 0)
					return EXIT_FAIL;
				break;
			}

			r = sonde_evlist_parse(&o->events, optarg, cli_roots(cli));
			if (r < 0) {
				cli_error("%s", o->events.err.text);
				return EXIT_USAGE;
			}
			if (grow_filters(o) < 0)
				return EXIT_FAIL;
			for (size_t i = before; i < o->events.n; i++)
				o->filters[i] = NULL;
			last_first = before;
			break;
		}
		case OPT_FILTER:
			if (o->target) {
				if (!o->nspecs)
					return cli_usage_error("record",
							       "--filter applies to a tracepoint: "
							       "put it after -e SYS:EVENT");
				o->spec_filters[o->nspecs - 1] = optarg;
				break;
			}
			if ((r = set_filter(o, last_first, optarg)) != 0)
				return r < 0 ? EXIT_FAIL : r;
			break;
		case 'F':
			o->freq = strtoull(optarg, &end, 10);
			if (*end || !o->freq)
				return cli_usage_error("record", "-F needs a frequency in Hz");
			break;
		case 'c':
			o->period = strtoull(optarg, &end, 10);
			if (*end || !o->period)
				return cli_usage_error("record", "-c needs a positive count");
			break;
		case 'g':
			o->cg = SONDE_CG_FP;
			break;
		case OPT_CG:
			if ((r = parse_callgraph(optarg, o)) != 0)
				return r;
			break;
		case 'p':
			if ((r = cli_ids("record", "-p", optarg, &sonde_idkind_pid, &o->pids,
					 &o->npids)) != 0)
				return r < 0 ? EXIT_FAIL : r;
			break;
		case 't':
			if ((r = cli_ids("record", "-t", optarg, &sonde_idkind_tid, &o->tids,
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
		case 'o':
			o->output = optarg;
			break;
		case 'm': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !v || (v & (v - 1)) || v > (1ul << 20))
				return cli_usage_error("record",
						       "-m needs a power of two number of pages");
			o->pages = (unsigned int)v;
			break;
		}
		case 'z': {
			long v = optarg ? strtol(optarg, &end, 10) : 1;

			if ((optarg && *end) || v < 1 || v > 22)
				return cli_usage_error("record",
						       "-z takes a zstd level from 1 to 22");
			if (!sonde_pd_writer_can_compress())
				return cli_usage_error("record",
						       "this sonde was built without zstd: "
						       "-z is unavailable");
			o->zlevel = (int)v;
			break;
		}
		case OPT_KALLSYMS:
			o->kallsyms = 1;
			break;
		case OPT_NO_KALLSYMS:
			o->kallsyms = 0;
			break;
		case OPT_BUILDID_DIR:
			o->buildid_dir = optarg;
			break;
		case 'N':
			o->no_buildid_cache = true;
			break;
		case 'B':
			o->no_buildid = true;
			break;
		case 'T':
			break; /* every sample has its time already */
		case 'd':
			o->sample_addr = true;
			break;
		case OPT_SWITCH:
			o->switch_events = true;
			break;
		case OPT_NS:
			o->namespaces = true;
			break;
		case OPT_UREGS:
		case OPT_IREGS:
			if ((r = parse_regs(c == OPT_UREGS ? "--user-regs" : "--intr-regs", optarg,
					    c == OPT_UREGS ? &o->user_regs : &o->intr_regs)) != 0)
				return r;
			break;
		case 'D': {
			long v = strtol(optarg, &end, 10);

			if (*end || v < 0 || v > 24L * 3600 * 1000)
				return cli_usage_error(
				    "record", "--delay takes milliseconds (0 or more; "
					      "perf's -1 needs --control, which sonde lacks)");
			o->delay_ms = (unsigned int)v;
			break;
		}
		case OPT_MAX_SIZE:
			if (parse_size(optarg, &o->max_size) < 0)
				return cli_usage_error("record",
						       "--max-size takes a size such as 100M, "
						       "not '%s'",
						       optarg);
			break;
		case 'h':
			fputs(record_usage, stdout);
			return -1;
		default:
			return cli_usage_error("record", "bad option");
		}
	}
	// NOLINTEND(clang-analyzer-core.NonNullParamChecker)
	if (optind < argc)
		o->argv = &argv[optind];
	if (cli_check_target("record", o->argv != NULL, o->npids, o->ntids, o->all_cpus))
		return EXIT_USAGE;
	if ((o->auth.token_file || o->auth.token) && !o->target)
		return cli_usage_error("record", "--token and --token-file go with --target");
	if (o->target)
		return 0; /* the target picks its default event */
	if (!o->events.n) {
		/* perf's default is cycles; without a PMU it falls back to cpu-clock. */
		const char *def = sonde_hw_pmu_probe() == 0 ? "cycles" : "cpu-clock";

		if (sonde_evlist_parse(&o->events, def, cli_roots(cli)) < 0 || grow_filters(o) < 0)
			return EXIT_FAIL;
		o->filters[0] = NULL;
	}
	return 0;
}

/* The command line as the user typed it: "sonde record ...". */
static int record_header_features(struct sonde_pd_writer *w, int argc, char **argv)
{
	const char **full = calloc((size_t)argc + 2, sizeof(*full));
	int r;

	if (!full)
		return -ENOMEM;
	full[0] = "sonde";
	for (int i = 0; i < argc; i++)
		full[i + 1] = argv[i];
	r = sonde_record_header_features(w, argc + 1, full);
	free(full);
	return r;
}

struct capture {
	struct record_opts *o;
	struct cli *cli;
	struct sonde_pd_writer *w;
	struct sonde_outfile of; /* the capture's file, renamed into place at the end */
	struct sonde_capture cap;
	struct sonde_record *rec; /* borrowed from cap */
	struct sonde_cpulist cpus;
	int status;	  /* workload wait status, -1 if none */
	bool interrupted; /* stopped by a signal */
	bool captured;	  /* the capture ran: the file is worth keeping */
	int write_err;
	time_t size_reached_at; /* --max-size: when the command got SIGTERM */
};

static int declare_events(struct capture *c)
{
	size_t max = c->rec->nslots;
	uint64_t *ids = malloc((max ? max : 1) * sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < c->rec->nevents; i++) {
		size_t n = sonde_record_event_ids(c->rec, i, ids, max);
		int r = sonde_pd_writer_add_attr(c->w, &c->rec->attrs[i],
						 sonde_record_event_name(c->rec, i), ids, n);

		if (r < 0) {
			free(ids);
			return r;
		}
	}
	free(ids);
	return 0;
}

static void warn_kernel_map_hidden(void)
{
	struct sonde_doctor_config cfg;
	const char *why;
	char buf[256];

	sonde_doctor_config_default(&cfg);
	why = sonde_doctor_explain_kallsyms(&cfg, buf, sizeof(buf));
	cli_warn("no kernel map in the capture: %s",
		 why ? why : "kallsyms lists no _text or _stext");
}

#define MIB (1024.0 * 1024.0)

/* What the summary line reports: the output as it ended up. */
struct summary {
	uint64_t file_bytes;  /* the file's size (a stream: the record bytes sent) */
	uint64_t raw, packed; /* record bytes before and after -z */
	int64_t samples;      /* samples in the file, -1: all that were captured */
};

/* Samples in the file at @path (after a write error cut it).  Return: count or -1. */
static int64_t samples_in(const char *path)
{
	struct sonde_pd_reader *r;
	struct sonde_pd_record rec;
	int64_t n = 0;

	if (sonde_pd_reader_open(&r, path, NULL) < 0)
		return -1;
	while (sonde_pd_reader_next(r, &rec) == 1)
		n += rec.type == PERF_RECORD_SAMPLE;
	sonde_pd_reader_close(r);
	return n;
}

static void print_summary(struct capture *c, const struct summary *sum)
{
	uint64_t samples = 0, lost = 0, throttles = 0;
	char lost_cpus[256] = "";
	size_t used = 0;

	for (size_t k = 0; k < c->rec->nrings; k++) {
		const struct sonde_ring_stats *st = &c->rec->stats[k];

		samples += st->samples;
		throttles += st->throttles;
		if (st->lost) {
			lost += st->lost;
			used += (size_t)snprintf(lost_cpus + used, sizeof(lost_cpus) - used,
						 "%s%d:%llu", used ? " " : "", st->cpu,
						 (unsigned long long)st->lost);
			if (used >= sizeof(lost_cpus))
				used = sizeof(lost_cpus) - 1;
		}
	}
	fprintf(stderr, "[ sonde record: captured and wrote %.3f MB %s",
		(double)sum->file_bytes / MIB,
		c->of.is_stdout ? "to standard output" : c->o->output);
	if (c->o->zlevel)
		fprintf(stderr, ", compressed (original %.3f MB, ratio is %.1f)",
			(double)sum->raw / MIB,
			sum->packed ? (double)sum->raw / (double)sum->packed : 0.0);
	if (sum->samples >= 0 && (uint64_t)sum->samples != samples)
		fprintf(stderr, " (%llu samples in the file of %llu captured",
			(unsigned long long)sum->samples, (unsigned long long)samples);
	else
		fprintf(stderr, " (%llu samples", (unsigned long long)samples);
	/* The events' own counts, what perf report says ("Total Lost Samples");
	 * the rings' LOST records only on kernels without them. */
	if (c->rec->lost_format && c->rec->lost_samples)
		fprintf(stderr, ", %llu lost", (unsigned long long)c->rec->lost_samples);
	else if (!c->rec->lost_format && lost)
		fprintf(stderr, ", %llu lost on CPUs %s", (unsigned long long)lost, lost_cpus);
	if (throttles)
		fprintf(stderr, ", throttled %llu times", (unsigned long long)throttles);
	fprintf(stderr, ") ]\n");
}

/*
 * Finishes the file after the capture: end features, build ids, close.
 * Fills @sum with what the file holds.  Return: EXIT_OK or EXIT_FAIL.
 */
static int finish_file(struct capture *c, struct summary *sum)
{
	struct record_opts *o = c->o;
	const char *path = c->of.tmp ? c->of.tmp : o->output;
	struct sonde_errmsg err = {{0}};
	struct stat st;
	int r = 0, ret = EXIT_OK;

	if (c->captured)
		r = sonde_record_end_features(c->w, c->rec, cli_roots(c->cli)->tracefs,
					      o->kallsyms < 0 ? o->all_cpus : o->kallsyms);
	/* The pass re-reads the file: a stream has no build-id table (as perf's). */
	if (c->captured && !c->write_err && !c->of.stream && !o->no_buildid) {
		struct sonde_record_bids found;
		int b = sonde_record_build_ids(c->w, path, "/sys", &found);

		if (b < 0 && !r)
			r = b;
		if (b == 0 && found.vdso_len && !o->no_buildid_cache) {
			/* Every process's vDSO is the recorder's own (one kernel). */
			int fd = sonde_vdso_open();

			cli_cache_vdso(cli_buildid_dir(o->buildid_dir), &found, fd);
			if (fd >= 0)
				close(fd);
		}
	}
	if (!c->write_err)
		c->write_err = sonde_pd_writer_error(c->w);
	if (c->write_err && c->of.stream)
		cli_error("writing %s failed: %s", c->of.is_stdout ? "standard output" : o->output,
			  sonde_pd_writer_errmsg(c->w));
	else if (c->write_err)
		cli_error("writing %s failed: %s; the file keeps the records written before",
			  o->output, sonde_pd_writer_errmsg(c->w));
	else if (r < 0)
		cli_warn("some header features could not be written: %s", sonde_strerror(r));
	sonde_pd_writer_sync(c->w);
	sum->raw = sonde_pd_writer_data_size(c->w);
	sum->packed = sonde_pd_writer_file_data_size(c->w);
	if (sonde_pd_writer_close(c->w, &err) < 0) {
		if (!c->write_err)
			cli_error("closing %s: %s", o->output, err.text);
		ret = EXIT_FAIL;
	} else if (c->write_err) {
		ret = EXIT_FAIL;
	}
	c->w = NULL;
	/* The real size, header features included (not just the records). */
	sum->file_bytes =
	    !c->of.stream && fstat(c->of.fd, &st) == 0 ? (uint64_t)st.st_size : sum->packed;
	/* After a write error the file holds fewer samples than were captured. */
	sum->samples = ret != EXIT_OK && !c->of.stream ? samples_in(path) : -1;
	return ret;
}

/*
 * --max-size: after each pass, once the records reach the cap, stop as
 * perf does: the command gets SIGTERM (sonde record then exits with its
 * status, 143, like perf), the capture itself stops (-a, -p), and a
 * command still running a second later is stopped for good.
 */
static int size_reached(void *ctx)
{
	struct capture *c = ctx;
	struct timespec now;

	if (sonde_pd_writer_file_data_size(c->w) < c->o->max_size)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!c->o->size_reached) {
		c->o->size_reached = true;
		c->size_reached_at = now.tv_sec;
		if (c->cap.wl.pid > 0 && kill(c->cap.wl.pid, SIGTERM) == 0)
			return 0;
	}
	return c->cap.wl.pid <= 0 || now.tv_sec > c->size_reached_at;
}

static int run_capture(struct capture *c, int argc, char **argv)
{
	struct record_opts *o = c->o;
	struct sonde_capture_opts co = {0};
	struct sonde_errmsg err = {{0}};
	sigset_t block, waitmask;
	int r, ret = EXIT_FAIL;

	r = o->cpu_list ? sonde_cpulist_parse(o->cpu_list, &c->cpus)
			: sonde_cpulist_online("/sys", &c->cpus);
	if (r < 0) {
		cli_error("bad CPU list '%s'", o->cpu_list ? o->cpu_list : "(online)");
		return EXIT_USAGE;
	}
	/* A capture that fails to start must leave the previous file alone. */
	r = sonde_outfile_open(&c->of, o->output, 0600,
			       SONDE_OUTFILE_KEEP_OLD | SONDE_OUTFILE_STDOUT, &err);
	if (r < 0) {
		cli_error("%s", err.text);
		return EXIT_FAIL;
	}
	/* "-", a FIFO: perf's pipe mode; a reader that goes away is a write error. */
	if (c->of.stream)
		signal(SIGPIPE, SIG_IGN);
	r = c->of.stream ? sonde_pd_writer_open_stream(&c->w, c->of.fd, &err)
			 : sonde_pd_writer_open_fd(&c->w, c->of.fd, &err);
	if (r < 0) {
		cli_error("%s", err.text);
		return EXIT_FAIL;
	}
	if (o->zlevel && sonde_pd_writer_set_compression(c->w, o->zlevel) < 0) {
		cli_error("%s", sonde_pd_writer_errmsg(c->w));
		return EXIT_FAIL;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGCHLD);

	co.rec.events = &o->events;
	co.rec.target.pids = o->pids;
	co.rec.target.npids = o->npids;
	co.rec.target.tids = o->tids;
	co.rec.target.ntids = o->ntids;
	co.rec.target.cpus = &c->cpus;
	co.rec.target.procfs = "/proc";
	co.rec.freq = o->freq;
	co.rec.period = o->period;
	co.rec.callgraph = o->cg;
	co.rec.dwarf_size = o->dwarf_size;
	co.rec.pages = o->pages;
	co.rec.filters = (const char *const *)o->filters;
	co.rec.system_wide = o->all_cpus;
	co.rec.sample_addr = o->sample_addr;
	co.rec.switch_events = o->switch_events;
	co.rec.namespaces = o->namespaces;
	co.rec.user_regs = o->user_regs;
	co.rec.intr_regs = o->intr_regs;
	co.delay_ms = o->delay_ms;
	if (o->max_size) {
		co.on_pass = size_reached;
		co.ctx = c;
	}
	co.argv = o->argv;
	co.sink = writer_sink;
	co.sink_ctx = c->w;
	co.waitmask = &waitmask;
	co.stop_signal = &cli_stop_signal;
	co.child_exited = &cli_child_exited;
	r = sonde_capture_open(&c->cap, &co);
	c->rec = c->cap.rec;
	if (r < 0) {
		char why[512];

		if (c->rec && c->rec->failed)
			cli_error("%s\n  %s", c->rec->err.text,
				  sonde_doctor_explain_open_error(
				      &c->rec->failed->attr, c->rec->failed_err, why, sizeof(why)));
		else
			cli_error("%s", c->cap.err.text);
		goto out;
	}
	{
		bool user_only[c->rec->nevents ? c->rec->nevents : 1];

		for (size_t i = 0; i < c->rec->nevents; i++)
			user_only[i] = c->rec->attrs[i].exclude_kernel &&
				       !o->events.events[i].attr.exclude_kernel;
		cli_user_only(&o->events, user_only);
	}
	if (c->rec->freq_asked)
		cli_warn(
		    "maximum frequency rate (%llu Hz) exceeded, throttling from %llu Hz to %llu Hz "
		    "(raise kernel.perf_event_max_sample_rate to sample faster)",
		    (unsigned long long)c->rec->max_freq, (unsigned long long)c->rec->freq_asked,
		    (unsigned long long)c->rec->max_freq);
	r = declare_events(c);
	if (r == 0)
		r = record_header_features(c->w, argc, argv);
	/* Before the first record: a stream can't add it later. */
	if (r == 0 && c->of.stream &&
	    sonde_record_tracing_data(c->w, c->rec, cli_roots(c->cli)->tracefs) < 0)
		cli_warn("the event formats could not be read: tracepoint fields won't decode");
	if (r == 0)
		r = sonde_capture_synthesize(&c->cap, writer_emit, c->w);
	if (r == 0 && c->cap.kernel_map_hidden)
		warn_kernel_map_hidden();
	if (r < 0) {
		cli_error("can't write %s: %s", o->output,
			  sonde_pd_writer_errmsg(c->w)[0] ? sonde_pd_writer_errmsg(c->w)
							  : sonde_strerror(r));
		goto out;
	}
	r = sonde_capture_run(&c->cap);
	if (r < 0) {
		cli_error("%s", c->cap.err.text);
		ret = 127;
		goto out;
	}
	c->captured = true;
	c->status = c->cap.status;
	c->interrupted = c->cap.end == SONDE_CAPTURE_SIGNALED;
	if (c->cap.end == SONDE_CAPTURE_SINK_ERROR)
		c->write_err = c->cap.sink_err;
	else if (sonde_pd_writer_error(c->w))
		c->write_err = sonde_pd_writer_error(c->w);
	ret = EXIT_OK;
out:
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	return ret;
}

/* --target: the same options, run by sonde-agent on the target. */
static int run_remote(struct record_opts *o, int argc, char **argv)
{
	const char **cmdline = calloc((size_t)argc + 2, sizeof(*cmdline));
	uint32_t *pids = calloc(o->npids + 1, sizeof(*pids)),
		 *tids = calloc(o->ntids + 1, sizeof(*tids));
	struct sonde_agent_record_req req = {
	    .nspecs = (uint32_t)o->nspecs,
	    .specs = o->specs,
	    .filters = o->spec_filters,
	    .freq = o->freq,
	    .period = o->period,
	    .callgraph = o->cg,
	    .dwarf_size = o->dwarf_size,
	    .pages = o->pages,
	    .cpu_list = o->cpu_list ? o->cpu_list : "",
	    .npids = (uint32_t)o->npids,
	    .ntids = (uint32_t)o->ntids,
	    .pids = pids,
	    .tids = tids,
	    .cmdline = cmdline,
	    .cmdc = (uint32_t)argc + 1,
	};
	int ret = EXIT_FAIL;

	if (!cmdline || !pids || !tids)
		goto out;
	cmdline[0] = "sonde";
	for (int i = 0; i < argc; i++)
		cmdline[i + 1] = argv[i];
	for (size_t i = 0; i < o->npids; i++)
		pids[i] = (uint32_t)o->pids[i];
	for (size_t i = 0; i < o->ntids; i++)
		tids[i] = (uint32_t)o->tids[i];
	if (o->all_cpus)
		req.flags |= SONDE_AGENT_R_SYSTEM_WIDE;
	/* The host can't read the target's kallsyms later: keep them by default. */
	if (o->kallsyms != 0)
		req.flags |= SONDE_AGENT_R_KALLSYMS;
	if (o->argv) {
		while (o->argv[req.argc])
			req.argc++;
		req.argv = (const char **)o->argv;
	}
	ret = record_remote(o->target, &o->auth, &req, o->output, o->zlevel,
			    o->no_buildid_cache ? NULL : cli_buildid_dir(o->buildid_dir));
out:
	free(cmdline);
	free(pids);
	free(tids);
	return ret;
}

int cmd_record(int argc, char **argv, struct cli *cli)
{
	struct record_opts o = {
	    .freq = SONDE_RECORD_DEFAULT_FREQ,
	    .dwarf_size = SONDE_RECORD_DEFAULT_DWARF,
	    .pages = SONDE_RECORD_DEFAULT_PAGES,
	    .output = "perf.data",
	    .kallsyms = -1,
	};
	struct capture c = {.o = &o, .cli = cli, .status = -1, .of = {.fd = -1}};
	struct summary sum = {0, 0, 0, -1};
	struct sonde_errmsg err = {{0}};
	int ret;

	sonde_evlist_init(&o.events);
	ret = parse_options(argc, argv, &o, cli);
	if (ret != 0) {
		ret = ret < 0 ? EXIT_OK : ret;
		goto out;
	}
	if (o.target && (o.sample_addr || o.switch_events || o.namespaces || o.user_regs ||
			 o.intr_regs || o.delay_ms || o.max_size || o.no_buildid)) {
		ret = cli_usage_error("record", "-B, -d, -D, --switch-events, --namespaces, "
						"--user-regs, --intr-regs and --max-size don't go "
						"to a --target agent yet");
		goto out;
	}
	if (o.target) {
		ret = run_remote(&o, argc, argv);
		goto out;
	}
	cli_catch_stop_signals(false);

	ret = run_capture(&c, argc, argv);
	if (c.w && finish_file(&c, &sum) != EXIT_OK)
		ret = EXIT_FAIL;
	if (c.captured) {
		if (sonde_outfile_commit(&c.of, &err) < 0) {
			cli_error("%s", err.text);
			ret = EXIT_FAIL;
		}
	} else {
		sonde_outfile_abort(&c.of);
	}
	if (c.captured && o.size_reached && !cli_quiet)
		fprintf(stderr,
			"[ sonde record: size limit reached (%llu KB), stopping the capture ]\n",
			(unsigned long long)(o.max_size >> 10));
	if (c.captured && !cli_quiet)
		print_summary(&c, &sum);
	if (ret == EXIT_OK && o.argv)
		ret = cli_workload_exit_code(c.status);
	sonde_capture_close(&c.cap);
	sonde_cpulist_fini(&c.cpus);
out:
	if (o.filters)
		for (size_t i = 0; i < o.events.n; i++)
			free(o.filters[i]);
	free(o.filters);
	free(o.pids);
	free(o.tids);
	free(o.specs);
	free(o.spec_filters);
	sonde_evlist_fini(&o.events);
	return ret;
}
