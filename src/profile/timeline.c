// SPDX-License-Identifier: MIT
/*
 * The timeline: one global call-path trie plus a compact record per
 * sample, folded into time bins on demand.
 *
 * Functions, trie nodes and threads are interned through
 * open-addressing tables of indexes (slot = index + 1, 0 empty) into
 * growing arrays, so a sample costs a few hash probes per frame and no
 * allocation once the arrays have grown.  Nodes are keyed by (parent,
 * function) packed in 64 bits; a node is always made after its parent,
 * so views can total a subtree by walking the nodes backwards.
 */
#include <sonde/timeline.h>
#include <sonde/session.h>
#include <sonde/tool.h>
#include <sonde/u32map.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	uint64_t time, period;
	uint32_t leaf, thread, cpu, event;
};

struct node {
	uint64_t key; /* parent << 32 | func */
};

/* A table of indexes into one of the arrays below. */
struct slots {
	uint32_t *s;
	size_t cap; /* power of two, or 0 */
};

struct sonde_timeline {
	size_t nevents;

	struct sonde_tl_func *funcs;
	size_t nfuncs, funcs_cap;
	struct slots func_slots;

	struct node *nodes;
	size_t nnodes, nodes_cap;
	struct slots node_slots;

	struct sonde_tl_thread *threads;
	size_t nthreads, threads_cap;
	struct sonde_u32map thread_by_tid;

	struct rec *recs;
	size_t nrecs, recs_cap;
	uint64_t first, last;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static uint64_t func_hash(const struct sonde_tl_func *f)
{
	if (f->sym)
		return mix((uintptr_t)f->sym ^ mix((uintptr_t)f->inlined));
	return mix((uintptr_t)f->dso ^ mix(f->addr) ^ f->kernel);
}

static bool func_eq(const struct sonde_tl_func *a, const struct sonde_tl_func *b)
{
	if (a->sym || b->sym)
		return a->sym == b->sym && a->inlined == b->inlined;
	return a->dso == b->dso && a->addr == b->addr && a->kernel == b->kernel;
}

/* Grows @t to hold twice @n items, re-placing the @n items by @hash_of. */
static int slots_grow(struct slots *t, size_t n, uint64_t (*hash_of)(const void *ctx, size_t i),
		      const void *ctx)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t k = hash_of(ctx, i) & (cap - 1);

		while (s[k])
			k = (k + 1) & (cap - 1);
		s[k] = (uint32_t)i + 1;
	}
	free(t->s);
	t->s = s;
	t->cap = cap;
	return 0;
}

static uint64_t func_hash_of(const void *ctx, size_t i)
{
	return func_hash(&((const struct sonde_timeline *)ctx)->funcs[i]);
}

static uint64_t node_hash_of(const void *ctx, size_t i)
{
	return mix(((const struct sonde_timeline *)ctx)->nodes[i].key);
}

/* Grows *@v (of *@cap items of @size) to hold one more. */
static int reserve(void **v, size_t *cap, size_t n, size_t size)
{
	void *a;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	if (!(a = realloc(*v, c * size)))
		return -ENOMEM;
	*v = a;
	*cap = c;
	return 0;
}

int sonde_timeline_new(struct sonde_timeline **out, size_t nevents)
{
	struct sonde_timeline *tl;

	if (!nevents)
		return -EINVAL;
	if (!(tl = calloc(1, sizeof(*tl))))
		return -ENOMEM;
	tl->nevents = nevents;
	sonde_u32map_init(&tl->thread_by_tid);
	/* Node 0: the root above every stack. */
	if (reserve((void **)&tl->nodes, &tl->nodes_cap, 0, sizeof(*tl->nodes))) {
		free(tl);
		return -ENOMEM;
	}
	tl->nodes[0].key = UINT64_MAX;
	tl->nnodes = 1;
	*out = tl;
	return 0;
}

void sonde_timeline_free(struct sonde_timeline *tl)
{
	if (!tl)
		return;
	free(tl->funcs);
	free(tl->func_slots.s);
	free(tl->nodes);
	free(tl->node_slots.s);
	free(tl->threads);
	sonde_u32map_fini(&tl->thread_by_tid);
	free(tl->recs);
	free(tl);
}

