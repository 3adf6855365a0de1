// SPDX-License-Identifier: MIT
/*
 * sonde report: options in perf report's conventions -> one report pass
 * -> the text, JSON or HTML view.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/annotate.h>
#include <sonde/idlist.h>
#include <sonde/perf_data.h>
#include <sonde/header_print.h>
#include <sonde/record_stats.h>
#include <sonde/report.h>
#include <sonde/report_print.h>
#include <sonde/strlist.h>

#include "analysis_opts.h"
#include "cli.h"

static const char usage[] =
    "usage: sonde report [options]\n"
    "\n"
    "Reads a capture (perf.data from sonde or perf) and shows where the samples went.\n"
    "\n"
    "  -i, --input FILE        the capture (default perf.data)\n"
    "      --stdio             text output (the default)\n"
    "      --json              one JSON object on stdout\n"
    "      --html FILE         one self-contained interactive page (functions, call trees,\n"
    "                          flame graph, timeline, code) written to FILE\n"
    "  -s, --sort KEYS         comm,pid,dso,sym,srcline combined (default comm,dso,sym)\n"
    "      --images            per object: --sort dso (with --comm, per application)\n"
    "      --children          inclusive totals per function (default with call chains)\n"
    "      --no-children       self time only\n"
    "  -g, --call-graph ORDER  show call graphs: callee (default) or caller; none hides\n"
    "  -G                      --call-graph caller\n"
    "      --percent-limit P   hide rows below P%% overhead\n"
    "      --callchain-limit P hide call-graph branches below P%% (default 0.5)\n"
    "  -n, --show-nr-samples   a samples column per event\n"
    "      --stats             count the records by kind, as perf report --stats\n"
    "      --header            the capture's header (host, events, features) first, as perf\n"
    "      --header-only       only the header\n"
    "      --group             all events side by side in one table (default: one section\n"
    "                          per event that has samples, as perf report)\n"
    "      --no-group          one section per event\n"
    "      --sort-event N|NAME with --group: order rows by this event; without: show only\n"
    "                          this event's section\n"
    "      --comm LIST         only these commands\n"
    "      --pid LIST          only these processes\n"
    "  -d, --dso LIST          only samples in these objects (with -s sym: one image's symbols)\n"
    "  -k, --vmlinux FILE      kernel image with symbols\n"
    "      --symfs DIR         look up the capture's paths under DIR (a target's root, a sysroot)\n"
    "      --debug-dir DIR     separate debug files (DIR/.build-id/xx/rest.debug), repeatable\n"
    "      --buildid-dir DIR   perf's build-id cache (default ~/.debug)\n"
    "      --modules-dir DIR   kernel modules (NAME.ko) for this capture\n"
    "      --image NAME=PATH   the file for an object or module, repeatable\n"
    "      --no-unwind         ignore saved user stacks (--call-graph dwarf captures)\n"
    "      --inline            inlined functions as frames of every call-graph frame\n"
    "                          (default: of the frames DWARF unwinding found, as perf)\n"
    "      --no-inline         no inlined frames\n"
    "      --no-demangle       C++ and Rust names as in the symbol table (mangled)\n"
    "  -v, --verbose           say where symbols were looked for when an object stayed unresolved,\n"
    "                          and print the library's debug notes (as SONDE_DEBUG=1 does)\n"
    "  -q, --quiet             no warnings\n"
    "  -h, --help              this help\n"
    "\n"
    "To see the source lines and instructions of a listed function: sonde annotate SYMBOL,\n"
    "or sonde annotate --symbol-id N with the symbol_id of --json (same file and options).\n";

struct report_cli {
	const char *input;
	const char *html; /* --html FILE */
	bool json, verbose, quiet, stats;
	int header;   /* 1: --header, 2: --header-only */
	int children; /* -1: default */
	int graph;    /* -1: default, 0 none, 1 callee, 2 caller */
	const char *sort;
	const char *sort_event;
	double percent_limit, callchain_limit;
	bool show_samples, group;
	struct sonde_strlist comms, dsos, debug_dirs, images;
	uint32_t *pids;
	size_t npids;
	struct sonde_report_opts ro;
};

