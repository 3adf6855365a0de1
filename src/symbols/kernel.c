// SPDX-License-Identifier: MIT
/*
 * [kernel.kallsyms]: the kernel's symbols at runtime addresses.
 *
 * The best source is a vmlinux with DWARF: -k FILE, else the usual places
 * for the capture's release R (/usr/lib/debug/boot/vmlinux-R,
 * /boot/vmlinux-R, /lib/modules/R/build/vmlinux,
 * /usr/lib/debug/lib/modules/R/vmlinux, under --symfs when given), checked
 * against the capture's kernel build id.  A KASLR kernel runs shifted from
 * its link addresses: the shift is the runtime _text (or _stext) from
 * kallsyms minus the vmlinux one, and becomes the dso's adjust, so symbols
 * are stored at runtime addresses and libdwfl is asked at link addresses.
 *
 * Without a vmlinux, the kallsyms text saved in the capture is used (or
 * this machine's /proc/kallsyms when the capture's release is the running
 * one): "ADDR TYPE NAME [MODULE]" lines, text symbols only (t T w W), each
 * symbol ending where the next one of the same object starts.  Symbols
 * with a "[mod]" suffix serve modules whose .ko can't be found (kmodule.c).
 * All-zero addresses (kptr_restrict) are treated as no kallsyms.
 */
#include "symbols_internal.h"

#include <sonde/fileio.h>
#include <sonde/hash.h>
#include <sonde/log.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#define LAST_SYMBOL_SIZE 4096 /* the last symbol of an object: no next to end at */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq; /* aliases keep the file's order */
}

