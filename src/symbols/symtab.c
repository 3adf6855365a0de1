// SPDX-License-Identifier: MIT
/*
 * The symbol world of one report: options, the registry of objects and
 * the dense ids of every symbol handed out.
 *
 * Objects are keyed by build id where one is known (from the MMAP2 record
 * or the capture's build-id table, buildids.c), else by path, device and
 * inode, in an open-addressing table: one file is one object however its
 * mappings were recorded (synthesized from /proc or by the kernel), and a
 * capture's thousands of MMAP records find their object without a scan;
 * nothing is opened until the first lookup (dso.c).  When an object is
 * opened, its function symbols are gathered into a struct rawsyms, then
 * sonde_symtab_install_symbols() sorts them, keeps the best-named alias per
 * address, sizes zero-size symbols up to the next one, and gives each an
 * id: lookups are then a binary search over one array per object.  Which
 * alias names an address follows perf's rule, so both tools show one name.
 *
 * The option strings are copied (the kallsyms and modules texts stay
 * borrowed, as the header says), so the caller's argv may go away.
 */
#include "symbols_internal.h"

#include <sonde/hash.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dup_opt(struct sonde_symtab *st, const char *s, bool *fail)
{
	const char *c;

	if (!s)
		return NULL;
	c = sonde_strpool_add(&st->pool, s, strlen(s));
	if (!c)
		*fail = true;
	return c;
}

static const char *const *dup_vec(struct sonde_symtab *st, const char *const *v, size_t n,
				  bool *fail)
{
	const char **c;
	size_t i;

	if (!n)
		return NULL;
	c = calloc(n, sizeof(*c));
	if (!c) {
		*fail = true;
		return NULL;
	}
	for (i = 0; i < n; i++)
		c[i] = dup_opt(st, v[i], fail);
	return c;
}

int sonde_symtab_new(struct sonde_symtab **out, const struct sonde_symtab_opts *opts)
{
	struct sonde_symtab *st = calloc(1, sizeof(*st));
	bool fail = false;

	*out = NULL;
	if (!st)
		return -ENOMEM;
	if (opts)
		st->opts = *opts;
	st->opts.symfs = dup_opt(st, st->opts.symfs, &fail);
	st->opts.vmlinux = dup_opt(st, st->opts.vmlinux, &fail);
	st->opts.modules_dir = dup_opt(st, st->opts.modules_dir, &fail);
	st->opts.osrelease = dup_opt(st, st->opts.osrelease, &fail);
	st->opts.buildid_dir = dup_opt(st, st->opts.buildid_dir, &fail);
	st->opts.kallsyms_cache_dir = dup_opt(st, st->opts.kallsyms_cache_dir, &fail);
	st->opts.debug_dirs = dup_vec(st, st->opts.debug_dirs, st->opts.nr_debug_dirs, &fail);
	st->opts.images = dup_vec(st, st->opts.images, st->opts.nr_images, &fail);
	if (!st->opts.debug_dirs)
		st->opts.nr_debug_dirs = 0;
	if (!st->opts.images)
		st->opts.nr_images = 0;
	if (st->opts.symfs && !st->opts.symfs[0])
		st->opts.symfs = NULL;
	if (fail) {
		sonde_symtab_free(st);
		return -ENOMEM;
	}
	*out = st;
	return 0;
}

static void dso_free(struct sonde_dso *d)
{
	if (d->dwfl)
		dwfl_end(d->dwfl);
	if (d->loaded && d->image_fd >= 0)
		close(d->image_fd);
	free(d->syms);
	free(d->symcache);
	free(d->linecache);
	free(d->inlcache);
	free(d->inl);
	free(d->segs);
	sonde_slog_fini(&d->log);
	free(d);
}

void sonde_symtab_free(struct sonde_symtab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nr_dsos; i++)
		dso_free(st->dsos[i]);
	free(st->dsos);
	free(st->dso_hash);
	free(st->by_id);
	free(st->hbids);
	free(st->ksyms);
	for (i = 0; i < st->nr_kmods; i++)
		free(st->kmods[i].secs);
	free(st->kmods);
	free((void *)st->opts.debug_dirs);
	free((void *)st->opts.images);
	sonde_strpool_fini(&st->pool);
	free(st);
}

