// SPDX-License-Identifier: MIT
/*
 * Where files are looked for, and the log of every place tried.
 *
 * A user object named P in the capture is, in order:
 *   1. --image BASENAME=PATH, when given for its basename;
 *   2. SYMFS/P with --symfs, else P itself;
 *   3. by build id in each debug directory: DIR/.build-id/xx/rest.debug,
 *      then DIR/.build-id/xx/rest (perf's build-id cache layout).
 * A file is accepted only when its build id equals the capture's (when
 * the capture gave one): a library updated since the capture is refused,
 * never silently used with the wrong symbols.
 *
 * Debug directories are --debug-dir values first, then SYMFS/usr/lib/debug
 * (with --symfs), then /usr/lib/debug.  The separate debug file of an
 * object that has no DWARF (or no .symtab) is found by libdwfl calling
 * debuginfo_find(): by build id in each debug directory, then by
 * .gnu_debuglink next to the file, in its .debug/ folder, and under each
 * debug directory + the file's folder.
 *
 * Every refusal and miss is appended to the object's search log, which
 * sonde_dso_search_log() shows for objects that stayed unresolved.
 */
#include "symbols_internal.h"

#include <sonde/fileio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DIRS 32
#define PATHBUF 4096

size_t debuginfo_dirs(const struct sonde_symtab *st, const char **dirs, char *buf, size_t buflen,
		      size_t max)
{
	size_t n = 0, i;

	for (i = 0; i < st->opts.nr_debug_dirs && n + 2 < max; i++)
		if (st->opts.debug_dirs[i])
			dirs[n++] = st->opts.debug_dirs[i];
	if (st->opts.symfs &&
	    (size_t)snprintf(buf, buflen, "%s/usr/lib/debug", st->opts.symfs) < buflen)
		dirs[n++] = buf;
	dirs[n++] = "/usr/lib/debug";
	return n;
}

static int try_id(struct sonde_dso *d, const char *path, const uint8_t *want, size_t want_len)
{
	uint8_t id[SONDE_BUILD_ID_MAX];
	char a[2 * SONDE_BUILD_ID_MAX + 1], b[2 * SONDE_BUILD_ID_MAX + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0) {
		slog_add(&d->log, "%s: %s; ", path, strerror(errno));
		return -1;
	}
	if (!want_len)
		return fd;
	n = sonde_build_id_of_file(path, id);
	if (n <= 0) {
		slog_add(&d->log, "%s: no build id, refused; ", path);
		close(fd);
		return -1;
	}
	if ((size_t)n != want_len || memcmp(id, want, want_len)) {
		sonde_build_id_hex(id, (size_t)n, a);
		sonde_build_id_hex(want, want_len, b);
		slog_add(&d->log, "%s: build id %s differs from the capture's %s, refused; ", path,
			 a, b);
		close(fd);
		return -1;
	}
	return fd;
}

int debuginfo_try(struct sonde_dso *d, const char *path)
{
	return try_id(d, path, d->build_id, d->build_id_len);
}

/* "DIR/.build-id/ab/cdef...SUFFIX" */
static int build_id_path(char *buf, size_t len, const char *dir, const uint8_t *id, size_t n,
			 const char *suffix)
{
	char hex[2 * SONDE_BUILD_ID_MAX + 1];

	sonde_build_id_hex(id, n, hex);
	return sonde_path(buf, len, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffix);
}

/* Tries @path as the object's file; true when it gave symbols. */
static bool try_user_file(struct sonde_dso *d, const char *path)
{
	struct rawsyms r = {0};
	int fd = debuginfo_try(d, path);

	if (fd < 0)
		return false;
	if (!dso_report_elf(d, path, fd))
		return false;
	if (dso_collect_symbols(d, &r, NULL, NULL) < 0 ||
	    symtab_install_symbols(d->st, d, &r, 0, 0) < 0) {
		free(r.v);
		slog_add(&d->log, "%s: out of memory; ", path);
		dso_unreport(d);
		return false;
	}
	if (d->nr_syms)
		return true;
	slog_add(&d->log, "%s: no function symbols; ", path);
	dso_unreport(d);
	return false;
}

