// SPDX-License-Identifier: MIT
/*
 * sonde sched latency: per-task wakeup-to-run delays of a capture with
 * sched tracepoints (`sonde record -e sched:sched_switch,sched:sched_wakeup`
 * or `perf sched record`).  One session pass with the decode layer's
 * schedlat tool; the table has perf sched latency's columns.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/perf_data.h>
#include <sonde/session.h>
#include <sonde/schedlat.h>
#include <sonde/tpdecode.h>

#include "cli.h"

static const char usage[] =
    "usage: sonde sched latency [options]\n"
    "\n"
    "Per task: time from wakeup (or a switch-out in state R) to running, runtime and switches, from\n"
    "sched:sched_switch, sched:sched_wakeup and sched:sched_wakeup_new (as perf sched latency)\n"
    "(sched:sched_stat_runtime for runtime when recorded).\n"
    "\n"
    "  -i, --input FILE   the capture (default perf.data)\n"
    "  -p, --pids         one row per task (default: tasks of one command merged)\n"
    "  -q, --quiet        no warnings\n"
    "  -h, --help         this help\n";

struct sched_cli {
	const char *input;
	bool pids, quiet;
	struct sonde_schedlat *sl;
	struct sonde_machine *machine;
};

static uint32_t comm_of(void *ctx, uint32_t tid)
{
	struct sched_cli *c = ctx;
	struct sonde_thread *t = sonde_machine_findnew_thread(c->machine, UINT32_MAX, tid);

	return t ? t->comm : UINT32_MAX;
}

static void print_ms(const char *label, uint64_t ns)
{
	printf(" %s%8.3f ms |", label, (double)ns / 1e6);
}

static void print_rows(struct sched_cli *c, const struct sonde_session *rep)
{
	static const char dashes[] = "------------------------------------------------------------"
				     "------------------------------------------------------------"
				     "---------------------";
	const struct sonde_schedlat_row *rows;
	size_t n = sonde_schedlat_rows(c->sl, comm_of, c, !c->pids, &rows);
	uint64_t runtime = 0, switches = 0;

	printf("\n %.139s\n", dashes);
	printf("  Task                  |   Runtime ms  | Switches | Avg delay ms    | Max delay "
	       "ms    "
	       "| Max delay start           | Max delay end          |\n");
	printf(" %.139s\n", dashes);
	for (size_t i = 0; i < n; i++) {
		const struct sonde_schedlat_row *r = &rows[i];
		const char *comm = sonde_machine_str(rep->machine, r->comm);
		char name[64], t1[32], t2[32];

		if (r->merged > 1)
			snprintf(name, sizeof(name), "%s:(%u)", comm ? comm : "?", r->merged);
		else
			snprintf(name, sizeof(name), "%s:%u", comm ? comm : "?", r->tid);
		snprintf(t1, sizeof(t1), "%" PRIu64 ".%06" PRIu64, r->max_start / 1000000000u,
			 r->max_start % 1000000000u / 1000u);
		snprintf(t2, sizeof(t2), "%" PRIu64 ".%06" PRIu64, r->max_end / 1000000000u,
			 r->max_end % 1000000000u / 1000u);
		printf("  %-21s |%11.3f ms |%9" PRIu64 " |", name, (double)r->runtime / 1e6,
		       r->switches);
		print_ms("avg:", r->total_delay / r->switches);
		print_ms("max:", r->max_delay);
		printf(" max start: %12s s | max end: %12s s\n", t1, t2);
		runtime += r->runtime;
		switches += r->switches;
	}
	printf(" %.113s\n", dashes);
	printf("  TOTAL:                |%11.3f ms |%9" PRIu64 " |\n", (double)runtime / 1e6,
	       switches);
	printf(" %.51s\n\n", dashes);
}

static int latency(struct sched_cli *c)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_session *ses = NULL;
	struct sonde_tp_decoder *tp = NULL;
	struct sonde_errmsg err = {{0}};
	struct sonde_session_opts so = {.no_unwind = true};
	int ret;

	if ((ret = sonde_pd_reader_open(&r, c->input, &err))) {
		cli_error("%s", err.text[0] ? err.text : sonde_strerror(ret));
		return EXIT_FAIL;
	}
	ret = sonde_tp_decoder_open_capture(&tp, r, &err);
	if (ret == 0 && (ret = sonde_schedlat_new(&c->sl, tp)) == -ENOENT)
		cli_error("%s: no sched:sched_switch events: record with 'sonde record -e "
			  "sched:sched_switch,sched:sched_wakeup -a' or 'perf sched record'",
			  c->input);
	else if (ret == -ENOENT)
		cli_error("%s: no tracepoint formats in the capture", c->input);
	else if (ret)
		cli_error("%s: %s", c->input, err.text[0] ? err.text : sonde_strerror(ret));
	if (ret)
		goto out;
	struct sonde_tool_slot slot = {&sonde_schedlat_tool, c->sl};

	if ((ret = sonde_session_run(&ses, r, &so, &slot, 1, &err))) {
		cli_error("%s: %s", c->input, err.text[0] ? err.text : sonde_strerror(ret));
		goto out;
	}
	if (!c->quiet && (ses->lost || ses->lost_samples))
		cli_warn("%llu events were lost during the capture: latencies may be wrong",
			 (unsigned long long)(ses->lost + ses->lost_samples));
	c->machine = ses->machine;
	print_rows(c, ses);
out:
	sonde_session_free(ses);
	sonde_schedlat_free(c->sl);
	sonde_tp_decoder_free(tp);
	sonde_pd_reader_close(r);
	return ret ? EXIT_FAIL : EXIT_OK;
}

int cmd_sched(int argc, char **argv, struct cli *cli)
{
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"pids", no_argument, NULL, 'p'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct sched_cli c = {.input = "perf.data"};
	int o;

	(void)cli;
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "latency"))
		return cli_usage_error("sched", "unknown subcommand '%s' (sonde sched latency)",
				       argv[1]);
	argc--;
	argv++;
	optind = 1;
	while ((o = getopt_long(argc, argv, "i:pqh", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			c.input = optarg;
			break;
		case 'p':
			c.pids = true;
			break;
		case 'q':
			c.quiet = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("sched", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("sched", "unexpected argument '%s'", argv[optind]);
	return latency(&c);
}
