// SPDX-License-Identifier: MIT
/*
 * Annotate: per-address histograms filled during the report pass, then
 * one function at a time turned into instructions, source lines and
 * source files.
 *
 * The pass side is on the report's hot path, so it stays small: a
 * per-symbol-id byte says whether the symbol is wanted (decided once per
 * symbol by name or id, then a table load), and a wanted sample costs one
 * probe of an open-addressing table keyed by (symbol, object address)
 * whose slots index a flat array of per-event counts.  Nothing else is
 * looked at until the pass is over.
 *
 * Building an annotation reads the function's bytes from the object's
 * own file (sonde_dso_read_bytes), decodes them (capstone), gives every
 * sampled address to the instruction that holds it (an address outside
 * the decoded code becomes an instruction of its own, without text, so
 * the counts always add up to the function's samples), asks the symbol
 * layer for each instruction's source line and innermost inlined
 * function, groups instructions into source lines, and finds and reads
 * the source files.  Everything an annotation lends out lives in its own
 * arena or in the symbol world.
 */
#include <sonde/annotate.h>
#include <sonde/session.h>
#include <sonde/tool.h>
#include <sonde/disasm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_CODE (16u << 20)   /* bytes of one function we read */
#define MAX_SOURCE (64u << 20) /* bytes of one source file */
#define HOT_SHARE 5.0	       /* percent of the function a hot row needs ... */
#define HOT_OF_HOTTEST 0.25    /* ... and this fraction of the hottest row */

enum { WANT_UNKNOWN = 0, WANT_YES, WANT_NO };

struct slot {
	uint64_t addr;
	const struct sonde_symbol *sym; /* NULL: empty */
	uint32_t idx;			/* into counts, times nevents */
};

struct sonde_annotate {
	size_t nevents;
	bool all;
	const char *const *names;
	size_t nnames;
	const uint32_t *ids;
	size_t nids;
	uint8_t *want; /* by symbol id */
	size_t want_cap;
	struct slot *slots;
	size_t nslots, cap; /* cap: power of two */
	struct sonde_counts *counts;
	size_t counts_cap; /* in slots */
};

/* ---- the pass ---- */

int sonde_annotate_new(struct sonde_annotate **out, size_t nevents,
		       const struct sonde_annotate_opts *o)
{
	struct sonde_annotate *an = calloc(1, sizeof(*an));

	if (!an)
		return -ENOMEM;
	an->nevents = nevents ? nevents : 1;
	an->names = o->names;
	an->nnames = o->nnames;
	an->ids = o->ids;
	an->nids = o->nids;
	an->all = !o->nnames && !o->nids;
	*out = an;
	return 0;
}

void sonde_annotate_free(struct sonde_annotate *an)
{
	if (!an)
		return;
	free(an->want);
	free(an->slots);
	free(an->counts);
	free(an);
}

static uint8_t decide(const struct sonde_annotate *an, const struct sonde_symbol *s)
{
	for (size_t i = 0; i < an->nids; i++)
		if (an->ids[i] == s->id)
			return WANT_YES;
	for (size_t i = 0; i < an->nnames; i++)
		if (!strcmp(an->names[i], s->name) ||
		    (s->mangled && !strcmp(an->names[i], s->mangled)))
			return WANT_YES;
	return WANT_NO;
}

static inline size_t slot_hash(const struct sonde_symbol *s, uint64_t addr)
{
	return (size_t)(((addr ^ ((uint64_t)s->id << 40)) * 0x9e3779b97f4a7c15ull) >> 20);
}

static int grow_slots(struct sonde_annotate *an)
{
	size_t cap = an->cap ? an->cap * 2 : 1024;
	struct slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < an->cap; i++) {
		const struct slot *o = &an->slots[i];
		size_t h;

		if (!o->sym)
			continue;
		for (h = slot_hash(o->sym, o->addr) & (cap - 1); v[h].sym; h = (h + 1) & (cap - 1))
			;
		v[h] = *o;
	}
	free(an->slots);
	an->slots = v;
	an->cap = cap;
	return 0;
}

