// SPDX-License-Identifier: MIT
/*
 * sonde trace's words about killed recordings and `sonde trace recover`
 * (see trace_recover.h): the run folder's leftovers are listed by the
 * library (sonde/ftrace_leftover.h), written by sonde_trace_out_recover(),
 * and reported here.
 */
#include "trace_recover.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/ftrace_leftover.h>
#include <sonde/trace_out.h>

#include "cli.h"

void trace_check_leftovers(void)
{
	struct sonde_trace_leftover *v;
	size_t n;

	if (sonde_trace_leftover_find(SONDE_RUN_DIR, &v, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = sonde_trace_leftover_bytes(&v[i]);

		if (bytes)
			cli_warn("a sonde trace (pid %ld) was killed while recording %s: "
				 "'sonde trace recover %s' saves its %.1f KB of pages",
				 (long)v[i].pid, v[i].output, v[i].output, (double)bytes / 1024);
		else
			sonde_trace_leftover_remove(SONDE_RUN_DIR, &v[i]);
		sonde_trace_leftover_fini(&v[i]);
	}
	free(v);
}

static int recover_one(struct cli *cli, const struct sonde_trace_leftover *lo)
{
	struct sonde_errmsg err = {{0}};
	uint64_t count = 0;
	int r = sonde_trace_out_recover(SONDE_RUN_DIR, cli_roots(cli)->tracefs, lo, &count, &err);

	if (r < 0) {
		if (err.text[0])
			cli_error("%s", err.text);
		return r;
	}
	fprintf(stderr,
		"[ sonde trace recover: %llu events of the killed sonde %ld written to %s ]\n",
		(unsigned long long)count, (long)lo->pid, lo->output);
	return 0;
}

int trace_recover(int argc, char **argv, struct cli *cli)
{
	struct sonde_trace_leftover *v;
	char *want = NULL;
	size_t n, done = 0;
	int ret = EXIT_OK, r;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-'))
		return cli_usage_error("trace", "usage: sonde trace recover [FILE]");
	if (!cli_roots(cli)->tracefs) {
		cli_error("tracefs is not mounted and could not be mounted (are you root?)");
		return EXIT_FAIL;
	}
	if (argc == 2 && !(want = sonde_path_absolute(argv[1])))
		return EXIT_FAIL;
	r = sonde_trace_leftover_find(SONDE_RUN_DIR, &v, &n);
	if (r < 0) {
		cli_error("%s: %s", SONDE_RUN_DIR, sonde_strerror(r));
		free(want);
		return EXIT_FAIL;
	}
	/* The instances of the killed sondes go too: tracing there is still on. */
	sonde_ftrace_remove_stale(cli_roots(cli)->tracefs);
	for (size_t i = 0; i < n; i++) {
		if (!want || !strcmp(want, v[i].output)) {
			if (recover_one(cli, &v[i]) < 0)
				ret = EXIT_FAIL;
			done++;
		}
		sonde_trace_leftover_fini(&v[i]);
	}
	free(v);
	if (!done) {
		cli_error("nothing to recover%s%s: no killed sonde trace left pages%s",
			  want ? " for " : "", want ? want : "", want ? " for it" : "");
		ret = EXIT_FAIL;
	}
	free(want);
	return ret;
}
