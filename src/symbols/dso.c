// SPDX-License-Identifier: MIT
/*
 * One object of a report: its file, opened through libdwfl on first use,
 * and the lookups the report makes a million times.
 *
 * Each object gets its own Dwfl (user objects all live at ELF address 0,
 * so one shared Dwfl would overlap them).  On first use (sonde_dso_load), the
 * file is found (debuginfo.c, kernel.c, kmodule.c) and its function
 * symbols are copied once into a sorted array (symtab.c).  Then:
 *
 *   find_symbol: a 4096-entry open-addressing cache (address -> symbol,
 *     misses cached too) in front of a binary search; no allocation.
 *   srcline:     dwfl_module_getsrc(), the result cached the same way.
 *   inlines:     dwarf_getscopes() on the CU DIE; the frames of each
 *     address are appended once to a per-object pool and the cache
 *     keeps (first, count) into it.
 *
 * "Object address" is what the symbols store; libdwfl is asked at object
 * address - adjust (adjust is the KASLR offset for vmlinux, else 0).
 */
#include "symbols_internal.h"

#include <sonde/log.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_BITS 12
#define CACHE_SIZE (1u << CACHE_BITS)
#define CACHE_PROBES 4

/* The cached "no symbol here". */
static const struct sonde_symbol dso_nosym;

static inline size_t cache_slot(uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS));
}

enum sonde_dso_kind sonde_dso_kind(const struct sonde_dso *d)
{
	return d->kind;
}

const char *sonde_dso_short_name(const struct sonde_dso *d)
{
	return d->short_name;
}

const char *sonde_dso_long_name(const struct sonde_dso *d)
{
	return d->long_name;
}

const uint8_t *sonde_dso_build_id(const struct sonde_dso *d, size_t *len)
{
	*len = d->build_id_len;
	return d->build_id_len ? d->build_id : NULL;
}

uint32_t sonde_dso_id(const struct sonde_dso *d)
{
	return d->id;
}

const char *sonde_dso_search_log(const struct sonde_dso *d)
{
	if (!d->loaded || d->nr_syms)
		return NULL;
	return d->log.p ? d->log.p : "not searched";
}

bool sonde_dso_has_symbols(const struct sonde_dso *d)
{
	return d->nr_syms > 0;
}

const char *sonde_dso_object_file(struct sonde_dso *d)
{
	sonde_dso_load(d);
	return d->object_file;
}

const char *sonde_dso_symbol_file(const struct sonde_dso *d)
{
	return d->symbol_file;
}

bool sonde_dso_load(struct sonde_dso *d)
{
	size_t i;

	if (d->loaded)
		return d->nr_syms > 0;
	d->loaded = true;
	d->ko_fd = -1;
	d->image_fd = -1;
	switch (d->kind) {
	case SONDE_DSO_USER:
		sonde_debuginfo_load_user(d);
		break;
	case SONDE_DSO_KERNEL:
		sonde_kernel_load(d);
		break;
	case SONDE_DSO_MODULE:
		sonde_kmodule_load(d);
		break;
	case SONDE_DSO_ANON:
		if (!strcmp(d->long_name, "[vdso]"))
			sonde_debuginfo_load_vdso(d);
		else
			sonde_slog_add(&d->log, "%s: no file behind this mapping", d->long_name);
		break;
	}
	/* SONDE_DEBUG / -v: which file each object's symbols came from */
	if (d->nr_syms)
		sonde_debug("%s: %zu symbols from %s", d->long_name, d->nr_syms,
			    d->symbol_file	  ? d->symbol_file
			    : d->st->ksyms_source ? d->st->ksyms_source
						  : "kallsyms");
	else
		sonde_debug("%s: no symbols (%s)", d->long_name, d->log.p ? d->log.p : "");
	if (!d->nr_syms)
		return false;
	/* caches: allocation failure only costs speed */
	d->symcache = calloc(CACHE_SIZE, sizeof(*d->symcache));
	if (d->mod) {
		d->linecache = calloc(CACHE_SIZE, sizeof(*d->linecache));
		d->inlcache = calloc(CACHE_SIZE, sizeof(*d->inlcache));
		for (i = 0; d->inlcache && i < CACHE_SIZE; i++)
			d->inlcache[i].n = UINT32_MAX;
	}
	return true;
}

