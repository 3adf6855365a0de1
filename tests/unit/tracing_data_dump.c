// SPDX-License-Identifier: MIT
/*
 * tracing_data_dump: a test-only window on sonde_tracing_data_build().
 * Writes the HEADER_TRACING_DATA blob for the tracepoints named on the
 * command line to a file, so the integration tests can splice it into a
 * perf.data file and let perf decode with it.
 *
 * usage: tracing_data_dump [--tracefs DIR] OUT SYS:EVENT...
 * Exit status 1 with the library's message on stderr on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/tracing_data.h>

int main(int argc, char **argv)
{
	const char *tracefs = "/sys/kernel/tracing";
	struct sonde_tp_name *tps;
	struct sonde_errmsg err = {{0}};
	char *blob;
	size_t len, n = 0;
	FILE *f;
	int i = 1, ret;

	if (argc > 2 && !strcmp(argv[1], "--tracefs")) {
		tracefs = argv[2];
		i = 3;
	}
	if (argc - i < 1) {
		fprintf(stderr, "usage: tracing_data_dump [--tracefs DIR] OUT SYS:EVENT...\n");
		return 2;
	}
	const char *out = argv[i++];

	tps = calloc((size_t)(argc - i) + 1, sizeof(*tps));
	if (!tps)
		return 1;
	for (; i < argc; i++) {
		char *colon = strchr(argv[i], ':');

		if (!colon) {
			fprintf(stderr, "tracing_data_dump: '%s' is not SYS:EVENT\n", argv[i]);
			free(tps);
			return 2;
		}
		*colon = '\0';
		tps[n].system = argv[i];
		tps[n].event = colon + 1;
		n++;
	}
	ret = sonde_tracing_data_build(tracefs, tps, n, &blob, &len, &err);
	free(tps);
	if (ret < 0) {
		fprintf(stderr, "tracing_data_dump: %s\n", err.text);
		return 1;
	}
	f = fopen(out, "wb");
	if (!f || fwrite(blob, 1, len, f) != len || fclose(f) != 0) {
		perror(out);
		return 1;
	}
	free(blob);
	return 0;
}
