// SPDX-License-Identifier: MIT
/*
 * Kernel modules in a capture: the PERF_RECORD_MMAP perf synthesizes for
 * each, and the blob of section addresses sonde keeps for offline
 * symbolization of .ko files.
 *
 * perf 6.1 builds its module maps from /proc/modules ("name size refcnt
 * deps state 0xaddr [taint]"): start = load address, end = start + size,
 * named by the full path of the .ko file it finds under
 * /lib/modules/RELEASE (compressed .ko.xz/.ko.zst included), else
 * "[name]".  perf_event__synthesize_modules then walks the kernel maps in
 * address order and emits PERF_RECORD_MMAP {pid -1, tid 0, start, len =
 * size, pgoff 0, filename} with misc PERF_RECORD_MISC_KERNEL and the
 * zeroed trailer.  sonde finds the path through modules.dep, which lists
 * every installed module by path (relative to RELEASE/, or absolute with
 * old depmods); a file's module name is its basename up to ".ko" with '-'
 * read as '_', as the kernel names modules.
 *
 * With kptr_restrict, /proc/modules shows address 0: such modules get no
 * record (a map at 0 would capture user addresses) and are counted in
 * stats->modules_hidden.  The sections blob keeps them, addresses as read.
 */
#include "synth_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <sonde/fileio.h>
#include <sonde/strlist.h>

void sonde_kmods_free(struct sonde_kmod *mods, size_t n)
{
	size_t i;

	if (!mods)
		return;
	for (i = 0; i < n; i++)
		free(mods[i].path);
	free(mods);
}

/* "ext4 1007616 2 - Live 0xffffffffc0a00000 (E)".  Return: false if not such a line. */
static bool parse_modules_line(char *line, struct sonde_kmod *m)
{
	char *save, *name, *size, *addr, *e;
	int i;

	name = strtok_r(line, " \t", &save);
	size = strtok_r(NULL, " \t", &save);
	for (i = 0, addr = size; addr && i < 4; i++)
		addr = strtok_r(NULL, " \t", &save); /* refcnt, deps, state, addr */
	if (!name || !size || !addr || strlen(name) >= sizeof(m->name))
		return false;
	memset(m, 0, sizeof(*m));
	strcpy(m->name, name);
	errno = 0;
	m->size = strtoull(size, &e, 10);
	if (errno || *e)
		return false;
	m->base = strtoull(addr, &e, 16);
	if (errno || *e)
		return false;
	return true;
}

/* The module name a .ko path stands for: basename up to ".ko", '-' as '_'. */
static bool ko_name(const char *path, size_t len, char *out, size_t outlen)
{
	const char *base = path, *p, *ko = NULL;
	size_t i, n;

	for (p = path; p < path + len; p++)
		if (*p == '/')
			base = p + 1;
	for (p = base; p + 3 <= path + len; p++)
		if (!memcmp(p, ".ko", 3) && (p + 3 == path + len || p[3] == '.')) {
			ko = p;
			break;
		}
	if (!ko)
		return false;
	n = (size_t)(ko - base);
	if (!n || n >= outlen)
		return false;
	for (i = 0; i < n; i++)
		out[i] = base[i] == '-' ? '_' : base[i];
	out[n] = '\0';
	return true;
}

static int resolve_paths(const char *procfs, const char *modules_dir, struct sonde_kmod *mods,
			 size_t n)
{
	char release[256], path[1024], *dep, *line, *next;
	struct utsname u;
	size_t i;
	int ret;

	if (!modules_dir)
		modules_dir = "/lib/modules";
	ret = sonde_path(path, sizeof(path), "%s/sys/kernel/osrelease", procfs);
	if (ret < 0 || sonde_read_text(path, release, sizeof(release)) <= 0) {
		if (uname(&u) < 0)
			return -errno;
		snprintf(release, sizeof(release), "%s", u.release);
	}
	ret = sonde_path(path, sizeof(path), "%s/%s/modules.dep", modules_dir, release);
	if (ret < 0)
		return ret;
	if (sonde_read_all(path, &dep, NULL) < 0)
		return 0; /* no modules.dep: every module is "[name]" */
	for (line = dep; line && *line; line = next) {
		char *colon, name[64];
		size_t len;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		len = (size_t)(colon - line);
		if (!ko_name(line, len, name, sizeof(name)))
			continue;
		for (i = 0; i < n; i++) {
			int w;

			if (mods[i].path || strcmp(mods[i].name, name))
				continue;
			if (line[0] == '/')
				w = snprintf(path, sizeof(path), "%.*s", (int)len, line);
			else
				w = snprintf(path, sizeof(path), "%s/%s/%.*s", modules_dir, release,
					     (int)len, line);
			if (w > 0 && (size_t)w < sizeof(path)) {
				mods[i].path = strdup(path);
				if (!mods[i].path) {
					free(dep);
					return -ENOMEM;
				}
			}
		}
	}
	free(dep);
	return 0;
}

