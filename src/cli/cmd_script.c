// SPDX-License-Identifier: MIT
/*
 * sonde script: every sample of a capture in time order, tracepoints
 * decoded.  One report pass with a per-sample hook (the machine and the
 * symbol layer resolve threads and call chains as for `report`); the hook
 * applies the filters the pass does not know (tid, cpu, event, time) and
 * hands the sample to one view: text lines, JSON lines, the summary
 * table or the I/O table.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/cpulist.h>
#include <sonde/idlist.h>
#include <sonde/iostat.h>
#include <sonde/perf_data.h>
#include <sonde/report.h>
#include <sonde/script_print.h>
#include <sonde/strlist.h>
#include <sonde/tpdecode.h>
#include <sonde/u32map.h>

#include "analysis_opts.h"
#include "cli.h"

static const char usage[] =
    "usage: sonde script [options]\n"
    "\n"
    "Shows every sample of a capture (perf.data from sonde or perf) in time order,\n"
    "tracepoint fields decoded with the formats saved in the capture.\n"
    "\n"
    "  -i, --input FILE     the capture (default perf.data)\n"
    "  -F, --fields LIST    comm,tid,pid,cpu,time,event,ip,sym,symoff,dso,trace,period\n"
    "      --comm LIST      only these commands\n"
    "      --pid LIST       only these processes\n"
    "      --tid LIST       only these threads\n"
    "  -C, --cpu CPUS       only samples taken on these CPUs (0-3,6)\n"
    "      --event LIST     only these events (sys:name, name, or cpu-clock...)\n"
    "      --time START,END only samples in this time range (seconds, either side may be empty)\n"
    "      --json           one JSON object per sample, typed field values\n"
    "      --ns             times to the nanosecond\n"
    "      --reltime        times from the first line shown\n"
    "      --deltatime      times from the previous line shown\n"
    "      --show-task-events   COMM, FORK and EXIT records between the samples\n"
    "      --show-mmap-events   MMAP and MMAP2 records\n"
    "      --show-switch-events context switch records (record --switch-events)\n"
    "      --show-lost-events   LOST records\n"
    "      --summary        counts per event and per process\n"
    "      --io             per process: read and write calls, bytes, failed calls\n"
    "  -k, --vmlinux FILE   kernel image with symbols\n"
    "      --symfs DIR      look up the capture's paths under DIR\n"
    "      --no-demangle    C++ and Rust names as in the symbol table (mangled)\n"
    "      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
    "      --no-inline      no inlined frames in call chains (shown by default for\n"
    "                       --call-graph dwarf captures, as perf script shows them)\n"
    "      --inline         inlined frames for every call-chain frame\n"
    "  -q, --quiet          no warnings\n"
    "  -h, --help           this help\n";

enum mode { MODE_TEXT, MODE_JSON, MODE_SUMMARY, MODE_IO };

struct script_cli {
	const char *input;
	enum mode mode;
	bool quiet;
	unsigned fields;
	struct sonde_strlist comms, events;
	uint32_t *pids, *tids;
	size_t npids, ntids;
	struct sonde_cpulist cpus;
	bool has_time;
	uint64_t t_start, t_end;
	struct sonde_session_opts so;
	/* the pass */
	struct sonde_script_print pr;
	struct sonde_iostat *io;
	uint64_t *ev_counts;	   /* [nevents] */
	struct sonde_u32map procs; /* (event << 22 | pid) -> index in pcounts */
	struct proc_count {
		uint32_t pid, comm;
		uint32_t event;
		uint64_t n;
	} * pcounts;
	size_t npc, pccap;
	int err;
};

/* "12.5" -> ns, exactly (no floating point). */
static int parse_secs(const char *s, size_t len, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000u;
	size_t i = 0;

	if (!len)
		return -EINVAL;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(s[i] - '0') * scale;
			}
	if (i != len || sec > UINT64_MAX / 1000000000u - 1)
		return -EINVAL;
	*ns = sec * 1000000000u + frac;
	return 0;
}