/* --image NAME=PATH for @name.  Return: PATH or NULL. */
static const char *image_for(const struct sonde_symtab *st, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < st->opts.nr_images; i++) {
		const char *im = st->opts.images[i];

		if (im && !strncmp(im, name, n) && im[n] == '=')
			return im + n + 1;
	}
	return NULL;
}

static void log_build_id(struct sonde_dso *d)
{
	char hex[2 * SONDE_BUILD_ID_MAX + 1];

	if (d->build_id_len) {
		sonde_build_id_hex(d->build_id, d->build_id_len, hex);
		slog_add(&d->log, "build id %s: ", hex);
	} else {
		slog_add(&d->log, "no build id in the capture: ");
	}
}

bool debuginfo_load_user(struct sonde_dso *d)
{
	const struct sonde_symtab *st = d->st;
	char path[PATHBUF], sbuf[PATHBUF];
	const char *dirs[MAX_DIRS], *im;
	size_t nd, i;

	log_build_id(d);
	im = image_for(st, d->short_name);
	if (im && try_user_file(d, im))
		return true;
	if (st->opts.symfs) {
		if (sonde_path(path, sizeof(path), "%s%s%s", st->opts.symfs,
			       d->long_name[0] == '/' ? "" : "/", d->long_name) == 0 &&
		    try_user_file(d, path))
			return true;
	} else if (try_user_file(d, d->long_name)) {
		return true;
	}
	if (!d->build_id_len)
		return false;
	nd = debuginfo_dirs(st, dirs, sbuf, sizeof(sbuf), MAX_DIRS);
	for (i = 0; i < nd; i++) {
		if (build_id_path(path, sizeof(path), dirs[i], d->build_id, d->build_id_len,
				  ".debug") == 0 &&
		    try_user_file(d, path))
			return true;
		if (build_id_path(path, sizeof(path), dirs[i], d->build_id, d->build_id_len, "") ==
			0 &&
		    try_user_file(d, path))
			return true;
	}
	return false;
}

int debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	struct sonde_dso *d = *userdata;
	char path[PATHBUF], sbuf[PATHBUF], dir[PATHBUF];
	const char *dirs[MAX_DIRS];
	const unsigned char *bits = NULL;
	const uint8_t *id = NULL;
	GElf_Addr vaddr;
	size_t nd, i, idlen = 0;
	int fd, n;

	if (!d)
		return -1;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0 && n <= SONDE_BUILD_ID_MAX) {
		id = bits;
		idlen = (size_t)n;
	} else if (d->build_id_len) {
		id = d->build_id;
		idlen = d->build_id_len;
	}
	nd = debuginfo_dirs(d->st, dirs, sbuf, sizeof(sbuf), MAX_DIRS);
	for (i = 0; id && i < nd; i++) {
		if (build_id_path(path, sizeof(path), dirs[i], id, idlen, ".debug") < 0)
			continue;
		if (d->symbol_file && !strcmp(path, d->symbol_file))
			continue; /* the object itself, already read */
		fd = try_id(d, path, id, idlen);
		if (fd >= 0)
			goto found;
	}
	if (!debuglink_file || !file_name || strchr(debuglink_file, '/'))
		return -1;
	snprintf(dir, sizeof(dir), "%s", file_name);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if (sonde_path(path, sizeof(path), "%s/%s", dir, debuglink_file) == 0 &&
	    strcmp(path, file_name) && (fd = try_id(d, path, id, idlen)) >= 0)
		goto found;
	if (sonde_path(path, sizeof(path), "%s/.debug/%s", dir, debuglink_file) == 0 &&
	    (fd = try_id(d, path, id, idlen)) >= 0)
		goto found;
	for (i = 0; i < nd; i++)
		if (sonde_path(path, sizeof(path), "%s%s%s/%s", dirs[i], dir[0] == '/' ? "" : "/",
			       dir, debuglink_file) == 0 &&
		    (fd = try_id(d, path, id, idlen)) >= 0)
			goto found;
	return -1;
found:
	*debuginfo_file_name = strdup(path);
	return fd;
}