static const struct sonde_symbol *bsearch_sym(const struct sonde_dso *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nr_syms;
	const struct sonde_symbol *s;

	while (lo < hi) { /* first symbol starting after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (d->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &d->syms[lo - 1];
	return addr - s->start < s->size ? s : NULL;
}

const struct sonde_symbol *sonde_dso_find_symbol(struct sonde_dso *d, uint64_t addr)
{
	const struct sonde_symbol *s;
	struct symcache_ent *c;
	size_t h, i;

	if (!d || !sonde_dso_load(d))
		return NULL;
	if (!d->symcache)
		return bsearch_sym(d, addr);
	h = cache_slot(addr);
	for (i = 0; i < CACHE_PROBES; i++) {
		c = &d->symcache[(h + i) & (CACHE_SIZE - 1)];
		if (!c->sym)
			break;
		if (c->addr == addr)
			return c->sym == &dso_nosym ? NULL : c->sym;
	}
	if (i == CACHE_PROBES)
		c = &d->symcache[h]; /* full run: evict the home slot */
	s = bsearch_sym(d, addr);
	c->addr = addr;
	c->sym = s ? s : &dso_nosym;
	return s;
}

int sonde_dso_srcline(struct sonde_dso *d, uint64_t addr, struct sonde_srcline *out)
{
	struct linecache_ent *c = NULL;
	const char *file = NULL;
	Dwfl_Line *line;
	int lineno = 0;
	size_t h, i;

	if (!d || !out)
		return -EINVAL;
	if (!sonde_dso_load(d) || !d->mod)
		return -ENOENT;
	if (d->linecache) {
		h = cache_slot(addr);
		for (i = 0; i < CACHE_PROBES; i++) {
			c = &d->linecache[(h + i) & (CACHE_SIZE - 1)];
			if (!c->file)
				break;
			if (c->addr == addr) {
				if (!c->line)
					return -ENOENT;
				out->file = c->file;
				out->line = c->line;
				return 0;
			}
		}
		if (i == CACHE_PROBES)
			c = &d->linecache[h];
	}
	line = dwfl_module_getsrc(d->mod, addr - (uint64_t)d->adjust);
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (file)
		file = sonde_strpool_intern(&d->st->pool, file);
	if (!file || lineno <= 0)
		file = NULL, lineno = 0;
	if (c) {
		c->addr = addr;
		c->file = file ? file : "";
		c->line = (uint32_t)lineno;
	}
	if (!file)
		return -ENOENT;
	out->file = file;
	out->line = (uint32_t)lineno;
	return 0;
}

const char *sonde_dso_comp_dir(struct sonde_dso *d, uint64_t addr)
{
	Dwfl_Line *line;
	const char *dir;

	if (!d || !sonde_dso_load(d) || !d->mod)
		return NULL;
	line = dwfl_module_getsrc(d->mod, addr - (uint64_t)d->adjust);
	dir = line ? dwfl_line_comp_dir(line) : NULL;
	return dir ? sonde_strpool_intern(&d->st->pool, dir) : NULL;
}

static int inl_push(struct sonde_dso *d, const char *name, const char *file, uint32_t line)
{
	if (d->nr_inl == d->cap_inl) {
		size_t cap = d->cap_inl ? d->cap_inl * 2 : 256;
		struct inlrec *v;

		if (cap > UINT32_MAX / 2) /* ids are 32-bit in the cache */
			return -ENOMEM;
		v = realloc(d->inl, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->inl = v;
		d->cap_inl = cap;
	}
	d->inl[d->nr_inl++] = (struct inlrec){name, file, line};
	return 0;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_name, &at))
		n = dwarf_formstring(&at);
	return n ? n : "??";
}

/* A function's name as addr2line and perf name it: the linkage name
 * (demangled as symbols are), else the plain name. */
static const char *function_name(struct sonde_dso *d, Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at))
		n = dwarf_formstring(&at);
	if (!n)
		return sonde_strpool_intern(&d->st->pool, die_name(die));
	return sonde_strpool_intern(&d->st->pool, sonde_symbols_demangle(d->st, n));
}

/*
 * Appends the inlined frames at @addr to d->inl and sets *@outer to the
 * function they are inlined into (NULL without DWARF there).
 * Return: count or -ENOMEM.
 */
static int inl_compute(struct sonde_dso *d, uint64_t addr, const char **outer)
{
	Dwarf_Addr bias, a = addr - (uint64_t)d->adjust;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, a, &bias), *scopes = NULL, inner;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int n, i, count = 0;

	*outer = NULL;
	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, a - bias, &scopes);
	if (n <= 0)
		return 0;
	/* After an inlined instance dwarf_getscopes lists the scopes of its
	 * abstract definition; the DIEs holding the instance itself (nested
	 * inlines, then the function) are its parents in the tree, as
	 * eu-addr2line -i walks them. */
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	n = dwarf_getscopes_die(&inner, &scopes);
	if (n <= 0)
		return 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	for (i = 0; i < n; i++) {
		Dwarf_Attribute at;
		Dwarf_Word fidx = 0, lno = 0;
		const char *file = NULL;

		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram && !*outer)
			*outer = function_name(d, &scopes[i]);
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		if (dwarf_attr(&scopes[i], DW_AT_call_file, &at) && !dwarf_formudata(&at, &fidx) &&
		    files)
			file = dwarf_filesrc(files, fidx, NULL, NULL);
		if (dwarf_attr(&scopes[i], DW_AT_call_line, &at))
			dwarf_formudata(&at, &lno);
		if (inl_push(d, sonde_strpool_intern(&d->st->pool, die_name(&scopes[i])),
			     sonde_strpool_intern(&d->st->pool, file ? file : "??"),
			     (uint32_t)lno) < 0) {
			free(scopes);
			return -ENOMEM;
		}
		count++;
	}
	free(scopes);
	return count;
}