static int parse_time(struct script_cli *c, const char *arg)
{
	const char *comma = strchr(arg, ',');
	size_t l1 = comma ? (size_t)(comma - arg) : strlen(arg);

	c->t_start = 0;
	c->t_end = UINT64_MAX;
	if ((l1 && parse_secs(arg, l1, &c->t_start)) ||
	    (comma && comma[1] && parse_secs(comma + 1, strlen(comma + 1), &c->t_end)) ||
	    c->t_start > c->t_end)
		return cli_usage_error("script", "--time takes START,END in seconds, not '%s'",
				       arg);
	c->has_time = true;
	return 0;
}

static int parse(int argc, char **argv, struct script_cli *c)
{
	enum {
		OPT_COMM = 256,
		OPT_PID,
		OPT_TID,
		OPT_EVENT,
		OPT_TIME,
		OPT_JSON,
		OPT_NS,
		OPT_SUMMARY,
		OPT_IO,
		OPT_SYMFS,
		OPT_DEMANGLE,
		OPT_NO_DEMANGLE,
		OPT_BUILDID_DIR,
		OPT_INLINE,
		OPT_NO_INLINE,
		OPT_SHOW_TASK,
		OPT_SHOW_MMAP,
		OPT_SHOW_SWITCH,
		OPT_SHOW_LOST,
		OPT_RELTIME,
		OPT_DELTATIME,
	};
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"fields", required_argument, NULL, 'F'},
	    {"comm", required_argument, NULL, OPT_COMM},
	    {"pid", required_argument, NULL, OPT_PID},
	    {"tid", required_argument, NULL, OPT_TID},
	    {"cpu", required_argument, NULL, 'C'},
	    {"event", required_argument, NULL, OPT_EVENT},
	    {"time", required_argument, NULL, OPT_TIME},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"ns", no_argument, NULL, OPT_NS},
	    {"summary", no_argument, NULL, OPT_SUMMARY},
	    {"io", no_argument, NULL, OPT_IO},
	    {"vmlinux", required_argument, NULL, 'k'},
	    {"symfs", required_argument, NULL, OPT_SYMFS},
	    {"demangle", no_argument, NULL, OPT_DEMANGLE},
	    {"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
	    {"buildid-dir", required_argument, NULL, OPT_BUILDID_DIR},
	    {"inline", no_argument, NULL, OPT_INLINE},
	    {"no-inline", no_argument, NULL, OPT_NO_INLINE},
	    {"show-task-events", no_argument, NULL, OPT_SHOW_TASK},
	    {"show-mmap-events", no_argument, NULL, OPT_SHOW_MMAP},
	    {"show-switch-events", no_argument, NULL, OPT_SHOW_SWITCH},
	    {"show-lost-events", no_argument, NULL, OPT_SHOW_LOST},
	    {"reltime", no_argument, NULL, OPT_RELTIME},
	    {"deltatime", no_argument, NULL, OPT_DELTATIME},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *bad;
	int o, r = 0;

	optind = 1;
	while ((o = getopt_long(argc, argv, "i:F:C:k:qh", opts, NULL)) != -1 && r == 0) {
		switch (o) {
		case 'i':
			c->input = optarg;
			break;
		case 'F':
			if (sonde_script_fields_parse(optarg, &c->fields, &bad) || !c->fields)
				return cli_usage_error(
				    "script",
				    "-F: unknown field at '%s' (fields: comm,tid,pid,cpu,"
				    "time,event,ip,sym,symoff,dso,trace,period)",
				    bad);
			break;
		case OPT_COMM:
			r = cli_add_list(&c->comms, optarg);
			break;
		case OPT_PID:
			r = cli_ids_u32("script", "--pid", optarg, &sonde_idkind_sample_pid,
					&c->pids, &c->npids);
			break;
		case OPT_TID:
			r = cli_ids_u32("script", "--tid", optarg, &sonde_idkind_sample_tid,
					&c->tids, &c->ntids);
			break;
		case 'C':
			sonde_cpulist_fini(&c->cpus);
			if (sonde_cpulist_parse(optarg, &c->cpus))
				return cli_usage_error("script", "--cpu takes a CPU list, not '%s'",
						       optarg);
			break;
		case OPT_EVENT:
			r = cli_add_list(&c->events, optarg);
			break;
		case OPT_TIME:
			r = parse_time(c, optarg);
			break;
		case OPT_NS:
			c->pr.ns = true;
			break;
		case OPT_SHOW_TASK:
			c->pr.show |= SONDE_SHOW_TASK;
			break;
		case OPT_SHOW_MMAP:
			c->pr.show |= SONDE_SHOW_MMAP;
			break;
		case OPT_SHOW_SWITCH:
			c->pr.show |= SONDE_SHOW_SWITCH;
			break;
		case OPT_SHOW_LOST:
			c->pr.show |= SONDE_SHOW_LOST;
			break;
		case OPT_RELTIME:
		case OPT_DELTATIME:
			if (c->pr.time_mode != SONDE_TIME_ABS)
				return cli_usage_error("script", "--reltime and --deltatime "
								 "exclude each other");
			c->pr.time_mode = o == OPT_RELTIME ? SONDE_TIME_REL : SONDE_TIME_DELTA;
			break;
		case OPT_JSON:
			c->mode = MODE_JSON;
			break;
		case OPT_SUMMARY:
			c->mode = MODE_SUMMARY;
			break;
		case OPT_IO:
			c->mode = MODE_IO;
			break;
		case 'k':
			c->so.sym.vmlinux = optarg;
			break;
		case OPT_SYMFS:
			c->so.sym.symfs = optarg;
			break;
		case OPT_DEMANGLE:
		case OPT_NO_DEMANGLE:
			c->so.sym.no_demangle = o == OPT_NO_DEMANGLE;
			break;
		case OPT_BUILDID_DIR:
			c->so.sym.buildid_dir = optarg;
			break;
		case OPT_INLINE:
			c->so.inline_frames = 1;
			break;
		case OPT_NO_INLINE:
			c->so.inline_frames = -1;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		default:
			return cli_usage_error("script", "unknown option");
		}
	}
	if (r > 0)
		return r;
	if (r < 0)
		return EXIT_FAIL;
	if (optind < argc)
		return cli_usage_error("script", "unexpected argument '%s'", argv[optind]);
	return 0;
}

