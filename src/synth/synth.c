// SPDX-License-Identifier: MIT
/*
 * Synthesized process state: the FORK, COMM and MMAP2 records that tell a
 * perf.data reader about processes which were already running when the
 * capture started, made from procfs the way perf 6.1 makes them
 * (tools/perf/util/synthetic-events.c), so that `perf report` resolves
 * their samples exactly as for its own captures.
 *
 * What perf does, and so what this does:
 *  - per thread, the facts come from /proc/PID/task/TID/status, read once
 *    (4 KB): Name (the comm, at most 15 bytes), Tgid, PPid; a status
 *    without VmPeak but with Threads is a kernel thread (or a zombie),
 *    which gets no MMAP2 (its maps are empty anyway).
 *  - perf record -a (sonde_synth_all_processes): for each thread, FORK
 *    {pid=tgid, ppid, tid, ptid, time 0} with misc FORK_EXEC, where the
 *    parent of a leader is PPid and the parent of another thread is its
 *    leader; then COMM {pid=tgid, tid, comm}, misc 0; then for the leader
 *    the MMAP2s of /proc/PID/task/PID/maps.
 *  - perf record -p (sonde_synth_process): the same without FORK.
 *  - MMAP2 {pid=tgid, tid=pid, start, len, pgoff, maj, min (hex in maps),
 *    ino, ino_generation 0, prot (PROT_*), flags (MAP_PRIVATE for 'p',
 *    MAP_SHARED for 's'), filename} with misc USER, for executable
 *    mappings only (also readable ones with misc MMAP_DATA when asked):
 *    [vdso] and [vsyscall] included, a mapping with no name becomes
 *    "//anon", a file under the hugetlbfs mount becomes "//anon" with
 *    MAP_HUGETLB, a name kept as the kernel prints it (" (deleted)"
 *    included), a name that doesn't fit perf's PATH_MAX buffer (less the
 *    trailer) becomes "//toolong".  Malformed lines are skipped.
 *  - strings are NUL-terminated and zero-padded to 8 bytes; every record
 *    ends with id_hdr_size zero bytes and header.size counts them.
 *
 * Nothing here allocates: the walk keeps one record buffer, a line buffer
 * for maps and a status buffer on the stack (about 17 KB in all), which is
 * what a target with a few thousand processes wants.
 */
#include "synth_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sonde/fileio.h>

/* ---- processes ---- */

/* State shared by the whole walk, on the caller's stack. */
struct walk {
	const struct sonde_synth *s;
	bool fork;	     /* -a style: FORK before COMM */
	char hugetlbfs[256]; /* hugetlbfs mount point, "" if none */
	size_t hugetlbfs_len;
	union sonde_rec_buf rec;
	char line[8192]; /* maps lines, status */
};

#define COUNT(s, field)                                                                            \
	do {                                                                                       \
		if ((s)->stats)                                                                    \
			(s)->stats->field++;                                                       \
	} while (0)

/* perf treats the first hugetlbfs mount as where hugetlb files live. */
static void find_hugetlbfs(struct walk *w)
{
	struct sonde_lines l;
	char path[512], *line;
	size_t len;

	w->hugetlbfs[0] = '\0';
	w->hugetlbfs_len = 0;
	if (sonde_path(path, sizeof(path), "%s/mounts", w->s->procfs) < 0 ||
	    sonde_lines_open(&l, path, w->line, sizeof(w->line)) < 0)
		return;
	while (sonde_lines_next(&l, &line, &len, NULL) > 0) {
		char *dev = strtok(line, " "), *mnt = strtok(NULL, " "), *type = strtok(NULL, " ");

		if (dev && mnt && type && !strcmp(type, "hugetlbfs") &&
		    strlen(mnt) < sizeof(w->hugetlbfs)) {
			strcpy(w->hugetlbfs, mnt);
			w->hugetlbfs_len = strlen(mnt);
			break;
		}
	}
	sonde_lines_close(&l);
}

static bool hex_field(char **p, uint64_t *val, char end)
{
	char *e;

	if (!isxdigit((unsigned char)**p))
		return false;
	errno = 0;
	*val = strtoull(*p, &e, 16);
	if (errno || *e != end)
		return false;
	*p = e + 1;
	return true;
}

struct maps_line {
	uint64_t start, end, pgoff, maj, min, ino;
	uint32_t prot, flags;
	const char *name;
};