int sonde_kmods_read(const char *procfs, const char *modules_dir, struct sonde_kmod **mods,
		     size_t *n)
{
	char path[512], *text, *line, *next;
	struct sonde_kmod *v = NULL;
	size_t nr = 0, cap = 0;
	int ret;

	*mods = NULL;
	*n = 0;
	ret = sonde_path(path, sizeof(path), "%s/modules", procfs);
	if (ret < 0)
		return ret;
	ret = sonde_read_all(path, &text, NULL);
	if (ret == -ENOENT)
		return 0; /* a kernel without loadable modules */
	if (ret < 0)
		return ret;
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (nr == cap) {
			struct sonde_kmod *nv = realloc(v, (cap ? cap * 2 : 32) * sizeof(*v));

			if (!nv) {
				free(text);
				sonde_kmods_free(v, nr);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 32;
		}
		if (parse_modules_line(line, &v[nr]))
			nr++;
	}
	free(text);
	ret = resolve_paths(procfs, modules_dir, v, nr);
	if (ret < 0) {
		sonde_kmods_free(v, nr);
		return ret;
	}
	*mods = v;
	*n = nr;
	return 0;
}

static int by_base(const void *a, const void *b)
{
	const struct sonde_kmod *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

int sonde_synth_modules(const struct sonde_synth *s)
{
	struct sonde_kmod *mods;
	size_t n, i;
	int ret = sonde_synth_check(s);

	if (ret < 0)
		return ret;
	ret = sonde_kmods_read(s->procfs, s->modules_dir, &mods, &n);
	if (ret < 0)
		return ret;
	if (n) /* qsort wants a non-NULL base even for 0 items */
		qsort(mods, n, sizeof(*mods), by_base); /* perf walks its maps in address order */
	for (i = 0; i < n && ret >= 0; i++) {
		char bracket[sizeof(mods[i].name) + 2];

		if (!mods[i].base) {
			if (s->stats)
				s->stats->modules_hidden++;
			continue;
		}
		snprintf(bracket, sizeof(bracket), "[%s]", mods[i].name);
		ret = sonde_synth_emit_kmmap(s, mods[i].base, mods[i].size, 0,
					     mods[i].path ? mods[i].path : bracket);
		if (ret >= 0 && s->stats)
			s->stats->modules++;
	}
	sonde_kmods_free(mods, n);
	return ret < 0 ? ret : 0;
}

/* "\t.section addr" lines for one module, sorted by section name. */
static int add_sections(struct sonde_sbuf *b, const char *sysfs, const char *mod)
{
	struct sonde_strlist names;
	char dir[512], path[1024], addr[64];
	struct dirent *de;
	size_t i;
	DIR *d;
	int ret = 0;

	ret = sonde_path(dir, sizeof(dir), "%s/module/%s/sections", sysfs, mod);
	if (ret < 0)
		return ret;
	d = opendir(dir);
	if (!d)
		return 0; /* built without CONFIG_KALLSYMS or not readable: base only */
	sonde_strlist_init(&names);
	while ((de = readdir(d)) != NULL && ret == 0) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ret = sonde_strlist_add(&names, de->d_name);
	}
	closedir(d);
	sonde_strlist_sort(&names);
	for (i = 0; i < names.n && ret == 0; i++) {
		if (sonde_path(path, sizeof(path), "%s/%s", dir, names.v[i]) < 0 ||
		    sonde_read_text(path, addr, sizeof(addr)) <= 0)
			continue;
		sonde_sbuf_printf(b, "\t%s %s\n", names.v[i], addr);
	}
	sonde_strlist_fini(&names);
	return ret;
}

int sonde_synth_module_sections(const struct sonde_synth *s, char **blob, size_t *len)
{
	struct sonde_sbuf b = {0};
	struct sonde_kmod *mods;
	size_t n, i;
	int ret;

	if (!s || !s->procfs || !s->sysfs)
		return -EINVAL;
	ret = sonde_kmods_read(s->procfs, s->modules_dir, &mods, &n);
	if (ret < 0)
		return ret;
	sonde_sbuf_printf(&b, "%s", ""); /* an empty blob is still a string */
	for (i = 0; i < n && ret == 0 && !b.err; i++) {
		if (mods[i].path)
			sonde_sbuf_printf(&b, "%s 0x%llx %llu %s\n", mods[i].name,
					  (unsigned long long)mods[i].base,
					  (unsigned long long)mods[i].size, mods[i].path);
		else
			sonde_sbuf_printf(&b, "%s 0x%llx %llu [%s]\n", mods[i].name,
					  (unsigned long long)mods[i].base,
					  (unsigned long long)mods[i].size, mods[i].name);
		ret = add_sections(&b, s->sysfs, mods[i].name);
	}
	sonde_kmods_free(mods, n);
	if (!ret)
		ret = b.err;
	if (ret < 0) {
		free(b.p);
		return ret;
	}
	*blob = b.p;
	if (len)
		*len = b.len;
	return 0;
}

int sonde_module_sections(const char *procfs, const char *sysfs, char **blob, size_t *len)
{
	struct sonde_synth s = {.procfs = procfs, .sysfs = sysfs};

	return sonde_synth_module_sections(&s, blob, len);
}
