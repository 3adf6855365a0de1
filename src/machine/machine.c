// SPDX-License-Identifier: MIT
/*
 * The recorded machine: threads, processes with their maps, kernel maps.
 * libc only (target side): a map's object is whatever the owner's
 * factory returned for its MMAP record, so the host's session and
 * record's build-id pass share this one model.
 *
 * Lookups happen once per sample and per call-chain entry, so they are
 * cheap: threads and processes live in open-addressing tables keyed by
 * tid and pid; each process keeps its maps sorted by start in an array,
 * searched by bisection after a one-entry cache of the last hit.  Map
 * updates (rare next to lookups) rebuild the array around the new map,
 * trimming or splitting what it overlaps, as the kernel does to the
 * address space.  Strings (comms) are interned to ids so aggregation
 * compares integers.
 */
#include <sonde/machine.h>

#include <sonde/hash.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PID_KERNEL UINT32_MAX

struct proc {
	uint32_t pid;
	bool used;
	struct sonde_map *maps; /* sorted by start, disjoint */
	size_t n, cap;
	size_t last; /* index of the last hit */
};

struct tslot {
	uint32_t tid;
	bool used;
	struct sonde_thread t;
};

struct strtab {
	char **v;
	size_t n, cap;
	uint32_t *slots; /* open addressing over v: id + 1, 0 empty */
	size_t nslots;
};

struct sonde_machine {
	sonde_machine_object_fn object;
	void *object_ctx;
	struct proc *procs;
	size_t nprocs, procs_cap; /* procs_cap a power of two */
	struct proc *last_proc;	  /* of the last lookup (samples come in runs of one
				   * process); NULL after the table moved */
	struct tslot *threads;
	size_t nthreads, threads_cap;
	struct proc kernel;
	struct strtab strs;
};

/* ---- strings ---------------------------------------------------------- */

