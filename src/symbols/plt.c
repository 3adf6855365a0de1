// SPDX-License-Identifier: MIT
/*
 * Names for the PLT: a call into a shared library goes through a stub in
 * the caller's .plt (or, with IBT, .plt.sec), which no symbol table
 * covers, so samples there would land in whatever precedes it (_init).
 * perf synthesizes "target@plt" symbols (dso__synthesize_plt_symbols in
 * tools/perf/util/symbol-elf.c); this does the same from the same data:
 *
 *   entry i of the PLT jumps through the GOT slot of relocation i of
 *   .rela.plt (.rel.plt), whose symbol in .dynsym names the target.
 *
 * Layout, as perf reads it: x86 entries are the section's entry size (or
 * 16/8 by alignment) with a header of one entry; a lazy .plt starts with
 * the header (named ".plt"), unless it holds exactly one entry per
 * relocation; with .plt.sec the entries live there and ".plt" covers all
 * of .plt.  x86 lists IRELATIVE relocations out of PLT order, so they are
 * sorted by GOT slot.  An IRELATIVE entry (no symbol) is named after the
 * ifunc its addend points at, else "offset_0x...@plt" (file offset).
 * Symbols are at ELF addresses (sh_addr), where sonde keeps user symbols.
 */
#include "symbols_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plt_rel {
	uint64_t got;	 /* r_offset: the GOT slot */
	uint64_t addend; /* IRELATIVE: the resolver */
	uint32_t sym;	 /* .dynsym index */
};

static Elf_Scn *section(Elf *elf, size_t shstr, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstr, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* perf's get_plt_sizes(). Return: false when the entry size is unknown. */
static bool plt_sizes(GElf_Half machine, const GElf_Shdr *plt, uint64_t *header, uint64_t *entry)
{
	switch (machine) {
	case EM_ARM:
		*header = 20, *entry = 12;
		return true;
	case EM_AARCH64:
		*header = 32, *entry = 16;
		return true;
	case EM_386:
	case EM_X86_64:
		*entry = plt->sh_entsize;
		if (*entry != 8 && *entry != 16)
			*entry = plt->sh_addralign == 8 ? 8 : 16;
		*header = *entry;
		return true;
	default:
		*header = *entry = plt->sh_entsize;
		return *entry != 0;
	}
}

static int by_got(const void *a, const void *b)
{
	const struct plt_rel *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The relocations of .rela.plt/.rel.plt.  Return: count (*out new), 0, or -ENOMEM. */
static long read_rels(Elf_Scn *scn, const GElf_Shdr *sh, struct plt_rel **out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, k = 0;
	struct plt_rel *v;

	*out = NULL;
	if (!data || !n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela ra;
		GElf_Rel rl;

		if (sh->sh_type == SHT_RELA && gelf_getrela(data, (int)i, &ra))
			v[k++] = (struct plt_rel){ra.r_offset, (uint64_t)ra.r_addend,
						  (uint32_t)GELF_R_SYM(ra.r_info)};
		else if (sh->sh_type == SHT_REL && gelf_getrel(data, (int)i, &rl))
			v[k++] = (struct plt_rel){rl.r_offset, 0, (uint32_t)GELF_R_SYM(rl.r_info)};
	}
	*out = v;
	return (long)k;
}

/* The name of an IRELATIVE entry: the ifunc at its resolver's address, if any. */
static const char *ifunc_name(const struct rawsyms *r, size_t nr_elf, uint64_t addr)
{
	for (size_t i = 0; i < nr_elf; i++)
		if (r->v[i].start == addr)
			return r->v[i].mangled;
	return NULL;
}

static int add(struct sonde_dso *d, struct rawsyms *r, uint64_t start, uint64_t size,
	       const char *name)
{
	return sonde_rawsyms_add(r, start, size,
				 sonde_strpool_add(&d->st->pool, name, strlen(name)), STB_GLOBAL);
}

int sonde_plt_collect_symbols(struct sonde_dso *d, Elf *elf, struct rawsyms *r)
{
	GElf_Shdr plt, sec, rel, dyn;
	GElf_Ehdr eh;
	Elf_Scn *rscn, *dscn;
	Elf_Data *syms;
	struct plt_rel *rels = NULL;
	uint64_t header, entry, addr, off;
	size_t shstr, nr_elf = r->n;
	bool has_sec, x86;
	long n;
	int ret = 0;

	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstr) < 0 ||
	    !section(elf, shstr, ".plt", &plt) || plt.sh_type != SHT_PROGBITS ||
	    !plt_sizes(eh.e_machine, &plt, &header, &entry))
		return 0;
	x86 = eh.e_machine == EM_386 || eh.e_machine == EM_X86_64;
	has_sec = x86 && section(elf, shstr, ".plt.sec", &sec) && sec.sh_type == SHT_PROGBITS;
	if (has_sec && !plt_sizes(eh.e_machine, &sec, &header, &entry))
		return 0;
	rscn = section(elf, shstr, ".rela.plt", &rel);
	if (!rscn)
		rscn = section(elf, shstr, ".rel.plt", &rel);
	if (!rscn || (rel.sh_type != SHT_RELA && rel.sh_type != SHT_REL) || !rel.sh_link ||
	    !(dscn = elf_getscn(elf, rel.sh_link)) || !gelf_getshdr(dscn, &dyn) ||
	    !(syms = elf_getdata(dscn, NULL)))
		return 0;
	n = read_rels(rscn, &rel, &rels);
	if (n <= 0)
		return (int)n;
	if (has_sec) {
		addr = sec.sh_addr;
		off = sec.sh_offset;
		ret = add(d, r, plt.sh_addr, plt.sh_size, ".plt");
	} else if ((uint64_t)n * entry == plt.sh_size) {
		addr = plt.sh_addr; /* not lazy: no header */
		off = plt.sh_offset;
	} else {
		ret = add(d, r, plt.sh_addr, header, ".plt");
		addr = plt.sh_addr + header;
		off = plt.sh_offset + header;
	}
	if (x86)
		qsort(rels, (size_t)n, sizeof(*rels), by_got);
	for (long i = 0; i < n && !ret; i++, addr += entry, off += entry) {
		const char *name = NULL;
		char buf[1024];
		GElf_Sym s;

		if (rels[i].sym && gelf_getsym(syms, (int)rels[i].sym, &s))
			name = elf_strptr(elf, dyn.sh_link, s.st_name);
		if (!name || !name[0])
			name = ifunc_name(r, nr_elf, rels[i].addend);
		if (name && name[0])
			snprintf(buf, sizeof(buf), "%s@plt", name);
		else
			snprintf(buf, sizeof(buf), "offset_%#" PRIx64 "@plt", off);
		ret = add(d, r, addr, entry, buf);
	}
	free(rels);
	return ret;
}
