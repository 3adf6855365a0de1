// SPDX-License-Identifier: MIT
/*
 * sonde annotate: the report pass with the annotate accumulator attached,
 * then, per chosen function, an annotation and its text or JSON view.
 * Symbol ids are those of `sonde report --json` on the same file with the
 * same symbol and filter options: both run the same pass, which meets
 * objects (and numbers their symbols) in the same order.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/annotate.h>
#include <sonde/annotate_print.h>
#include <sonde/idlist.h>
#include <sonde/perf_data.h>
#include <sonde/report.h>
#include <sonde/strlist.h>

#include "analysis_opts.h"
#include "cli.h"

static const char usage[] =
    "usage: sonde annotate [options] [SYMBOL...]\n"
    "\n"
    "Shows which source lines and instructions of a function the samples hit, per event.\n"
    "Without SYMBOL or --symbol-id, the hottest functions (--top).\n"
    "\n"
    "  -i, --input FILE        the capture (default perf.data)\n"
    "      --stdio             text output (the default)\n"
    "      --json              one JSON object on stdout\n"
    "      --source-only       source lines only\n"
    "      --asm-only          instructions only\n"
    "  -s, --sort ORDER        addr (code order, the default) or hot (rows with samples by heat)\n"
    "      --symbol-id N       the function with this symbol_id of `sonde report --json`\n"
    "                          (same file, same symbol and filter options); a list or repeated\n"
    "  -t, --top N             without SYMBOL: annotate the N hottest functions (default 1)\n"
    "      --sort-event N|NAME the event that orders functions and --sort hot rows\n"
    "      --source-dir DIR    look for source files under DIR, repeatable\n"
    "      --prefix-map OLD=NEW  source paths starting with OLD are under NEW, repeatable\n"
    "      --comm LIST         only samples of these commands\n"
    "      --pid LIST          only samples of these processes\n"
    "  -d, --dso LIST          only samples in these objects\n"
    "  -k, --vmlinux FILE      kernel image with symbols\n"
    "      --symfs DIR         look up the capture's paths under DIR (a target's root, a sysroot)\n"
    "      --debug-dir DIR     separate debug files (DIR/.build-id/xx/rest.debug), repeatable\n"
    "      --buildid-dir DIR   perf's build-id cache (default ~/.debug)\n"
    "      --modules-dir DIR   kernel modules (NAME.ko) for this capture\n"
    "      --image NAME=PATH   the file for an object or module, repeatable\n"
    "      --no-unwind         ignore saved user stacks (--call-graph dwarf captures)\n"
    "      --no-demangle       C++ and Rust names as in the symbol table (mangled)\n"
    "  -q, --quiet             no warnings\n"
    "  -h, --help              this help\n";

struct annotate_cli {
	const char *input;
	bool json, quiet, sort_hot;
	enum sonde_annotate_view view;
	size_t top;
	const char *sort_event;
	struct sonde_strlist names, comms, dsos, debug_dirs, images, source_dirs, prefix_maps;
	uint32_t *ids, *pids;
	size_t nids, npids;
	struct sonde_report_opts ro;
};

static int parse(int argc, char **argv, struct annotate_cli *c)
{
	enum {
		OPT_STDIO = 256,
		OPT_JSON,
		OPT_SOURCE_ONLY,
		OPT_ASM_ONLY,
		OPT_SYMBOL_ID,
		OPT_SORT_EVENT,
		OPT_SOURCE_DIR,
		OPT_PREFIX_MAP,
		OPT_COMM,
		OPT_PID,
		OPT_SYMFS,
		OPT_DEBUG_DIR,
		OPT_BUILDID_DIR,
		OPT_MODULES_DIR,
		OPT_IMAGE,
		OPT_NO_UNWIND,
		OPT_DEMANGLE,
		OPT_NO_DEMANGLE
	};
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"stdio", no_argument, NULL, OPT_STDIO},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"source-only", no_argument, NULL, OPT_SOURCE_ONLY},
	    {"asm-only", no_argument, NULL, OPT_ASM_ONLY},
	    {"sort", required_argument, NULL, 's'},
	    {"symbol-id", required_argument, NULL, OPT_SYMBOL_ID},
	    {"top", required_argument, NULL, 't'},
	    {"sort-event", required_argument, NULL, OPT_SORT_EVENT},
	    {"source-dir", required_argument, NULL, OPT_SOURCE_DIR},
	    {"prefix-map", required_argument, NULL, OPT_PREFIX_MAP},
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
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	char *end;
	int o, r = 0;

	optind = 1;
	while ((o = getopt_long(argc, argv, "i:s:t:d:k:qh", opts, NULL)) != -1 && r == 0) {
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
		case OPT_SOURCE_ONLY:
			c->view = SONDE_ANNOTATE_SOURCE;
			break;
		case OPT_ASM_ONLY:
			c->view = SONDE_ANNOTATE_ASM;
			break;
		case 's':
			if (strcmp(optarg, "hot") && strcmp(optarg, "addr"))
				return cli_usage_error("annotate", "--sort takes hot or addr");
			c->sort_hot = !strcmp(optarg, "hot");
			break;
		case OPT_SYMBOL_ID:
			r = cli_ids_u32("annotate", "--symbol-id", optarg, &sonde_idkind_index,
					&c->ids, &c->nids);
			break;
		case 't':
			c->top = strtoul(optarg, &end, 10);
			if (*end || !c->top)
				return cli_usage_error("annotate", "--top takes a positive number");
			break;
		case OPT_SORT_EVENT:
			c->sort_event = optarg;
			break;
		case OPT_SOURCE_DIR:
			r = sonde_strlist_add(&c->source_dirs, optarg);
			break;
		case OPT_PREFIX_MAP:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return cli_usage_error(
				    "annotate", "--prefix-map takes OLD=NEW, not '%s'", optarg);
			r = sonde_strlist_add(&c->prefix_maps, optarg);
			break;
		case OPT_COMM:
			r = cli_add_list(&c->comms, optarg);
			break;
		case OPT_PID:
			r = cli_ids_u32("annotate", "--pid", optarg, &sonde_idkind_sample_pid,
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
				return cli_usage_error("annotate",
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
		case 'q':
			c->quiet = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		default:
			return cli_usage_error("annotate", "unknown option");
		}
	}
	if (r > 0)
		return r;
	if (r < 0)
		return EXIT_FAIL;
	for (; optind < argc; optind++)
		if (sonde_strlist_add(&c->names, argv[optind]))
			return EXIT_FAIL;
	return 0;
}

/*
 * The functions to show: those asked for by id (even without samples),
 * then those asked for by name or the hottest, in heat order.
 * Return: the number, or -1 after printing why there is none.
 */