/* The counts of (@s, @addr), made on first sight. */
static struct sonde_counts *find_counts(struct sonde_annotate *an, const struct sonde_symbol *s,
					uint64_t addr)
{
	struct slot *sl;
	size_t h;

	if (an->nslots * 2 >= an->cap && grow_slots(an) < 0)
		return NULL;
	for (h = slot_hash(s, addr) & (an->cap - 1);; h = (h + 1) & (an->cap - 1)) {
		sl = &an->slots[h];
		if (!sl->sym)
			break;
		if (sl->sym == s && sl->addr == addr)
			return &an->counts[(size_t)sl->idx * an->nevents];
	}
	if (an->nslots == an->counts_cap) {
		size_t cap = an->counts_cap ? an->counts_cap * 2 : 1024;
		struct sonde_counts *c;

		if (cap > UINT32_MAX || !(c = realloc(an->counts, cap * an->nevents * sizeof(*c))))
			return NULL;
		an->counts = c;
		an->counts_cap = cap;
	}
	sl->sym = s;
	sl->addr = addr;
	sl->idx = (uint32_t)an->nslots++;
	memset(&an->counts[(size_t)sl->idx * an->nevents], 0, an->nevents * sizeof(*an->counts));
	return &an->counts[(size_t)sl->idx * an->nevents];
}

/* Every kept sample's leaf function, counted at its address. */
static int on_sample(void *ctx, struct sonde_session *ses, const struct sonde_tool_sample *ts)
{
	struct sonde_annotate *an = ctx;
	const struct sonde_frame *f = &ts->frames[ts->leaf];
	const struct sonde_symbol *s = f->sym;
	size_t ev = ts->event;
	struct sonde_counts *c;

	if (!s || ev >= an->nevents)
		return 0;
	if (!an->all) {
		if (s->id >= an->want_cap) {
			size_t cap = an->want_cap ? an->want_cap : 1024;
			uint8_t *w;

			while (cap <= s->id)
				cap *= 2;
			if (!(w = realloc(an->want, cap)))
				return -ENOMEM;
			memset(w + an->want_cap, 0, cap - an->want_cap);
			an->want = w;
			an->want_cap = cap;
		}
		if (an->want[s->id] == WANT_UNKNOWN)
			an->want[s->id] = decide(an, s);
		if (an->want[s->id] != WANT_YES)
			return 0;
	}
	if (!(c = find_counts(an, s, f->addr)))
		return -ENOMEM;
	c[ev].samples++;
	c[ev].period += ts->period;
	return 0;
}

const struct sonde_tool sonde_annotate_tool = {
    .name = "annotate",
    .sample = on_sample,
};

struct symheat {
	const struct sonde_symbol *sym;
	uint64_t period;
};

static int by_sym_id(const void *a, const void *b)
{
	const struct symheat *x = a, *y = b;

	return (x->sym->id > y->sym->id) - (x->sym->id < y->sym->id);
}

static int by_heat(const void *a, const void *b)
{
	const struct symheat *x = a, *y = b;

	if (x->period != y->period)
		return x->period < y->period ? 1 : -1;
	return by_sym_id(a, b);
}

size_t sonde_annotate_hottest(const struct sonde_annotate *an, size_t ev,
			      const struct sonde_symbol **out, size_t max)
{
	struct symheat *v = malloc((an->nslots ? an->nslots : 1) * sizeof(*v));
	size_t n = 0, m = 0;

	if (!v)
		return 0;
	for (size_t i = 0; i < an->cap; i++)
		if (an->slots[i].sym)
			v[n++] = (struct symheat){
			    an->slots[i].sym,
			    an->counts[(size_t)an->slots[i].idx * an->nevents + ev].period};
	qsort(v, n, sizeof(*v), by_sym_id);
	for (size_t i = 0; i < n; i++) { /* one row per symbol, periods summed */
		if (m && v[m - 1].sym == v[i].sym)
			v[m - 1].period += v[i].period;
		else
			v[m++] = v[i];
	}
	qsort(v, m, sizeof(*v), by_heat);
	for (size_t i = 0; i < m && i < max; i++)
		out[i] = v[i].sym;
	free(v);
	return m;
}

/* ---- an annotation's arena: chunks that never move ---- */

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

static void *arena_alloc(struct sonde_annotation *a, size_t n)
{
	struct chunk *c = a->priv;

	n = (n + 15) & ~(size_t)15;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		if (!(c = malloc(sizeof(*c) + cap)))
			return NULL;
		c->next = a->priv;
		c->used = 0;
		c->cap = cap;
		a->priv = c;
	}
	c->used += n;
	return c->data + c->used - n;
}

static char *arena_strdup(struct sonde_annotation *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(a, n);

	return p ? memcpy(p, s, n) : NULL;
}