static int count_proc(struct script_cli *c, const struct sonde_tool_sample *rs)
{
	uint32_t key = (uint32_t)(rs->event << 22) | (rs->s->pid & 0x3fffff), i;
	struct proc_count *pc;

	if (sonde_u32map_get(&c->procs, key, &i)) {
		pc = &c->pcounts[i];
		if (pc->pid == rs->s->pid) {
			pc->n++;
			pc->comm = rs->thread->comm;
			return 0;
		}
	}
	if (c->npc == c->pccap) {
		size_t cap = c->pccap ? c->pccap * 2 : 64;

		if (!(pc = realloc(c->pcounts, cap * sizeof(*pc))))
			return -ENOMEM;
		c->pcounts = pc;
		c->pccap = cap;
	}
	if (sonde_u32map_put(&c->procs, key, (uint32_t)c->npc))
		return -ENOMEM;
	c->pcounts[c->npc++] =
	    (struct proc_count){rs->s->pid, rs->thread->comm, (uint32_t)rs->event, 1};
	return 0;
}

/* The script tool: every sample the session's filters keep, printed or counted. */
static int on_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *rs)
{
	struct script_cli *c = ctx;
	const struct sonde_pd_sample *s = rs->s;

	switch (c->mode) {
	case MODE_TEXT:
		return sonde_script_print_text(&c->pr, ses, rs);
	case MODE_JSON:
		return sonde_script_print_json(&c->pr, ses, rs);
	case MODE_SUMMARY:
		c->ev_counts[rs->event]++;
		return count_proc(c, rs);
	case MODE_IO:
		if (s->raw && c->io)
			return sonde_iostat_add(c->io, s->pid, rs->thread->comm, s->raw,
						s->raw_size) < 0
				   ? -ENOMEM
				   : 0;
		return 0;
	}
	return 0;
}