/* The function of frame @fr, made when new. Return: its index, or UINT32_MAX. */
static uint32_t findnew_func(struct sonde_timeline *tl, const struct sonde_frame *fr)
{
	struct sonde_tl_func f = {fr->sym, fr->sym ? fr->inlined : NULL, fr->dso,
				  fr->sym ? 0 : fr->addr, fr->kernel};
	size_t k;

	if ((tl->nfuncs + 1) * 2 > tl->func_slots.cap &&
	    slots_grow(&tl->func_slots, tl->nfuncs, func_hash_of, tl))
		return UINT32_MAX;
	for (k = func_hash(&f) & (tl->func_slots.cap - 1); tl->func_slots.s[k];
	     k = (k + 1) & (tl->func_slots.cap - 1))
		if (func_eq(&tl->funcs[tl->func_slots.s[k] - 1], &f))
			return tl->func_slots.s[k] - 1;
	if (reserve((void **)&tl->funcs, &tl->funcs_cap, tl->nfuncs, sizeof(*tl->funcs)))
		return UINT32_MAX;
	tl->funcs[tl->nfuncs] = f;
	tl->func_slots.s[k] = (uint32_t)++tl->nfuncs;
	return (uint32_t)tl->nfuncs - 1;
}

/* The child of @parent for @func, made when new. Return: its index, or UINT32_MAX. */
static uint32_t findnew_node(struct sonde_timeline *tl, uint32_t parent, uint32_t func)
{
	uint64_t key = (uint64_t)parent << 32 | func;
	size_t k;

	if ((tl->nnodes + 1) * 2 > tl->node_slots.cap &&
	    slots_grow(&tl->node_slots, tl->nnodes, node_hash_of, tl))
		return UINT32_MAX;
	for (k = mix(key) & (tl->node_slots.cap - 1); tl->node_slots.s[k];
	     k = (k + 1) & (tl->node_slots.cap - 1))
		if (tl->nodes[tl->node_slots.s[k] - 1].key == key)
			return tl->node_slots.s[k] - 1;
	if (reserve((void **)&tl->nodes, &tl->nodes_cap, tl->nnodes, sizeof(*tl->nodes)))
		return UINT32_MAX;
	tl->nodes[tl->nnodes].key = key;
	tl->node_slots.s[k] = (uint32_t)++tl->nnodes;
	return (uint32_t)tl->nnodes - 1;
}

static uint32_t findnew_thread(struct sonde_timeline *tl, const struct sonde_tl_sample *s)
{
	uint32_t i;

	if (sonde_u32map_get(&tl->thread_by_tid, s->tid, &i)) {
		tl->threads[i].comm = s->comm;
		tl->threads[i].pid = s->pid;
		tl->threads[i].samples++;
		return i;
	}
	if (reserve((void **)&tl->threads, &tl->threads_cap, tl->nthreads, sizeof(*tl->threads)) ||
	    sonde_u32map_put(&tl->thread_by_tid, s->tid, (uint32_t)tl->nthreads))
		return UINT32_MAX;
	tl->threads[tl->nthreads] = (struct sonde_tl_thread){s->pid, s->tid, s->comm, 1};
	return (uint32_t)tl->nthreads++;
}

int sonde_timeline_add(struct sonde_timeline *tl, const struct sonde_tl_sample *s,
		       const struct sonde_frame *frames, size_t n)
{
	uint32_t node = 0, func = UINT32_MAX, thread;
	struct rec *r;

	if (!n || s->event >= tl->nevents)
		return -EINVAL;
	for (size_t j = n; j-- > 0;) {
		if ((func = findnew_func(tl, &frames[j])) == UINT32_MAX ||
		    (node = findnew_node(tl, node, func)) == UINT32_MAX)
			return -ENOMEM;
	}
	if ((thread = findnew_thread(tl, s)) == UINT32_MAX ||
	    reserve((void **)&tl->recs, &tl->recs_cap, tl->nrecs, sizeof(*tl->recs)))
		return -ENOMEM;
	r = &tl->recs[tl->nrecs++];
	*r = (struct rec){s->time, s->period, node, thread, s->cpu, s->event};
	if (tl->nrecs == 1 || s->time < tl->first)
		tl->first = s->time;
	if (s->time > tl->last)
		tl->last = s->time;
	return 0;
}

uint64_t sonde_timeline_nr_samples(const struct sonde_timeline *tl)
{
	return tl->nrecs;
}

void sonde_timeline_span(const struct sonde_timeline *tl, uint64_t *first, uint64_t *last)
{
	*first = tl->first;
	*last = tl->last;
}

size_t sonde_timeline_nr_funcs(const struct sonde_timeline *tl)
{
	return tl->nfuncs;
}

const struct sonde_tl_func *sonde_timeline_func(const struct sonde_timeline *tl, size_t i)
{
	return &tl->funcs[i];
}

size_t sonde_timeline_nr_threads(const struct sonde_timeline *tl)
{
	return tl->nthreads;
}

