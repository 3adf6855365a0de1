// SPDX-License-Identifier: MIT
/*
 * Kernel modules: a .ko placed where the capture saw it loaded.
 *
 * sonde saves, per module, "NAME 0xBASE SIZE PATH_OR_[NAME]" and the
 * address of each of its sections (from /sys/module/NAME/sections) as
 * "\t.SECTION 0xADDR" lines.  A .ko is an ET_REL file: libdwfl lays it
 * out by asking the section_address callback for each section, which
 * answers with the saved addresses, so symbols and the DWARF (relocated
 * by libdwfl) come out at runtime kernel addresses; the dso's adjust is 0.
 * Sections the capture doesn't list (.init.* after init, non-loaded
 * ones) are reported as not loaded.
 *
 * The .ko is searched, in order: --image NAME=PATH; the capture's path
 * (under --symfs when given); --modules-dir, recursively; then
 * SYMFS/lib/modules/RELEASE, recursively.  A file is a candidate when its
 * basename up to ".ko" names the module with '-' read as '_' (as the
 * kernel does), and is accepted when its build id matches the capture's.
 * Compressed modules (.ko.xz, .ko.zst) are not read.
 *
 * Without a usable .ko (or without saved section addresses), the module's
 * symbols come from kallsyms lines tagged "[NAME]" (kernel.c).
 */
#include "symbols_internal.h"

#include <sonde/fileio.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEARCH_DEPTH 8

/* "NAME 0xBASE SIZE PATH": true when parsed into @m. */
static bool parse_header(struct sonde_symtab *st, const char *p, size_t len, struct kmod_info *m)
{
	char line[1024], name[256], path[768];
	unsigned long long base, size;

	if (len >= sizeof(line))
		return false;
	memcpy(line, p, len);
	line[len] = '\0';
	if (sscanf(line, "%255s %llx %llu %767s", name, &base, &size, path) != 4)
		return false;
	memset(m, 0, sizeof(*m));
	m->name = sonde_strpool_intern(&st->pool, name);
	m->path = sonde_strpool_intern(&st->pool, path);
	m->base = base;
	m->size = size;
	return m->name && m->path;
}