/* "00400000-0040c000 r-xp 00000000 fd:01 41038   /bin/cat".  Return: false if malformed. */
static bool parse_maps_line(char *p, struct maps_line *m)
{
	char *e;

	if (!hex_field(&p, &m->start, '-') || !hex_field(&p, &m->end, ' '))
		return false;
	m->prot = 0;
	if (p[0] == 'r')
		m->prot |= PROT_READ;
	else if (p[0] != '-')
		return false;
	if (p[1] == 'w')
		m->prot |= PROT_WRITE;
	else if (p[1] != '-')
		return false;
	if (p[2] == 'x')
		m->prot |= PROT_EXEC;
	else if (p[2] != '-')
		return false;
	if (p[3] == 's')
		m->flags = MAP_SHARED;
	else if (p[3] == 'p')
		m->flags = MAP_PRIVATE;
	else
		return false;
	if (p[4] != ' ')
		return false;
	p += 5;
	if (!hex_field(&p, &m->pgoff, ' ') || !hex_field(&p, &m->maj, ':') ||
	    !hex_field(&p, &m->min, ' '))
		return false;
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	m->ino = strtoull(p, &e, 10);
	if (errno || (*e != ' ' && *e != '\0'))
		return false;
	while (*e == ' ')
		e++;
	m->name = e;
	return true;
}

static int synth_maps(struct walk *w, pid_t tgid, pid_t pid)
{
	const struct sonde_synth *s = w->s;
	size_t room = SONDE_SYNTH_PATH_MAX - s->id_hdr_size; /* perf's clamped filename buffer */
	struct sonde_rec_mmap2 *m = (struct sonde_rec_mmap2 *)w->rec.b;
	struct sonde_lines l;
	char path[512], *line;
	size_t len;
	bool cut;
	int ret;

	ret = sonde_path(path, sizeof(path), "%s/%d/task/%d/maps", s->procfs, (int)pid, (int)pid);
	if (ret < 0)
		return ret;
	ret = sonde_lines_open(&l, path, w->line, sizeof(w->line));
	if (ret < 0)
		return ret;
	while ((ret = sonde_lines_next(&l, &line, &len, &cut)) > 0) {
		struct maps_line ml;
		const char *name;
		uint16_t misc = PERF_RECORD_MISC_USER;

		if (!parse_maps_line(line, &ml))
			continue;
		name = ml.name;
		if (cut || strlen(name) >= room)
			name = "//toolong";
		else if (!name[0])
			name = "//anon";
		else if (w->hugetlbfs_len && !strncmp(name, w->hugetlbfs, w->hugetlbfs_len)) {
			name = "//anon";
			ml.flags |= MAP_HUGETLB;
		}
		if (!(ml.prot & PROT_EXEC)) {
			if (!s->mmap_data || !(ml.prot & PROT_READ))
				continue;
			misc |= PERF_RECORD_MISC_MMAP_DATA;
		}
		memset(m, 0, sizeof(*m));
		m->h.type = PERF_RECORD_MMAP2;
		m->h.misc = misc;
		m->pid = (uint32_t)tgid;
		m->tid = (uint32_t)pid;
		m->start = ml.start;
		m->len = ml.end - ml.start;
		m->pgoff = ml.pgoff;
		m->maj = (uint32_t)ml.maj;
		m->min = (uint32_t)ml.min;
		m->ino = ml.ino;
		m->ino_generation = 0;
		m->prot = ml.prot;
		m->flags = ml.flags;
		ret = sonde_synth_finish(s, &w->rec, sizeof(*m), name);
		if (ret < 0)
			break;
		COUNT(s, mmaps);
	}
	sonde_lines_close(&l);
	return ret;
}

struct task_ids {
	char comm[16];
	pid_t tgid, ppid;
	bool kernel;
};

/* Name, Tgid, PPid and kernel-thread-ness from task/TID/status, as perf reads them. */
static int read_task(struct walk *w, pid_t pid, pid_t tid, struct task_ids *t)
{
	char path[512], *name, *tgid, *ppid, *vmpeak, *threads;
	int ret;

	ret = sonde_path(path, sizeof(path), "%s/%d/task/%d/status", w->s->procfs, (int)pid,
			 (int)tid);
	if (ret < 0)
		return ret;
	/* perf reads the first 4095 bytes: Name, Tgid and PPid are at the top */
	ret = sonde_read_text(path, w->line, 4096);
	if (ret < 0)
		return ret;
	name = strstr(w->line, "Name:");
	tgid = strstr(name ? name : w->line, "Tgid:");
	ppid = strstr(tgid ? tgid : w->line, "PPid:");
	vmpeak = strstr(ppid ? ppid : w->line, "VmPeak:");
	threads = vmpeak ? NULL : strstr(ppid ? ppid : w->line, "Threads:");
	t->tgid = tgid ? atoi(tgid + 5) : -1;
	t->ppid = ppid ? atoi(ppid + 5) : -1;
	t->kernel = !vmpeak && threads;
	t->comm[0] = '\0';
	if (name) {
		size_t n;

		name += 5;
		while (*name == ' ' || *name == '\t')
			name++;
		n = strcspn(name, "\n");
		if (n >= sizeof(t->comm))
			n = sizeof(t->comm) - 1;
		memcpy(t->comm, name, n);
		t->comm[n] = '\0';
	} else {
		/* no Name: in status (a trimmed procfs): the comm file */
		if (sonde_path(path, sizeof(path), "%s/%d/task/%d/comm", w->s->procfs, (int)pid,
			       (int)tid) == 0 &&
		    sonde_read_text(path, w->line, sizeof(t->comm)) >= 0)
			strcpy(t->comm, w->line);
	}
	if (t->tgid < 0)
		return -ESRCH;
	return 0;
}

