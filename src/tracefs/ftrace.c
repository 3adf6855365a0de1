// SPDX-License-Identifier: MIT
/*
 * An ftrace session in its own tracefs instance, or in the top level.
 *
 * In an instance the kernel gives sonde a private copy of every control
 * file, so undoing is one rmdir.  The top level is shared: before the
 * first write to a file there, the session reads the file and pushes its
 * old contents on an undo stack, and _destroy writes them back from the
 * newest to the oldest.  Files come in three kinds when restored:
 *  - plain values (tracing_on, current_tracer, buffer_size_kb, options/X,
 *    tracing_cpumask, a device's trace/enable): written back as read;
 *  - lists (set_event, set_event_pid, set_ftrace_*): truncated, then each
 *    saved line appended, as the kernel reads them one entry per write;
 *  - event filters: "none" is restored by writing "0".
 * The top level is only used when idle (nop tracer, no event enabled), so
 * sonde never takes a buffer from someone else.
 */
#include <sonde/ftrace.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/ftrace_leftover.h>
#include <sonde/strlist.h>
#include <sonde/tracefs.h>

struct undo {
	char *path;  /* absolute, owned */
	char *saved; /* owned: the contents before sonde wrote */
};

struct sonde_ftrace {
	char tracefs[PATH_MAX];
	char name[64]; /* instance, "" for the top level */
	struct undo *undo;
	size_t nundo, capundo;
};

const char *sonde_ftrace_instance(const struct sonde_ftrace *ft)
{
	return ft->name[0] ? ft->name : NULL;
}

int sonde_ftrace_path(const struct sonde_ftrace *ft, const char *file, char *buf, size_t len)
{
	return sonde_tracefs_instance_path(ft->tracefs, sonde_ftrace_instance(ft), file, buf, len);
}

/* Writes @text with @flags (O_TRUNC or O_APPEND).  Return: 0 or -errno. */
static int write_flags(const char *path, const char *text, int flags)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = len ? write(fd, text, len) : 0;
	if (w < 0 || (size_t)w != len) {
		int e = w < 0 ? errno : EIO;

		close(fd);
		return -e;
	}
	return close(fd) < 0 ? -errno : 0;
}

/*
 * Pushes the current contents of @path before its first change: at the top
 * level, or @always (global files such as a device's switch).
 */
static int save(struct sonde_ftrace *ft, const char *path, bool always)
{
	char *old = NULL;
	int r;

	if (ft->name[0] && !always)
		return 0;
	for (size_t i = 0; i < ft->nundo; i++)
		if (!strcmp(ft->undo[i].path, path))
			return 0;
	if (ft->nundo == ft->capundo) {
		size_t cap = ft->capundo ? ft->capundo * 2 : 16;
		struct undo *u = realloc(ft->undo, cap * sizeof(*u));

		if (!u)
			return -ENOMEM;
		ft->undo = u;
		ft->capundo = cap;
	}
	r = sonde_read_all(path, &old, NULL);
	if (r < 0)
		return r;
	ft->undo[ft->nundo].path = strdup(path);
	if (!ft->undo[ft->nundo].path) {
		free(old);
		return -ENOMEM;
	}
	ft->undo[ft->nundo++].saved = old;
	return 0;
}

static bool is_list_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "set_event") || !strncmp(base, "set_event_", 10) ||
	       !strncmp(base, "set_ftrace_", 11);
}

/* Puts one saved file back.  Return: 0 or -errno. */
static int restore(const struct undo *u)
{
	const char *base = strrchr(u->path, '/');
	char *copy, *line, *save_ptr = NULL;
	int r;

	base = base ? base + 1 : u->path;
	if (!strcmp(base, "filter"))
		return write_flags(u->path, strncmp(u->saved, "none", 4) ? u->saved : "0", O_TRUNC);
	if (!strcmp(base, "buffer_size_kb")) {
		char num[32];

		/* "7 (expanded: 1408)": the number before the note. */
		snprintf(num, sizeof(num), "%.*s", (int)strcspn(u->saved, " \n"), u->saved);
		return write_flags(u->path, num, O_TRUNC);
	}
	if (!is_list_file(u->path))
		return write_flags(u->path, u->saved, O_TRUNC);
	r = write_flags(u->path, "", O_TRUNC);
	copy = strdup(u->saved);
	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save_ptr); line; line = strtok_r(NULL, "\n", &save_ptr)) {
		int w;

		/* Comments ("#### all functions enabled ####", "no pid") are not entries. */
		if (line[0] == '#' || !strcmp(line, "no pid"))
			continue;
		w = write_flags(u->path, line, O_APPEND);
		if (w < 0 && r == 0)
			r = w;
	}
	free(copy);
	return r;
}