static int add_section(struct sonde_symtab *st, struct kmod_info *m, const char *p, size_t len)
{
	char line[512], name[256];
	unsigned long long addr;
	struct kmod_section *v;

	if (len >= sizeof(line))
		return 0;
	memcpy(line, p, len);
	line[len] = '\0';
	if (sscanf(line, " %255s %llx", name, &addr) != 2)
		return 0;
	v = realloc(m->secs, (m->nr_secs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->secs = v;
	v[m->nr_secs].name = sonde_strpool_intern(&st->pool, name);
	v[m->nr_secs].addr = addr;
	if (!v[m->nr_secs].name)
		return -ENOMEM;
	m->nr_secs++;
	return 0;
}

int sonde_kmodule_parse(struct sonde_symtab *st, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	struct kmod_info *cur = NULL;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n && (p[0] == '\t' || p[0] == ' ')) {
			if (cur && add_section(st, cur, p, n) < 0)
				return -ENOMEM;
		} else if (n) {
			struct kmod_info m, *v;

			cur = NULL;
			if (parse_header(st, p, n, &m)) {
				v = realloc(st->kmods, (st->nr_kmods + 1) * sizeof(*v));
				if (!v)
					return -ENOMEM;
				st->kmods = v;
				v[st->nr_kmods] = m;
				cur = &v[st->nr_kmods++];
			}
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* The kernel's spelling of a module name: '-' as '_'. */
static bool same_module(const char *a, const char *b, size_t blen)
{
	size_t i;

	for (i = 0; i < blen; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];

		if (!a[i] || x != y)
			return false;
	}
	return a[blen] == '\0';
}

const struct kmod_info *sonde_kmodule_info(struct sonde_symtab *st, const char *name)
{
	size_t i;

	if (!st->kmods_loaded) {
		st->kmods_loaded = true;
		if (st->opts.modules)
			sonde_kmodule_parse(st, st->opts.modules, st->opts.modules_len);
	}
	for (i = 0; i < st->nr_kmods; i++)
		if (same_module(name, st->kmods[i].name, strlen(st->kmods[i].name)))
			return &st->kmods[i];
	return NULL;
}

static int kmod_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	struct sonde_dso *d = *userdata;
	int fd;

	if (!d || d->ko_fd < 0)
		return -1;
	*file_name = strdup(d->ko_path);
	fd = d->ko_fd;
	d->ko_fd = -1; /* libdwfl owns it now */
	return fd;
}

static int kmod_section_address(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *secname, GElf_Word shndx,
				const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	const struct sonde_dso *d = *userdata;
	size_t i;

	*addr = (Dwarf_Addr)-1; /* not loaded, unless the capture saw it */
	for (i = 0; d && d->kmod && i < d->kmod->nr_secs; i++)
		if (!strcmp(d->kmod->secs[i].name, secname)) {
			*addr = d->kmod->secs[i].addr;
			break;
		}
	return 0;
}

static const Dwfl_Callbacks kmod_callbacks = {
    .find_elf = kmod_find_elf,
    .find_debuginfo = sonde_debuginfo_find,
    .section_address = kmod_section_address,
};

/* Reports the .ko at @path (fd consumed) and installs its symbols. */
static bool try_ko(struct sonde_dso *d, const char *path)
{
	const struct kmod_info *m = d->kmod;
	uint64_t lo = m->base, hi = m->base + m->size;
	struct rawsyms r = {0};
	Dwarf_Addr bias;
	size_t i;
	void **ud;
	int fd = sonde_debuginfo_try(d, path);

	if (fd < 0)
		return false;
	for (i = 0; i < m->nr_secs; i++) { /* the range must hold every placed section */
		if (!lo || m->secs[i].addr < lo)
			lo = m->secs[i].addr;
		if (m->secs[i].addr >= hi)
			hi = m->secs[i].addr + 1;
	}
	d->dwfl = dwfl_begin(&kmod_callbacks);
	if (!d->dwfl) {
		close(fd);
		return false;
	}
	dwfl_report_begin(d->dwfl);
	d->mod = dwfl_report_module(d->dwfl, d->modname, lo, hi);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		close(fd);
		sonde_slog_add(&d->log, "%s: %s; ", path, dwfl_errmsg(-1));
		sonde_dso_unreport(d);
		return false;
	}
	dwfl_module_info(d->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = d;
	d->ko_path = path;
	d->ko_fd = fd;
	if (!dwfl_module_getelf(d->mod, &bias)) {
		if (d->ko_fd >= 0)
			close(d->ko_fd);
		d->ko_fd = -1;
		sonde_slog_add(&d->log, "%s: %s; ", path, dwfl_errmsg(-1));
		sonde_dso_unreport(d);
		return false;
	}
	d->ko_path = NULL;
	d->symbol_file = sonde_strpool_intern(&d->st->pool, path);
	if (sonde_dso_collect_symbols(d, &r, NULL, NULL) < 0 ||
	    sonde_symtab_install_symbols(d->st, d, &r, 0, 0) < 0) {
		free(r.v);
		sonde_dso_unreport(d);
		return false;
	}
	if (d->nr_syms)
		return true;
	sonde_slog_add(&d->log, "%s: no function symbols at the saved section addresses; ", path);
	sonde_dso_unreport(d);
	return false;
}

/* A .ko file name standing for @name ("ext4.ko", "snd-hda-intel.ko")? */
static bool ko_matches(const char *file, const char *name)
{
	size_t n = strlen(file);

	return n > 3 && !strcmp(file + n - 3, ".ko") && same_module(name, file, n - 3);
}

/* Recursive search of @dir for the module's .ko; true when one was accepted. */
static bool search_dir(struct sonde_dso *d, const char *dir, int depth, bool *any)
{
	struct dirent *de;
	char path[4096];
	bool ok = false;
	DIR *dd;

	if (depth > SEARCH_DEPTH || !(dd = opendir(dir)))
		return false;
	while (!ok && (de = readdir(dd)) != NULL) {
		struct stat sb;

		if (de->d_name[0] == '.' ||
		    sonde_path(path, sizeof(path), "%s/%s", dir, de->d_name))
			continue;
		if (ko_matches(de->d_name, d->modname)) {
			*any = true;
			ok = try_ko(d, path);
		} else if (de->d_type == DT_DIR ||
			   (de->d_type == DT_UNKNOWN && !stat(path, &sb) && S_ISDIR(sb.st_mode))) {
			ok = search_dir(d, path, depth + 1, any);
		}
	}
	closedir(dd);
	return ok;
}

static bool search_tree(struct sonde_dso *d, const char *dir)
{
	bool any = false;

	if (search_dir(d, dir, 0, &any))
		return true;
	if (!any)
		sonde_slog_add(&d->log, "%s: no %s.ko; ", dir, d->modname);
	return false;
}

/* A capture path: SYMFS/PATH or PATH. */
static bool try_capture_path(struct sonde_dso *d, const char *p)
{
	char path[4096];

	if (!p || p[0] != '/')
		return false;
	if (d->st->opts.symfs) {
		if (sonde_path(path, sizeof(path), "%s%s", d->st->opts.symfs, p))
			return false;
		p = path;
	}
	return try_ko(d, p);
}

static bool find_ko(struct sonde_dso *d)
{
	const struct sonde_symtab *st = d->st;
	size_t i, n = strlen(d->modname);
	char path[4096];

	for (i = 0; i < st->opts.nr_images; i++) {
		const char *im = st->opts.images[i], *eq = im ? strchr(im, '=') : NULL;

		if (eq && (size_t)(eq - im) == n && same_module(d->modname, im, n) &&
		    try_ko(d, eq + 1))
			return true;
	}
	if (try_capture_path(d, d->long_name))
		return true;
	if (strcmp(d->kmod->path, d->long_name) && try_capture_path(d, d->kmod->path))
		return true;
	if (st->opts.modules_dir && search_tree(d, st->opts.modules_dir))
		return true;
	if (st->opts.osrelease &&
	    !sonde_path(path, sizeof(path), "%s/lib/modules/%s",
			st->opts.symfs ? st->opts.symfs : "", st->opts.osrelease) &&
	    search_tree(d, path))
		return true;
	return false;
}

bool sonde_kmodule_load(struct sonde_dso *d)
{
	struct sonde_symtab *st = d->st;
	char hex[2 * SONDE_BUILD_ID_MAX + 1];
	const struct kmod_info *m;

	if (d->build_id_len) {
		sonde_build_id_hex(d->build_id, d->build_id_len, hex);
		sonde_slog_add(&d->log, "build id %s: ", hex);
	}
	m = sonde_kmodule_info(st, d->modname);
	if (m && m->nr_secs) {
		d->kmod = m;
		if (find_ko(d))
			return true;
	} else {
		sonde_slog_add(&d->log, "no section addresses saved for %s: .ko not placed; ",
			       d->modname);
	}
	sonde_kernel_load_ksyms(st);
	if (sonde_kernel_install_ksyms(d, d->modname, m ? m->base + m->size : 0))
		return true;
	sonde_slog_add(&d->log, "kallsyms: no [%s] symbols", d->modname);
	return false;
}
