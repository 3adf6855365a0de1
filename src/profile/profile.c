// SPDX-License-Identifier: MIT
/*
 * Aggregation of samples into entries and call-path tries.
 *
 * An entry is found by hashing its key (only the fields of the report's
 * sort keys are set, so "sort by dso" folds every symbol of an object
 * into one entry).  Counts live in flat arrays indexed entry * nevents +
 * event, so several events side by side cost one array each, not one
 * table each.  Trie nodes live in one growing array with first-child /
 * next-sibling links; a sample walks its path from the entry's root,
 * adding its period on the way.  Nothing is allocated per sample once
 * the arrays have grown to the profile's size.
 */
#include <sonde/profile.h>
#include <sonde/session.h>
#include <sonde/tool.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct sonde_frame frame;
	size_t first_child, next_sibling;
};

struct sonde_profile {
	struct sonde_profile_opts o;
	bool key_on[SONDE_SORT_MAX];

	struct sonde_entry_key *keys;
	size_t *roots;			   /* trie root node of each entry */
	struct sonde_counts *self, *total; /* [entry * nevents + ev] */
	size_t n, cap;
	size_t *slots; /* entry index + 1, 0 empty */
	size_t nslots;

	struct node *nodes;
	struct sonde_counts *ncounts; /* [node * nevents + ev] */
	size_t nn, ncap;

	struct sonde_counts *totals; /* [ev] */
	size_t *seen;		     /* entries touched by the current sample */
	size_t seen_cap;
};

static const char *const key_names[SONDE_SORT_MAX] = {"comm", "pid", "dso", "sym", "srcline"};

const char *sonde_sort_key_name(enum sonde_sort_key k)
{
	return (unsigned)k < SONDE_SORT_MAX ? key_names[k] : "?";
}

int sonde_sort_keys_parse(const char *s, enum sonde_sort_key *keys, size_t max)
{
	size_t n = 0;

	while (*s) {
		size_t len = strcspn(s, ",");
		size_t k;

		for (k = 0; k < SONDE_SORT_MAX; k++)
			if (strlen(key_names[k]) == len && !strncmp(s, key_names[k], len))
				break;
		if (k == SONDE_SORT_MAX || n == max)
			return -EINVAL;
		keys[n++] = (enum sonde_sort_key)k;
		s += len + (s[len] == ',');
	}
	return n ? (int)n : -EINVAL;
}