/* Writes @text to @file of the session (saving it first at the top level). */
static int ft_write(struct sonde_ftrace *ft, const char *file, const char *text, int flags,
		    struct sonde_errmsg *err)
{
	char path[PATH_MAX];
	int r = sonde_ftrace_path(ft, file, path, sizeof(path));

	if (r == 0)
		r = save(ft, path, false);
	if (r == 0)
		r = write_flags(path, text, flags);
	if (r < 0 && err)
		sonde_errmsg_set(err, r, "writing '%s' to %s: %s", text, path, sonde_strerror(r));
	return r;
}

/* Same for a file outside tracefs (a block device's trace/enable). */
static int abs_write(struct sonde_ftrace *ft, const char *path, const char *text,
		     struct sonde_errmsg *err)
{
	/* Device switches are global: always saved, also from an instance. */
	int r = save(ft, path, true);

	if (r == 0)
		r = write_flags(path, text, O_TRUNC);
	if (r < 0)
		sonde_errmsg_set(err, r, "writing '%s' to %s: %s", text, path, sonde_strerror(r));
	return r;
}

int sonde_ftrace_match_events(const char *tracefs, const char *glob, struct sonde_strlist *out)
{
	struct sonde_strlist systems, events;
	char sysglob[256], evglob[256], path[PATH_MAX];
	const char *colon = strchr(glob, ':');
	int r;

	if (!colon)
		colon = strchr(glob, '/');
	snprintf(sysglob, sizeof(sysglob), "%.*s", colon ? (int)(colon - glob) : (int)strlen(glob),
		 glob);
	snprintf(evglob, sizeof(evglob), "%s", colon ? colon + 1 : "*");
	sonde_strlist_init(&systems);
	r = sonde_path(path, sizeof(path), "%s/events", tracefs);
	if (r == 0)
		r = sonde_list_dir(path, true, &systems);
	for (size_t i = 0; r == 0 && i < systems.n; i++) {
		if (fnmatch(sysglob, systems.v[i], 0))
			continue;
		sonde_strlist_init(&events);
		r = sonde_path(path, sizeof(path), "%s/events/%s", tracefs, systems.v[i]);
		if (r == 0)
			r = sonde_list_dir(path, true, &events);
		for (size_t j = 0; r == 0 && j < events.n; j++) {
			char name[600];

			if (fnmatch(evglob, events.v[j], 0))
				continue;
			snprintf(name, sizeof(name), "%s:%s", systems.v[i], events.v[j]);
			r = sonde_strlist_add(out, name);
		}
		sonde_strlist_fini(&events);
	}
	sonde_strlist_fini(&systems);
	if (r == 0)
		sonde_strlist_sort(out);
	return r;
}

int sonde_ftrace_remove_stale(const char *tracefs)
{
	struct sonde_strlist dead;
	int gone = 0;

	sonde_strlist_init(&dead);
	if (sonde_trace_dead_instances(tracefs, &dead) == 0)
		for (size_t i = 0; i < dead.n; i++)
			gone += sonde_tracefs_instance_destroy(tracefs, dead.v[i]) == 0;
	sonde_strlist_fini(&dead);
	return gone;
}