void sonde_annotation_free(struct sonde_annotation *a)
{
	struct chunk *c, *n;

	if (!a)
		return;
	for (size_t i = 0; i < a->nsources; i++) {
		free(a->sources[i].text);
		free(a->sources[i].starts);
	}
	for (c = a->priv; c; c = n) {
		n = c->next;
		free(c);
	}
	free(a->insns);
	free(a);
}

/* ---- building ---- */

struct sampled {
	uint64_t addr;
	const struct sonde_counts *counts;
};

static int by_addr(const void *a, const void *b)
{
	const struct sampled *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static int insn_by_addr(const void *a, const void *b)
{
	const struct sonde_annotate_insn *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Appends an instruction to a->insns (capacity *cap). */
static struct sonde_annotate_insn *push_insn(struct sonde_annotation *a, size_t *cap)
{
	if (a->ninsns == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct sonde_annotate_insn *v = realloc(a->insns, c * sizeof(*v));

		if (!v)
			return NULL;
		a->insns = v;
		*cap = c;
	}
	memset(&a->insns[a->ninsns], 0, sizeof(a->insns[0]));
	a->insns[a->ninsns].line = SIZE_MAX;
	return &a->insns[a->ninsns++];
}

/* Decodes the function's code into a->insns.  Missing code or decoder: disasm_err. */
static int disassemble(struct sonde_annotation *a, const struct sonde_annotate_build_opts *o,
		       size_t *cap)
{
	const struct sonde_symbol *sym = a->sym;
	size_t size = sym->size < MAX_CODE ? (size_t)sym->size : MAX_CODE;
	struct sonde_disasm *dis = NULL;
	uint8_t *code;
	char text[160];
	long got;
	int err = 0;

	if (!size || !(code = malloc(size)))
		return size ? -ENOMEM : 0;
	got = sonde_dso_read_bytes(sym->dso, sym->start, size, code);
	if (got < 0)
		a->disasm_err = (int)got;
	else if ((a->disasm_err = sonde_disasm_new(&dis, o->arch, true)) == -ENOMEM)
		err = -ENOMEM;
	for (size_t off = 0; dis && got > 0 && off < (size_t)got && !err;) {
		size_t n = sonde_disasm_one(dis, code + off, (size_t)got - off, sym->start + off,
					    text, sizeof(text));
		struct sonde_annotate_insn *in = push_insn(a, cap);

		if (!n) { /* data in code, or padding the decoder rejects */
			snprintf(text, sizeof(text), ".byte 0x%02x", code[off]);
			n = 1;
		}
		if (!in || !(in->text = arena_strdup(a, text))) {
			err = -ENOMEM;
			break;
		}
		in->addr = sym->start + off;
		in->size = (uint32_t)n;
		off += n;
	}
	sonde_disasm_free(dis);
	free(code);
	return err;
}

/* Gives each sampled address to its instruction, adding instructions without code. */
static int place_samples(struct sonde_annotation *a, struct sampled *s, size_t ns, size_t *cap,
			 struct sonde_counts *counts)
{
	size_t nev = a->nevents, n0 = a->ninsns, j = 0;

	/* addresses no decoded instruction holds */
	for (size_t i = 0; i < ns; i++) {
		while (j < n0 && a->insns[j].addr + a->insns[j].size <= s[i].addr)
			j++;
		if (j < n0 && a->insns[j].addr <= s[i].addr)
			continue;
		struct sonde_annotate_insn *in = push_insn(a, cap);

		if (!in)
			return -ENOMEM;
		in->addr = s[i].addr;
		in->text = "";
	}
	if (a->ninsns > n0)
		qsort(a->insns, a->ninsns, sizeof(*a->insns), insn_by_addr);
	for (size_t i = 0; i < a->ninsns; i++)
		a->insns[i].counts = &counts[i * nev];
	j = 0;
	for (size_t i = 0; i < ns; i++) {
		while (j + 1 < a->ninsns && a->insns[j + 1].addr <= s[i].addr)
			j++;
		for (size_t e = 0; e < nev; e++) {
			counts[j * nev + e].samples += s[i].counts[e].samples;
			counts[j * nev + e].period += s[i].counts[e].period;
		}
	}
	return 0;
}

/* Source line and innermost inlined function of every instruction. */
static void attach_lines(struct sonde_annotation *a)
{
	struct sonde_dso *d = a->sym->dso;
	struct sonde_srcline prev = {NULL, 0};
	const char *inl = NULL;

	for (size_t i = 0; i < a->ninsns; i++) {
		struct sonde_annotate_insn *in = &a->insns[i];
		bool sampled = false;

		if (sonde_dso_srcline(d, in->addr, &in->src) < 0)
			in->src = (struct sonde_srcline){NULL, 0};
		for (size_t e = 0; e < a->nevents; e++)
			sampled |= in->counts[e].samples > 0;
		/* dwarf_getscopes() is the costly lookup: ask again only where
		 * the line changes or samples landed */
		if (sampled || in->src.file != prev.file || in->src.line != prev.line) {
			const char *names[1];
			struct sonde_srcline calls[1];

			inl = sonde_dso_inlines(d, in->addr, names, calls, 1, NULL) > 0 ? names[0]
											: NULL;
		}
		in->inlined = inl;
		prev = in->src;
	}
}

struct linekey {
	size_t source;
	uint32_t line;
	size_t insn;
};

static int by_line(const void *a, const void *b)
{
	const struct linekey *x = a, *y = b;

	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (x->insn > y->insn) - (x->insn < y->insn);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct sonde_annotate_source *const *)a)->file,
		      (*(const struct sonde_annotate_source *const *)b)->file);
}

