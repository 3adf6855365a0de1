// SPDX-License-Identifier: MIT
/*
 * sonde buildid-list: the build ids of a capture's objects (its BUILD_ID
 * feature), as perf buildid-list prints them: "<hex id> <path>", in the
 * file's order.  Without a table (perf -z files, -B) the objects that
 * samples hit are listed, as perf does.  -H keeps the objects that a sample's address fell in (one
 * session pass; the kernel counts for "[kernel.kallsyms]"), -k prints the
 * running kernel's id.  The ids are what perf's and sonde's build-id
 * caches (~/.debug) are keyed by, so this is how a user checks that a
 * board's capture will find the host's files.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/buildid.h>
#include <sonde/perf_data.h>
#include <sonde/profile.h>
#include <sonde/session.h>
#include <sonde/symbols.h>

#include "cli.h"

static const char usage[] =
    "usage: sonde buildid-list [options]\n"
    "\n"
    "Lists the build ids of the objects a capture (perf.data from sonde or perf) recorded,\n"
    "as perf buildid-list: one \"<build id> <path>\" per line.\n"
    "\n"
    "  -i, --input FILE     the capture (default perf.data)\n"
    "  -H, --with-hits      only objects that samples fell in\n"
    "  -k, --kernel         the running kernel's build id\n"
    "  -f, --force          accepted for perf's command lines (no effect)\n"
    "  -h, --help           this help\n";

struct hits {
	bool *hit; /* [dso id] */
	size_t n;
};

static int mark_hit(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	struct hits *h = ctx;
	struct sonde_dso *d = ts->nframes ? ts->frames[0].dso : NULL;
	uint32_t id;

	if (!d)
		return 0;
	id = sonde_dso_id(d);
	if (id >= h->n) {
		size_t n = sonde_symtab_nr_dsos(ses->symtab);
		bool *v = realloc(h->hit, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + h->n, 0, (n - h->n) * sizeof(*v));
		h->hit = v;
		h->n = n;
	}
	h->hit[id] = true;
	return 0;
}

static const struct sonde_tool hits_tool = {.name = "buildid-hits", .sample = mark_hit};

/* Index of the hit object named @path, or -1. */
static long hit_index(const struct sonde_session *ses, const struct hits *h, const char *path)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->hit[i] &&
		    !strcmp(sonde_dso_long_name(sonde_symtab_dso(ses->symtab, (uint32_t)i)), path))
			return (long)i;
	return -1;
}

static void print_id(const uint8_t *id, size_t len, const char *path)
{
	char hex[2 * SONDE_BUILD_ID_MAX + 1] = "";

	if (id)
		sonde_build_id_hex(id, len < SONDE_BUILD_ID_MAX ? len : SONDE_BUILD_ID_MAX, hex);
	printf("%-40s %s\n", hex, path);
}

/*
 * -H: the table's objects that were hit, in the table's order, then the
 * other hit objects in the order they were met (their id from the MMAP2
 * record or their file, else blank), as perf lists its objects.
 */
static void print_hits(const struct sonde_session *ses, struct hits *h,
		       const struct sonde_pd_features *f)
{
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		long k = hit_index(ses, h, f->build_ids[i].filename);

		if (k < 0)
			continue;
		print_id(f->build_ids[i].id, f->build_ids[i].size, f->build_ids[i].filename);
		h->hit[k] = false;
	}
	for (size_t i = 0; i < h->n; i++) {
		const struct sonde_dso *d = sonde_symtab_dso(ses->symtab, (uint32_t)i);
		const uint8_t *id;
		size_t len;

		if (!h->hit[i])
			continue;
		id = sonde_dso_build_id(d, &len);
		print_id(id, len, sonde_dso_long_name(d));
	}
}

static int list(const char *input, bool with_hits)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_session *ses = NULL;
	struct sonde_errmsg err = {{0}};
	struct hits h = {0};
	struct sonde_session_opts so = {.no_unwind = true, .inline_frames = -1};
	const struct sonde_pd_features *f;
	int ret;

	if ((ret = sonde_pd_reader_open(&r, input, &err))) {
		cli_error("%s", err.text[0] ? err.text : sonde_strerror(ret));
		return EXIT_FAIL;
	}
	/* Without a table (perf -z files, -B), the objects the samples hit are
	 * all there is to list: perf lists them so too. */
	if (!sonde_pd_reader_has_feature(r, SONDE_PD_FEAT_BUILD_ID))
		with_hits = true;
	if (with_hits) {
		struct sonde_tool_slot slot = {&hits_tool, &h};

		if ((ret = sonde_session_run(&ses, r, &so, &slot, 1, &err))) {
			cli_error("%s: %s", input, err.text[0] ? err.text : sonde_strerror(ret));
			goto out;
		}
	}
	f = sonde_pd_reader_features(r);
	if (with_hits) {
		print_hits(ses, &h, f);
		goto out;
	}
	for (size_t i = 0; i < f->nr_build_ids; i++)
		print_id(f->build_ids[i].id, f->build_ids[i].size, f->build_ids[i].filename);
out:
	free(h.hit);
	sonde_session_free(ses);
	sonde_pd_reader_close(r);
	return ret ? EXIT_FAIL : EXIT_OK;
}

static int kernel_id(void)
{
	uint8_t id[SONDE_BUILD_ID_MAX];
	char hex[2 * SONDE_BUILD_ID_MAX + 1];
	int ret = sonde_build_id_of_kernel("/sys", id);

	if (ret < 0) {
		cli_error("/sys/kernel/notes: %s", sonde_strerror(ret));
		return EXIT_FAIL;
	}
	sonde_build_id_hex(id, (size_t)ret, hex);
	printf("%s\n", hex);
	return EXIT_OK;
}

int cmd_buildid_list(int argc, char **argv, struct cli *cli)
{
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'}, {"with-hits", no_argument, NULL, 'H'},
	    {"kernel", no_argument, NULL, 'k'},	     {"force", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},	     {0},
	};
	const char *input = "perf.data";
	bool with_hits = false, kernel = false;
	int o;

	(void)cli;
	while ((o = getopt_long(argc, argv, "i:Hkfh", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			input = optarg;
			break;
		case 'H':
			with_hits = true;
			break;
		case 'k':
			kernel = true;
			break;
		case 'f':
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("buildid-list", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("buildid-list", "unexpected argument '%s'", argv[optind]);
	return kernel ? kernel_id() : list(input, with_hits);
}