int sonde_ftrace_cpumask(const int *cpus, size_t n, char *buf, size_t len)
{
	uint32_t words[128] = {0};
	int top = 0;
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		if (cpus[i] < 0 || cpus[i] >= 128 * 32)
			return -EINVAL;
		words[cpus[i] / 32] |= 1u << (cpus[i] % 32);
		if (cpus[i] / 32 > top)
			top = cpus[i] / 32;
	}
	for (int w = top; w >= 0; w--) {
		int k = snprintf(buf + used, len - used, w == top ? "%x" : ",%08x", words[w]);

		if (k < 0 || (size_t)k >= len - used)
			return -ENAMETOOLONG;
		used += (size_t)k;
	}
	return 0;
}

/* Whether the top level is free for sonde: nop tracer, no event enabled. */
static int top_idle(const char *tracefs, struct sonde_errmsg *err)
{
	char cur[64], path[PATH_MAX];
	char *events = NULL;
	bool busy;
	int r = sonde_tracefs_instance_read(tracefs, NULL, "current_tracer", cur, sizeof(cur));

	if (r < 0)
		return sonde_errmsg_set(err, r, "%s/current_tracer: %s", tracefs,
					sonde_strerror(r));
	if (strcmp(cur, "nop"))
		return sonde_errmsg_set(
		    err, -EBUSY,
		    "the top-level instance is busy: its current_tracer is '%s' "
		    "(someone else traces there; sonde would reset their buffer)",
		    cur);
	r = sonde_path(path, sizeof(path), "%s/set_event", tracefs);
	if (r == 0)
		r = sonde_read_all(path, &events, NULL);
	if (r) /* never positive, but the analyzer can't know */
		return sonde_errmsg_set(err, r, "%s/set_event: %s", tracefs, sonde_strerror(r));
	busy = strspn(events, " \n") != strlen(events);
	free(events);
	if (busy)
		return sonde_errmsg_set(err, -EBUSY,
					"the top-level instance is busy: events are enabled in its "
					"set_event (someone else traces there)");
	return 0;
}

/* The kernel explains a refused filter in the filter file itself; keep it on one line. */
static void filter_error(struct sonde_ftrace *ft, const char *ev, const char *expr, int r,
			 struct sonde_errmsg *err)
{
	char file[600], text[400] = "";

	snprintf(file, sizeof(file), "events/%s/filter", ev);
	for (char *c = file; *c; c++)
		if (*c == ':') {
			*c = '/';
			break;
		}
	sonde_tracefs_instance_read(ft->tracefs, sonde_ftrace_instance(ft), file, text,
				    sizeof(text));
	for (char *c = text; *c; c++)
		if (*c == '\n')
			*c = ' ';
	sonde_errmsg_set(err, r, "filter '%s' refused for %s (%s)%s%s", expr, ev, sonde_strerror(r),
			 text[0] ? ": " : "", text);
}

static int set_events(struct sonde_ftrace *ft, const struct sonde_ftrace_config *cfg,
		      struct sonde_errmsg *err)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < cfg->nevents; i++) {
		struct sonde_strlist names;

		sonde_strlist_init(&names);
		r = sonde_ftrace_match_events(cfg->tracefs, cfg->events[i].glob, &names);
		if (r < 0)
			sonde_errmsg_set(err, r, "listing events: %s", sonde_strerror(r));
		else if (names.n == 0)
			r = sonde_errmsg_set(err, SONDE_E_UNKNOWN_EVENT,
					     "no trace event matches '%s' (see sonde trace -l)",
					     cfg->events[i].glob);
		for (size_t j = 0; r == 0 && j < names.n; j++) {
			char file[600];
			char *colon = strchr(names.v[j], ':');

			*colon = '/';
			if (cfg->events[i].filter) {
				snprintf(file, sizeof(file), "events/%s/filter", names.v[j]);
				r = ft_write(ft, file, cfg->events[i].filter, O_TRUNC, NULL);
				*colon = ':';
				if (r < 0) {
					filter_error(ft, names.v[j], cfg->events[i].filter, r, err);
					break;
				}
				*colon = '/';
			}
			snprintf(file, sizeof(file), "events/%s/enable", names.v[j]);
			r = ft_write(ft, file, "1", O_TRUNC, err);
			*colon = ':';
		}
		sonde_strlist_fini(&names);
	}
	return r;
}