/*
 * An object's identity (perf's files name objects by path and the kernel
 * identifies the file behind a mapping by dev/inode or by build id): the
 * build id when one is known, else the path with the file's dev, inode
 * and generation (all zero for MMAP records, which carry none).
 */
struct dso_ident {
	const char *path;
	const uint8_t *bid;
	size_t bid_len;
	uint32_t maj, min;
	uint64_t ino, ino_gen;
};

static uint64_t dso_key(const struct dso_ident *k)
{
	uint64_t h = SONDE_FNV1A_INIT;

	if (k->bid_len)
		return sonde_fnv1a(h, k->bid, k->bid_len);
	h = sonde_fnv1a(h, k->path, strlen(k->path));
	h = sonde_fnv1a(h, &k->maj, sizeof(k->maj));
	h = sonde_fnv1a(h, &k->min, sizeof(k->min));
	h = sonde_fnv1a(h, &k->ino, sizeof(k->ino));
	return sonde_fnv1a(h, &k->ino_gen, sizeof(k->ino_gen));
}

static struct dso_ident ident_of(const struct sonde_dso *d)
{
	return (struct dso_ident){d->long_name, d->build_id, d->build_id_len, d->maj,
				  d->min,	d->ino,	     d->ino_gen};
}

static bool dso_is(const struct sonde_dso *d, const struct dso_ident *k)
{
	if (d->build_id_len != k->bid_len)
		return false;
	if (k->bid_len)
		return !memcmp(d->build_id, k->bid, k->bid_len);
	return d->maj == k->maj && d->min == k->min && d->ino == k->ino &&
	       d->ino_gen == k->ino_gen && !strcmp(d->long_name, k->path);
}

