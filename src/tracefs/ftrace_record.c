// SPDX-License-Identifier: MIT
/*
 * Saving ring-buffer pages as they are, the way trace-cmd records: one
 * thread per CPU moves whole pages from per_cpu/cpuN/trace_pipe_raw into a
 * pipe and from the pipe into a file with splice(), so the data never
 * passes through user space.  The page format (header, then events) is
 * what trace.dat stores per CPU, so the files are appended to a trace.dat
 * unchanged.
 *
 * Each thread waits in poll() with a short timeout, which bounds how long
 * a stop request waits; the kernel wakes poll when the buffer is
 * buffer_percent full.  splice only moves full pages, so stopping does one
 * more round of non-blocking splices and then read()s the last partial
 * page.  The threads block every signal: signals belong to the caller's
 * main loop.
 */
#include <sonde/ftrace.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Pages moved per splice call; the pipe is sized to hold them. */
#define SPLICE_PAGES 64

struct cpu_reader {
	struct sonde_ftrace_recorder *rec;
	pthread_t thread;
	bool running;
	int cpu;
	int in, out, pipe[2];
	uint64_t bytes;
	int err;
	char what[96]; /* the step that failed */
};

struct sonde_ftrace_recorder {
	atomic_int stop;
	size_t page;
	size_t n;
	struct cpu_reader r[];
};

/* Moves every full page there is.  Return: 0 (nothing left) or -errno. */
static int splice_pages(struct cpu_reader *r)
{
	size_t chunk = r->rec->page * SPLICE_PAGES;

	for (;;) {
		ssize_t got =
		    splice(r->in, NULL, r->pipe[1], NULL, chunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			snprintf(r->what, sizeof(r->what), "splice from trace_pipe_raw");
			return -errno;
		}
		if (got == 0)
			return 0;
		while (got > 0) {
			ssize_t put =
			    splice(r->pipe[0], NULL, r->out, NULL, (size_t)got, SPLICE_F_MOVE);

			if (put < 0 && errno == EINTR)
				continue;
			if (put <= 0) {
				snprintf(r->what, sizeof(r->what), "splice to the CPU file");
				return put < 0 ? -errno : -EIO;
			}
			got -= put;
			r->bytes += (uint64_t)put;
		}
	}
}

/* Copies the partial pages splice leaves behind.  Return: 0 or -errno. */
static int read_rest(struct cpu_reader *r)
{
	char *buf = malloc(r->rec->page);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t got = read(r->in, buf, r->rec->page);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got < 0 && errno != EAGAIN) {
				snprintf(r->what, sizeof(r->what), "reading trace_pipe_raw");
				ret = -errno;
			}
			break;
		}
		if (write(r->out, buf, (size_t)got) != got) {
			snprintf(r->what, sizeof(r->what), "writing the CPU file");
			ret = -EIO;
			break;
		}
		r->bytes += (uint64_t)got;
	}
	free(buf);
	return ret;
}

static void *reader_main(void *arg)
{
	struct cpu_reader *r = arg;
	struct pollfd pfd = {.fd = r->in, .events = POLLIN};

	while (!atomic_load(&r->rec->stop)) {
		poll(&pfd, 1, 50);
		r->err = splice_pages(r);
		if (r->err < 0)
			return NULL;
	}
	r->err = splice_pages(r);
	if (r->err == 0)
		r->err = read_rest(r);
	return NULL;
}

static void close_reader(struct cpu_reader *r)
{
	int *fds[] = {&r->in, &r->out, &r->pipe[0], &r->pipe[1]};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static int open_reader(const struct sonde_ftrace *ft, struct cpu_reader *r, const char *out,
		       struct sonde_errmsg *err)
{
	char file[64], path[PATH_MAX];
	int e;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", r->cpu);
	if ((e = sonde_ftrace_path(ft, file, path, sizeof(path))) < 0)
		return e;
	r->in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (r->in < 0)
		return sonde_errmsg_set(err, -errno, "%s: %s", path, strerror(errno));
	r->out = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->out < 0)
		return sonde_errmsg_set(err, -errno, "%s: %s", out, strerror(errno));
	if (pipe2(r->pipe, O_CLOEXEC) < 0)
		return sonde_errmsg_set(err, -errno, "pipe: %s", strerror(errno));
	/* Best effort: a bigger pipe means fewer splice calls per wake-up. */
	fcntl(r->pipe[1], F_SETPIPE_SZ, (int)(r->rec->page * SPLICE_PAGES));
	return 0;
}

int sonde_ftrace_recorder_start(const struct sonde_ftrace *ft, const int *cpus,
				const char *const *paths, size_t n,
				struct sonde_ftrace_recorder **out, struct sonde_errmsg *err)
{
	struct sonde_ftrace_recorder *rec = calloc(1, sizeof(*rec) + n * sizeof(rec->r[0]));
	sigset_t all, old;
	int r = 0;

	*out = NULL;
	if (!rec)
		return -ENOMEM;
	atomic_init(&rec->stop, 0);
	rec->page = (size_t)sysconf(_SC_PAGESIZE);
	rec->n = n;
	for (size_t i = 0; i < n; i++) {
		rec->r[i].rec = rec;
		rec->r[i].cpu = cpus[i];
		rec->r[i].in = rec->r[i].out = rec->r[i].pipe[0] = rec->r[i].pipe[1] = -1;
	}
	for (size_t i = 0; r == 0 && i < n; i++)
		r = open_reader(ft, &rec->r[i], paths[i], err);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (size_t i = 0; r == 0 && i < n; i++) {
		r = -pthread_create(&rec->r[i].thread, NULL, reader_main, &rec->r[i]);
		if (r < 0)
			sonde_errmsg_set(err, r, "starting the reader of CPU %d: %s", cpus[i],
					 sonde_strerror(r));
		else
			rec->r[i].running = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		sonde_ftrace_recorder_stop(rec, NULL, NULL);
		return r;
	}
	*out = rec;
	return 0;
}

int sonde_ftrace_recorder_stop(struct sonde_ftrace_recorder *rec, uint64_t *bytes,
			       struct sonde_errmsg *err)
{
	int first = 0;

	if (!rec)
		return 0;
	atomic_store(&rec->stop, 1);
	for (size_t i = 0; i < rec->n; i++) {
		struct cpu_reader *r = &rec->r[i];

		if (r->running)
			pthread_join(r->thread, NULL);
		if (r->out >= 0 && close(r->out) < 0 && r->err == 0) {
			r->err = -errno;
			snprintf(r->what, sizeof(r->what), "closing the CPU file");
		}
		r->out = -1;
		close_reader(r);
		if (bytes)
			bytes[i] = r->bytes;
		if (r->err < 0 && first == 0) {
			first = r->err;
			if (err)
				sonde_errmsg_set(err, r->err, "CPU %d: %s: %s", r->cpu, r->what,
						 sonde_strerror(r->err));
		}
	}
	free(rec);
	return first;
}