/* Sources (the file most of the function's own code is from first), lines. */
static int group_lines(struct sonde_annotation *a, struct sonde_counts **lcounts)
{
	size_t nev = a->nevents, nk = 0, nsrc = 0, best = 0, *own;
	struct linekey *k = malloc((a->ninsns ? a->ninsns : 1) * sizeof(*k));
	const char **files = malloc((a->ninsns ? a->ninsns : 1) * sizeof(*files));
	struct sonde_annotate_source *src, **order;

	own = calloc(a->ninsns ? a->ninsns : 1, sizeof(*own));
	if (!k || !files || !own) {
		free(k), free(files), free(own);
		return -ENOMEM;
	}
	/* distinct files (interned: pointers compare) */
	for (size_t i = 0; i < a->ninsns; i++) {
		const struct sonde_annotate_insn *in = &a->insns[i];
		size_t f;

		if (!in->src.file)
			continue;
		for (f = 0; f < nsrc && files[f] != in->src.file; f++)
			;
		if (f == nsrc)
			files[nsrc++] = in->src.file;
		own[f] += !in->inlined;
	}
	for (size_t f = 1; f < nsrc; f++)
		if (own[f] > own[best])
			best = f;
	src = arena_alloc(a, (nsrc ? nsrc : 1) * sizeof(*src));
	order = malloc((nsrc ? nsrc : 1) * sizeof(*order));
	if (!src || !order) {
		free(k), free(files), free(own), free(order);
		return -ENOMEM;
	}
	memset(src, 0, (nsrc ? nsrc : 1) * sizeof(*src));
	for (size_t f = 0; f < nsrc; f++)
		src[f].file = files[f];
	for (size_t i = 0; i < a->ninsns; i++) { /* comp dir of each file's first code */
		size_t f;

		if (!a->insns[i].src.file)
			continue;
		for (f = 0; f < nsrc && files[f] != a->insns[i].src.file; f++)
			;
		if (f < nsrc && !src[f].comp_dir && files[f][0] != '/')
			src[f].comp_dir = sonde_dso_comp_dir(a->sym->dso, a->insns[i].addr);
	}
	for (size_t f = 0; f < nsrc; f++)
		order[f] = &src[f];
	if (nsrc) { /* main file first, the rest by name */
		order[best] = order[0];
		order[0] = &src[best];
		qsort(order + 1, nsrc - 1, sizeof(*order), by_name);
	}
	a->sources = arena_alloc(a, (nsrc ? nsrc : 1) * sizeof(*a->sources));
	if (!a->sources) {
		free(k), free(files), free(own), free(order);
		return -ENOMEM;
	}
	for (size_t f = 0; f < nsrc; f++)
		a->sources[f] = *order[f];
	a->nsources = nsrc;
	for (size_t i = 0; i < a->ninsns; i++) {
		const struct sonde_annotate_insn *in = &a->insns[i];
		size_t f;

		if (!in->src.file)
			continue;
		for (f = 0; a->sources[f].file != in->src.file; f++)
			;
		k[nk++] = (struct linekey){f, in->src.line, i};
	}
	qsort(k, nk, sizeof(*k), by_line);
	a->lines = arena_alloc(a, (nk ? nk : 1) * sizeof(*a->lines));
	*lcounts = arena_alloc(a, (nk ? nk : 1) * nev * sizeof(**lcounts));
	if (!a->lines || !*lcounts) {
		free(k), free(files), free(own), free(order);
		return -ENOMEM;
	}
	memset(*lcounts, 0, (nk ? nk : 1) * nev * sizeof(**lcounts));
	for (size_t i = 0; i < nk; i++) {
		struct sonde_annotate_insn *in = &a->insns[k[i].insn];
		struct sonde_annotate_line *l;

		if (!a->nlines || a->lines[a->nlines - 1].source != k[i].source ||
		    a->lines[a->nlines - 1].src.line != k[i].line) {
			l = &a->lines[a->nlines];
			*l = (struct sonde_annotate_line){in->src, NULL, k[i].source,
							  &(*lcounts)[a->nlines * nev], false};
			a->nlines++;
		}
		l = &a->lines[a->nlines - 1];
		if (!l->inlined)
			l->inlined = in->inlined;
		in->line = a->nlines - 1;
		for (size_t e = 0; e < nev; e++) {
			(*lcounts)[in->line * nev + e].samples += in->counts[e].samples;
			(*lcounts)[in->line * nev + e].period += in->counts[e].period;
		}
	}
	free(k), free(files), free(own), free(order);
	return 0;
}