static long choose(const struct annotate_cli *c, const struct sonde_report *rep,
		   const struct sonde_annotate *an, size_t ev, const struct sonde_symbol ***out)
{
	size_t nhot = sonde_annotate_hottest(an, ev, NULL, 0), n = 0;
	size_t want = c->names.n ? nhot : c->nids ? 0 : c->top;
	const struct sonde_symbol **v = calloc(c->nids + nhot + 1, sizeof(*v));

	if (!v) {
		cli_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < c->nids; i++) {
		const struct sonde_symbol *s =
		    c->ids[i] < sonde_symtab_nr_symbols(rep->ses->symtab)
			? sonde_symtab_symbol(rep->ses->symtab, c->ids[i])
			: NULL;
		if (!s) {
			cli_error("no symbol id %u in %s (ids come from `sonde report --json` on "
				  "the same file with the same symbol options)",
				  c->ids[i], c->input);
			free(v);
			return -1;
		}
		v[n++] = s;
	}
	want = want < nhot ? want : nhot;
	sonde_annotate_hottest(an, ev, v + n, want);
	n += want;
	for (size_t i = 0; i < c->names.n; i++) {
		bool found = false;

		for (size_t k = 0; k < n; k++)
			found |= !strcmp(v[k]->name, c->names.v[i]) ||
				 (v[k]->mangled && !strcmp(v[k]->mangled, c->names.v[i]));
		if (!found) {
			cli_error("%s: no samples in %s", c->input, c->names.v[i]);
			free(v);
			return -1;
		}
	}
	if (!n) {
		cli_error("%s: no samples in a known function", c->input);
		free(v);
		return -1;
	}
	*out = v;
	return (long)n;
}

static int show(struct annotate_cli *c, struct sonde_report *rep, const struct sonde_annotate *an,
		struct sonde_pd_reader *r)
{
	const struct sonde_symbol **syms = NULL;
	struct sonde_annotation **as = NULL;
	struct sonde_annotate_build_opts bo = {
	    .arch = sonde_pd_reader_features(r)->arch,
	    .source_dirs = (const char *const *)c->source_dirs.v,
	    .nsource_dirs = c->source_dirs.n,
	    .prefix_maps = (const char *const *)c->prefix_maps.v,
	    .nprefix_maps = c->prefix_maps.n,
	    .no_source = c->view == SONDE_ANNOTATE_ASM,
	};
	struct sonde_annotate_print_opts po = {
	    .event_names = rep->ses->event_names,
	    .view = c->view,
	    .sort_hot = c->sort_hot,
	    .file = c->input,
	};
	long n;
	int ret;