static int emit_fork(struct walk *w, pid_t tid, const struct task_ids *t)
{
	struct sonde_rec_fork *f = (struct sonde_rec_fork *)w->rec.b;

	memset(f, 0, sizeof(*f));
	f->h.type = PERF_RECORD_FORK;
	f->h.misc = PERF_RECORD_MISC_FORK_EXEC;
	f->pid = (uint32_t)t->tgid;
	f->tid = (uint32_t)tid;
	if (t->tgid == tid) {
		f->ppid = (uint32_t)t->ppid;
		f->ptid = (uint32_t)t->ppid;
	} else {
		f->ppid = (uint32_t)t->tgid;
		f->ptid = (uint32_t)t->tgid;
	}
	f->time = 0;
	return sonde_synth_finish(w->s, &w->rec, sizeof(*f), NULL);
}

static int emit_comm(struct walk *w, pid_t tid, const struct task_ids *t)
{
	struct sonde_rec_comm *c = (struct sonde_rec_comm *)w->rec.b;

	memset(c, 0, sizeof(*c));
	c->h.type = PERF_RECORD_COMM;
	c->h.misc = 0;
	c->pid = (uint32_t)t->tgid;
	c->tid = (uint32_t)tid;
	return sonde_synth_finish(w->s, &w->rec, sizeof(*c), t->comm);
}

static bool is_pid_name(const char *n, pid_t *pid)
{
	char *e;
	long v;

	if (!isdigit((unsigned char)n[0]))
		return false;
	errno = 0;
	v = strtol(n, &e, 10);
	if (errno || *e || v <= 0 || v > 0x7fffffff)
		return false;
	*pid = (pid_t)v;
	return true;
}

/* One process: its threads in task/ order (the leader comes first). */
static int synth_one(struct walk *w, pid_t pid)
{
	const struct sonde_synth *s = w->s;
	char path[512];
	struct dirent *de;
	DIR *d;
	int ret = 0;
	bool any = false;

	ret = sonde_path(path, sizeof(path), "%s/%d/task", s->procfs, (int)pid);
	if (ret < 0)
		return ret;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d)) != NULL) {
		struct task_ids t;
		pid_t tid;

		if (!is_pid_name(de->d_name, &tid))
			continue;
		if (read_task(w, pid, tid, &t) < 0) {
			COUNT(s, vanished);
			continue; /* exited since readdir */
		}
		if (w->fork) {
			ret = emit_fork(w, tid, &t);
			if (ret < 0)
				break;
		}
		if (s->namespaces && (ret = sonde_synth_namespaces(s, t.tgid, tid)) < 0)
			break;
		ret = emit_comm(w, tid, &t);
		if (ret < 0)
			break;
		any = true;
		COUNT(s, threads);
		if (tid == t.tgid && !t.kernel) {
			ret = synth_maps(w, t.tgid, tid);
			if (ret == -ENOENT || ret == -ESRCH) { /* exited meanwhile */
				COUNT(s, vanished);
				ret = 0;
			} else if (ret == -EACCES || ret == -EPERM) {
				ret = 0; /* not ours to read: its threads are still worth naming */
			}
			if (ret < 0)
				break;
		}
	}
	closedir(d);
	if (ret >= 0 && !any)
		ret = -ESRCH;
	if (ret >= 0)
		COUNT(s, processes);
	return ret;
}

int sonde_synth_process(const struct sonde_synth *s, pid_t pid)
{
	struct walk w;
	int ret = sonde_synth_check(s);

	if (ret < 0)
		return ret;
	memset(&w, 0, offsetof(struct walk, rec));
	w.s = s;
	w.fork = false;
	find_hugetlbfs(&w);
	return synth_one(&w, pid);
}

int sonde_synth_all_processes(const struct sonde_synth *s)
{
	struct walk w;
	struct dirent *de;
	DIR *d;
	int ret = sonde_synth_check(s);

	if (ret < 0)
		return ret;
	memset(&w, 0, offsetof(struct walk, rec));
	w.s = s;
	w.fork = true;
	find_hugetlbfs(&w);
	d = opendir(s->procfs);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		pid_t pid;

		if (!is_pid_name(de->d_name, &pid))
			continue;
		ret = synth_one(&w, pid);
		if (ret == -ESRCH || ret == -ENOENT || ret == -EACCES) {
			/* gone between readdir and open: perf carries on too */
			COUNT(s, vanished);
			ret = 0;
		}
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}