/* Writes each glob of a function filter, one per write as the kernel parses them. */
static int set_functions(struct sonde_ftrace *ft, const char *file, const char *const *globs,
			 size_t n, struct sonde_errmsg *err)
{
	int r = n ? ft_write(ft, file, "", O_TRUNC, err) : 0;

	for (size_t i = 0; r == 0 && i < n; i++) {
		char line[512];

		/* With its newline the kernel parses the glob during the write and
		 * says EINVAL when nothing matches; without, it parses at close and
		 * drops the error (and then traces every function). */
		snprintf(line, sizeof(line), "%s\n", globs[i]);
		r = ft_write(ft, file, line, O_APPEND, NULL);
		if (r == -EINVAL)
			sonde_errmsg_set(err, r, "%s: no traceable kernel function matches '%s'",
					 file, globs[i]);
		else if (r < 0)
			sonde_errmsg_set(err, r, "writing '%s' to %s: %s", globs[i], file,
					 sonde_strerror(r));
	}
	return r;
}

static int set_pids(struct sonde_ftrace *ft, const struct sonde_ftrace_config *cfg,
		    bool function_tracer, struct sonde_errmsg *err)
{
	char text[32];
	int r = 0;

	if (!cfg->npids)
		return 0;
	r = ft_write(ft, "set_event_pid", "", O_TRUNC, err);
	for (size_t i = 0; r == 0 && i < cfg->npids; i++) {
		snprintf(text, sizeof(text), "%ld", (long)cfg->pids[i]);
		r = ft_write(ft, "set_event_pid", text, O_APPEND, err);
	}
	/* Children of the traced processes are traced too (pid lists grow on fork). */
	if (r == 0)
		r = ft_write(ft, "options/event-fork", "1", O_TRUNC, err);
	if (r < 0 || !function_tracer)
		return r;
	r = ft_write(ft, "set_ftrace_pid", "", O_TRUNC, err);
	for (size_t i = 0; r == 0 && i < cfg->npids; i++) {
		snprintf(text, sizeof(text), "%ld", (long)cfg->pids[i]);
		r = ft_write(ft, "set_ftrace_pid", text, O_APPEND, err);
	}
	if (r == 0)
		r = ft_write(ft, "options/function-fork", "1", O_TRUNC, err);
	return r;
}

static int set_tracer(struct sonde_ftrace *ft, const struct sonde_ftrace_config *cfg,
		      struct sonde_errmsg *err)
{
	int r;

	if (!cfg->tracer || !strcmp(cfg->tracer, "nop"))
		return 0;
	r = ft_write(ft, "current_tracer", cfg->tracer, O_TRUNC, NULL);
	if (r < 0)
		return sonde_errmsg_set(err, r, "the kernel refused the %s tracer (%s%s)",
					cfg->tracer, ft->name[0] ? "in an instance: " : "",
					sonde_strerror(r));
	for (size_t i = 0; r == 0 && i < cfg->ndevices; i++) {
		char path[PATH_MAX];

		if (strchr(cfg->devices[i], '/') || !cfg->devices[i][0])
			return sonde_errmsg_set(err, -EINVAL, "'%s' is not a block device name",
						cfg->devices[i]);
		r = sonde_path(path, sizeof(path), "%s/block/%s/trace/enable",
			       cfg->sysfs ? cfg->sysfs : "/sys", cfg->devices[i]);
		if (r == 0 && access(path, F_OK) < 0)
			return sonde_errmsg_set(err, -ENODEV, "%s: no such block device (%s)",
						cfg->devices[i], path);
		if (r == 0)
			r = abs_write(ft, path, "1", err);
	}
	return r;
}

int sonde_ftrace_create(const struct sonde_ftrace_config *cfg, struct sonde_ftrace **out,
			struct sonde_errmsg *err)
{
	struct sonde_ftrace *ft = calloc(1, sizeof(*ft));
	bool fn = cfg->tracer && !strncmp(cfg->tracer, "function", 8);
	int r;

