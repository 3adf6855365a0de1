// SPDX-License-Identifier: MIT
/*
 * Reporting one object's ELF file to libdwfl and reading what the
 * loaders need from it: its PT_LOAD segments and its function symbols.
 *
 * The loaders (debuginfo.c for user objects and the vDSO, kernel.c,
 * kmodule.c) find a file, report it here (sonde_dso_report_elf(): a Dwfl
 * of the object's own whose find_debuginfo is debuginfo_find.c's search),
 * then collect its symbols into a raw list that symtab.c sorts and
 * installs.  Kept apart from dso.c, which calls the loaders, so the
 * loaders depend on this file and never call back up into dso.c.
 */
#include "symbols_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int no_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		  char **file_name, Elf **elfp)
{
	return -1; /* user objects and vmlinux are reported with their file */
}

static const Dwfl_Callbacks elf_callbacks = {
    .find_elf = no_elf,
    .find_debuginfo = sonde_debuginfo_find,
    .section_address = dwfl_offline_section_address,
};

void sonde_dso_unreport(struct sonde_dso *d)
{
	if (d->dwfl)
		dwfl_end(d->dwfl);
	d->dwfl = NULL;
	d->mod = NULL;
	d->symbol_file = NULL;
	d->object_file = NULL;
	d->adjust = 0;
	free(d->segs);
	d->segs = NULL;
	d->nr_segs = 0;
	d->segs_read = false;
}

void sonde_dso_read_segments(struct sonde_dso *d, Elf *elf)
{
	size_t phnum, i, n = 0;

	d->segs_read = true;
	if (!elf || elf_getphdrnum(elf, &phnum) < 0 || !phnum)
		return;
	d->segs = calloc(phnum, sizeof(*d->segs));
	if (!d->segs)
		return;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->segs[n++] = (struct load_seg){ph.p_vaddr, ph.p_offset, ph.p_filesz};
	}
	d->nr_segs = n;
}

bool sonde_dso_report_elf(struct sonde_dso *d, const char *path, int fd)
{
	Dwarf_Addr bias;
	void **ud;

	d->dwfl = dwfl_begin(&elf_callbacks);
	if (!d->dwfl) {
		close(fd);
		sonde_slog_add(&d->log, "%s: %s; ", path, dwfl_errmsg(-1));
		return false;
	}
	dwfl_report_begin(d->dwfl);
	/* ET_DYN at base 0 with add_p_vaddr: libdwfl addresses are ELF vaddrs */
	d->mod = dwfl_report_elf(d->dwfl, d->short_name, path, fd, 0, true);
	if (!d->mod) {
		close(fd); /* libdwfl consumes the fd only on success */
		sonde_slog_add(&d->log, "%s: %s; ", path, dwfl_errmsg(-1));
		sonde_dso_unreport(d);
		return false;
	}
	dwfl_report_end(d->dwfl, NULL, NULL);
	dwfl_module_info(d->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = d;
	d->symbol_file = sonde_strpool_intern(&d->st->pool, path);
	d->object_file = d->symbol_file;
	sonde_dso_read_segments(d, dwfl_module_getelf(d->mod, &bias));
	return true;
}

static bool in_exec_section(Elf *elf, GElf_Word shndx)
{
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

int sonde_dso_collect_symbols(struct sonde_dso *d, struct rawsyms *r, uint64_t *text,
			      uint64_t *stext)
{
	int n = dwfl_module_getsymtab(d->mod), i;

	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		Dwarf_Addr bias;
		const char *name =
		    dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, &elf, &bias);
		int type;

		if (!name || !name[0])
			continue;
		if (text && !strcmp(name, "_text"))
			*text = addr;
		if (stext && !strcmp(name, "_stext"))
			*stext = addr;
		if (shndx == SHN_UNDEF || shndx == (GElf_Word)-1 || shndx == SHN_ABS)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_NOTYPE) {
			/* labels in code (assembly entry points), not ARM's $x/$d
			 * mapping symbols; hidden ones are left out as perf does */
			if (name[0] == '$' || !strncmp(name, ".L", 2) ||
			    GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN ||
			    GELF_ST_VISIBILITY(sym.st_other) == STV_INTERNAL ||
			    !in_exec_section(elf, shndx))
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		if (sonde_rawsyms_add(r, addr, sym.st_size,
				      sonde_strpool_add(&d->st->pool, name, strlen(name)),
				      (uint8_t)GELF_ST_BIND(sym.st_info)) < 0)
			return -ENOMEM;
	}
	/* PLT stubs have no symbols: name them from the binary itself (the
	 * main file, not a separate debug file, whose .plt is NOBITS).  Only
	 * beside functions of its own: a stripped file stays unresolved, and
	 * its debug file is still searched for. */
	if (d->kind == SONDE_DSO_USER && r->n) {
		Dwarf_Addr bias;

		return sonde_plt_collect_symbols(d, dwfl_module_getelf(d->mod, &bias), r);
	}
	return 0;
}