const struct sonde_tl_thread *sonde_timeline_thread(const struct sonde_timeline *tl, size_t i)
{
	return &tl->threads[i];
}

size_t sonde_timeline_nr_nodes(const struct sonde_timeline *tl)
{
	return tl->nnodes;
}

void sonde_timeline_node(const struct sonde_timeline *tl, size_t i, uint32_t *parent,
			 uint32_t *func)
{
	uint64_t key = tl->nodes[i].key;

	*parent = i ? (uint32_t)(key >> 32) : UINT32_MAX;
	*func = i ? (uint32_t)key : UINT32_MAX;
}

void sonde_timeline_sample(const struct sonde_timeline *tl, size_t i, uint64_t *time, uint32_t *cpu,
			   uint32_t *thread, uint32_t *event)
{
	*time = tl->recs[i].time;
	*cpu = tl->recs[i].cpu;
	*thread = tl->recs[i].thread;
	*event = tl->recs[i].event;
}

/* ---- bins ------------------------------------------------------------- */

static uint64_t cell_hash(const struct sonde_tl_cell *c)
{
	return mix(((uint64_t)c->bin << 32 | c->leaf) ^
		   mix((uint64_t)c->thread << 32 ^ (uint64_t)c->cpu << 8 ^ c->event));
}

static bool cell_eq(const struct sonde_tl_cell *a, const struct sonde_tl_cell *b)
{
	return a->bin == b->bin && a->leaf == b->leaf && a->thread == b->thread &&
	       a->cpu == b->cpu && a->event == b->event;
}

static uint64_t cell_hash_of(const void *ctx, size_t i)
{
	return cell_hash(&(*(struct sonde_tl_cell *const *)ctx)[i]);
}

static int by_bin(const void *a, const void *b)
{
	const struct sonde_tl_cell *x = a, *y = b;

	if (x->bin != y->bin)
		return x->bin < y->bin ? -1 : 1;
	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

int sonde_timeline_bins(const struct sonde_timeline *tl, size_t nbins, struct sonde_tl_cell **cells,
			size_t *ncells)
{
	uint64_t span = tl->last - tl->first + 1;
	struct sonde_tl_cell *v = NULL;
	struct slots t = {0};
	size_t n = 0, cap = 0;

	if (!nbins)
		nbins = 1;
	for (size_t i = 0; i < tl->nrecs; i++) {
		const struct rec *r = &tl->recs[i];
		struct sonde_tl_cell c = {
		    .bin = (uint32_t)((unsigned __int128)(r->time - tl->first) * nbins / span),
		    .leaf = r->leaf,
		    .thread = r->thread,
		    .cpu = r->cpu,
		    .event = r->event,
		};
		size_t k;

		if ((n + 1) * 2 > t.cap && slots_grow(&t, n, cell_hash_of, &v))
			goto nomem;
		for (k = cell_hash(&c) & (t.cap - 1); t.s[k]; k = (k + 1) & (t.cap - 1))
			if (cell_eq(&v[t.s[k] - 1], &c))
				break;
		if (!t.s[k]) {
			if (reserve((void **)&v, &cap, n, sizeof(*v)))
				goto nomem;
			v[n] = c;
			t.s[k] = (uint32_t)++n;
		}
		v[t.s[k] - 1].samples++;
		v[t.s[k] - 1].period += r->period;
	}
	free(t.s);
	if (n) /* no samples: v is NULL, which qsort may not be given */
		qsort(v, n, sizeof(*v), by_bin);
	*cells = v;
	*ncells = n;
	return 0;
nomem:
	free(t.s);
	free(v);
	return -ENOMEM;
}

/* The timeline tool: every kept sample in its time bin. */
static int tool_begin(void *ctx, struct sonde_session *ses)
{
	return sonde_timeline_new(ctx, ses->nevents);
}

static int tool_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	struct sonde_timeline **tl = ctx;
	const struct sonde_pd_sample *s = ts->s;
	struct sonde_tl_sample tls = {
	    .time = (s->present & PERF_SAMPLE_TIME) ? s->time : 0,
	    .cpu = (s->present & PERF_SAMPLE_CPU) ? s->cpu : UINT32_MAX,
	    .pid = s->pid,
	    .tid = s->tid,
	    .comm = ts->thread->comm,
	    .event = (uint32_t)ts->event,
	    .period = ts->period,
	};

	(void)ses;
	return sonde_timeline_add(*tl, &tls, ts->frames, ts->nframes);
}

const struct sonde_tool sonde_timeline_tool = {
    .name = "timeline",
    .begin = tool_begin,
    .sample = tool_sample,
};
