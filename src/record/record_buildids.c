// SPDX-License-Identifier: MIT
/*
 * Build ids of the objects that got samples, for the HEADER_BUILD_ID
 * feature, found the way perf finds them: one time-ordered pass over the
 * records just written (sonde_pd_walk_ordered()), replaying them into the
 * machine model (src/machine: maps trimmed by MMAPs, copied on fork,
 * dropped on pid reuse, kept over an exec until replaced) and marking the
 * object of the map each sample's address falls in.  The pass is a tool
 * of the tool table with no session; its factory makes one object per
 * MMAP record (file name, kind, pid, the record's build id), so the
 * machine's maps point at them.  It runs once at the end of a capture, so
 * the drain loop stays free of lookups.  Build ids come from MMAP2
 * records when the kernel put them there, else from the files themselves
 * (through /proc/PID/root when the process is still there, for objects
 * in other mount namespaces), and from sysfs notes for the kernel and
 * its modules.
 */
#include <sonde/record.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/buildid.h>
#include <sonde/machine.h>
#include <sonde/pd_ordered.h>
#include <sonde/perf_data.h>
#include <sonde/tool.h>
#include <sonde/vdso.h>

/* One MMAP record's object, in record order. */
struct object {
	char *filename; /* owned; "[kernel.kallsyms]" for the kernel image */
	enum sonde_object_kind kind;
	uint32_t pid; /* the mapping process (UINT32_MAX: kernel space) */
	uint8_t bid[SONDE_BUILD_ID_MAX];
	uint8_t bid_len;
	bool hit;
};

struct pass {
	struct sonde_machine *machine;
	struct object **objs; /* each owned, in creation order */
	size_t n, cap;
};

/* The machine's factory: a new object for every MMAP record. */
static void *object_new(void *ctx, const struct sonde_object_desc *d)
{
	struct pass *ps = ctx;
	struct object *o;

	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 256;
		struct object **v = realloc(ps->objs, cap * sizeof(*v));

		if (!v)
			return NULL;
		ps->objs = v;
		ps->cap = cap;
	}
	if (!(o = calloc(1, sizeof(*o))))
		return NULL;
	if (!(o->filename = strdup(d->filename))) {
		free(o);
		return NULL;
	}
	o->kind = d->kind;
	o->pid = d->pid;
	if (d->build_id && d->build_id_len) {
		o->bid_len = d->build_id_len > SONDE_BUILD_ID_MAX ? SONDE_BUILD_ID_MAX
								  : (uint8_t)d->build_id_len;
		memcpy(o->bid, d->build_id, o->bid_len);
	}
	ps->objs[ps->n++] = o;
	return o;
}

/* The pass as a tool (include/sonde/tool.h) over the time-ordered walk: no
 * session on the capture side, so @ses is NULL. */
static int on_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	struct pass *ps = ctx;
	const struct sonde_map *map;

	(void)ses;
	if (!(ts->s->present & PERF_SAMPLE_IP))
		return 0;
	map = sonde_machine_find_map(ps->machine, ts->s->pid,
				     ts->rec->misc & PERF_RECORD_MISC_CPUMODE_MASK, ts->s->ip);
	if (map)
		((struct object *)map->object)->hit = true;
	return 0;
}

/* MMAP, COMM, FORK, EXIT: the machine takes them in. */
static int on_side_band(void *ctx, struct sonde_session *ses, const struct sonde_pd_record *rec,
			const struct sonde_pd_event *ev)
{
	struct pass *ps = ctx;

	(void)ses;
	return sonde_machine_process(ps->machine, rec, ev);
}

static const struct sonde_tool buildid_tool = {
    .name = "buildids",
    .sample = on_sample,
    .mmap = on_side_band,
    .comm = on_side_band,
    .fork = on_side_band,
    .exit = on_side_band,
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
		if (ps->objs[i]->hit && ps->objs[i]->bid_len &&
		    !strcmp(ps->objs[i]->filename, filename))
			return true;
	return false;
}

static int emit(struct pass *ps, struct sonde_pd_writer *w, const struct sonde_buildid_source *src,
		struct sonde_record_bids *found)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct object *m = ps->objs[i];
		bool kernel = m->kind != SONDE_OBJECT_USER;
		int r;

		/* An earlier map of the same name already gave its id: no lookup
		 * (a remote one is a round trip). */
		if (!m->hit || already_written(ps, i, m->filename))
			continue;
		if (m->kind == SONDE_OBJECT_KERNEL) {
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
		if (!m->bid_len)
			continue;
		if (!kernel && !strcmp(m->filename, "[vdso]")) {
			memcpy(found->vdso, m->bid, m->bid_len);
			found->vdso_len = m->bid_len;
		}
		r = sonde_pd_writer_add_build_id(
		    w, -1, kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER, m->bid,
		    m->bid_len, m->filename);
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
		if (pid &&
		    snprintf(path, sizeof(path), "/proc/%u/root%s", pid, name) < (int)sizeof(path))
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
	r = sonde_machine_new(&ps.machine, object_new, &ps);
	if (r >= 0)
		r = sonde_pd_walk_ordered(rd, deliver, &ps, NULL, NULL, NULL);
	if (r >= 0)
		r = emit(&ps, w, src, found ? found : &none);
	sonde_pd_reader_close(rd);
	sonde_machine_free(ps.machine);
	for (size_t i = 0; i < ps.n; i++) {
		free(ps.objs[i]->filename);
		free(ps.objs[i]);
	}
	free(ps.objs);
	return r;
}
