// SPDX-License-Identifier: MIT
/*
 * sonde doctor [--json] [--no-top-level]: what works on this machine, why
 * not, and the fix.  The library measures (sonde_doctor_run); this file
 * only finds tracefs and prints the checks, as a table or as JSON.
 * doctor reports problems, it does not have them: the exit status is 0
 * unless doctor itself could not run.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <sonde/doctor.h>
#include <sonde/json.h>
#include <sonde/tracefs.h>

#include "cli.h"

static const char doctor_usage[] =
    "usage: sonde doctor [--json] [--no-top-level]\n"
    "\n"
    "Checks what sonde can use on this machine (perf events, hardware PMUs,\n"
    "tracefs, probes, tracers, BPF, the kernel config) and prints each fact\n"
    "with the fix for what does not work.\n"
    "\n"
    "  --json           print the checks as a JSON list of objects\n"
    "  --no-top-level   never try a tracer in the top-level tracefs instance\n"
    "                   (tracers are always tried in a scratch instance)\n";

/* A list, one check a line, for people and programs alike. */
static void print_json(const struct sonde_doctor_report *rep)
{
	struct sonde_json js, *j = &js;

	sonde_json_init_file(j, stdout, SONDE_JSON_SPACED | SONDE_JSON_LIST_LINES);
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < rep->n; i++) {
		const struct sonde_doctor_check *c = &rep->v[i];

		sonde_json_obj_begin(j);
		sonde_json_kstr(j, "id", c->id);
		sonde_json_kstr(j, "title", c->title);
		sonde_json_kstr(j, "status", sonde_doctor_status_name(c->status));
		sonde_json_kstr(j, "detail", c->detail);
		sonde_json_kstr(j, "fix", c->fix[0] ? c->fix : NULL);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
	sonde_json_line_end(j);
}

static void print_table(const struct sonde_doctor_report *rep)
{
	size_t count[4] = {0};
	struct utsname u;

	if (uname(&u) == 0)
		printf("sonde doctor: %s %s %s\n\n", u.sysname, u.release, u.machine);
	for (size_t i = 0; i < rep->n; i++) {
		const struct sonde_doctor_check *c = &rep->v[i];

		count[c->status]++;
		printf("%-11s  %-28s  %s\n", sonde_doctor_status_name(c->status), c->title,
		       c->detail);
		if (c->fix[0])
			printf("%-11s  %-28s  fix: %s\n", "", "", c->fix);
	}
	printf("\n%zu ok, %zu warn, %zu unavailable, %zu fail\n", count[SONDE_DOCTOR_OK],
	       count[SONDE_DOCTOR_WARN], count[SONDE_DOCTOR_UNAVAILABLE], count[SONDE_DOCTOR_FAIL]);
}

int cmd_doctor(int argc, char **argv, struct cli *cli)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"no-top-level", no_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct sonde_doctor_config cfg;
	struct sonde_doctor_report rep;
	bool json = false;
	int c, r;

	sonde_doctor_config_default(&cfg);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'T':
			cfg.try_top_level = false;
			break;
		case 'h':
			fputs(doctor_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("doctor", "bad option");
		}
	}
	if (optind < argc)
		return cli_usage_error("doctor", "unexpected argument '%s'", argv[optind]);

	/* Report whether tracefs was mounted before mounting it as every sonde command would. */
	if (sonde_tracefs_find(cfg.mounts, cli->tracefs, sizeof(cli->tracefs), false) == 0) {
		cfg.tracefs = cli->tracefs;
	} else if (sonde_tracefs_find(cfg.mounts, cli->tracefs, sizeof(cli->tracefs), true) == 0) {
		cfg.tracefs = cli->tracefs;
		cfg.tracefs_mounted_by_caller = true;
	}

	sonde_doctor_report_init(&rep);
	r = sonde_doctor_run(&cfg, &rep);
	if (r < 0) {
		cli_error("doctor: %s", sonde_strerror(r));
		sonde_doctor_report_fini(&rep);
		return EXIT_FAIL;
	}
	if (json)
		print_json(&rep);
	else
		print_table(&rep);
	sonde_doctor_report_fini(&rep);
	return EXIT_OK;
}
