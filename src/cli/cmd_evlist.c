// SPDX-License-Identifier: MIT
/*
 * sonde evlist: the events of a capture, as perf evlist lists them: names,
 * -F the sampling period or frequency, -v every attribute (perf's field
 * names, src/format/attr_fields.c), -g the groups of the GROUP_DESC
 * feature (sonde_pd_reader_groups()), --trace-fields the fields of tracepoint events from the
 * capture's own formats.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/attr_fields.h>
#include <sonde/evspec.h>
#include <sonde/perf_data.h>
#include <sonde/tpdecode.h>

#include "cli.h"

static const char usage[] =
    "usage: sonde evlist [options]\n"
    "\n"
    "Lists the events of a capture (perf.data from sonde or perf), as perf evlist.\n"
    "\n"
    "  -i, --input FILE     the capture (default perf.data)\n"
    "  -F, --freq           the sampling frequency or period of each event\n"
    "  -v, --verbose        every attribute of each event (perf's field names)\n"
    "  -g, --group          events of a group on one line: {leader,member,...}\n"
    "      --trace-fields   the fields of each tracepoint event\n"
    "  -f, --force          accepted for perf's command lines (no effect)\n"
    "  -h, --help           this help\n";

struct evlist_cli {
	const char *input;
	bool freq, verbose, group, trace_fields;
};

static const char *event_name(const struct sonde_pd_attr *a)
{
	const char *name = a->name ? a->name : sonde_named_event_of(a->attr.type, a->attr.config);

	return name ? name : "(unnamed)";
}

struct attr_line {
	bool first;
};

static void print_field(void *ctx, const char *name, const char *value)
{
	struct attr_line *l = ctx;

	printf("%s%s: %s", l->first ? "" : ", ", name, value);
	l->first = false;
}

static void print_trace_fields(const struct sonde_tp_decoder *tp, const struct sonde_pd_attr *a)
{
	const struct sonde_tp_event *ev = tp && a->attr.type == PERF_TYPE_TRACEPOINT
					      ? sonde_tp_find_id(tp, (uint32_t)a->attr.config)
					      : NULL;

	if (!ev) {
		printf(" (not a tracepoint)");
		return;
	}
	printf(" trace_fields: ");
	for (size_t i = 0; i < sonde_tp_event_nr_fields(ev); i++)
		printf("%s%s", i ? "," : "", sonde_tp_field_name(ev, i));
}

static void print_event(const struct evlist_cli *c, const struct sonde_pd_attr *a,
			const struct sonde_tp_decoder *tp)
{
	printf("%s", event_name(a));
	if (c->verbose) {
		struct attr_line l = {true};

		printf(": ");
		sonde_attr_fields(&a->attr, print_field, &l);
	} else if (c->freq) {
		printf(": %s=%" PRIu64, a->attr.freq ? "sample_freq" : "sample_period",
		       (uint64_t)a->attr.sample_period);
	} else if (c->trace_fields) {
		printf(":");
		print_trace_fields(tp, a);
	}
	putchar('\n');
}

static int evlist(const struct evlist_cli *c)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_tp_decoder *tp = NULL;
	struct sonde_errmsg err = {{0}};
	struct sonde_pd_group groups[64];
	size_t ngroups = 0, nattrs;
	bool has_tracepoint = false;
	int ret;

	if ((ret = sonde_pd_reader_open(&r, c->input, &err))) {
		cli_error("%s", err.text[0] ? err.text : sonde_strerror(ret));
		return EXIT_FAIL;
	}
	nattrs = sonde_pd_reader_nr_attrs(r);
	if (c->group)
		ngroups = sonde_pd_reader_groups(r, groups, sizeof(groups) / sizeof(groups[0]));
	if (c->trace_fields && (ret = sonde_tp_decoder_open_capture(&tp, r, &err)) &&
	    ret != -ENOENT)
		cli_warn("%s: tracepoint formats: %s", c->input,
			 err.text[0] ? err.text : sonde_strerror(ret));
	for (size_t i = 0; i < nattrs; i++) {
		const struct sonde_pd_attr *a = sonde_pd_reader_attr(r, i);
		const struct sonde_pd_group *g = NULL;
		bool member = false;

		has_tracepoint |= a->attr.type == PERF_TYPE_TRACEPOINT;
		for (size_t k = 0; k < ngroups; k++) {
			if (groups[k].nr > 1 && groups[k].leader == i)
				g = &groups[k];
			else if (i > groups[k].leader && i < groups[k].leader + groups[k].nr)
				member = true;
		}
		if (member)
			continue;
		if (!g) {
			print_event(c, a, tp);
			continue;
		}
		printf("%s%s{", g->name ? g->name : "", g->name ? ":" : "");
		for (uint32_t m = 0; m < g->nr; m++)
			printf("%s%s", m ? "," : "",
			       event_name(sonde_pd_reader_attr(r, g->leader + m)));
		printf("}\n");
	}
	if (has_tracepoint && !c->trace_fields)
		printf(
		    "# Tip: use 'sonde evlist --trace-fields' to show fields for tracepoint events\n");
	sonde_tp_decoder_free(tp);
	sonde_pd_reader_close(r);
	return EXIT_OK;
}

int cmd_evlist(int argc, char **argv, struct cli *cli)
{
	enum { OPT_TRACE_FIELDS = 256 };
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"freq", no_argument, NULL, 'F'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"group", no_argument, NULL, 'g'},
	    {"trace-fields", no_argument, NULL, OPT_TRACE_FIELDS},
	    {"force", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct evlist_cli c = {.input = "perf.data"};
	int o;

	(void)cli;
	while ((o = getopt_long(argc, argv, "i:Fvgfh", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			c.input = optarg;
			break;
		case 'F':
			c.freq = true;
			break;
		case 'v':
			c.verbose = true;
			break;
		case 'g':
			c.group = true;
			break;
		case OPT_TRACE_FIELDS:
			c.trace_fields = true;
			break;
		case 'f':
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("evlist", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("evlist", "unexpected argument '%s'", argv[optind]);
	if (c.group && (c.freq || c.verbose || c.trace_fields))
		return cli_usage_error("evlist", "--group can't be combined with -F, -v or "
						 "--trace-fields (as perf)");
	return evlist(&c);
}
