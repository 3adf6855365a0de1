// SPDX-License-Identifier: MIT
/*
 * trace.dat writing and printing with libtracecmd, in the order trace-cmd
 * record itself writes a file: the headers (header_page, header_event,
 * ftrace and event formats, kallsyms, printk formats, from the top-level
 * tracefs, which instances share), the options (uname, per-CPU stats),
 * the comm cache, the CPU count, then the per-CPU page files appended as
 * flyrecord data.  The page files are the kernel's ring-buffer pages as
 * spliced, which is exactly what trace.dat stores.
 */
#include "trace_dat.h"
#include "trace_dat_check.h"

#include <sonde/blkdecode.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef SONDE_HAVE_TRACECMD
#include "tracecmd_private.h"

/*
 * Why a libtracecmd write failed.  The library returns -1 and leaves errno
 * to whatever its last call set (a full disk may show as EIO or as
 * nothing), so a file system without space is named first, as the cause.
 */
static const char *write_failure(int saved, int fd)
{
	struct statvfs st;

	if (fd >= 0 && fstatvfs(fd, &st) == 0 && st.f_bavail == 0)
		return strerror(ENOSPC);
	return saved ? strerror(saved) : "failed (libtracecmd gave no reason)";
}

bool trace_dat_available(void)
{
	return true;
}