/* One line "ADDR TYPE NAME[\t[MODULE]]" of [p, end).  Return: 1 kept, 0 skipped, -ENOMEM. */
static int parse_line(struct sonde_symtab *st, const char *p, const char *end, size_t *cap)
{
	const char *name, *mod = NULL, *modend = NULL;
	uint64_t addr = 0;
	size_t ndig = 0, namelen;
	char type;
	int v;

	while (p < end && (v = hexval(*p)) >= 0 && ndig < 17) {
		addr = addr << 4 | (uint64_t)v;
		p++;
		ndig++;
	}
	if (!ndig || ndig > 16 || end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return 0;
	type = p[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = p + 3;
	for (p = name; p < end && *p != '\t' && *p != ' '; p++)
		;
	namelen = (size_t)(p - name);
	if (!namelen || !addr)
		return 0;
	while (p < end && (*p == '\t' || *p == ' '))
		p++;
	if (p < end && *p == '[') {
		mod = p + 1;
		modend = memchr(mod, ']', (size_t)(end - mod));
		if (!modend || modend == mod)
			return 0;
	}
	if (st->nr_ksyms == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		struct ksym *nv = realloc(st->ksyms, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		st->ksyms = nv;
		*cap = ncap;
	}
	struct ksym *k = &st->ksyms[st->nr_ksyms];

	k->addr = addr;
	k->seq = (uint32_t)st->nr_ksyms;
	k->type = type;
	k->name = sonde_strpool_add(&st->pool, name, namelen);
	k->module = NULL;
	if (mod) {
		char buf[256];
		size_t n = (size_t)(modend - mod);

		if (n >= sizeof(buf))
			return 0;
		memcpy(buf, mod, n);
		buf[n] = '\0';
		k->module = sonde_strpool_intern(&st->pool, buf);
		if (!k->module)
			return -ENOMEM;
	}
	if (!k->name)
		return -ENOMEM;
	st->nr_ksyms++;
	return 1;
}

int sonde_kernel_parse_kallsyms(struct sonde_symtab *st, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t cap = st->nr_ksyms;
	int ret;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		ret = parse_line(st, p, le, &cap);
		if (ret < 0)
			return ret;
		p = nl ? nl + 1 : end;
	}
	/* /proc/kallsyms is mostly in address order: sort only when needed. */
	for (size_t i = 1; i < st->nr_ksyms; i++)
		if (st->ksyms[i - 1].addr > st->ksyms[i].addr) {
			qsort(st->ksyms, st->nr_ksyms, sizeof(*st->ksyms), by_addr);
			break;
		}
	return 0;
}

/*
 * A cache of this boot's /proc/kallsyms text symbols.  Reading
 * /proc/kallsyms costs the kernel tens of milliseconds (it expands every
 * compressed name), more than the rest of a small report; its contents
 * change only with a reboot or a module load, so the cache file is named
 * after the boot id and a hash of /proc/modules.  It holds addresses, so
 * it lives in the directory the caller names (opts.kallsyms_cache_dir: the
 * CLI picks the user's own cache directory), mode 0600; without one there
 * is no cache.
 */
static int cache_path(const struct sonde_symtab *st, char *buf, size_t len)
{
	const char *dir = st->opts.kallsyms_cache_dir;
	char boot[64] = "", *mods = NULL;
	size_t mlen = 0;
	uint64_t h = SONDE_FNV1A_INIT;

	if (!dir || !*dir ||
	    sonde_read_text("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) <= 0)
		return -ENOENT;
	boot[strcspn(boot, "\n")] = '\0';
	if (sonde_read_all("/proc/modules", &mods, &mlen) == 0) {
		h = sonde_fnv1a(h, mods, mlen);
		free(mods);
	}
	if ((size_t)snprintf(buf, len, "%s/kallsyms-%s-%016" PRIx64, dir, boot, h) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int cache_read(const struct sonde_symtab *st, char **text, size_t *len)
{
	char path[PATH_MAX];
	int err;

	if (cache_path(st, path, sizeof(path)) < 0)
		return -ENOENT;
	err = sonde_read_all(path, text, len);
	sonde_debug("kallsyms cache %s: %s", path, err ? "miss" : "hit");
	return err;
}

static void cache_write(const struct sonde_symtab *st, const char *text, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	int fd;

	/* Hidden addresses (kptr_restrict) are not worth keeping. */
	if (len < 17 || !strncmp(text, "0000000000000000", 16) ||
	    cache_path(st, path, sizeof(path)) < 0)
		return;
	sonde_mkdir_parents(path, 0700);
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, text, len) == (ssize_t)len && close(fd) == 0) {
		if (rename(tmp, path) == 0)
			sonde_debug("kallsyms cache %s: written", path);
		return;
	}
	close(fd);
	unlink(tmp);
}

/* Keeps the text symbol lines of kallsyms text in place. Return: the new length. */
static size_t keep_text_symbols(char *text, size_t len)
{
	size_t out = 0;

	for (size_t i = 0; i < len;) {
		char *nl = memchr(text + i, '\n', len - i);
		size_t l = (nl ? (size_t)(nl - (text + i)) + 1 : len - i);
		char *sp = memchr(text + i, ' ', l);

		if (sp && sp + 2 < text + i + l && strchr("tTwW", sp[1]) && sp[2] == ' ') {
			memmove(text + out, text + i, l);
			out += l;
		}
		i += l;
	}
	return out;
}

void sonde_kernel_load_ksyms(struct sonde_symtab *st)
{
	struct utsname u;
	char *text;
	size_t len;

	if (st->ksyms_loaded)
		return;
	st->ksyms_loaded = true;
	if (st->opts.kallsyms) {
		st->ksyms_source = "kallsyms saved in the capture";
		sonde_kernel_parse_kallsyms(st, st->opts.kallsyms, st->opts.kallsyms_len);
		return;
	}
	if (st->opts.no_proc_kallsyms || !st->opts.osrelease || uname(&u) < 0 ||
	    strcmp(u.release, st->opts.osrelease))
		return;
	if (cache_read(st, &text, &len) < 0) {
		if (sonde_read_all("/proc/kallsyms", &text, &len) < 0)
			return;
		len = keep_text_symbols(text, len);
		cache_write(st, text, len);
	}
	st->ksyms_source = "/proc/kallsyms";
	sonde_kernel_parse_kallsyms(st, text, len);
	free(text);
}

/* Runtime address of @name in the kernel's kallsyms, or 0. */
static uint64_t ksym_addr(const struct sonde_symtab *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nr_ksyms; i++)
		if (!st->ksyms[i].module && !strcmp(st->ksyms[i].name, name))
			return st->ksyms[i].addr;
	return 0;
}

/* perf's kallsyms2elf_binding(): 'W' weak, other capitals global, the rest local. */
static uint8_t ksym_binding(char type)
{
	if (type == 'W')
		return STB_WEAK;
	return type >= 'A' && type <= 'Z' ? STB_GLOBAL : STB_LOCAL;
}

bool sonde_kernel_install_ksyms(struct sonde_dso *d, const char *module, uint64_t last_end)
{
	struct sonde_symtab *st = d->st;
	struct rawsyms r = {0};
	uint64_t last = 0;
	size_t i;

	for (i = 0; i < st->nr_ksyms; i++) {
		const struct ksym *k = &st->ksyms[i];

		if (module ? !k->module || strcmp(k->module, module) : k->module != NULL)
			continue;
		if (sonde_rawsyms_add(&r, k->addr, 0, k->name, ksym_binding(k->type)) < 0) {
			free(r.v);
			return false;
		}
		last = k->addr;
	}
	if (!r.n)
		return false;
	if (last_end <= last)
		last_end = last + LAST_SYMBOL_SIZE;
	if (sonde_symtab_install_symbols(st, d, &r, 0, last_end) < 0)
		return false;
	d->symbol_file = st->ksyms_source;
	return d->nr_syms > 0;
}

/* vmlinux at @path: symbols shifted by the KASLR offset. */
static bool try_vmlinux(struct sonde_dso *d, const char *path)
{
	uint64_t text = 0, stext = 0, rt;
	struct rawsyms r = {0};
	int64_t adjust = 0;
	int fd = sonde_debuginfo_try(d, path);

	if (fd < 0 || !sonde_dso_report_elf(d, path, fd))
		return false;
	if (sonde_dso_collect_symbols(d, &r, &text, &stext) < 0)
		goto fail;
	if (text && (rt = ksym_addr(d->st, "_text")) != 0)
		adjust = (int64_t)(rt - text);
	else if (stext && (rt = ksym_addr(d->st, "_stext")) != 0)
		adjust = (int64_t)(rt - stext);
	if (sonde_symtab_install_symbols(d->st, d, &r, adjust, 0) < 0)
		goto fail;
	d->adjust = adjust;
	if (d->nr_syms)
		return true;
	sonde_slog_add(&d->log, "%s: no function symbols; ", path);
	sonde_dso_unreport(d);
	return false;
fail:
	free(r.v);
	sonde_slog_add(&d->log, "%s: out of memory; ", path);
	sonde_dso_unreport(d);
	return false;
}

/*
 * The same release is not the same kernel (a rebuilt one keeps its
 * name): when the capture names the kernel's build id and the running
 * kernel's differs, this machine's /proc/kallsyms is not the capture's.
 */
static void refuse_other_kernel(struct sonde_dso *d)
{
	struct sonde_symtab *st = d->st;
	uint8_t id[SONDE_BUILD_ID_MAX];
	int n;

	if (st->opts.kallsyms || st->opts.no_proc_kallsyms || st->ksyms_loaded ||
	    (n = sonde_build_id_of_kernel("/sys", id)) <= 0)
		return;
	if ((size_t)n == d->build_id_len && !memcmp(id, d->build_id, (size_t)n))
		return;
	st->opts.no_proc_kallsyms = true;
	d->stale_path = sonde_strpool_intern(&st->pool, "/proc/kallsyms");
	memcpy(d->stale_id, id, (size_t)n);
	d->stale_id_len = (size_t)n;
	sonde_slog_add(&d->log, "/proc/kallsyms: the running kernel's build id differs, refused; ");
}

bool sonde_kernel_load(struct sonde_dso *d)
{
	static const char *const where[] = {
	    "%s/usr/lib/debug/boot/vmlinux-%s",
	    "%s/boot/vmlinux-%s",
	    "%s/lib/modules/%s/build/vmlinux",
	    "%s/usr/lib/debug/lib/modules/%s/vmlinux",
	};
	struct sonde_symtab *st = d->st;
	const char *root = st->opts.symfs ? st->opts.symfs : "";
	char hex[2 * SONDE_BUILD_ID_MAX + 1], path[4096];
	size_t i;

	if (d->build_id_len) {
		sonde_build_id_hex(d->build_id, d->build_id_len, hex);
		sonde_slog_add(&d->log, "build id %s: ", hex);
		refuse_other_kernel(d);
	}
	sonde_kernel_load_ksyms(st);
	if (st->opts.vmlinux && try_vmlinux(d, st->opts.vmlinux))
		return true;
	for (i = 0; st->opts.osrelease && i < sizeof(where) / sizeof(where[0]); i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		int n = snprintf(path, sizeof(path), where[i], root, st->opts.osrelease);
#pragma GCC diagnostic pop
		if (n > 0 && (size_t)n < sizeof(path) && try_vmlinux(d, path))
			return true;
	}
	if (!st->opts.osrelease && !st->opts.vmlinux)
		sonde_slog_add(&d->log, "no vmlinux: no -k and no kernel release in the capture; ");
	if (sonde_kernel_install_ksyms(d, NULL, 0))
		return true;
	sonde_slog_add(&d->log, "kallsyms: %s",
		       st->ksyms_source ? "no kernel text symbols (kptr_restrict?)"
					: "none in the capture, /proc/kallsyms not usable for it");
	return false;
}