/* hot: the hottest row of some event, or HOT_SHARE of the function and
 * HOT_OF_HOTTEST of the hottest row. */
static void mark_hot(const struct sonde_annotation *a, const struct sonde_counts *rows,
		     size_t stride, size_t n, bool *hot, size_t hot_stride)
{
	for (size_t e = 0; e < a->nevents; e++) {
		uint64_t max = 0;

		for (size_t i = 0; i < n; i++)
			if (rows[i * stride + e].period > max)
				max = rows[i * stride + e].period;
		if (!max)
			continue;
		for (size_t i = 0; i < n; i++) {
			uint64_t p = rows[i * stride + e].period;

			if (p == max ||
			    (sonde_annotate_percent(a, &rows[i * stride], e) >= HOT_SHARE &&
			     (double)p >= HOT_OF_HOTTEST * (double)max))
				*(bool *)((char *)hot + i * hot_stride) = true;
		}
	}
}

/* ---- source files ---- */

static bool readable(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Tries @p: true when found (path set); else appends it to the looked-for list. */
static bool try_path(struct sonde_annotation *a, struct sonde_annotate_source *s, const char *p,
		     char *looked, size_t cap)
{
	size_t n = strlen(looked);

	if (readable(p)) {
		s->path = arena_strdup(a, p);
		return s->path != NULL;
	}
	if (!strstr(looked, p))
		snprintf(looked + n, cap - n, "%s%s", n ? ", " : "", p);
	return false;
}

static void find_source(struct sonde_annotation *a, struct sonde_annotate_source *s,
			const struct sonde_annotate_build_opts *o)
{
	char looked[4096] = "", p[4096], full[4096];
	const char *f = s->file;

	/* a relative name is relative to the compilation directory */
	if (f[0] != '/' && s->comp_dir) {
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", s->comp_dir, f) < sizeof(full))
			f = full;
	}

	/* --prefix-map OLD=NEW: the first OLD that is a whole-component prefix */
	for (size_t i = 0; i < o->nprefix_maps; i++) {
		const char *m = o->prefix_maps[i], *eq = strchr(m, '=');
		size_t n = eq ? (size_t)(eq - m) : 0;

		if (!eq || !n || strncmp(f, m, n) || (f[n] && f[n] != '/' && m[n - 1] != '/'))
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s%s", eq + 1, f + n) < sizeof(p) &&
		    try_path(a, s, p, looked, sizeof(looked)))
			return;
	}
	/* --source-dir DIR: DIR/FILE, then DIR with FILE's trailing components */
	for (size_t i = 0; i < o->nsource_dirs; i++) {
		const char *d = o->source_dirs[i];

		for (const char *t = f; t; t = strchr(t + 1, '/')) {
			while (*t == '/')
				t++;
			if (!*t)
				break;
			if (!strncmp(t, "../", 3) || !strncmp(t, "./", 2))
				continue;
			if ((size_t)snprintf(p, sizeof(p), "%s/%s", d, t) < sizeof(p) &&
			    try_path(a, s, p, looked, sizeof(looked)))
				return;
		}
	}
	if (try_path(a, s, f, looked, sizeof(looked)))
		return;
	s->looked_for = arena_strdup(a, looked);
}