static int parse(int argc, char **argv, struct report_cli *c)
{
	enum {
		OPT_STDIO = 256,
		OPT_JSON,
		OPT_HTML,
		OPT_IMAGES,
		OPT_CHILDREN,
		OPT_NO_CHILDREN,
		OPT_PLIMIT,
		OPT_CLIMIT,
		OPT_SORT_EVENT,
		OPT_COMM,
		OPT_PID,
		OPT_SYMFS,
		OPT_DEBUG_DIR,
		OPT_BUILDID_DIR,
		OPT_MODULES_DIR,
		OPT_IMAGE,
		OPT_NO_UNWIND,
		OPT_DEMANGLE,
		OPT_NO_DEMANGLE,
		OPT_NO_INLINE,
		OPT_INLINE,
		OPT_GROUP,
		OPT_NO_GROUP,
		OPT_STATS,
		OPT_HEADER,
		OPT_HEADER_ONLY
	};
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"stdio", no_argument, NULL, OPT_STDIO},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"html", required_argument, NULL, OPT_HTML},
	    {"sort", required_argument, NULL, 's'},
	    {"images", no_argument, NULL, OPT_IMAGES},
	    {"children", no_argument, NULL, OPT_CHILDREN},
	    {"no-children", no_argument, NULL, OPT_NO_CHILDREN},
	    {"call-graph", required_argument, NULL, 'g'},
	    {"percent-limit", required_argument, NULL, OPT_PLIMIT},
	    {"callchain-limit", required_argument, NULL, OPT_CLIMIT},
	    {"show-nr-samples", no_argument, NULL, 'n'},
	    {"sort-event", required_argument, NULL, OPT_SORT_EVENT},
	    {"group", no_argument, NULL, OPT_GROUP},
	    {"no-group", no_argument, NULL, OPT_NO_GROUP},
	    {"stats", no_argument, NULL, OPT_STATS},
	    {"header", no_argument, NULL, OPT_HEADER},
	    {"header-only", no_argument, NULL, OPT_HEADER_ONLY},
	    {"comm", required_argument, NULL, OPT_COMM},
	    {"pid", required_argument, NULL, OPT_PID},
	    {"dso", required_argument, NULL, 'd'},
	    {"vmlinux", required_argument, NULL, 'k'},
	    {"symfs", required_argument, NULL, OPT_SYMFS},
	    {"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	    {"buildid-dir", required_argument, NULL, OPT_BUILDID_DIR},
	    {"modules-dir", required_argument, NULL, OPT_MODULES_DIR},
	    {"image", required_argument, NULL, OPT_IMAGE},
	    {"no-unwind", no_argument, NULL, OPT_NO_UNWIND},
	    {"demangle", no_argument, NULL, OPT_DEMANGLE},
	    {"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
	    {"no-inline", no_argument, NULL, OPT_NO_INLINE},
	    {"inline", no_argument, NULL, OPT_INLINE},
	    {"verbose", no_argument, NULL, 'v'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	char *end;
	int o, r = 0;

	optind = 1;
	while ((o = getopt_long(argc, argv, "i:s:g:Gnd:k:vqh", opts, NULL)) != -1 && r == 0) {
		switch (o) {
		case 'i':
			c->input = optarg;
			break;
		case OPT_STDIO:
			c->json = false;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_HTML:
			c->html = optarg;
			break;
		case 's':
			c->sort = optarg;
			break;
		case OPT_IMAGES:
			c->sort = "dso";
			break;
		case OPT_CHILDREN:
			c->children = 1;
			break;
		case OPT_NO_CHILDREN:
			c->children = 0;
			break;
		case 'g':
			if (!strcmp(optarg, "callee"))
				c->graph = 1;
			else if (!strcmp(optarg, "caller"))
				c->graph = 2;
			else if (!strcmp(optarg, "none"))
				c->graph = 0;
			else
				return cli_usage_error("report",
						       "--call-graph takes callee, caller or none");
			break;
		case 'G':
			c->graph = 2;
			break;
		case OPT_PLIMIT:
		case OPT_CLIMIT: {
			double v = strtod(optarg, &end);

			if (*end == '%')
				end++;
			if (*end || v < 0 || v > 100)
				return cli_usage_error(
				    "report", "a percentage from 0 to 100, not '%s'", optarg);
			*(o == OPT_PLIMIT ? &c->percent_limit : &c->callchain_limit) = v;
			break;
		}
		case 'n':
			c->show_samples = true;
			break;
		case OPT_SORT_EVENT:
			c->sort_event = optarg;
			break;
		case OPT_GROUP:
		case OPT_NO_GROUP:
			c->group = o == OPT_GROUP;
			break;
		case OPT_STATS:
			c->stats = true;
			break;
		case OPT_HEADER:
		case OPT_HEADER_ONLY:
			c->header = o == OPT_HEADER ? 1 : 2;
			break;
		case OPT_COMM:
			r = cli_add_list(&c->comms, optarg);
			break;
		case OPT_PID:
			r = cli_ids_u32("report", "--pid", optarg, &sonde_idkind_sample_pid,
					&c->pids, &c->npids);
			break;
		case 'd':
			r = cli_add_list(&c->dsos, optarg);
			break;
		case 'k':
			c->ro.ses.sym.vmlinux = optarg;
			break;
		case OPT_SYMFS:
			c->ro.ses.sym.symfs = optarg;
			break;
		case OPT_BUILDID_DIR:
			c->ro.ses.sym.buildid_dir = optarg;
			break;
		case OPT_DEBUG_DIR:
			r = sonde_strlist_add(&c->debug_dirs, optarg);
			break;
		case OPT_MODULES_DIR:
			c->ro.ses.sym.modules_dir = optarg;
			break;
		case OPT_IMAGE:
			if (!strchr(optarg, '='))
				return cli_usage_error("report",
						       "--image takes NAME=PATH, not '%s'", optarg);
			r = sonde_strlist_add(&c->images, optarg);
			break;
		case OPT_NO_UNWIND:
			c->ro.ses.no_unwind = true;
			break;
		case OPT_DEMANGLE:
		case OPT_NO_DEMANGLE:
			c->ro.ses.sym.no_demangle = o == OPT_NO_DEMANGLE;
			break;
		case OPT_NO_INLINE:
			c->ro.ses.inline_frames = -1;
			break;
		case OPT_INLINE:
			c->ro.ses.inline_frames = 1;
			break;
		case 'v':
			c->verbose = true;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		default:
			return cli_usage_error("report", "unknown option");
		}
	}
	if (r > 0)
		return r;
	if (r < 0)
		return EXIT_FAIL;
	if (optind < argc)
		return cli_usage_error("report", "unexpected argument '%s'", argv[optind]);
	r = sonde_sort_keys_parse(c->sort ? c->sort : "comm,dso,sym", c->ro.keys, SONDE_SORT_MAX);
	if (r < 0)
		return cli_usage_error("report",
				       "--sort takes keys among comm,pid,dso,sym,srcline");
	c->ro.nkeys = (size_t)r;
	return 0;
}

static void warn_capture(const struct report_cli *c, const struct sonde_report *rep,
			 struct sonde_pd_reader *r)
{
	if (c->quiet)
		return;
	if (sonde_pd_reader_tail(r) != SONDE_PD_TAIL_CLEAN)
		cli_warn("%s: %s; reporting what was read", c->input,
			 sonde_pd_reader_errmsg(r)[0] ? sonde_pd_reader_errmsg(r)
						      : "the recorder did not finish the file");
	/*
	 * perf's accounting: LOST_SAMPLES records give the samples lost (the
	 * report's "Total Lost Samples"); LOST records count the same losses
	 * again, per ring, so they only speak for files without the former.
	 */
	if (rep->ses->lost_samples)
		cli_warn("%llu samples were lost during the capture (the report undercounts)",
			 (unsigned long long)rep->ses->lost_samples);
	else if (rep->ses->lost)
		cli_warn("%llu events were lost in %llu chunks during the capture (the report "
			 "undercounts)",
			 (unsigned long long)rep->ses->lost,
			 (unsigned long long)rep->ses->lost_chunks);
	if (!rep->ses->walk.samples)
		cli_warn("%s has no samples", c->input);
	if (rep->ses->throttled)
		cli_warn("the kernel throttled sampling %llu times (lower -F or raise "
			 "kernel.perf_event_max_sample_rate)",
			 (unsigned long long)rep->ses->throttled);
	cli_warn_objects(rep->ses);
	if (rep->ses->walk.undecodable)
		cli_warn("%llu records could not be decoded and were skipped",
			 (unsigned long long)rep->ses->walk.undecodable);
	if (rep->ses->unwind_failed)
		cli_warn("%llu of %llu user stacks could not be unwound",
			 (unsigned long long)rep->ses->unwind_failed,
			 (unsigned long long)(rep->ses->unwind_failed + rep->ses->unwound));
}

static void verbose_symbols(const struct sonde_report *rep)
{
	for (size_t i = 0; i < sonde_symtab_nr_dsos(rep->ses->symtab); i++) {
		const struct sonde_dso *d = sonde_symtab_dso(rep->ses->symtab, (uint32_t)i);
		const char *log = sonde_dso_search_log(d);

		if (log)
			fprintf(stderr, "sonde report: %s: no symbols: %s\n",
				sonde_dso_long_name(d), log);
	}
}

static int write_html(const char *path, const struct sonde_report *rep,
		      const struct sonde_print_opts *po, bool quiet)
{
	FILE *f = fopen(path, "w");
	long size;
	int ret;

	if (!f)
		return -errno;
	ret = sonde_report_print_html(f, rep, po);
	size = ftell(f);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret && !quiet)
		fprintf(stderr, "sonde report: wrote %s (%.1f KB)\n", path, (double)size / 1024);
	return ret;
}

/* perf's record names: sonde's without the HEADER_ of perf's own records. */
static const char *stats_name(uint32_t type)
{
	const char *n = sonde_pd_record_name(type);

	return strncmp(n, "HEADER_", 7) ? n : n + 7;
}

/* --stats: one pass with the record-counting tool, printed as perf does. */
static int show_stats(struct report_cli *c, struct sonde_pd_reader *r)
{
	struct sonde_record_stats st = {0};
	struct sonde_tool_slot slot = {&sonde_record_stats_tool, &st};
	struct sonde_session *ses = NULL;
	struct sonde_errmsg err = {{0}};
	int ret = sonde_session_run(&ses, r, &c->ro.ses, &slot, 1, &err);

	if (ret) {
		cli_error("%s: %s", c->input, err.text[0] ? err.text : sonde_strerror(ret));
		sonde_record_stats_fini(&st);
		return EXIT_FAIL;
	}
	printf("\nAggregated stats:\n%16s events: %10" PRIu64 "\n", "TOTAL", st.total);
	for (uint32_t t = 1; t < SONDE_PD_RECORD_HEADER_MAX; t++)
		if (st.nr[t])
			printf("%16s events: %10" PRIu64 "  (%4.1f%%)\n", stats_name(t), st.nr[t],
			       100.0 * (double)st.nr[t] / (double)st.total);
	for (size_t e = 0; e < st.nevents; e++)
		if (st.samples[e])
			printf("%s stats:\n%16s events: %10" PRIu64 "\n", ses->event_names[e],
			       "SAMPLE", st.samples[e]);
	sonde_record_stats_fini(&st);
	sonde_session_free(ses);
	return EXIT_OK;
}

/* --header: the header block, dated by the file's modification time as perf does. */
static int show_header(const struct report_cli *c, struct sonde_pd_reader *r)
{
	struct stat st;

	if (stat(c->input, &st) < 0)
		st.st_mtime = 0;
	if (sonde_header_print(stdout, r, st.st_mtime) < 0) {
		cli_error("%s: a pipe-format capture carries its header as records: "
			  "--header is not supported for it",
			  c->input);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int run(struct report_cli *c)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_report *rep = NULL;
	struct sonde_annotate *an = NULL;
	struct sonde_tool_slot slot;
	struct sonde_annotate_build_opts abo = {0};
	struct sonde_errmsg err = {{0}};
	struct sonde_print_opts po = {.callchain_limit = c->callchain_limit, .header = true};
	int ret;

	ret = sonde_pd_reader_open(&r, c->input, &err);
	if (ret) {
		cli_error("%s", err.text[0] ? err.text : sonde_strerror(ret));
		return EXIT_FAIL;
	}
	if (c->header && (ret = show_header(c, r)) != EXIT_OK) {
		sonde_pd_reader_close(r);
		return ret;
	}
	if (c->header == 2) {
		sonde_pd_reader_close(r);
		return EXIT_OK;
	}
	if (c->stats) {
		ret = show_stats(c, r);
		sonde_pd_reader_close(r);
		return ret;
	}
	/* The page's functions table is per function, whatever --sort says. */
	if (c->html)
		c->sort = "dso,sym";
	else if (!c->sort)
		c->sort = "comm,dso,sym";
	ret = sonde_sort_keys_parse(c->sort, c->ro.keys, SONDE_SORT_MAX);
	if (ret < 0) {
		sonde_pd_reader_close(r);
		return cli_usage_error("report",
				       "--sort takes keys among comm,pid,dso,sym,srcline");
	}
	c->ro.nkeys = (size_t)ret;
	/* perf's defaults: children and call graphs when the capture has chains. */
	{
		bool chains = false;

		for (size_t i = 0; i < sonde_pd_reader_nr_attrs(r); i++)
			chains |= !!(sonde_pd_reader_attr(r, i)->attr.sample_type &
				     (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER));
		c->ro.children = c->children < 0 ? chains : c->children;
		c->ro.callchains = chains && c->graph != 0;
		/* perf draws inclusive rows from the callers down, self rows upwards. */
		c->ro.caller_order = c->graph == 2 || (c->graph < 0 && c->ro.children);
		/* The page draws its trees from the timeline's one trie of whole stacks. */
		if (c->html) {
			c->ro.timeline = true;
			c->ro.callchains = false;
		}
	}
	cli_session_opts(&c->ro.ses, &c->comms, c->pids, c->npids, &c->dsos, &c->debug_dirs,
			 &c->images);
	if (isatty(STDERR_FILENO) && !c->quiet) {
		c->ro.ses.progress = cli_progress;
		c->ro.ses.progress_ctx = (void *)"report";
	}
	/* The page's Code view: sonde annotate's per-instruction counts of every symbol. */
	if (c->html) {
		struct sonde_annotate_opts ao = {0};

		if ((ret = sonde_annotate_new(
			 &an, sonde_pd_reader_nr_attrs(r) ? sonde_pd_reader_nr_attrs(r) : 1,
			 &ao))) {
			cli_error("%s", sonde_strerror(ret));
			sonde_pd_reader_close(r);
			return EXIT_FAIL;
		}
		slot = (struct sonde_tool_slot){&sonde_annotate_tool, an};
		c->ro.tools = &slot;
		c->ro.ntools = 1;
	}
	ret = sonde_report_build(&rep, r, &c->ro, &err);
	if (c->ro.ses.progress)
		fprintf(stderr, "\r%40s\r", "");
	if (ret) {
		cli_error("%s: %s", c->input, err.text[0] ? err.text : sonde_strerror(ret));
		sonde_annotate_free(an);
		sonde_pd_reader_close(r);
		return EXIT_FAIL;
	}
	warn_capture(c, rep, r);
	if (c->verbose)
		verbose_symbols(rep);
	ret = cli_pick_event("report", c->sort_event, rep, &po.sort_event);
	if (ret == 0) {
		po.percent_limit = c->percent_limit;
		po.callchains = c->ro.callchains;
		po.group = c->group;
		po.one_event = c->sort_event && !c->group;
		/* Side by side, a samples column per event tells the events apart. */
		po.show_samples = c->show_samples || (c->group && rep->ses->nevents > 1);
		po.file = c->input;
		if (c->html) {
			abo.arch = sonde_pd_reader_features(r)->arch;
			po.annotate = an;
			po.annotate_build = &abo;
			ret = write_html(c->html, rep, &po, c->quiet);
		} else
			ret = c->json ? sonde_report_print_json(stdout, rep, &po)
				      : sonde_report_print_stdio(stdout, rep, &po);
		if (ret)
			cli_error("writing the report%s%s: %s", c->html ? " to " : "",
				  c->html ? c->html : "", sonde_strerror(ret));
		ret = ret ? EXIT_FAIL : EXIT_OK;
	}
	sonde_annotate_free(an); /* before the report: it borrows the report's symbols */
	sonde_report_free(rep);
	sonde_pd_reader_close(r);
	return ret;
}

int cmd_report(int argc, char **argv, struct cli *cli)
{
	struct report_cli c = {
	    .input = "perf.data", .children = -1, .graph = -1, .callchain_limit = 0.5};
	int ret;

	sonde_strlist_init(&c.comms);
	sonde_strlist_init(&c.dsos);
	sonde_strlist_init(&c.debug_dirs);
	sonde_strlist_init(&c.images);
	ret = parse(argc, argv, &c);
	if (ret == 0 && c.verbose)
		cli->debug = 1; /* -v also shows the library's debug messages */
	if (ret == 0)
		ret = run(&c);
	else if (ret < 0)
		ret = EXIT_OK;
	sonde_strlist_fini(&c.comms);
	sonde_strlist_fini(&c.dsos);
	sonde_strlist_fini(&c.debug_dirs);
	sonde_strlist_fini(&c.images);
	free(c.pids);
	return ret;
}
