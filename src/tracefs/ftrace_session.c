// SPDX-License-Identifier: MIT
/*
 * An ftrace run from setup to restore (see sonde/ftrace_session.h).
 *
 * Data moves one of two ways.  Live: the instance's trace_pipe, opened
 * non-blocking, is read in 64 KiB chunks by _pump whenever the caller's
 * poll says so, and each chunk goes to the caller's callback (the CLI
 * prints it).  Recording: the recorder's threads splice per-CPU pages into
 * the caller's page files on their own; the caller only waits.  The end is
 * the same for both and its order matters: tracing off first (what the
 * buffers hold becomes finite), then the drain, then the stats (they must
 * be read before the instance goes), then the restore.
 */
#include <sonde/ftrace_session.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sonde/fileio.h>

struct sonde_ftrace_session {
	struct sonde_ftrace_session_config cfg; /* pointers borrowed from the caller */
	struct sonde_ftrace *ft;
	struct sonde_ftrace_recorder *rec; /* recording, once started */
	int pipe_fd;			   /* live: trace_pipe, once started */
	bool drained;
};

int sonde_ftrace_session_open(const struct sonde_ftrace_session_config *cfg,
			      struct sonde_ftrace_session **out, struct sonde_errmsg *err)
{
	struct sonde_ftrace_session *s = calloc(1, sizeof(*s));
	int r;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->pipe_fd = -1;
	r = sonde_ftrace_create(&cfg->ftrace, &s->ft, err);
	if (r < 0) {
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

/* The recorder's arguments: page files in the order of cfg.cpus. */
static int start_recorder(struct sonde_ftrace_session *s, struct sonde_errmsg *err)
{
	const char **paths = calloc(s->cfg.ncpus ? s->cfg.ncpus : 1, sizeof(*paths));
	int r;

	if (!paths)
		return -ENOMEM;
	for (size_t i = 0; i < s->cfg.ncpus; i++)
		paths[i] = s->cfg.cpu_files[s->cfg.cpus[i]];
	r = sonde_ftrace_recorder_start(s->ft, s->cfg.cpus, paths, s->cfg.ncpus, &s->rec, err);
	free(paths);
	return r;
}

static int open_live(struct sonde_ftrace_session *s, struct sonde_errmsg *err)
{
	char path[PATH_MAX];
	int r = sonde_ftrace_path(s->ft, "trace_pipe", path, sizeof(path));

	if (r < 0)
		return r;
	s->pipe_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->pipe_fd < 0)
		return sonde_errmsg_set(err, -errno, "%s: %s", path, strerror(errno));
	return 0;
}

int sonde_ftrace_session_start(struct sonde_ftrace_session *s, struct sonde_errmsg *err)
{
	/* The reader first: nothing traced is lost before someone reads. */
	int r = s->cfg.cpu_files ? start_recorder(s, err) : open_live(s, err);

	return r < 0 ? r : sonde_ftrace_start(s->ft);
}

int sonde_ftrace_session_fd(const struct sonde_ftrace_session *s)
{
	return s->pipe_fd;
}

long sonde_ftrace_session_pump(struct sonde_ftrace_session *s, long budget)
{
	char buf[65536];
	long total = 0;

	while (s->pipe_fd >= 0 && total < budget) {
		ssize_t n = read(s->pipe_fd, buf, sizeof(buf));
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? total : -errno;
		if (n == 0)
			return total;
		r = s->cfg.on_text ? s->cfg.on_text(s->cfg.ctx, buf, (size_t)n) : 0;
		if (r < 0)
			return r;
		total += n;
		/* A short read emptied the pipe: don't spin on EAGAIN. */
		if ((size_t)n < sizeof(buf))
			return total;
	}
	return total;
}

int sonde_ftrace_session_stop(struct sonde_ftrace_session *s)
{
	return sonde_ftrace_stop(s->ft);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int sonde_ftrace_session_drain(struct sonde_ftrace_session *s, double seconds, bool *cut,
			       struct sonde_errmsg *err)
{
	int r = 0;

	*cut = false;
	s->drained = true;
	if (s->pipe_fd >= 0) {
		/* Tracing is off: what is left is finite, but the callback may be slow. */
		double end = now_seconds() + seconds;

		while (sonde_ftrace_session_pump(s, 1 << 20) > 0)
			if (now_seconds() > end) {
				*cut = true;
				break;
			}
		close(s->pipe_fd);
		s->pipe_fd = -1;
	}
	if (s->rec) {
		r = sonde_ftrace_recorder_stop(s->rec, NULL, err);
		s->rec = NULL;
	}
	return r;
}

/* Highest CPU in the config + 1: the stats arrays are indexed by CPU number. */
static int cpu_slots(const struct sonde_ftrace_session_config *cfg)
{
	int max = -1;

	for (size_t i = 0; i < cfg->ncpus; i++)
		if (cfg->cpus[i] > max)
			max = cfg->cpus[i];
	return max + 1;
}

/* Reads every CPU's stats while the instance still exists.  Best effort, as before. */
static void read_stats(const struct sonde_ftrace_session *s, struct sonde_ftrace_session_stats *st)
{
	int n = cpu_slots(&s->cfg);

	memset(st, 0, sizeof(*st));
	st->cpu = calloc((size_t)n + 1, sizeof(*st->cpu));
	st->have = calloc((size_t)n + 1, sizeof(*st->have));
	st->text = calloc((size_t)n + 1, sizeof(*st->text));
	if (!st->cpu || !st->have || !st->text)
		return;
	st->ncpus = n;
	for (size_t i = 0; i < s->cfg.ncpus; i++) {
		int c = s->cfg.cpus[i];
		char file[64], path[PATH_MAX];

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", c);
		if (sonde_ftrace_path(s->ft, file, path, sizeof(path)) == 0 &&
		    sonde_read_all(path, &st->text[c], NULL) == 0 &&
		    sonde_ftrace_stats_parse(st->text[c], &st->cpu[c]) == 0) {
			st->have[c] = true;
			st->read += st->cpu[c].read;
		}
	}
}

int sonde_ftrace_session_close(struct sonde_ftrace_session *s,
			       struct sonde_ftrace_session_stats *stats, struct sonde_errmsg *err)
{
	struct sonde_errmsg derr = {{0}};
	bool cut;
	int r;

	if (!s->drained)
		sonde_ftrace_session_drain(s, 0, &cut, &derr);
	if (stats)
		read_stats(s, stats);
	r = sonde_ftrace_destroy(s->ft, err);
	free(s);
	return r;
}

void sonde_ftrace_session_stats_fini(struct sonde_ftrace_session_stats *stats)
{
	for (int c = 0; stats->text && c < stats->ncpus; c++)
		free(stats->text[c]);
	free(stats->text);
	free(stats->cpu);
	free(stats->have);
	memset(stats, 0, sizeof(*stats));
}
