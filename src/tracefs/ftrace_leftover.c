// SPDX-License-Identifier: MIT
/*
 * The run-folder entries of recordings in progress (see
 * sonde/ftrace_leftover.h).  An entry is a few "key=value" lines written
 * once at the start with O_EXCL semantics (a new file per PID), so a
 * reader never sees a half-written one from a live process: it only reads
 * entries whose PID is dead.  Plain file I/O, libc only (the agent may
 * record too).
 */
#include <sonde/ftrace_leftover.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/tracefs.h>

static bool pid_dead(long pid)
{
	return pid > 0 && pid != getpid() && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

void sonde_trace_leftover_fini(struct sonde_trace_leftover *lo)
{
	free(lo->output);
	free(lo->tmp);
	sonde_strlist_fini(&lo->events);
	lo->output = lo->tmp = NULL;
}

static int entry_path(const char *dir, long pid, char *buf, size_t len)
{
	return sonde_path(buf, len, "%s/trace-%ld", dir, pid);
}

int sonde_trace_leftover_register(const char *dir, const struct sonde_trace_leftover *lo)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	int r;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if ((r = entry_path(dir, lo->pid, path, sizeof(path))) < 0 ||
	    (r = sonde_path(tmp, sizeof(tmp), "%s.new", path)) < 0)
		return r;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "pid=%ld\noutput=%s\ntmp=%s\ncpus=%d\n", (long)lo->pid, lo->output, lo->tmp,
		lo->ncpus);
	for (size_t i = 0; i < lo->events.n; i++)
		fprintf(f, "event=%s\n", lo->events.v[i]);
	if (fclose(f) != 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	/* Complete or absent: a reader never parses a half-written entry. */
	if (rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	return 0;
}

void sonde_trace_leftover_unregister(const char *dir, pid_t pid)
{
	char path[PATH_MAX];

	if (entry_path(dir, pid, path, sizeof(path)) == 0)
		unlink(path);
}

int sonde_trace_leftover_cpu_file(const char *tmp, int cpu, char *buf, size_t len)
{
	return sonde_path(buf, len, "%s.cpu%d", tmp, cpu);
}

/* Parses one entry.  Return: 0, or -EINVAL for anything unexpected. */
static int parse(char *text, struct sonde_trace_leftover *lo)
{
	char *save = NULL;
	int r = 0;

	memset(lo, 0, sizeof(*lo));
	sonde_strlist_init(&lo->events);
	lo->ncpus = -1;
	for (char *line = strtok_r(text, "\n", &save); line && !r;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		char *end;

		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(line, "pid")) {
			long v = strtol(eq, &end, 10);

			lo->pid = (pid_t)v;
			r = *end || v <= 0 || v > INT_MAX ? -EINVAL : 0;
		} else if (!strcmp(line, "cpus")) {
			long v = strtol(eq, &end, 10);

			lo->ncpus = (int)v;
			r = *end || v <= 0 || v > 8192 ? -EINVAL : 0;
		} else if (!strcmp(line, "output") && !lo->output) {
			r = (lo->output = strdup(eq)) ? 0 : -ENOMEM;
		} else if (!strcmp(line, "tmp") && !lo->tmp) {
			r = (lo->tmp = strdup(eq)) ? 0 : -ENOMEM;
		} else if (!strcmp(line, "event")) {
			r = sonde_strlist_add(&lo->events, eq);
		}
	}
	if (!r && (!lo->pid || lo->ncpus < 0 || !lo->output || !lo->tmp || lo->output[0] != '/' ||
		   lo->tmp[0] != '/'))
		r = -EINVAL;
	if (r)
		sonde_trace_leftover_fini(lo);
	return r;
}

int sonde_trace_leftover_find(const char *dir, struct sonde_trace_leftover **out, size_t *n)
{
	struct sonde_strlist names;
	struct sonde_trace_leftover *v = NULL;
	size_t cnt = 0;
	int r;

	*out = NULL;
	*n = 0;
	sonde_strlist_init(&names);
	r = sonde_list_dir(dir, false, &names);
	if (r == -ENOENT)
		r = 0;
	for (size_t i = 0; r == 0 && i < names.n; i++) {
		char path[PATH_MAX], *text = NULL, *end;
		struct sonde_trace_leftover lo, *nv;
		long pid;

		if (strncmp(names.v[i], "trace-", 6) || !isdigit((unsigned char)names.v[i][6]))
			continue;
		pid = strtol(names.v[i] + 6, &end, 10);
		if (*end || !pid_dead(pid) ||
		    sonde_path(path, sizeof(path), "%s/%s", dir, names.v[i]) < 0 ||
		    sonde_read_all(path, &text, NULL) < 0)
			continue;
		if (parse(text, &lo) == 0 && lo.pid == pid) {
			nv = realloc(v, (cnt + 1) * sizeof(*v));
			if (!nv) {
				sonde_trace_leftover_fini(&lo);
				r = -ENOMEM;
			} else {
				v = nv;
				v[cnt++] = lo;
			}
		} else if (lo.output) {
			sonde_trace_leftover_fini(&lo);
		}
		free(text);
	}
	sonde_strlist_fini(&names);
	if (r < 0) {
		for (size_t i = 0; i < cnt; i++)
			sonde_trace_leftover_fini(&v[i]);
		free(v);
		return r;
	}
	*out = v;
	*n = cnt;
	return 0;
}

uint64_t sonde_trace_leftover_bytes(const struct sonde_trace_leftover *lo)
{
	uint64_t total = 0;

	for (int c = 0; c < lo->ncpus; c++) {
		char path[PATH_MAX];
		struct stat st;

		if (sonde_trace_leftover_cpu_file(lo->tmp, c, path, sizeof(path)) == 0 &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	return total;
}

void sonde_trace_leftover_remove(const char *dir, const struct sonde_trace_leftover *lo)
{
	for (int c = 0; c < lo->ncpus; c++) {
		char path[PATH_MAX];

		if (sonde_trace_leftover_cpu_file(lo->tmp, c, path, sizeof(path)) == 0)
			unlink(path);
	}
	unlink(lo->tmp);
	sonde_trace_leftover_unregister(dir, lo->pid);
}

int sonde_trace_dead_instances(const char *tracefs, struct sonde_strlist *out)
{
	struct sonde_strlist inst;
	int r;

	sonde_strlist_init(&inst);
	r = sonde_tracefs_instances(tracefs, &inst);
	for (size_t i = 0; r == 0 && i < inst.n; i++) {
		char *end;
		long pid;

		if (strncmp(inst.v[i], "sonde-", 6) || !isdigit((unsigned char)inst.v[i][6]))
			continue;
		pid = strtol(inst.v[i] + 6, &end, 10);
		if (!*end && pid_dead(pid))
			r = sonde_strlist_add(out, inst.v[i]);
	}
	sonde_strlist_fini(&inst);
	return r;
}