static void read_source(struct sonde_annotate_source *s)
{
	FILE *fp = fopen(s->path, "rb");
	size_t len = 0, cap = 0, n;
	char *buf = NULL;

	if (!fp)
		return;
	for (;;) {
		if (cap - len < 65536) {
			char *b;

			cap = cap ? cap * 2 : 65536;
			if (cap > MAX_SOURCE || !(b = realloc(buf, cap + 1)))
				break;
			buf = b;
		}
		n = fread(buf + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	fclose(fp);
	if (!buf)
		return;
	buf[len] = 0;
	n = 1;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	if (!(s->starts = malloc((n + 1) * sizeof(*s->starts)))) {
		free(buf);
		return;
	}
	s->text = buf;
	s->nlines = 0;
	s->starts[0] = 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n')
			s->starts[++s->nlines] = i + 1;
	if (len && buf[len - 1] != '\n')
		s->starts[++s->nlines] = len + 1; /* a last line without newline */
}

const char *sonde_annotate_source_line(const struct sonde_annotate_source *s, uint32_t line,
				       size_t *len)
{
	if (!s->text || line == 0 || line > s->nlines)
		return NULL;
	*len = s->starts[line] - s->starts[line - 1] - 1;
	return s->text + s->starts[line - 1];
}

double sonde_annotate_percent(const struct sonde_annotation *a, const struct sonde_counts *c,
			      size_t ev)
{
	uint64_t t = a->total[ev].period;

	return t ? 100.0 * (double)c[ev].period / (double)t : 0.0;
}

int sonde_annotation_build(struct sonde_annotation **out, const struct sonde_annotate *an,
			   const struct sonde_symbol *sym,
			   const struct sonde_annotate_build_opts *o)
{
	struct sonde_annotation *a = calloc(1, sizeof(*a));
	size_t nev = an->nevents, ns = 0, cap = 0;
	struct sonde_counts *total, *icounts = NULL, *lcounts = NULL;
	struct sampled *s = NULL;
	int err = -ENOMEM;

	if (!a)
		return -ENOMEM;
	a->sym = sym;
	a->nevents = nev;
	if (!(total = arena_alloc(a, nev * sizeof(*total))))
		goto fail;
	memset(total, 0, nev * sizeof(*total));
	a->total = total;
	/* the symbol's sampled addresses, in order */
	if (!(s = malloc((an->nslots ? an->nslots : 1) * sizeof(*s))))
		goto fail;
	for (size_t i = 0; i < an->cap; i++)
		if (an->slots[i].sym == sym)
			s[ns++] = (struct sampled){an->slots[i].addr,
						   &an->counts[(size_t)an->slots[i].idx * nev]};
	qsort(s, ns, sizeof(*s), by_addr);
	for (size_t i = 0; i < ns; i++)
		for (size_t e = 0; e < nev; e++) {
			total[e].samples += s[i].counts[e].samples;
			total[e].period += s[i].counts[e].period;
		}
	if ((err = disassemble(a, o, &cap)))
		goto fail;
	err = -ENOMEM;
	/* at most one extra instruction per sampled address */
	if (!(icounts = arena_alloc(a, (a->ninsns + ns + 1) * nev * sizeof(*icounts))))
		goto fail;
	memset(icounts, 0, (a->ninsns + ns + 1) * nev * sizeof(*icounts));
	if ((err = place_samples(a, s, ns, &cap, icounts)))
		goto fail;
	attach_lines(a);
	if ((err = group_lines(a, &lcounts)))
		goto fail;
	if (a->ninsns)
		mark_hot(a, icounts, nev, a->ninsns, &a->insns[0].hot, sizeof(*a->insns));
	if (a->nlines)
		mark_hot(a, lcounts, nev, a->nlines, &a->lines[0].hot, sizeof(*a->lines));
	for (size_t f = 0; f < a->nsources && !o->no_source; f++) {
		find_source(a, &a->sources[f], o);
		if (a->sources[f].path)
			read_source(&a->sources[f]);
	}
	free(s);
	*out = a;
	return 0;
fail:
	free(s);
	sonde_annotation_free(a);
	return err;
}