static int strtab_grow(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 256;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = sonde_fnv1a_str(t->v[i]) & (n - 1);

		while (s[k])
			k = (k + 1) & (n - 1);
		s[k] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

uint32_t sonde_machine_intern(struct sonde_machine *m, const char *str)
{
	struct strtab *t = &m->strs;
	size_t k;

	if ((t->n + 1) * 2 > t->nslots && strtab_grow(t))
		return UINT32_MAX;
	k = sonde_fnv1a_str(str) & (t->nslots - 1);
	while (t->slots[k]) {
		if (!strcmp(t->v[t->slots[k] - 1], str))
			return t->slots[k] - 1;
		k = (k + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return UINT32_MAX;
		t->v = v;
		t->cap = cap;
	}
	if (!(t->v[t->n] = strdup(str)))
		return UINT32_MAX;
	t->slots[k] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

const char *sonde_machine_str(const struct sonde_machine *m, uint32_t id)
{
	return id < m->strs.n ? m->strs.v[id] : "";
}

/* ---- processes and threads -------------------------------------------- */

static uint64_t hash_u32(uint32_t v)
{
	return (v * 0x9e3779b97f4a7c15ull) >> 17;
}

static int procs_grow(struct sonde_machine *m)
{
	size_t n = m->procs_cap ? m->procs_cap * 2 : 64;
	struct proc *p = calloc(n, sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < m->procs_cap; i++) {
		size_t k;

		if (!m->procs[i].used)
			continue;
		k = hash_u32(m->procs[i].pid) & (n - 1);
		while (p[k].used)
			k = (k + 1) & (n - 1);
		p[k] = m->procs[i];
	}
	free(m->procs);
	m->procs = p;
	m->procs_cap = n;
	m->last_proc = NULL;
	return 0;
}

static struct proc *find_proc(struct sonde_machine *m, uint32_t pid)
{
	size_t k;

	if (pid == PID_KERNEL)
		return &m->kernel;
	/* Processes are never removed, so the pointer keeps its pid. */
	if (m->last_proc && m->last_proc->pid == pid)
		return m->last_proc;
	if (!m->procs_cap)
		return NULL;
	k = hash_u32(pid) & (m->procs_cap - 1);
	while (m->procs[k].used) {
		if (m->procs[k].pid == pid)
			return m->last_proc = &m->procs[k];
		k = (k + 1) & (m->procs_cap - 1);
	}
	return NULL;
}

static struct proc *findnew_proc(struct sonde_machine *m, uint32_t pid)
{
	struct proc *p = find_proc(m, pid);
	size_t k;

	if (p)
		return p;
	if ((m->nprocs + 1) * 2 > m->procs_cap && procs_grow(m))
		return NULL;
	k = hash_u32(pid) & (m->procs_cap - 1);
	while (m->procs[k].used)
		k = (k + 1) & (m->procs_cap - 1);
	m->procs[k] = (struct proc){.pid = pid, .used = true};
	m->nprocs++;
	return &m->procs[k];
}

static int threads_grow(struct sonde_machine *m)
{
	size_t n = m->threads_cap ? m->threads_cap * 2 : 64;
	struct tslot *t = calloc(n, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < m->threads_cap; i++) {
		size_t k;

		if (!m->threads[i].used)
			continue;
		k = hash_u32(m->threads[i].tid) & (n - 1);
		while (t[k].used)
			k = (k + 1) & (n - 1);
		t[k] = m->threads[i];
	}
	free(m->threads);
	m->threads = t;
	m->threads_cap = n;
	return 0;
}

static struct sonde_thread *find_thread(struct sonde_machine *m, uint32_t tid)
{
	size_t k;

	if (!m->threads_cap)
		return NULL;
	k = hash_u32(tid) & (m->threads_cap - 1);
	while (m->threads[k].used) {
		if (m->threads[k].tid == tid)
			return &m->threads[k].t;
		k = (k + 1) & (m->threads_cap - 1);
	}
	return NULL;
}

const struct sonde_thread *sonde_machine_find_thread(const struct sonde_machine *m, uint32_t tid)
{
	return find_thread((struct sonde_machine *)m, tid);
}

struct sonde_thread *sonde_machine_findnew_thread(struct sonde_machine *m, uint32_t pid,
						  uint32_t tid)
{
	struct sonde_thread *t = find_thread(m, tid);
	char name[32];
	size_t k;

	if (t) {
		if (t->pid == UINT32_MAX)
			t->pid = pid;
		return t;
	}
	if ((m->nthreads + 1) * 2 > m->threads_cap && threads_grow(m))
		return NULL;
	k = hash_u32(tid) & (m->threads_cap - 1);
	while (m->threads[k].used)
		k = (k + 1) & (m->threads_cap - 1);
	/* perf shows a thread it never saw a COMM for as ":TID", TID signed
	 * (":-1" for samples without a task: thread__new's "%d"), and the idle
	 * task (tid 0, which never gets a COMM) as "swapper" (machine__init). */
	if (tid == 0)
		snprintf(name, sizeof(name), "swapper");
	else
		snprintf(name, sizeof(name), ":%d", (int)tid);
	m->threads[k] = (struct tslot){.tid = tid, .used = true, .t = {pid, tid, 0, tid == 0}};
	m->threads[k].t.comm = sonde_machine_intern(m, name);
	m->nthreads++;
	return &m->threads[k].t;
}

void sonde_machine_for_each_thread(struct sonde_machine *m,
				   void (*fn)(void *ctx, const struct sonde_thread *t), void *ctx)
{
	for (size_t i = 0; i < m->threads_cap; i++)
		if (m->threads[i].used)
			fn(ctx, &m->threads[i].t);
}

/* ---- maps ------------------------------------------------------------- */

static int maps_reserve(struct proc *p, size_t extra)
{
	size_t cap;
	struct sonde_map *v;

	if (p->n + extra <= p->cap)
		return 0;
	cap = p->cap ? p->cap * 2 : 16;
	while (cap < p->n + extra)
		cap *= 2;
	if (!(v = realloc(p->maps, cap * sizeof(*v))))
		return -ENOMEM;
	p->maps = v;
	p->cap = cap;
	return 0;
}

/* First map whose end is above @addr. */
static size_t maps_lower(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Inserts @nm, trimming or splitting the maps it overlaps. */
static int maps_insert(struct proc *p, const struct sonde_map *nm)
{
	size_t i, j;
	struct sonde_map left = {0}, right = {0};
	bool has_left = false, has_right = false;

	if (nm->end <= nm->start || maps_reserve(p, 2))
		return nm->end <= nm->start ? 0 : -ENOMEM;
	i = maps_lower(p, nm->start);
	/* [i, j) overlap the new map. */
	for (j = i; j < p->n && p->maps[j].start < nm->end; j++)
		;
	if (i < j && p->maps[i].start < nm->start) {
		left = p->maps[i];
		left.end = nm->start;
		has_left = true;
	}
	if (i < j && p->maps[j - 1].end > nm->end) {
		right = p->maps[j - 1];
		right.pgoff += nm->end - right.start;
		right.start = nm->end;
		has_right = true;
	}
	{
		size_t add = 1 + has_left + has_right, tail = p->n - j;
		struct sonde_map *dst = p->maps + i + add;

		memmove(dst, p->maps + j, tail * sizeof(*dst));
		p->n = i + add + tail;
	}
	if (has_left)
		p->maps[i++] = left;
	p->maps[i++] = *nm;
	if (has_right)
		p->maps[i] = right;
	p->last = 0;
	return 0;
}

static const struct sonde_map *maps_find(struct proc *p, uint64_t addr)
{
	size_t i;

	if (!p || !p->n)
		return NULL;
	if (p->last < p->n && p->maps[p->last].start <= addr && addr < p->maps[p->last].end)
		return &p->maps[p->last];
	i = maps_lower(p, addr);
	if (i < p->n && p->maps[i].start <= addr) {
		p->last = i;
		return &p->maps[i];
	}
	return NULL;
}

/* ---- records ---------------------------------------------------------- */

static bool is_kernel_mmap(const struct sonde_pd_record *rec, const struct sonde_pd_mmap *mm)
{
	uint16_t mode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mm->pid == PID_KERNEL || mode == PERF_RECORD_MISC_KERNEL ||
	       mode == PERF_RECORD_MISC_GUEST_KERNEL;
}

static int do_mmap(struct sonde_machine *m, const struct sonde_pd_record *rec,
		   const struct sonde_pd_mmap *mm)
{
	bool kernel = is_kernel_mmap(rec, mm);
	struct proc *p = kernel ? &m->kernel : findnew_proc(m, mm->pid);
	struct sonde_object_desc d = {
	    .filename = mm->filename ? mm->filename : "//anon",
	    .build_id = mm->build_id_size ? mm->build_id : NULL,
	    .build_id_len = mm->build_id ? mm->build_id_size : 0,
	    .maj = mm->maj,
	    .min = mm->min,
	    .ino = mm->ino,
	    .ino_generation = mm->ino_generation,
	    .kind = SONDE_OBJECT_USER,
	    .pid = kernel ? PID_KERNEL : mm->pid,
	};
	struct sonde_map nm;

	if (!p)
		return -ENOMEM;
	if (kernel && !strncmp(d.filename, "[kernel.kallsyms]", 17)) {
		/* perf names the kernel map "[kernel.kallsyms]_text" (or _stext). */
		d.filename = "[kernel.kallsyms]";
		d.kind = SONDE_OBJECT_KERNEL;
	} else if (kernel) {
		d.kind = SONDE_OBJECT_MODULE;
	}
	nm.start = mm->start;
	nm.end = mm->len > UINT64_MAX - mm->start ? UINT64_MAX : mm->start + mm->len;
	nm.pgoff = mm->pgoff;
	if (!(nm.object = m->object(m->object_ctx, &d)))
		return -ENOMEM;
	return maps_insert(p, &nm);
}

static int do_comm(struct sonde_machine *m, const struct sonde_pd_record *rec,
		   const struct sonde_pd_comm *c)
{
	struct sonde_thread *t = sonde_machine_findnew_thread(m, c->pid, c->tid);
	uint32_t id = sonde_machine_intern(m, c->comm ? c->comm : "");

	if (!t || id == UINT32_MAX)
		return -ENOMEM;
	/*
	 * An exec's COMM does not drop the old maps: the kernel sends it
	 * while the exec is still running, and the samples taken until the
	 * new image runs still have the old image's user frames (the caller
	 * of execve).  The new image's MMAPs replace what they overlap, as
	 * perf's maps do (it never flushes them on exec either).
	 */
	t->comm = id;
	t->comm_set = true;
	return 0;
}

static int do_fork(struct sonde_machine *m, const struct sonde_pd_fork *f)
{
	struct sonde_thread *parent = sonde_machine_findnew_thread(m, f->ppid, f->ptid);
	struct sonde_thread *child;
	uint32_t comm;
	bool comm_set;

	if (!parent)
		return -ENOMEM;
	comm = parent->comm;
	comm_set = parent->comm_set;
	if (!(child = sonde_machine_findnew_thread(m, f->pid, f->tid)))
		return -ENOMEM;
	child->pid = f->pid;
	/* As perf's thread__fork: only a name the parent was given is inherited. */
	if (comm_set) {
		child->comm = comm;
		child->comm_set = true;
	}
	if (f->pid != f->ppid) {
		struct proc *cp = findnew_proc(m, f->pid);
		/* After findnew, which may move the table. */
		struct proc *pp = find_proc(m, f->ppid);

		if (!cp)
			return -ENOMEM;
		/*
		 * A new process is a copy of its parent.  Maps already under
		 * this pid belong to a process that had the number before (the
		 * pid was reused): perf drops that thread on fork, so do we.
		 */
		cp->n = 0;
		cp->last = 0;
		if (pp && pp->n) {
			if (maps_reserve(cp, pp->n))
				return -ENOMEM;
			memcpy(cp->maps, pp->maps, pp->n * sizeof(*pp->maps));
			cp->n = pp->n;
		}
	}
	return 0;
}

int sonde_machine_process(struct sonde_machine *m, const struct sonde_pd_record *rec,
			  const struct sonde_pd_event *ev)
{
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return do_mmap(m, rec, &ev->mmap);
	case PERF_RECORD_COMM:
		return do_comm(m, rec, &ev->comm);
	case PERF_RECORD_FORK:
		return do_fork(m, &ev->fork);
	default:
		return 0;
	}
}

const struct sonde_map *sonde_machine_find_map(struct sonde_machine *m, uint32_t pid,
					       uint16_t cpumode, uint64_t ip)
{
	bool kernel = sonde_machine_kernel_ip(cpumode, ip);
	const struct sonde_map *map = maps_find(kernel ? &m->kernel : find_proc(m, pid), ip);

	/* An unknown mode may be either side: perf tries the other too. */
	if (!map && cpumode == 0)
		map = maps_find(kernel ? find_proc(m, pid) : &m->kernel, ip);
	return map;
}

/* ---- lifecycle -------------------------------------------------------- */

int sonde_machine_new(struct sonde_machine **out, sonde_machine_object_fn object, void *ctx)
{
	struct sonde_machine *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->object = object;
	m->object_ctx = ctx;
	m->kernel.pid = PID_KERNEL;
	if (sonde_machine_intern(m, "") == UINT32_MAX) {
		sonde_machine_free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void sonde_machine_free(struct sonde_machine *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->procs_cap; i++)
		free(m->procs[i].maps);
	free(m->procs);
	free(m->kernel.maps);
	free(m->threads);
	for (size_t i = 0; i < m->strs.n; i++)
		free(m->strs.v[i]);
	free(m->strs.v);
	free(m->strs.slots);
	free(m);
}