/* The inline cache's entry for @addr, computed when missing (into *@tmp
 * when the object has no cache).  Return: the entry, or NULL (none or an
 * error, in *@err). */
static const struct inlcache_ent *inl_lookup(struct sonde_dso *d, uint64_t addr,
					     struct inlcache_ent *tmp, int *err)
{
	struct inlcache_ent *c = NULL;
	size_t h, i;
	int n;

	*err = 0;
	if (d->st->opts.no_inline || !sonde_dso_load(d) || !d->mod)
		return NULL;
	if (d->inlcache) {
		h = cache_slot(addr);
		for (i = 0; i < CACHE_PROBES; i++) {
			c = &d->inlcache[(h + i) & (CACHE_SIZE - 1)];
			if (c->n == UINT32_MAX || c->addr == addr)
				break;
		}
		if (i == CACHE_PROBES)
			c = &d->inlcache[h];
		if (c->n != UINT32_MAX && c->addr == addr)
			return c;
	}
	tmp->first = (uint32_t)d->nr_inl;
	n = inl_compute(d, addr, &tmp->outer);
	if (n < 0) {
		d->nr_inl = tmp->first;
		*err = n;
		return NULL;
	}
	tmp->n = (uint32_t)n;
	tmp->addr = addr;
	if (!c)
		return tmp; /* no cache: the pool still holds the frames */
	*c = *tmp;
	return c;
}

int sonde_dso_inlines(struct sonde_dso *d, uint64_t addr, const char **names,
		      struct sonde_srcline *calls, size_t max, const char **outer)
{
	struct inlcache_ent tmp;
	const struct inlcache_ent *c;
	size_t i;
	int err;

	if (outer)
		*outer = NULL;
	if (!d)
		return -EINVAL;
	if (!(c = inl_lookup(d, addr, &tmp, &err)))
		return err;
	if (outer)
		*outer = c->outer;
	for (i = 0; i < c->n && i < max; i++) {
		const struct inlrec *r = &d->inl[c->first + i];

		if (names)
			names[i] = r->name;
		if (calls) {
			calls[i].file = r->file;
			calls[i].line = r->line;
		}
	}
	return (int)(c->n < max ? c->n : max);
}

uint64_t sonde_dso_map_ip(struct sonde_dso *d, uint64_t ip, uint64_t map_start, uint64_t map_pgoff)
{
	uint64_t off = ip - map_start + map_pgoff;
	size_t i;

	if (!d)
		return off;
	if (d->kind == SONDE_DSO_KERNEL || d->kind == SONDE_DSO_MODULE)
		return ip;
	if (d->kind == SONDE_DSO_USER || !strcmp(d->long_name, "[vdso]"))
		sonde_dso_load(d);
	for (i = 0; i < d->nr_segs; i++) {
		const struct load_seg *s = &d->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz)
			return off - s->offset + s->vaddr;
	}
	return off;
}

/* Did the capture place this section of a .ko (libdwfl's view of it)? */
static bool kmod_section_placed(struct sonde_dso *d, Elf_Scn *scn)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(d->mod, &bias);
	size_t shstr;
	GElf_Shdr sh;
	const char *name;

	if (!elf || elf_getshdrstrndx(elf, &shstr) < 0 || !gelf_getshdr(scn, &sh) ||
	    !(name = elf_strptr(elf, shstr, sh.sh_name)))
		return false;
	for (size_t i = 0; i < d->kmod->nr_secs; i++)
		if (!strcmp(d->kmod->secs[i].name, name))
			return true;
	return false;
}

long sonde_dso_read_bytes(struct sonde_dso *d, uint64_t addr, size_t len, void *buf)
{
	Dwarf_Addr off, bias;
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;
	size_t n;

	if (!d || !buf)
		return -EINVAL;
	if (!sonde_dso_load(d) || !d->mod)
		return -ENOENT;
	/* libdwfl finds the section in the module's main file (for a .ko,
	 * at the addresses its section_address callback gave). */
	off = addr - (uint64_t)d->adjust;
	scn = dwfl_module_address_section(d->mod, &off, &bias);
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    !(sh.sh_flags & SHF_ALLOC))
		return -ENOENT;
	if (d->kmod && !kmod_section_placed(d, scn))
		return -ENOENT; /* libdwfl leaves unplaced sections at 0 */
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || off >= data->d_size)
		return -ENOENT;
	n = data->d_size - off < len ? data->d_size - off : len;
	memcpy(buf, (const char *)data->d_buf + off, n);
	return (long)n;
}
