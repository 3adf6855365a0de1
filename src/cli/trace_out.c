// SPDX-License-Identifier: MIT
/*
 * trace -o's files and their recovery (see trace_out.h).
 *
 * A SIGKILLed recorder leaves page files that are valid up to the last
 * page it spliced whole: splice moves whole pages, so only a page being
 * written at the moment of the kill can be cut, and recovery drops a cut
 * tail.  The formats come from this machine's tracefs at recovery time,
 * as they do at the end of a normal run: recovery belongs in the same boot
 * (the run folder, /run, does not outlive it either).
 */
#include "trace_out.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/ftrace_leftover.h>

#include "cli.h"

/* @path made absolute against the working folder.  Return: new string or NULL. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return asprintf(&out, "%s/%s", cwd, path) < 0 ? NULL : out;
}

int trace_out_open(struct trace_out *to, const char *output, int ncpus,
		   const struct sonde_ftrace_event *events, size_t nevents)
{
	struct sonde_errmsg err = {{0}};
	struct sonde_trace_leftover lo = {0};
	int r;

	memset(to, 0, sizeof(*to));
	to->of.fd = -1;
	r = sonde_outfile_open(&to->of, output, 0644, 0, &err);
	if (r < 0) {
		cli_error("%s", err.text);
		return r;
	}
	if (!to->of.tmp) {
		/* A FIFO or a device: libtracecmd seeks back to write sizes. */
		cli_error("%s: trace.dat needs a regular file (it is written with seeks)", output);
		sonde_outfile_abort(&to->of);
		return -ESPIPE;
	}
	to->ncpus = ncpus;
	to->cpu_files = calloc((size_t)ncpus, sizeof(*to->cpu_files));
	if (!to->cpu_files)
		return -ENOMEM;
	for (int c = 0; c < ncpus; c++) {
		char path[PATH_MAX];
		FILE *f;

		if (sonde_trace_leftover_cpu_file(to->of.tmp, c, path, sizeof(path)) < 0 ||
		    !(to->cpu_files[c] = strdup(path)))
			return -ENOMEM;
		/* Offline CPUs get an empty file too, so file index = CPU number. */
		f = fopen(path, "wxe");
		if (!f) {
			r = -errno;
			cli_error("%s: %s", path, sonde_strerror(r));
			free(to->cpu_files[c]);
			to->cpu_files[c] = NULL;
			return r;
		}
		fclose(f);
	}
	lo.pid = getpid();
	lo.output = absolute(to->of.path);
	lo.tmp = absolute(to->of.tmp);
	lo.ncpus = ncpus;
	sonde_strlist_init(&lo.events);
	r = lo.output && lo.tmp ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < nevents; i++)
		r = sonde_strlist_add(&lo.events, events[i].glob);
	/* A safety net only: without it a kill loses the capture, as before. */
	if (r == 0)
		to->registered = sonde_trace_leftover_register(SONDE_RUN_DIR, &lo) == 0;
	sonde_trace_leftover_fini(&lo);
	return r;
}

int trace_out_commit(struct trace_out *to, struct trace_dat_spec *spec, char *err, size_t len)
{
	struct sonde_errmsg e = {{0}};

	spec->fd = to->of.fd;
	spec->cpu_files = (const char *const *)to->cpu_files;
	spec->ncpus = to->ncpus;
	if (trace_dat_write(to->of.path, spec, err, len) < 0)
		return -1;
	if (sonde_outfile_commit(&to->of, &e) < 0) {
		snprintf(err, len, "%s", e.text);
		return -1;
	}
	return 0;
}

void trace_out_close(struct trace_out *to)
{
	for (int c = 0; to->cpu_files && c < to->ncpus; c++) {
		if (to->cpu_files[c])
			unlink(to->cpu_files[c]);
		free(to->cpu_files[c]);
	}
	free(to->cpu_files);
	to->cpu_files = NULL;
	if (to->of.path)
		sonde_outfile_abort(&to->of);
	if (to->registered)
		sonde_trace_leftover_unregister(SONDE_RUN_DIR, getpid());
	to->registered = false;
}

void trace_out_check_leftovers(void)
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

/* Cuts a page file to whole pages: a kill can stop a write inside one. */
static int whole_pages(const char *path, long page)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (st.st_size % page && truncate(path, st.st_size - st.st_size % page) < 0)
		return -errno;
	return 0;
}

static int recover_one(struct cli *cli, const struct sonde_trace_leftover *lo)
{
	struct sonde_errmsg e = {{0}};
	struct sonde_outfile of;
	struct trace_dat_spec spec = {0};
	char **files = calloc((size_t)lo->ncpus, sizeof(*files));
	char err[512];
	long page = sysconf(_SC_PAGESIZE);
	uint64_t count = 0;
	int r = files ? 0 : -ENOMEM;

	for (int c = 0; r == 0 && c < lo->ncpus; c++) {
		char path[PATH_MAX];

		r = sonde_trace_leftover_cpu_file(lo->tmp, c, path, sizeof(path));
		if (r == 0 && !(files[c] = strdup(path)))
			r = -ENOMEM;
		if (r == 0)
			r = whole_pages(files[c], page);
		if (r < 0)
			cli_error("%s: %s", path, sonde_strerror(r));
	}
	if (r == 0 && (r = sonde_outfile_open(&of, lo->output, 0644, 0, &e)) < 0)
		cli_error("%s", e.text);
	if (r == 0) {
		spec.fd = of.fd;
		spec.tracefs = cli_roots(cli)->tracefs;
		spec.event_globs = (const char *const *)lo->events.v;
		spec.nglobs = lo->events.n;
		spec.cpu_files = (const char *const *)files;
		spec.ncpus = lo->ncpus;
		r = trace_dat_write(lo->output, &spec, err, sizeof(err));
		if (r < 0) {
			cli_error("%s", err);
			sonde_outfile_abort(&of);
		} else if ((r = sonde_outfile_commit(&of, &e)) < 0) {
			cli_error("%s", e.text);
		}
	}
	if (r == 0) {
		trace_dat_count(lo->output, &count, err, sizeof(err));
		fprintf(
		    stderr,
		    "[ sonde trace recover: %llu events of the killed sonde %ld written to %s ]\n",
		    (unsigned long long)count, (long)lo->pid, lo->output);
		sonde_trace_leftover_remove(SONDE_RUN_DIR, lo);
	}
	for (int c = 0; files && c < lo->ncpus; c++)
		free(files[c]);
	free(files);
	return r;
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
	if (argc == 2 && !(want = absolute(argv[1])))
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
