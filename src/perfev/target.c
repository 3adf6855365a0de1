// SPDX-License-Identifier: MIT
/*
 * Resolving what to measure into tasks for per-task counters: a gated
 * workload is one task (its children are followed by inherit), each -p
 * process expands to the threads in /proc/PID/task at this moment, and
 * each -t thread is checked to exist.  The result is one array of tids,
 * a slot per task, that counters.c opens an fd per event in.
 */
#include <sonde/counters.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct tasks {
	pid_t *v;
	size_t n, cap;
};

static int tasks_add(struct tasks *t, pid_t pid)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		pid_t *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = pid;
	return 0;
}

/* Every thread of process @pid, from /proc/PID/task. */
static int add_threads(struct tasks *t, const char *procfs, pid_t pid)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%d/task", procfs, (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!r && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			r = tasks_add(t, (pid_t)atoi(de->d_name));
	closedir(d);
	return r;
}

int sonde_target_tasks(const struct sonde_target *t, pid_t **out, size_t *n,
		       struct sonde_errmsg *err)
{
	struct tasks ts = {0};
	int r = 0;

	if (t->workload > 0)
		r = tasks_add(&ts, t->workload);
	for (size_t i = 0; !r && i < t->npids; i++) {
		r = add_threads(&ts, t->procfs, t->pids[i]);
		if (r == -ENOENT)
			r = sonde_errmsg_set(err, -ESRCH, "no process with pid %d",
					     (int)t->pids[i]);
	}
	for (size_t i = 0; !r && i < t->ntids; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%d", t->procfs, (int)t->tids[i]);
		if (access(path, F_OK) < 0)
			r = sonde_errmsg_set(err, -ESRCH, "no thread with tid %d", (int)t->tids[i]);
		else
			r = tasks_add(&ts, t->tids[i]);
	}
	if (r) {
		free(ts.v);
		return r;
	}
	*out = ts.v;
	*n = ts.n;
	return 0;
}
