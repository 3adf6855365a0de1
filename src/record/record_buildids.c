// SPDX-License-Identifier: MIT
/*
 * Build ids of the objects that got samples, for the HEADER_BUILD_ID
 * feature, found the way perf finds them: one pass over the records just
 * written, tracking each process's mappings (MMAP/MMAP2, FORK, exec) and
 * marking the mapping each sample's address falls in.  The pass runs once
 * at the end of a capture, so the drain loop stays free of lookups.
 * Build ids come from MMAP2 records when the kernel put them there, else
 * from the files themselves (through /proc/PID/root when the process is
 * still there, for objects in other mount namespaces), and from sysfs
 * notes for the kernel and its modules.
 */
#include <sonde/record.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/buildid.h>
#include <sonde/pd_ordered.h>
#include <sonde/perf_data.h>
#include <sonde/tool.h>
#include <sonde/u32map.h>
#include <sonde/vdso.h>

#define NO_MAP UINT32_MAX
#define KERNEL_PID UINT32_MAX /* pid -1: the kernel and modules */

struct map {
	uint32_t pid;
	uint32_t next; /* the pid's previous map (a list per pid, newest first) */
	uint64_t start, end;
	char *filename; /* owned */
	uint8_t bid[SONDE_BUILD_ID_MAX];
	uint8_t bid_len;
	bool hit;
};

struct pass {
	struct map *maps;
	size_t n, cap;
	struct sonde_u32map head;   /* pid -> newest map */
	struct sonde_u32map parent; /* pid -> parent pid, until it execs */
	struct sonde_u32map last;   /* pid -> map of its last sample */
};

static int add_map(struct pass *ps, const struct sonde_pd_mmap *m, bool kernel)
{
	uint32_t pid = kernel ? KERNEL_PID : m->pid, head = NO_MAP;
	struct map *mp;

	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 256;
		struct map *v = realloc(ps->maps, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ps->maps = v;
		ps->cap = cap;
	}
	mp = &ps->maps[ps->n];
	memset(mp, 0, sizeof(*mp));
	mp->filename = strdup(m->filename);
	if (!mp->filename)
		return -ENOMEM;
	sonde_u32map_get(&ps->head, pid, &head);
	mp->pid = pid;
	mp->next = head;
	mp->start = m->start;
	mp->end = m->start + m->len;
	if (m->build_id && m->build_id_size) {
		mp->bid_len = m->build_id_size;
		memcpy(mp->bid, m->build_id, m->build_id_size);
	}
	ps->n++;
	return sonde_u32map_put(&ps->head, pid, (uint32_t)(ps->n - 1));
}

static uint32_t find_in(const struct pass *ps, uint32_t pid, uint64_t ip)
{
	uint32_t i = NO_MAP;

	sonde_u32map_get(&ps->head, pid, &i);
	for (; i != NO_MAP; i = ps->maps[i].next)
		if (ip >= ps->maps[i].start && ip < ps->maps[i].end)
			return i;
	return NO_MAP;
}

static void mark(struct pass *ps, uint32_t pid, uint64_t ip, bool kernel)
{
	uint32_t i = NO_MAP;

	if (kernel) {
		i = find_in(ps, KERNEL_PID, ip);
		if (i != NO_MAP)
			ps->maps[i].hit = true;
		return;
	}
	/* Most samples of a process land in the map its last one did. */
	if (sonde_u32map_get(&ps->last, pid, &i) && i != NO_MAP && ps->maps[i].pid == pid &&
	    ip >= ps->maps[i].start && ip < ps->maps[i].end) {
		ps->maps[i].hit = true;
		return;
	}
	for (int depth = 0; depth < 16; depth++) {
		uint32_t pp;

		i = find_in(ps, pid, ip);
		if (i != NO_MAP) {
			ps->maps[i].hit = true;
			sonde_u32map_put(&ps->last, pid, i);
			return;
		}
		/* A forked child shares its parent's maps until it execs. */
		if (!sonde_u32map_get(&ps->parent, pid, &pp) || pp == pid || pp == 0)
			return;
		pid = pp;
	}
}

static bool is_kernel_mode(uint16_t misc)
{
	uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL;
}

/* The pass as a tool (include/sonde/tool.h) over the time-ordered walk: no
 * session on the capture side, so @ses is NULL. */
static int on_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	(void)ses;
	if (ts->s->present & PERF_SAMPLE_IP)
		mark(ctx, ts->s->pid, ts->s->ip, is_kernel_mode(ts->rec->misc));
	return 0;
}

static int on_mmap(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		   const struct sonde_pd_event *ev)
{
	(void)ses;
	return add_map(ctx, &ev->mmap, is_kernel_mode(rec->misc) || ev->mmap.pid == UINT32_MAX);
}

static int on_fork(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		   const struct sonde_pd_event *ev)
{
	struct pass *ps = ctx;

	(void)ses;
	(void)rec;
	if (ev->fork.pid != ev->fork.ppid &&
	    sonde_u32map_put(&ps->parent, ev->fork.pid, ev->fork.ppid) < 0)
		return -ENOMEM;
	return 0;
}

static int on_comm(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
		   const struct sonde_pd_event *ev)
{
	struct pass *ps = ctx;

	(void)ses;
	/* exec: the old maps are gone and new MMAP2 records follow. */
	if (rec->misc & PERF_RECORD_MISC_COMM_EXEC) {
		sonde_u32map_put(&ps->head, ev->comm.pid, NO_MAP);
		sonde_u32map_put(&ps->parent, ev->comm.pid, 0);
	}
	return 0;
}

static const struct sonde_tool buildid_tool = {
    .name = "buildids",
    .sample = on_sample,
    .mmap = on_mmap,
    .fork = on_fork,
    .comm = on_comm,
};