int sonde_profile_new(struct sonde_profile **out, const struct sonde_profile_opts *opts)
{
	struct sonde_profile *p;

	if (!opts->nevents || !opts->nkeys || opts->nkeys > SONDE_SORT_MAX)
		return -EINVAL;
	if (!(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	p->o = *opts;
	for (size_t i = 0; i < opts->nkeys; i++)
		p->key_on[opts->keys[i]] = true;
	if (!(p->totals = calloc(opts->nevents, sizeof(*p->totals)))) {
		free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void sonde_profile_free(struct sonde_profile *p)
{
	if (!p)
		return;
	free(p->keys);
	free(p->roots);
	free(p->self);
	free(p->total);
	free(p->slots);
	free(p->nodes);
	free(p->ncounts);
	free(p->totals);
	free(p->seen);
	free(p);
}

/* ---- entries ---------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t key_hash(const struct sonde_entry_key *k)
{
	uint64_t h = 0;

	h = mix(h, k->comm);
	h = mix(h, k->pid);
	h = mix(h, (uintptr_t)k->dso);
	h = mix(h, (uintptr_t)k->sym);
	h = mix(h, k->addr);
	h = mix(h, (uintptr_t)k->src.file);
	h = mix(h, k->src.line);
	return mix(h, k->kernel);
}

static bool key_eq(const struct sonde_entry_key *a, const struct sonde_entry_key *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->dso == b->dso && a->sym == b->sym &&
	       a->addr == b->addr && a->src.file == b->src.file && a->src.line == b->src.line &&
	       a->kernel == b->kernel;
}

static void make_key(const struct sonde_profile *p, uint32_t comm, uint32_t pid,
		     const struct sonde_frame *f, struct sonde_entry_key *k)
{
	memset(k, 0, sizeof(*k));
	if (p->key_on[SONDE_SORT_COMM])
		k->comm = comm;
	if (p->key_on[SONDE_SORT_PID])
		k->pid = pid;
	if (p->key_on[SONDE_SORT_DSO] || p->key_on[SONDE_SORT_SYM])
		k->dso = f->dso;
	if (p->key_on[SONDE_SORT_SYM]) {
		k->sym = f->sym;
		k->addr = f->sym ? 0 : f->addr;
		k->kernel = f->kernel;
	}
	if (p->key_on[SONDE_SORT_SRCLINE]) {
		k->src = f->src;
		/* Without a line, perf shows the symbol and offset (else the
		 * object and address): one row per address either way. */
		if (!f->src.file) {
			k->dso = f->dso;
			k->sym = f->sym;
			k->addr = f->addr;
		}
	}
	if (!p->key_on[SONDE_SORT_SYM] && p->key_on[SONDE_SORT_DSO])
		k->kernel = f->kernel;
}

static int grow_slots(struct sonde_profile *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 1024;
	size_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		size_t k = key_hash(&p->keys[i]) & (n - 1);

		while (s[k])
			k = (k + 1) & (n - 1);
		s[k] = i + 1;
	}
	free(p->slots);
	p->slots = s;
	p->nslots = n;
	return 0;
}

static int grow_entries(struct sonde_profile *p)
{
	size_t cap = p->cap ? p->cap * 2 : 256, ne = p->o.nevents;
	void *a;

	if (!(a = realloc(p->keys, cap * sizeof(*p->keys))))
		return -ENOMEM;
	p->keys = a;
	if (!(a = realloc(p->roots, cap * sizeof(*p->roots))))
		return -ENOMEM;
	p->roots = a;
	if (!(a = realloc(p->self, cap * ne * sizeof(*p->self))))
		return -ENOMEM;
	p->self = a;
	if (!(a = realloc(p->total, cap * ne * sizeof(*p->total))))
		return -ENOMEM;
	p->total = a;
	p->cap = cap;
	return 0;
}

static int new_node(struct sonde_profile *p, const struct sonde_frame *f, size_t *out)
{
	size_t ne = p->o.nevents;

	if (p->nn == p->ncap) {
		size_t cap = p->ncap ? p->ncap * 2 : 1024;
		void *a;

		if (!(a = realloc(p->nodes, cap * sizeof(*p->nodes))))
			return -ENOMEM;
		p->nodes = a;
		if (!(a = realloc(p->ncounts, cap * ne * sizeof(*p->ncounts))))
			return -ENOMEM;
		p->ncounts = a;
		p->ncap = cap;
	}
	p->nodes[p->nn] = (struct node){*f, SIZE_MAX, SIZE_MAX};
	memset(&p->ncounts[p->nn * ne], 0, ne * sizeof(*p->ncounts));
	*out = p->nn++;
	return 0;
}

/* The entry for @k, made when new. Return: its index, or SIZE_MAX. */
static size_t findnew_entry(struct sonde_profile *p, const struct sonde_entry_key *k,
			    const struct sonde_frame *f)
{
	size_t ne = p->o.nevents, h, i;

	if ((p->n + 1) * 2 > p->nslots && grow_slots(p))
		return SIZE_MAX;
	h = key_hash(k) & (p->nslots - 1);
	while (p->slots[h]) {
		i = p->slots[h] - 1;
		if (key_eq(&p->keys[i], k))
			return i;
		h = (h + 1) & (p->nslots - 1);
	}
	if (p->n == p->cap && grow_entries(p))
		return SIZE_MAX;
	i = p->n;
	p->keys[i] = *k;
	p->roots[i] = SIZE_MAX;
	if (p->o.callchains && new_node(p, f, &p->roots[i]))
		return SIZE_MAX;
	memset(&p->self[i * ne], 0, ne * sizeof(*p->self));
	memset(&p->total[i * ne], 0, ne * sizeof(*p->total));
	p->slots[h] = i + 1;
	p->n++;
	return i;
}

/* ---- tries ------------------------------------------------------------ */

static bool same_frame(const struct sonde_frame *a, const struct sonde_frame *b)
{
	if (a->inlined != b->inlined || a->dwarf_name != b->dwarf_name)
		return false;
	if (a->sym || b->sym)
		return a->sym == b->sym;
	return a->dso == b->dso && a->addr == b->addr;
}

static int child(struct sonde_profile *p, size_t parent, const struct sonde_frame *f, size_t *out)
{
	size_t c;

	for (c = p->nodes[parent].first_child; c != SIZE_MAX; c = p->nodes[c].next_sibling)
		if (same_frame(&p->nodes[c].frame, f)) {
			*out = c;
			return 0;
		}
	if (new_node(p, f, &c))
		return -ENOMEM;
	p->nodes[c].next_sibling = p->nodes[parent].first_child;
	p->nodes[parent].first_child = c;
	*out = c;
	return 0;
}

static void count(struct sonde_counts *c, uint64_t period)
{
	c->samples++;
	c->period += period;
}

/*
 * Adds the sample's path under entry @e, whose frame is frames[@k], as
 * perf draws it: callee order runs from the entry to the outermost
 * caller; caller order runs from the outermost caller down to the leaf
 * for the entry's own samples, and from the entry down to the leaf for
 * the samples it only called into.
 */
static int add_path(struct sonde_profile *p, size_t e, size_t ev, uint64_t period,
		    const struct sonde_frame *frames, size_t n, size_t k)
{
	size_t node = p->roots[e], ne = p->o.nevents;

	/* The leaf's own samples show the whole chain, inlined frames included. */
	bool self = true;

	for (size_t j = 0; j < k; j++)
		self &= frames[j].inlined != NULL;
	count(&p->ncounts[node * ne + ev], period);
	if (p->o.caller_order) {
		for (size_t j = self ? n : k + 1; j-- > 0;)
			if (child(p, node, &frames[j], &node))
				return -ENOMEM;
			else
				count(&p->ncounts[node * ne + ev], period);
	} else {
		for (size_t j = self ? 0 : k; j < n; j++)
			if (child(p, node, &frames[j], &node))
				return -ENOMEM;
			else
				count(&p->ncounts[node * ne + ev], period);
	}
	return 0;
}

static bool seen_before(struct sonde_profile *p, size_t nseen, size_t e)
{
	for (size_t i = 0; i < nseen; i++)
		if (p->seen[i] == e)
			return true;
	return false;
}

int sonde_profile_add(struct sonde_profile *p, size_t ev, uint64_t period, uint32_t comm,
		      uint32_t pid, const struct sonde_frame *frames, size_t nframes)
{
	size_t ne = p->o.nevents, nseen = 0, last = nframes;
	struct sonde_entry_key k;

	if (ev >= ne || !nframes)
		return -EINVAL;
	count(&p->totals[ev], period);
	if (last > p->seen_cap) {
		size_t *s = realloc(p->seen, last * sizeof(*s));

		if (!s)
			return -ENOMEM;
		p->seen = s;
		p->seen_cap = last;
	}
	bool leaf = true;

	for (size_t j = 0; j < nframes; j++) {
		size_t e;

		if (frames[j].inlined)
			continue; /* rows are functions, not inlined bodies */
		make_key(p, comm, pid, &frames[j], &k);
		if ((e = findnew_entry(p, &k, &frames[j])) == SIZE_MAX)
			return -ENOMEM;
		if (leaf)
			count(&p->self[e * ne + ev], period);
		/* A recursive chain counts a function once per sample. */
		if (seen_before(p, nseen, e))
			continue;
		p->seen[nseen++] = e;
		count(&p->total[e * ne + ev], period);
		if (p->o.callchains && add_path(p, e, ev, period, frames, nframes, j))
			return -ENOMEM;
		if (!p->o.children)
			break;
		leaf = false;
	}
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

const struct sonde_profile_opts *sonde_profile_opts(const struct sonde_profile *p)
{
	return &p->o;
}

struct sonde_counts sonde_profile_total(const struct sonde_profile *p, size_t ev)
{
	return ev < p->o.nevents ? p->totals[ev] : (struct sonde_counts){0, 0};
}

size_t sonde_profile_nr_entries(const struct sonde_profile *p)
{
	return p->n;
}

const struct sonde_entry_key *sonde_profile_entry_key(const struct sonde_profile *p, size_t i)
{
	return &p->keys[i];
}

struct sonde_counts sonde_profile_entry_self(const struct sonde_profile *p, size_t i, size_t ev)
{
	return p->self[i * p->o.nevents + ev];
}

struct sonde_counts sonde_profile_entry_total(const struct sonde_profile *p, size_t i, size_t ev)
{
	return p->total[i * p->o.nevents + ev];
}

struct sort_ctx {
	const struct sonde_profile *p;
	const struct sonde_counts *counts;
	const struct sonde_counts *self; /* with children: ties of counts go by self */
	size_t nevents;
	const size_t *evs; /* the events compared, in order (perf's group sort) */
	size_t nev;
};

/* Larger period of the events first; 0 on a tie. */
static int by_counts(const struct sort_ctx *c, const struct sonde_counts *counts, size_t x,
		     size_t y)
{
	for (size_t k = 0; k < c->nev; k++) {
		uint64_t vx = counts[x * c->nevents + c->evs[k]].period;
		uint64_t vy = counts[y * c->nevents + c->evs[k]].period;

		if (vx != vy)
			return vx > vy ? -1 : 1;
	}
	return 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* A missing object or symbol after a present one (perf's cmp_null). */
static int cmp_null(const void *a, const void *b)
{
	return !a == !b ? 0 : a ? -1 : 1;
}

/* perf's text of a --sort srcline key: "file:line", else "sym+off", else "dso[addr]". */
static const char *srcline_text(const struct sonde_entry_key *k, char *buf, size_t len)
{
	if (k->src.file)
		snprintf(buf, len, "%s:%u", k->src.file, k->src.line);
	else if (k->sym && k->addr >= k->sym->start)
		snprintf(buf, len, "%s+%" PRIu64, k->sym->name, k->addr - k->sym->start);
	else
		snprintf(buf, len, "%s[%" PRIx64 "]", k->dso ? sonde_dso_short_name(k->dso) : "",
			 k->addr);
	return buf;
}

/*
 * Rows tied on period, in the order of perf's sort functions (sort.c's
 * se_sort, else se_cmp) for the keys in order: comm, object and symbol
 * names and srcline text ascending, missing objects and symbols last,
 * pid (the tid) ascending.  Unresolved symbols tie in perf's sort and keep
 * its collapse order, by address.
 */
static int by_keys(const struct sonde_profile *p, size_t x, size_t y)
{
	const struct sonde_entry_key *a = &p->keys[x], *b = &p->keys[y];
	char ta[512], tb[512];
	int r = 0;

	for (size_t i = 0; i < p->o.nkeys && !r; i++) {
		switch (p->o.keys[i]) {
		case SONDE_SORT_COMM:
			if (p->o.machine && a->comm != b->comm)
				r = strcmp(sonde_machine_str(p->o.machine, a->comm),
					   sonde_machine_str(p->o.machine, b->comm));
			break;
		case SONDE_SORT_PID:
			r = cmp_u64(a->pid, b->pid);
			break;
		case SONDE_SORT_DSO:
			r = a->dso && b->dso
				? strcmp(sonde_dso_short_name(a->dso), sonde_dso_short_name(b->dso))
				: cmp_null(a->dso, b->dso);
			break;
		case SONDE_SORT_SYM:
			r = a->sym && b->sym   ? strcmp(a->sym->name, b->sym->name)
			    : a->sym || b->sym ? cmp_null(a->sym, b->sym)
					       : cmp_u64(a->addr, b->addr);
			break;
		case SONDE_SORT_SRCLINE:
			r = strcmp(srcline_text(a, ta, sizeof(ta)),
				   srcline_text(b, tb, sizeof(tb)));
			break;
		}
	}
	return r;
}

/*
 * perf's output order: with children, inclusive period, then self period
 * (perf sorts by "overhead_children,overhead,<keys>"); then the keys; then
 * first seen first, for a stable output.
 */
static int by_period(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int r = by_counts(c, c->counts, x, y);

	if (!r && c->self)
		r = by_counts(c, c->self, x, y);
	if (!r)
		r = by_keys(c->p, x, y);
	return r ? r : x < y ? -1 : x > y;
}

void sonde_profile_sort_events(const struct sonde_profile *p, const size_t *evs, size_t nev,
			       bool by_children, size_t *idx)
{
	bool total = by_children && p->o.children;
	struct sort_ctx c = {
	    p, total ? p->total : p->self, total ? p->self : NULL, p->o.nevents, evs, 0};

	/* Events out of range end the list: they have no counts to compare. */
	while (c.nev < nev && evs[c.nev] < p->o.nevents)
		c.nev++;
	for (size_t i = 0; i < p->n; i++)
		idx[i] = i;
	if (p->n)
		qsort_r(idx, p->n, sizeof(*idx), by_period, &c);
}

void sonde_profile_sort(const struct sonde_profile *p, size_t ev, bool by_children, size_t *idx)
{
	size_t e = ev < p->o.nevents ? ev : 0;

	sonde_profile_sort_events(p, &e, 1, by_children, idx);
}

size_t sonde_profile_trie_root(const struct sonde_profile *p, size_t entry)
{
	return p->o.callchains ? p->roots[entry] : SIZE_MAX;
}

size_t sonde_profile_node_first_child(const struct sonde_profile *p, size_t node)
{
	return p->nodes[node].first_child;
}

size_t sonde_profile_node_next_sibling(const struct sonde_profile *p, size_t node)
{
	return p->nodes[node].next_sibling;
}

const struct sonde_frame *sonde_profile_node_frame(const struct sonde_profile *p, size_t node)
{
	return &p->nodes[node].frame;
}

struct sonde_counts sonde_profile_node_counts(const struct sonde_profile *p, size_t node, size_t ev)
{
	return p->ncounts[node * p->o.nevents + ev];
}

/* The profile tool: a column per event of the session, every kept sample. */
static int tool_begin(void *ctx, struct sonde_session *ses)
{
	struct sonde_profile_tool *pt = ctx;

	pt->opts.nevents = ses->nevents;
	pt->opts.machine = ses->machine;
	return sonde_profile_new(&pt->profile, &pt->opts);
}

static int tool_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	struct sonde_profile_tool *pt = ctx;
	const struct sonde_profile_opts *o = &pt->opts;

	(void)ses;
	/* the "pid" key is perf's thread key: the tid (shown as tid:comm) */
	return sonde_profile_add(pt->profile, ts->event, ts->period, ts->thread->comm, ts->s->tid,
				 ts->frames,
				 o->callchains || o->children ? ts->nframes : ts->leaf + 1);
}

const struct sonde_tool sonde_profile_tool = {
    .name = "profile",
    .begin = tool_begin,
    .sample = tool_sample,
};