/* --show-*-events: side-band records in time order between the samples. */
static int on_sideband(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		       const struct sonde_pd_event *ev)
{
	struct script_cli *c = ctx;

	if (c->mode != MODE_TEXT || !c->pr.show)
		return 0;
	/* perf filters them by CPU only, as here. */
	if (c->cpus.n && rec->attr && rec->attr->attr.sample_id_all &&
	    !sonde_cpulist_contains(&c->cpus, (int)ev->sample.cpu))
		return 0;
	return sonde_script_print_sideband(&c->pr, ses, rec, ev);
}

static int on_begin(void *ctx, struct sonde_session *ses)
{
	struct script_cli *c = ctx;

	c->ev_counts = calloc(ses->nevents ? ses->nevents : 1, sizeof(uint64_t));
	return c->ev_counts ? 0 : -ENOMEM;
}

static const struct sonde_tool script_tool = {
    .name = "script",
    .begin = on_begin,
    .sample = on_sample,
    .mmap = on_sideband,
    .comm = on_sideband,
    .fork = on_sideband,
    .exit = on_sideband,
    .lost = on_sideband,
    .other = on_sideband,
};

static int by_count(const void *a, const void *b)
{
	const struct proc_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->event > y->event) - (x->event < y->event);
}

static void print_summary(struct script_cli *c, const struct sonde_session *rep)
{
	uint64_t total = 0;

	printf("# samples per event\n#\n# %12s  %s\n", "count", "event");
	for (size_t e = 0; e < rep->nevents; e++) {
		if (rep->event_kept && !rep->event_kept[e])
			continue;
		printf("  %12" PRIu64 "  %s\n", c->ev_counts[e], rep->event_names[e]);
		total += c->ev_counts[e];
	}
	printf("  %12" PRIu64 "  total\n", total);
	qsort(c->pcounts, c->npc, sizeof(*c->pcounts), by_count);
	printf("\n# samples per process and event\n#\n# %12s  %-16s %7s  %s\n", "count", "comm",
	       "pid", "event");
	for (size_t i = 0; i < c->npc; i++) {
		const struct proc_count *pc = &c->pcounts[i];

		printf("  %12" PRIu64 "  %-16s %7u  %s\n", pc->n,
		       sonde_machine_str(rep->machine, pc->comm), pc->pid,
		       rep->event_names[pc->event]);
	}
}

static void print_io(struct script_cli *c, const struct sonde_session *rep)
{
	const struct sonde_io_row *rows;
	size_t n = sonde_iostat_rows(c->io, &rows);

	printf("# I/O per process (read/write system calls)\n#\n");
	printf("# %-16s %7s %10s %14s %8s %10s %14s %8s\n", "comm", "pid", "reads", "read bytes",
	       "failed", "writes", "written bytes", "failed");
	for (size_t i = 0; i < n; i++) {
		const struct sonde_io_row *r = &rows[i];

		printf("  %-16s %7u %10" PRIu64 " %14" PRIu64 " %8" PRIu64 " %10" PRIu64
		       " %14" PRIu64 " %8" PRIu64 "\n",
		       sonde_machine_str(rep->machine, r->comm), r->pid, r->read.calls,
		       r->read.bytes, r->read.failed, r->write.calls, r->write.bytes,
		       r->write.failed);
	}
}

static int setup_pass(struct script_cli *c, struct sonde_pd_reader *r)
{
	size_t n = sonde_pd_reader_nr_attrs(r);
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		const struct sonde_pd_attr *a = sonde_pd_reader_attr(r, i);
		const char *name = a->name ? a->name : "(unnamed)";
		int len = (int)strlen(name);

		any |= !c->events.n || sonde_sample_filter_event(&c->so.filter, name);
		if (len > c->pr.name_width)
			c->pr.name_width = len;
	}
	/* A capture without events (a pipe that ended at once) shows nothing, as perf does. */
	if (!any && c->events.n)
		return cli_usage_error("script", "--event: the capture has none of these events");
	return 0;
}

