// SPDX-License-Identifier: MIT
/*
 * sonde version: the version, and with --build-options which optional
 * libraries this build has (perf version --build-options' layout), so a
 * user can tell why trace.dat output, -z or instruction annotation is
 * missing from a board's build.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <sonde/disasm.h>
#include <sonde/perf_data.h>

#include "cli.h"

static const char usage[] = "usage: sonde version [--build-options]\n"
			    "\n"
			    "  --build-options   which optional libraries this build has\n"
			    "  -h, --help        this help\n";

static bool have_capstone(void)
{
	struct sonde_disasm *d = NULL;

	if (sonde_disasm_new(&d, NULL, false))
		return false;
	sonde_disasm_free(d);
	return true;
}

static void option(const char *name, bool on, const char *what)
{
	printf("%22s: [ %s ]  # %s\n", name, on ? "on " : "OFF", what);
}

int cmd_version(int argc, char **argv, struct cli *cli)
{
	enum { OPT_BUILD = 256 };
	static const struct option opts[] = {
	    {"build-options", no_argument, NULL, OPT_BUILD},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	bool build = false;
	int o;

	(void)cli;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case OPT_BUILD:
			build = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("version", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("version", "unexpected argument '%s'", argv[optind]);
	printf("sonde version %s\n", SONDE_VERSION);
	if (!build)
		return EXIT_OK;
#ifdef SONDE_HAVE_TRACECMD
	option("libtracecmd", true, "trace.dat: sonde trace -o, sonde trace report");
#else
	option("libtracecmd", false, "trace.dat: sonde trace -o, sonde trace report");
#endif
	option("zstd", sonde_pd_writer_can_compress(), "record -z, reading compressed captures");
	option("capstone", have_capstone(), "annotate: instructions");
	return EXIT_OK;
}
