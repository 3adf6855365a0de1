// SPDX-License-Identifier: MIT
/*
 * trace -o's files and their recovery (see sonde/trace_out.h).
 *
 * Opening makes the temporary trace.dat (sonde_outfile), one empty page
 * file per CPU number for the recorder to fill, and the run-folder entry;
 * committing hands the page files to the trace.dat writer and renames the
 * result into place; closing removes whatever is left.
 *
 * A SIGKILLed recorder leaves page files that are valid up to the last
 * page it spliced whole: splice moves whole pages, so only a page being
 * written at the moment of the kill can be cut, and recovery drops a cut
 * tail.  The formats come from this machine's tracefs at recovery time,
 * as they do at the end of a normal run: recovery belongs in the same boot
 * (the run folder, /run, does not outlive it either).
 */
#include <sonde/trace_out.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>

int sonde_trace_out_open(struct sonde_trace_out *to, const char *run_dir, const char *output,
			 int ncpus, const struct sonde_ftrace_event *events, size_t nevents,
			 struct sonde_errmsg *err)
{
	struct sonde_trace_leftover lo = {0};
	int r;

	memset(to, 0, sizeof(*to));
	to->of.fd = -1;
	to->run_dir = run_dir;
	r = sonde_outfile_open(&to->of, output, 0644, 0, err);
	if (r < 0)
		return r;
	if (!to->of.tmp) {
		/* A FIFO or a device: libtracecmd seeks back to write sizes. */
		sonde_outfile_abort(&to->of);
		return sonde_errmsg_set(
		    err, -ESPIPE, "%s: trace.dat needs a regular file (it is written with seeks)",
		    output);
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
			free(to->cpu_files[c]);
			to->cpu_files[c] = NULL;
			return sonde_errmsg_set(err, r, "%s: %s", path, sonde_strerror(r));
		}
		fclose(f);
	}
	lo.pid = getpid();
	lo.output = sonde_path_absolute(to->of.path);
	lo.tmp = sonde_path_absolute(to->of.tmp);
	lo.ncpus = ncpus;
	sonde_strlist_init(&lo.events);
	r = lo.output && lo.tmp ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < nevents; i++)
		r = sonde_strlist_add(&lo.events, events[i].glob);
	/* A safety net only: without it a kill loses the capture, as before. */
	if (r == 0)
		to->registered = sonde_trace_leftover_register(run_dir, &lo) == 0;
	sonde_trace_leftover_fini(&lo);
	return r;
}

int sonde_trace_out_commit(struct sonde_trace_out *to, struct sonde_trace_dat_spec *spec,
			   struct sonde_errmsg *err)
{
	int r;

	spec->fd = to->of.fd;
	spec->cpu_files = (const char *const *)to->cpu_files;
	spec->ncpus = to->ncpus;
	r = sonde_trace_dat_write(to->of.path, spec, err);
	return r < 0 ? r : sonde_outfile_commit(&to->of, err);
}

void sonde_trace_out_close(struct sonde_trace_out *to)
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
		sonde_trace_leftover_unregister(to->run_dir, getpid());
	to->registered = false;
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

int sonde_trace_out_recover(const char *run_dir, const char *tracefs,
			    const struct sonde_trace_leftover *lo, uint64_t *count,
			    struct sonde_errmsg *err)
{
	struct sonde_errmsg ignored = {{0}};
	struct sonde_outfile of;
	struct sonde_trace_dat_spec spec = {0};
	char **files = calloc((size_t)lo->ncpus, sizeof(*files));
	long page = sysconf(_SC_PAGESIZE);
	int r = files ? 0 : -ENOMEM;

	*count = 0;
	for (int c = 0; r == 0 && c < lo->ncpus; c++) {
		char path[PATH_MAX];

		r = sonde_trace_leftover_cpu_file(lo->tmp, c, path, sizeof(path));
		if (r == 0 && !(files[c] = strdup(path)))
			r = -ENOMEM;
		if (r == 0)
			r = whole_pages(files[c], page);
		if (r < 0)
			sonde_errmsg_set(err, r, "%s: %s", path, sonde_strerror(r));
	}
	if (r == 0)
		r = sonde_outfile_open(&of, lo->output, 0644, 0, err);
	if (r == 0) {
		spec.fd = of.fd;
		spec.tracefs = tracefs;
		spec.event_globs = (const char *const *)lo->events.v;
		spec.nglobs = lo->events.n;
		spec.cpu_files = (const char *const *)files;
		spec.ncpus = lo->ncpus;
		r = sonde_trace_dat_write(lo->output, &spec, err);
		if (r < 0)
			sonde_outfile_abort(&of);
		else
			r = sonde_outfile_commit(&of, err);
	}
	if (r == 0) {
		/* Only a count for the message: the file is written either way. */
		sonde_trace_dat_count(lo->output, count, &ignored);
		sonde_trace_leftover_remove(run_dir, lo);
	}
	for (int c = 0; files && c < lo->ncpus; c++)
		free(files[c]);
	free(files);
	return r;
}