static int run(struct script_cli *c)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_session *rep = NULL;
	struct sonde_tp_decoder *tp = NULL;
	struct sonde_errmsg err = {{0}};
	int ret;

	if ((ret = sonde_pd_reader_open(&r, c->input, &err))) {
		cli_error("%s", err.text[0] ? err.text : sonde_strerror(ret));
		return EXIT_FAIL;
	}
	ret = sonde_tp_decoder_open_capture(&tp, r, &err);
	if (ret && ret != -ENOENT && !c->quiet)
		cli_warn("%s: tracepoints stay undecoded: %s", c->input, err.text);
	if (tp && sonde_tp_decoder_nr_failed(tp) && !c->quiet)
		cli_warn("%s: %zu event formats could not be parsed", c->input,
			 sonde_tp_decoder_nr_failed(tp));
	if (c->mode == MODE_IO) {
		if (!tp) {
			cli_error("%s: no tracepoint formats in the capture: record "
				  "syscalls:sys_enter_read,syscalls:sys_exit_read,... for --io",
				  c->input);
			ret = EXIT_FAIL;
			goto out;
		}
		if (sonde_iostat_new(&c->io, tp)) {
			ret = EXIT_FAIL;
			goto out;
		}
	}
	/* Every filter is the session's: checked once, before symbols. */
	c->so.filter = (struct sonde_sample_filter){
	    .comms = (const char *const *)c->comms.v,
	    .ncomms = c->comms.n,
	    .pids = c->pids,
	    .npids = c->npids,
	    .tids = c->tids,
	    .ntids = c->ntids,
	    .cpus = &c->cpus,
	    .has_time = c->has_time,
	    .time_start = c->t_start,
	    .time_end = c->t_end,
	    .events = (const char *const *)c->events.v,
	    .nevents = c->events.n,
	};
	if ((ret = setup_pass(c, r))) {
		ret = ret > 0 ? ret : EXIT_FAIL;
		goto out;
	}
	c->pr.out = stdout;
	c->pr.tp = tp;
	c->pr.fields = c->fields;
	struct sonde_tool_slot slot = {&script_tool, c};
	/* Call chains as perf script prints them: the report pass expands the
	 * inlined frames (see sonde_report_opts.inline_frames). */
	c->so.callchains = c->mode == MODE_TEXT || c->mode == MODE_JSON;
	c->so.sym.buildid_dir = cli_buildid_dir(c->so.sym.buildid_dir);
	c->so.sym.kallsyms_cache_dir = cli_kallsyms_cache_dir();
	ret = sonde_session_run(&rep, r, &c->so, &slot, 1, &err);
	if (ret) {
		cli_error("%s: %s", c->input, err.text[0] ? err.text : sonde_strerror(ret));
		ret = EXIT_FAIL;
		goto out;
	}
	if (!c->quiet && sonde_pd_reader_tail(r) != SONDE_PD_TAIL_CLEAN)
		cli_warn("%s: %s; showing what was read", c->input,
			 sonde_pd_reader_errmsg(r)[0] ? sonde_pd_reader_errmsg(r)
						      : "the recorder did not finish the file");
	if (!c->quiet && (rep->lost || rep->lost_samples))
		cli_warn("%llu samples were lost during the capture",
			 (unsigned long long)(rep->lost + rep->lost_samples));
	if (!c->quiet)
		cli_warn_objects(rep);
	if (c->mode == MODE_SUMMARY)
		print_summary(c, rep);
	else if (c->mode == MODE_IO)
		print_io(c, rep);
	ret = EXIT_OK;
out:
	sonde_session_free(rep);
	sonde_tp_decoder_free(tp);
	sonde_pd_reader_close(r);
	return ret;
}

int cmd_script(int argc, char **argv, struct cli *cli)
{
	struct script_cli c = {.input = "perf.data"};
	int ret;

	(void)cli;
	sonde_strlist_init(&c.comms);
	sonde_strlist_init(&c.events);
	sonde_u32map_init(&c.procs);
	ret = parse(argc, argv, &c);
	if (ret == 0)
		ret = run(&c);
	else if (ret < 0)
		ret = EXIT_OK;
	sonde_strlist_fini(&c.comms);
	sonde_strlist_fini(&c.events);
	sonde_u32map_fini(&c.procs);
	sonde_cpulist_fini(&c.cpus);
	sonde_iostat_free(c.io);
	free(c.pids);
	free(c.tids);
	free(c.ev_counts);
	free(c.pcounts);
	return ret;
}
