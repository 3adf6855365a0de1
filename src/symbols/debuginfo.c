// SPDX-License-Identifier: MIT
/*
 * Where files are looked for, and the log of every place tried.
 *
 * A user object named P in the capture is, in order:
 *   1. --image BASENAME=PATH, when given for its basename;
 *   2. SYMFS/P with --symfs, else P itself;
 *   3. by build id in perf's build-id cache (--buildid-dir, else ~/.debug):
 *      DIR/.build-id/xx/rest/elf (perf's layout), .../vdso, the old layout
 *      DIR/.build-id/xx/rest, then .../debug;
 *   4. by build id in each debug directory: DIR/.build-id/xx/rest.debug,
 *      then DIR/.build-id/xx/rest.
 * A file is accepted only when its build id equals the capture's (when
 * the capture gave one): a library updated since the capture is refused,
 * never silently used with the wrong symbols.
 *
 * Debug directories are --debug-dir values first, then SYMFS/usr/lib/debug
 * (with --symfs), then /usr/lib/debug.  The separate debug file of an
 * object that has no DWARF (or no .symtab) is found by libdwfl calling
 * sonde_debuginfo_find(): by build id in each debug directory, then by
 * .gnu_debuglink next to the file, in its .debug/ folder, and under each
 * debug directory + the file's folder.
 *
 * A file at the capture's path with another build id (rebuilt or updated
 * since the capture) is remembered: when no matching copy turns up, the
 * object keeps no symbols and sonde_dso_warning() says so in one line.
 *
 * [vdso] has no file: it is looked for in perf's build-id cache (where
 * `perf record` and `sonde record` keep it), then this process's own vDSO
 * is used when its build id is the capture's.
 *
 * Every refusal and miss is appended to the object's search log, which
 * sonde_dso_search_log() shows for objects that stayed unresolved.
 */
#include "symbols_internal.h"

#include <sonde/error.h>
#include <sonde/fileio.h>
#include <sonde/log.h>
#include <sonde/vdso.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Tries @path as the object's file; true when it gave symbols.  A file
 * there with another build id is remembered for sonde_dso_warning(). */
static bool try_user_file(struct sonde_dso *d, const char *path)
{
	struct rawsyms r = {0};
	struct debuginfo_refused rf = {.len = 0};
	int fd = sonde_debuginfo_try_id(d, path, d->build_id, d->build_id_len, &rf);

	if (fd < 0 && rf.len > 0 && !d->stale_path) {
		d->stale_path = sonde_strpool_intern(&d->st->pool, path);
		memcpy(d->stale_id, rf.id, (size_t)rf.len);
		d->stale_id_len = (size_t)rf.len;
	}
	if (fd < 0)
		return false;
	if (!sonde_dso_report_elf(d, path, fd))
		return false;
	if (sonde_dso_collect_symbols(d, &r, NULL, NULL) < 0 ||
	    sonde_symtab_install_symbols(d->st, d, &r, 0, 0) < 0) {
		free(r.v);
		sonde_slog_add(&d->log, "%s: out of memory; ", path);
		sonde_dso_unreport(d);
		return false;
	}
	if (d->nr_syms)
		return true;
	sonde_slog_add(&d->log, "%s: no function symbols; ", path);
	sonde_dso_unreport(d);
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
		sonde_slog_add(&d->log, "build id %s: ", hex);
	} else {
		sonde_slog_add(&d->log, "no build id in the capture: ");
	}
}

/*
 * perf's build-id cache (`perf buildid-cache -a`, `perf record`'s own
 * caching): DIR/.build-id/xx/rest links to DIR/<path>/<build id>/, a
 * folder holding the object as "elf" ("vdso" for the vDSO, "kallsyms" for
 * the kernel) and its separate DWARF as "debug"; perf before 4.x linked
 * the file itself.  DIR is --buildid-dir, else ~/.debug, as perf uses.
 */
static bool is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool sonde_debuginfo_try_buildid_cache(struct sonde_dso *d)
{
	static const char *const names[] = {"/elf", "/vdso", "", "/debug"};
	const char *dir = d->st->opts.buildid_dir;
	char path[DEBUGINFO_PATHBUF];

	if (!dir || !d->build_id_len)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (sonde_debuginfo_build_id_path(path, sizeof(path), dir, d->build_id,
						  d->build_id_len, names[i]) == 0 &&
		    !is_dir(path) && try_user_file(d, path))
			return true;
	return false;
}

bool sonde_debuginfo_load_user(struct sonde_dso *d)
{
	const struct sonde_symtab *st = d->st;
	char path[DEBUGINFO_PATHBUF], sbuf[DEBUGINFO_PATHBUF];
	const char *dirs[DEBUGINFO_MAX_DIRS], *im;
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
	if (sonde_debuginfo_try_buildid_cache(d))
		return true;
	nd = sonde_debuginfo_dirs(st, dirs, sbuf, sizeof(sbuf), DEBUGINFO_MAX_DIRS);
	for (i = 0; i < nd; i++) {
		if (sonde_debuginfo_build_id_path(path, sizeof(path), dirs[i], d->build_id,
						  d->build_id_len, ".debug") == 0 &&
		    try_user_file(d, path))
			return true;
		if (sonde_debuginfo_build_id_path(path, sizeof(path), dirs[i], d->build_id,
						  d->build_id_len, "") == 0 &&
		    try_user_file(d, path))
			return true;
	}
	return false;
}

bool sonde_debuginfo_load_vdso(struct sonde_dso *d)
{
	char path[64];
	struct utsname u;
	bool ok;
	int fd;

	log_build_id(d);
	if (sonde_debuginfo_try_buildid_cache(d))
		return true;
	/* Without a build id to check, this kernel's vDSO only for its own captures. */
	if (!d->build_id_len &&
	    (!d->st->opts.osrelease || uname(&u) < 0 || strcmp(u.release, d->st->opts.osrelease))) {
		sonde_slog_add(&d->log,
			       "this machine's vDSO: the capture is from another kernel; ");
		return false;
	}
	fd = sonde_vdso_open();
	if (fd < 0) {
		sonde_slog_add(&d->log, "this machine's vDSO: %s; ", sonde_strerror(fd));
		return false;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ok = try_user_file(d, path);
	d->stale_path = NULL; /* another kernel's vDSO is no stale file of the capture's */
	if (!ok) {
		close(fd);
		return false;
	}
	/* object_file names the memfd: it stays open for the unwinder. */
	d->image_fd = fd;
	d->symbol_file = sonde_strpool_intern(&d->st->pool, "[vdso] of this kernel");
	return true;
}

const char *sonde_dso_warning(const struct sonde_dso *d, char *buf, size_t len)
{
	char have[2 * SONDE_BUILD_ID_MAX + 1], want[2 * SONDE_BUILD_ID_MAX + 1];

	if (!d->loaded || d->nr_syms || !d->stale_path)
		return NULL;
	sonde_build_id_hex(d->stale_id, d->stale_id_len, have);
	sonde_build_id_hex(d->build_id, d->build_id_len, want);
	snprintf(buf, len,
		 "%s: build id %s differs from the capture's %s and no copy with it was found "
		 "(build-id cache, debug dirs): its samples stay unresolved",
		 d->stale_path, have, want);
	return buf;
}