	*out = NULL;
	if (!ft)
		return -ENOMEM;
	snprintf(ft->tracefs, sizeof(ft->tracefs), "%s", cfg->tracefs);
	/* Instances of SIGKILLed sondes trace on for nobody: they go first. */
	sonde_ftrace_remove_stale(cfg->tracefs);
	if (cfg->top_level) {
		r = top_idle(cfg->tracefs, err);
		if (r < 0) {
			free(ft);
			return r;
		}
	} else {
		snprintf(ft->name, sizeof(ft->name), "sonde-%ld", (long)getpid());
		r = sonde_tracefs_instance_create(cfg->tracefs, ft->name);
		if (r == -EEXIST) {
			/* Ours from an earlier session of this process that could not finish. */
			sonde_tracefs_instance_destroy(cfg->tracefs, ft->name);
			r = sonde_tracefs_instance_create(cfg->tracefs, ft->name);
		}
		if (r < 0) {
			sonde_errmsg_set(err, r, "creating tracefs instance %s/instances/%s: %s",
					 cfg->tracefs, ft->name, sonde_strerror(r));
			free(ft);
			return r;
		}
	}
	/* A new instance traces at once: off until the caller starts. */
	r = ft_write(ft, "tracing_on", "0", O_TRUNC, err);
	if (r == 0 && cfg->buffer_kb) {
		char kb[32];

		snprintf(kb, sizeof(kb), "%u", cfg->buffer_kb);
		r = ft_write(ft, "buffer_size_kb", kb, O_TRUNC, err);
	}
	if (r == 0 && cfg->cpumask)
		r = ft_write(ft, "tracing_cpumask", cfg->cpumask, O_TRUNC, err);
	if (r == 0)
		r = set_pids(ft, cfg, fn, err);
	if (r == 0)
		r = set_functions(ft, "set_ftrace_filter", cfg->functions, cfg->nfunctions, err);
	if (r == 0)
		r = set_functions(ft, "set_ftrace_notrace", cfg->notrace, cfg->nnotrace, err);
	if (r == 0)
		r = set_events(ft, cfg, err);
	if (r == 0)
		r = set_tracer(ft, cfg, err);
	if (r < 0) {
		sonde_ftrace_destroy(ft, NULL);
		return r;
	}
	*out = ft;
	return 0;
}

int sonde_ftrace_start(struct sonde_ftrace *ft)
{
	return ft_write(ft, "tracing_on", "1", O_TRUNC, NULL);
}

int sonde_ftrace_stop(struct sonde_ftrace *ft)
{
	return ft_write(ft, "tracing_on", "0", O_TRUNC, NULL);
}

int sonde_ftrace_destroy(struct sonde_ftrace *ft, struct sonde_errmsg *err)
{
	int first = 0;

	if (!ft)
		return 0;
	sonde_ftrace_stop(ft);
	/* Newest first: a file changed twice gets its oldest contents last. */
	for (size_t i = ft->nundo; i-- > 0;) {
		int r = restore(&ft->undo[i]);

		if (r < 0 && first == 0) {
			first = r;
			if (err)
				sonde_errmsg_set(err, r, "restoring %s: %s", ft->undo[i].path,
						 sonde_strerror(r));
		}
		free(ft->undo[i].path);
		free(ft->undo[i].saved);
	}
	free(ft->undo);
	if (ft->name[0]) {
		int r = sonde_tracefs_instance_destroy(ft->tracefs, ft->name);

		/* EBUSY while a reader still closes: retry a few times. */
		for (int k = 0; r == -EBUSY && k < 20; k++) {
			usleep(50000);
			r = sonde_tracefs_instance_destroy(ft->tracefs, ft->name);
		}
		if (r < 0 && first == 0) {
			first = r;
			if (err)
				sonde_errmsg_set(err, r, "removing instances/%s: %s", ft->name,
						 sonde_strerror(r));
		}
	}
	free(ft);
	return first;
}

int sonde_ftrace_cpu_stats(const struct sonde_ftrace *ft, int cpu, struct sonde_ftrace_stats *st)
{
	char file[64], path[PATH_MAX], text[1024];
	int r;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
	r = sonde_ftrace_path(ft, file, path, sizeof(path));
	if (r == 0)
		r = sonde_read_text(path, text, sizeof(text));
	return r < 0 ? r : sonde_ftrace_stats_parse(text, st);
}