int trace_dat_write(const char *path, const struct trace_dat_spec *spec, char *err, size_t len)
{
	struct tracecmd_event_list *list = NULL, *nodes = NULL, none = {NULL, "sonde-none/none"};
	struct tracecmd_output *h;
	struct utsname u;
	int ret = -1;

	tracecmd_set_loglevel(TEP_LOG_ERROR);
	if (spec->fd >= 0) {
		/* libtracecmd closes what it is given; the caller keeps its own. */
		int fd = dup(spec->fd);

		h = fd >= 0 ? tracecmd_output_create_fd(fd) : NULL;
		if (!h && fd >= 0)
			close(fd);
	} else {
		h = tracecmd_output_create(path);
	}
	if (!h) {
		snprintf(err, len, "%s: can't create (%s)", path, strerror(errno));
		return -1;
	}
	/* libtracecmd prints where each CPU's data went; sonde prints its own summary. */
	tracecmd_set_quiet(h, true);
	if (spec->nglobs) {
		nodes = calloc(spec->nglobs, sizeof(*nodes));
		if (!nodes) {
			snprintf(err, len, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < spec->nglobs; i++) {
			nodes[i].glob = spec->event_globs[i];
			nodes[i].next = i + 1 < spec->nglobs ? &nodes[i + 1] : NULL;
		}
		list = nodes;
	} else {
		/* NULL would mean every event's format: name one that matches nothing. */
		list = &none;
	}
	errno = 0;
	if (tracecmd_output_set_trace_dir(h, spec->tracefs) < 0 ||
	    tracecmd_output_write_headers(h, list) < 0) {
		snprintf(err, len, "%s: %s (writing the headers: event formats from %s)", path,
			 write_failure(errno, spec->fd), spec->tracefs);
		goto out;
	}
	if (uname(&u) == 0) {
		char text[5 * 65 + 8];

		snprintf(text, sizeof(text), "%s %s %s %s %s", u.sysname, u.nodename, u.release,
			 u.version, u.machine);
		tracecmd_add_option(h, SONDE_TRACECMD_OPTION_UNAME, (int)strlen(text) + 1, text);
	}
	for (int c = 0; spec->cpu_stats && c < spec->ncpus; c++) {
		char text[1200];

		if (!spec->cpu_stats[c])
			continue;
		snprintf(text, sizeof(text), "CPU: %d\n%s\n", c, spec->cpu_stats[c]);
		tracecmd_add_option(h, SONDE_TRACECMD_OPTION_CPUSTAT, (int)strlen(text) + 1, text);
	}
	errno = 0;
	if (tracecmd_write_cmdlines(h) < 0 || tracecmd_write_cpus(h, spec->ncpus) < 0 ||
	    tracecmd_write_options(h) < 0) {
		snprintf(err, len, "%s: %s (writing comms and options)", path,
			 write_failure(errno, spec->fd));
		goto out;
	}
	errno = 0;
	if (tracecmd_append_cpu_data(h, spec->ncpus, (char *const *)spec->cpu_files) < 0) {
		snprintf(err, len, "%s: %s (appending the CPU data)", path,
			 write_failure(errno, spec->fd));
		goto out;
	}
	ret = 0;
out:
	tracecmd_output_close(h);
	free(nodes);
	return ret;
}

/*
 * A file may hold the top-level buffer and instance buffers (trace-cmd
 * record -B, extract -B); each is read through a handle of its own and the
 * handles are merged in time order, as trace-cmd report does.  Lines of an
 * instance start with its name, right-aligned to the longest name, and the
 * top level's with as many blanks (trace-cmd's layout).
 */
struct report_ctx {
	FILE *out;
	uint64_t count;
	struct trace_seq seq;
	struct tracecmd_input **handles; /* [0]: the top level */
	const char **names;		 /* per handle, NULL for the top level */
	int nhandles;
	int name_width; /* 0: no instance buffers, no prefix */
};

static const char *buffer_name(const struct report_ctx *ctx, struct tracecmd_input *handle)
{
	for (int i = 0; i < ctx->nhandles; i++)
		if (ctx->handles[i] == handle)
			return ctx->names[i];
	return NULL;
}

static int print_one(struct tracecmd_input *handle, struct tep_record *rec, int cpu, void *data)
{
	struct report_ctx *ctx = data;
	struct tep_handle *tep = tracecmd_get_tep(handle);
	struct tep_event *ev;

	ctx->count++;
	if (!ctx->out)
		return 0;
	trace_seq_reset(&ctx->seq);
	if (ctx->name_width) {
		const char *name = buffer_name(ctx, handle);

		trace_seq_printf(&ctx->seq, "%*s%s", ctx->name_width, name ? name : "",
				 name ? ": " : "  ");
	}
	/* trace-cmd report's default line: comm-pid [cpu] secs.usecs: event: fields,
	 * "event:" padded to 21 columns as trace-cmd pads it. */
	tep_print_event(tep, &ctx->seq, rec, "%16s-%-5d [%03d] %6.1000d: ", TEP_PRINT_COMM,
			TEP_PRINT_PID, TEP_PRINT_CPU, TEP_PRINT_TIME);
	ev = tep_find_event_by_record(tep, rec);
	if (ev) {
		int n = (int)strlen(ev->name) + 1;

		trace_seq_printf(&ctx->seq, "%s:%*s", ev->name, n < 21 ? 21 - n + 1 : 1, "");
		tep_print_event(tep, &ctx->seq, rec, "%s\n", TEP_PRINT_INFO);
	} else {
		tep_print_event(tep, &ctx->seq, rec, "%s: %s\n", TEP_PRINT_NAME, TEP_PRINT_INFO);
	}
	trace_seq_terminate(&ctx->seq);
	fwrite(ctx->seq.buffer, 1, ctx->seq.len, ctx->out);
	return ferror(ctx->out) ? -1 : 0;
}

/*
 * The blk tracer's records (ftrace/blktrace, a format trace-cmd makes up
 * with a bare "%d" pid print) as the kernel's blk tracer prints them.
 */
static int print_blk(struct trace_seq *s, struct tep_record *rec, struct tep_event *ev,
		     void *context)
{
	struct tep_handle *tep = ev->tep;
	bool be = tep_is_file_bigendian(tep);
	size_t size = rec->size > 0 ? (size_t)rec->size : 0;
	int pid = sonde_blk_record_pid(rec->data, size, be);
	const char *comm = pid < 0 ? NULL : tep_data_comm_from_pid(tep, pid);
	char small[256], *text = small;
	int n = sonde_blk_format(rec->data, size, be, comm, small, sizeof(small));

	(void)context;
	if (n < 0) {
		trace_seq_printf(s, "short blk record (%d bytes)", rec->size);
		return 0;
	}
	if ((size_t)n >= sizeof(small)) {
		text = malloc((size_t)n + 1);
		if (!text)
			return -1;
		sonde_blk_format(rec->data, size, be, comm, text, (size_t)n + 1);
	}
	trace_seq_puts(s, text);
	if (text != small)
		free(text);
	return 0;
}

/* Opens every instance buffer of @h into @ctx.  Return: 0, or -1 with @err set. */
static int open_buffers(const char *path, struct tracecmd_input *h, struct report_ctx *ctx,
			char *err, size_t len)
{
	int n = tracecmd_buffer_instances(h);

	if (n < 0)
		n = 0;
	ctx->handles = calloc((size_t)n + 1, sizeof(*ctx->handles));
	ctx->names = calloc((size_t)n + 1, sizeof(*ctx->names));
	if (!ctx->handles || !ctx->names) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	ctx->handles[0] = h;
	ctx->nhandles = 1;
	for (int i = 0; i < n; i++) {
		const char *name = tracecmd_buffer_instance_name(h, i);
		struct tracecmd_input *b = tracecmd_buffer_instance_handle(h, i);

		/* Never a report that quietly leaves a buffer out. */
		if (!b) {
			snprintf(err, len, "%s: instance buffer %d (%s) can't be read", path, i,
				 name ? name : "unnamed");
			return -1;
		}
		ctx->handles[ctx->nhandles] = b;
		ctx->names[ctx->nhandles++] = name ? name : "";
		if (name && (int)strlen(name) > ctx->name_width)
			ctx->name_width = (int)strlen(name);
	}
	return 0;
}

static int iterate(const char *path, FILE *out, uint64_t *count, char *err, size_t len)
{
	struct report_ctx ctx = {.out = out};
	struct tracecmd_input *h;
	int r = -1;

	tracecmd_set_loglevel(TEP_LOG_ERROR);
	h = tracecmd_open(path, 0);
	if (!h) {
		snprintf(err, len, "%s: not a trace.dat file libtracecmd can read", path);
		return -1;
	}
	trace_seq_init(&ctx.seq);
	/* Instance handles share the top level's tep, so once is enough. */
	tep_register_event_handler(tracecmd_get_tep(h), -1, "ftrace", "blktrace", print_blk, NULL);
	if (open_buffers(path, h, &ctx, err, len) == 0) {
		if (out)
			fprintf(out, "cpus=%d\n", tracecmd_cpus(h));
		r = ctx.nhandles > 1
			? tracecmd_iterate_events_multi(ctx.handles, ctx.nhandles, print_one, &ctx)
			: tracecmd_iterate_events(h, NULL, 0, print_one, &ctx);
		if (r < 0 && out && ferror(out))
			snprintf(err, len, "writing the report: %s", strerror(errno));
		else
			r = 0;
	}
	trace_seq_destroy(&ctx.seq);
	for (int i = ctx.nhandles - 1; i >= 1; i--)
		tracecmd_close(ctx.handles[i]);
	tracecmd_close(h);
	free(ctx.handles);
	free(ctx.names);
	*count = ctx.count;
	return r;
}

/* The file's layout, checked before the libraries trust it.  Return: 0 or -1 with @err. */
static int check_file(const char *path, uint64_t *good, char *err, size_t len)
{
	char why[300];
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	*good = 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		snprintf(err, len, "%s: %s", path,
			 st.st_size ? "not a regular file" : "empty file");
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	r = trace_dat_check(map, (size_t)st.st_size, good, why, sizeof(why));
	munmap(map, (size_t)st.st_size);
	if (r < 0)
		snprintf(err, len, "%s: damaged trace.dat: %s", path, why);
	return r;
}

struct child_result {
	int r;
	uint64_t count;
	char err[512];
};

/*
 * libtracecmd and libtraceevent still trust what the checks can't judge
 * (format text, page contents), so the reading runs in a child process: a
 * crash there becomes a message with how far the layout was sound, never
 * a signal that takes sonde down.
 */
static int guarded(const char *path, FILE *out, uint64_t *count, char *err, size_t len)
{
	struct child_result res = {.r = -1};
	uint64_t good;
	int pfd[2], status;
	pid_t pid;
	ssize_t got;

	*count = 0;
	if (check_file(path, &good, err, len) < 0)
		return -1;
	if (out)
		fflush(out);
	if (pipe2(pfd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		snprintf(err, len, "%s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		res.r = iterate(path, out, &res.count, res.err, sizeof(res.err));
		if (out && fflush(out) != 0 && res.r == 0) {
			res.r = -1;
			snprintf(res.err, sizeof(res.err), "writing the report: %s",
				 strerror(errno));
		}
		if (write(pfd[1], &res, sizeof(res)) < 0)
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	do
		got = read(pfd[0], &res, sizeof(res));
	while (got < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status) || got != (ssize_t)sizeof(res)) {
		snprintf(err, len,
			 "%s: damaged trace.dat: the reader (libtracecmd) failed with %s past its "
			 "layout, which is sound up to offset 0x%llx (event formats or ring pages "
			 "are damaged)",
			 path, WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no answer",
			 (unsigned long long)good);
		return -1;
	}
	*count = res.count;
	if (res.r < 0)
		snprintf(err, len, "%s", res.err);
	return res.r;
}

int trace_dat_report(const char *path, FILE *out, uint64_t *count, char *err, size_t len)
{
	return guarded(path, out, count, err, len);
}

int trace_dat_count(const char *path, uint64_t *count, char *err, size_t len)
{
	return guarded(path, NULL, count, err, len);
}

#else

bool trace_dat_available(void)
{
	return false;
}

static int unavailable(char *err, size_t len)
{
	snprintf(err, len,
		 "sonde was built without libtracecmd (install libtracecmd-dev and "
		 "libtraceevent-dev, then reconfigure)");
	return -1;
}

int trace_dat_write(const char *path, const struct trace_dat_spec *spec, char *err, size_t len)
{
	return unavailable(err, len);
}

int trace_dat_report(const char *path, FILE *out, uint64_t *count, char *err, size_t len)
{
	return unavailable(err, len);
}

int trace_dat_count(const char *path, uint64_t *count, char *err, size_t len)
{
	return unavailable(err, len);
}
#endif