static int hash_grow(struct sonde_symtab *st)
{
	size_t cap = st->dso_hash_cap ? st->dso_hash_cap * 2 : 64, i, j;
	struct sonde_dso **v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < st->nr_dsos; i++) {
		struct dso_ident k = ident_of(st->dsos[i]);

		j = dso_key(&k) & (cap - 1);
		while (v[j])
			j = (j + 1) & (cap - 1);
		v[j] = st->dsos[i];
	}
	free(st->dso_hash);
	st->dso_hash = v;
	st->dso_hash_cap = cap;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* What kind of object a capture path names (perf's conventions). */
static enum sonde_dso_kind kind_of(const char *path)
{
	size_t n = strlen(path);

	if (!strncmp(path, "[kernel.kallsyms]", 17))
		return SONDE_DSO_KERNEL;
	if (!strcmp(path, "[vdso]") || !strcmp(path, "[vsyscall]") || !strcmp(path, "[heap]") ||
	    !strcmp(path, "[stack]") || !strncmp(path, "[anon", 5) || !strncmp(path, "[guest", 6))
		return SONDE_DSO_ANON;
	if (path[0] == '[' && n > 2 && path[n - 1] == ']')
		return SONDE_DSO_MODULE;
	if (ends_with(path, ".ko") || ends_with(path, ".ko.xz") || ends_with(path, ".ko.zst") ||
	    ends_with(path, ".ko.gz"))
		return SONDE_DSO_MODULE;
	if (path[0] != '/' || !strncmp(path, "//anon", 6) || !strncmp(path, "/memfd:", 7) ||
	    !strncmp(path, "/dev/", 5) || !strncmp(path, "/SYSV", 5))
		return SONDE_DSO_ANON;
	return SONDE_DSO_USER;
}

/* "[ext4]" -> "ext4"; ".../ext4-foo.ko.xz" -> "ext4_foo" (the kernel's spelling). */
static void module_name(const char *path, char *out, size_t outlen)
{
	const char *base = strrchr(path, '/'), *end;
	size_t n, i;

	base = base ? base + 1 : path;
	if (base[0] == '[') {
		base++;
		end = strchr(base, ']');
	} else {
		end = strstr(base, ".ko");
	}
	n = end ? (size_t)(end - base) : strlen(base);
	if (n >= outlen)
		n = outlen - 1;
	for (i = 0; i < n; i++)
		out[i] = base[i] == '-' ? '_' : base[i];
	out[n] = '\0';
}

struct sonde_dso *sonde_symtab_findnew_dso(struct sonde_symtab *st, const char *path,
					   const uint8_t *build_id, size_t build_id_len)
{
	struct sonde_dso_id id = {.build_id = build_id, .build_id_len = build_id_len};

	return sonde_symtab_findnew_dso_id(st, path, &id);
}

struct sonde_dso *sonde_symtab_findnew_dso_id(struct sonde_symtab *st, const char *path,
					      const struct sonde_dso_id *id)
{
	struct dso_ident k = {.path = path};
	struct sonde_dso *d;
	const char *slash;
	size_t j;

	if (!st || !path)
		return NULL;
	if (id && id->build_id && id->build_id_len) {
		k.bid = id->build_id;
		k.bid_len =
		    id->build_id_len > SONDE_BUILD_ID_MAX ? SONDE_BUILD_ID_MAX : id->build_id_len;
	} else {
		/* The capture's build-id table names the file's id by path. */
		k.bid = sonde_symtab_header_build_id(st, path, &k.bid_len);
	}
	if (!k.bid_len && id) {
		k.maj = id->maj;
		k.min = id->min;
		k.ino = id->ino;
		k.ino_gen = id->ino_generation;
	}
	if (st->dso_hash_cap) {
		j = dso_key(&k) & (st->dso_hash_cap - 1);
		for (; st->dso_hash[j]; j = (j + 1) & (st->dso_hash_cap - 1))
			if (dso_is(st->dso_hash[j], &k))
				return st->dso_hash[j];
	}
	if ((st->nr_dsos + 1) * 2 > st->dso_hash_cap && hash_grow(st) < 0)
		return NULL;
	if (st->nr_dsos == st->cap_dsos) {
		size_t cap = st->cap_dsos ? st->cap_dsos * 2 : 32;
		struct sonde_dso **v = realloc(st->dsos, cap * sizeof(*v));

		if (!v)
			return NULL;
		st->dsos = v;
		st->cap_dsos = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->st = st;
	d->long_name = sonde_strpool_intern(&st->pool, path);
	if (!d->long_name) {
		free(d);
		return NULL;
	}
	d->kind = kind_of(path);
	slash = strrchr(path, '/');
	if (d->kind == SONDE_DSO_KERNEL) {
		d->short_name = sonde_strpool_intern(&st->pool, "[kernel.kallsyms]");
	} else if (d->kind == SONDE_DSO_MODULE) {
		char br[sizeof(d->modname) + 2];

		module_name(path, d->modname, sizeof(d->modname));
		snprintf(br, sizeof(br), "[%s]", d->modname);
		d->short_name = sonde_strpool_intern(&st->pool, br);
	} else {
		d->short_name = slash && slash[1] ? slash + 1 - path + d->long_name : d->long_name;
	}
	if (!d->short_name) {
		free(d);
		return NULL;
	}
	if (k.bid_len)
		memcpy(d->build_id, k.bid, k.bid_len);
	d->build_id_len = k.bid_len;
	d->maj = k.maj;
	d->min = k.min;
	d->ino = k.ino;
	d->ino_gen = k.ino_gen;
	d->id = (uint32_t)st->nr_dsos;
	st->dsos[st->nr_dsos++] = d;
	k = ident_of(d);
	j = dso_key(&k) & (st->dso_hash_cap - 1);
	while (st->dso_hash[j])
		j = (j + 1) & (st->dso_hash_cap - 1);
	st->dso_hash[j] = d;
	return d;
}

size_t sonde_symtab_nr_dsos(const struct sonde_symtab *st)
{
	return st->nr_dsos;
}

struct sonde_dso *sonde_symtab_dso(const struct sonde_symtab *st, uint32_t id)
{
	return id < st->nr_dsos ? st->dsos[id] : NULL;
}

size_t sonde_symtab_nr_symbols(const struct sonde_symtab *st)
{
	return st->nr_syms;
}

const struct sonde_symbol *sonde_symtab_symbol(const struct sonde_symtab *st, uint32_t id)
{
	return id < st->nr_syms ? st->by_id[id] : NULL;
}

int sonde_rawsyms_add(struct rawsyms *r, uint64_t start, uint64_t size, const char *name,
		      uint8_t binding)
{
	if (!name)
		return -ENOMEM;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct rawsym *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n] = (struct rawsym){start, size, name, name, (uint32_t)r->n, binding};
	r->n++;
	return 0;
}

/* Address order; aliases in the order they came (perf's tree keeps them so). */
static int by_start_seq(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * perf's choose_best_symbol() (tools/perf/util/symbol.c, 6.1): true when
 * @b beats @a, the current winner.  In order: a symbol with a length
 * beats one without, non-weak beats weak, global beats the rest, fewer
 * leading underscores win, then the longer name; a full tie keeps @a.
 * "Length" is the size after perf's symbols__fixup_end(): a size-0
 * symbol reaches the next symbol's start, so it stays empty when an
 * alias follows it (@a_len/@b_len say whether each has one).
 */
static bool beats(const struct rawsym *a, bool a_len, const struct rawsym *b, bool b_len)
{
	size_t na, nb;
	int ua, ub;

	if (a_len != b_len)
		return b_len;
	if ((a->binding == STB_WEAK) != (b->binding == STB_WEAK))
		return a->binding == STB_WEAK;
	if ((a->binding == STB_GLOBAL) != (b->binding == STB_GLOBAL))
		return b->binding == STB_GLOBAL;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ub < ua;
	na = strlen(a->name);
	nb = strlen(b->name);
	return nb > na;
}

/*
 * Keeps one symbol per start in the sorted @v[0..n): perf's
 * symbols__fixup_duplicate(), which walks each run of aliases in order
 * and keeps the winner of each comparison.  Return: the new count.
 */
static size_t settle_aliases(struct rawsym *v, size_t n)
{
	size_t out = 0, i = 0;

	while (i < n) {
		size_t j = i + 1, best = i;

		while (j < n && v[j].start == v[i].start)
			j++;
		/* only the last of a run can reach past the shared start */
		for (size_t k = i + 1; k < j; k++)
			if (beats(&v[best], v[best].size || best == j - 1, &v[k],
				  v[k].size || k == j - 1))
				best = k;
		v[out++] = v[best];
		i = j;
	}
	return out;
}

int sonde_symtab_install_symbols(struct sonde_symtab *st, struct sonde_dso *d, struct rawsyms *r,
				 int64_t adjust, uint64_t last_end)
{
	size_t i, n;

	/* kallsyms and most symbol tables come in address order: sort only when not. */
	for (i = 1; i < r->n && r->v[i - 1].start <= r->v[i].start; i++)
		;
	if (i < r->n)
		qsort(r->v, r->n, sizeof(*r->v), by_start_seq);
	/* perf demangles user-space names as it loads them, before it picks
	 * among aliases (its length rule counts the demangled name) */
	if (d->kind == SONDE_DSO_USER)
		for (i = 0; i < r->n; i++)
			r->v[i].name = sonde_symbols_demangle(st, r->v[i].mangled);
	n = settle_aliases(r->v, r->n);
	if (n && st->nr_syms + n > st->cap_syms) {
		size_t cap = st->cap_syms ? st->cap_syms : 1024;
		const struct sonde_symbol **v;

		while (cap < st->nr_syms + n)
			cap *= 2;
		v = realloc(st->by_id, cap * sizeof(*v));
		if (!v)
			goto nomem;
		st->by_id = v;
		st->cap_syms = cap;
	}
	d->syms = n ? calloc(n, sizeof(*d->syms)) : NULL;
	if (n && !d->syms)
		goto nomem;
	for (i = 0; i < n; i++) {
		struct sonde_symbol *s = &d->syms[i];
		uint64_t next = i + 1 < n ? r->v[i + 1].start : last_end;

		s->name = r->v[i].name;
		s->mangled = r->v[i].mangled;
		s->start = r->v[i].start + (uint64_t)adjust;
		s->size = r->v[i].size;
		if (!s->size && next > r->v[i].start)
			s->size = next - r->v[i].start;
		s->dso = d;
		s->id = (uint32_t)st->nr_syms;
		st->by_id[st->nr_syms++] = s;
	}
	d->nr_syms = n;
	free(r->v);
	memset(r, 0, sizeof(*r));
	return 0;
nomem:
	free(r->v);
	memset(r, 0, sizeof(*r));
	return -ENOMEM;
}