static int deliver(void *ctx, const struct sonde_pd_record *rec, const struct sonde_pd_event *ev)
{
	if (rec->type == PERF_RECORD_SAMPLE) {
		struct sonde_tool_sample ts = {.rec = rec, .s = &ev->sample, .period = 1};

		return buildid_tool.sample(ctx, NULL, &ts);
	}
	return sonde_tool_dispatch(&buildid_tool, ctx, NULL, rec, ev);
}

/* "/lib/modules/.../kernel/drivers/foo-bar.ko" or "[foo_bar]" -> "foo_bar". */
static void module_name(const char *filename, char *buf, size_t len)
{
	const char *base = strrchr(filename, '/');
	size_t n;

	base = base ? base + 1 : filename;
	if (*base == '[')
		base++;
	snprintf(buf, len, "%s", base);
	n = strcspn(buf, ".]");
	buf[n] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
}

static bool already_written(const struct pass *ps, size_t upto, const char *filename)
{
	for (size_t i = 0; i < upto; i++)
		if (ps->maps[i].hit && ps->maps[i].bid_len && !strcmp(ps->maps[i].filename, filename))
			return true;
	return false;
}

static int emit(struct pass *ps, struct sonde_pd_writer *w, const struct sonde_buildid_source *src,
		struct sonde_record_bids *found)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct map *m = &ps->maps[i];
		bool kernel = m->pid == KERNEL_PID;
		const char *name = m->filename;
		int r;

		if (!m->hit)
			continue;
		if (kernel && !strncmp(m->filename, "[kernel.kallsyms]", 17)) {
			name = "[kernel.kallsyms]";
			if (!m->bid_len &&
			    (r = src->lookup(src->ctx, SONDE_BID_KERNEL, NULL, 0, m->bid)) > 0)
				m->bid_len = (uint8_t)r;
		} else if (kernel) {
			char mod[256];

			module_name(m->filename, mod, sizeof(mod));
			if (!m->bid_len &&
			    (r = src->lookup(src->ctx, SONDE_BID_MODULE, mod, 0, m->bid)) > 0)
				m->bid_len = (uint8_t)r;
		} else if (!m->bid_len && !strcmp(m->filename, "[vdso]")) {
			/* Every process's vDSO is the recorder's own (one kernel). */
			if ((r = src->lookup(src->ctx, SONDE_BID_VDSO, NULL, 0, m->bid)) > 0)
				m->bid_len = (uint8_t)r;
		} else if (!m->bid_len && m->filename[0] == '/') {
			r = src->lookup(src->ctx, SONDE_BID_FILE, m->filename, m->pid, m->bid);
			if (r > 0)
				m->bid_len = (uint8_t)r;
		}
		if (!m->bid_len || already_written(ps, i, m->filename))
			continue;
		if (!kernel && !strcmp(m->filename, "[vdso]")) {
			memcpy(found->vdso, m->bid, m->bid_len);
			found->vdso_len = m->bid_len;
		}
		r = sonde_pd_writer_add_build_id(w, -1,
						 kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
						 m->bid, m->bid_len, name);
		if (r < 0)
			return r;
	}
	return 0;
}

/* This machine's files: sysfs notes, and files through /proc/PID/root first
 * (objects in other mount namespaces). */
static int local_lookup(void *ctx, enum sonde_bid_kind kind, const char *name, uint32_t pid,
			uint8_t id[SONDE_BUILD_ID_MAX])
{
	const char *sysfs = ctx;
	char path[PATH_MAX];
	int r;

	switch (kind) {
	case SONDE_BID_KERNEL:
		return sonde_build_id_of_kernel(sysfs, id);
	case SONDE_BID_MODULE:
		return sonde_build_id_of_module(sysfs, name, id);
	case SONDE_BID_VDSO: {
		int fd = sonde_vdso_open();

		if (fd < 0)
			return fd;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		r = sonde_build_id_of_file(path, id);
		close(fd);
		return r;
	}
	case SONDE_BID_FILE:
		r = -ENOENT;
		if (pid && snprintf(path, sizeof(path), "/proc/%u/root%s", pid, name) <
				   (int)sizeof(path))
			r = sonde_build_id_of_file(path, id);
		if (r < 0)
			r = sonde_build_id_of_file(name, id);
		return r;
	}
	return -EINVAL;
}

int sonde_record_build_ids(struct sonde_pd_writer *w, const char *path, const char *sysfs,
			   struct sonde_record_bids *found)
{
	struct sonde_buildid_source src = {local_lookup, (void *)sysfs};

	return sonde_record_build_ids_from(w, path, &src, found);
}

int sonde_record_build_ids_from(struct sonde_pd_writer *w, const char *path,
				const struct sonde_buildid_source *src,
				struct sonde_record_bids *found)
{
	struct sonde_record_bids none;
	struct pass ps = {0};
	struct sonde_pd_reader *rd = NULL;
	int r = sonde_pd_writer_sync(w);

	if (r < 0)
		return r;
	if (found)
		memset(found, 0, sizeof(*found));
	r = sonde_pd_reader_open(&rd, path, NULL);
	if (r < 0)
		return r;
	sonde_u32map_init(&ps.head);
	sonde_u32map_init(&ps.parent);
	sonde_u32map_init(&ps.last);
	r = sonde_pd_walk_ordered(rd, deliver, &ps, NULL, NULL, NULL);
	if (r >= 0)
		r = emit(&ps, w, src, found ? found : &none);
	sonde_pd_reader_close(rd);
	for (size_t i = 0; i < ps.n; i++)
		free(ps.maps[i].filename);
	free(ps.maps);
	sonde_u32map_fini(&ps.head);
	sonde_u32map_fini(&ps.parent);
	sonde_u32map_fini(&ps.last);
	return r;
}