	if ((ret = cli_pick_event("annotate", c->sort_event, rep, &po.sort_event)))
		return ret;
	if ((n = choose(c, rep, an, po.sort_event, &syms)) < 0)
		return EXIT_FAIL;
	if (!(as = calloc((size_t)n, sizeof(*as)))) {
		free(syms);
		return EXIT_FAIL;
	}
	ret = 0;
	for (long i = 0; i < n && !ret; i++) {
		ret = sonde_annotation_build(&as[i], an, syms[i], &bo);
		if (ret)
			cli_error("annotating %s: %s", syms[i]->name, sonde_strerror(ret));
	}
	for (long i = 0; i < n && !ret && !c->json; i++)
		ret = sonde_annotate_print_stdio(stdout, as[i], &po);
	if (!ret && c->json)
		ret = sonde_annotate_print_json(stdout, (const struct sonde_annotation *const *)as,
						(size_t)n, &po);
	if (ret == -EIO)
		cli_error("writing the annotation: %s", sonde_strerror(ret));
	for (long i = 0; i < n; i++)
		sonde_annotation_free(as[i]);
	free(as);
	free(syms);
	return ret ? EXIT_FAIL : EXIT_OK;
}

static int run(struct annotate_cli *c)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_report *rep = NULL;
	struct sonde_annotate *an = NULL;
	struct sonde_errmsg err = {{0}};
	struct sonde_annotate_opts ao = {
	    .names = (const char *const *)c->names.v,
	    .nnames = c->names.n,
	    .ids = c->ids,
	    .nids = c->nids,
	};
	int ret;

	ret = sonde_pd_reader_open(&r, c->input, &err);
	if (ret) {
		cli_error("%s", err.text[0] ? err.text : sonde_strerror(ret));
		return EXIT_FAIL;
	}
	/* The profile is only the per-function totals; call chains are still
	 * resolved by the pass (symbol ids depend on it), not aggregated. */
	c->ro.keys[0] = SONDE_SORT_SYM;
	c->ro.nkeys = 1;
	cli_session_opts(&c->ro.ses, &c->comms, c->pids, c->npids, &c->dsos, &c->debug_dirs,
			 &c->images);
	if (isatty(STDERR_FILENO) && !c->quiet) {
		c->ro.ses.progress = cli_progress;
		c->ro.ses.progress_ctx = (void *)"annotate";
	}
	if ((ret = sonde_annotate_new(&an, sonde_pd_reader_nr_attrs(r), &ao))) {
		cli_error("%s", sonde_strerror(ret));
		sonde_pd_reader_close(r);
		return EXIT_FAIL;
	}
	struct sonde_tool_slot slot = {&sonde_annotate_tool, an};

	c->ro.tools = &slot;
	c->ro.ntools = 1;
	ret = sonde_report_build(&rep, r, &c->ro, &err);
	if (c->ro.ses.progress)
		fprintf(stderr, "\r%40s\r", "");
	if (ret) {
		cli_error("%s: %s", c->input, err.text[0] ? err.text : sonde_strerror(ret));
		ret = EXIT_FAIL;
	} else {
		if (!c->quiet && (rep->ses->lost || rep->ses->lost_samples))
			cli_warn("%llu samples were lost during the capture",
				 (unsigned long long)(rep->ses->lost + rep->ses->lost_samples));
		if (!c->quiet)
			cli_warn_objects(rep->ses);
		ret = show(c, rep, an, r);
	}
	sonde_report_free(rep);
	sonde_annotate_free(an);
	sonde_pd_reader_close(r);
	return ret;
}

int cmd_annotate(int argc, char **argv, struct cli *cli)
{
	struct annotate_cli c = {.input = "perf.data", .top = 1};
	struct sonde_strlist *lists[] = {&c.names,  &c.comms,	    &c.dsos,	   &c.debug_dirs,
					 &c.images, &c.source_dirs, &c.prefix_maps};
	int ret;

	(void)cli;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		sonde_strlist_init(lists[i]);
	ret = parse(argc, argv, &c);
	if (ret == 0)
		ret = run(&c);
	else if (ret < 0)
		ret = EXIT_OK;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		sonde_strlist_fini(lists[i]);
	free(c.ids);
	free(c.pids);
	return ret;
}
