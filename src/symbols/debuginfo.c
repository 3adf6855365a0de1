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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_DIRS 32
#define PATHBUF 4096

size_t sonde_debuginfo_dirs(const struct sonde_symtab *st, const char **dirs, char *buf, size_t buflen,
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

/* The build id of the last file try_id() refused for a mismatch. */
struct refused {
	uint8_t id[SONDE_BUILD_ID_MAX];
	int len;
};

static int try_id_r(struct sonde_dso *d, const char *path, const uint8_t *want, size_t want_len,
		    struct refused *rf)
{
	uint8_t id[SONDE_BUILD_ID_MAX];
	char a[2 * SONDE_BUILD_ID_MAX + 1], b[2 * SONDE_BUILD_ID_MAX + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0) {
		sonde_slog_add(&d->log, "%s: %s; ", path, strerror(errno));
		return -1;
	}
	if (!want_len)
		return fd;
	n = sonde_build_id_of_file(path, id);
	if (n <= 0) {
		sonde_slog_add(&d->log, "%s: no build id, refused; ", path);
		close(fd);
		return -1;
	}
	if ((size_t)n != want_len || memcmp(id, want, want_len)) {
		sonde_build_id_hex(id, (size_t)n, a);
		sonde_build_id_hex(want, want_len, b);
		sonde_slog_add(&d->log, "%s: build id %s differs from the capture's %s, refused; ", path,
			 a, b);
		sonde_debug("%s: build id %s differs from the capture's %s, refused", path, a, b);
		if (rf) {
			memcpy(rf->id, id, (size_t)n);
			rf->len = n;
		}
		close(fd);
		return -1;
	}
	return fd;
}

static int try_id(struct sonde_dso *d, const char *path, const uint8_t *want, size_t want_len)
{
	return try_id_r(d, path, want, want_len, NULL);
}

int sonde_debuginfo_try(struct sonde_dso *d, const char *path)
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

/* Tries @path as the object's file; true when it gave symbols.  A file
 * there with another build id is remembered for sonde_dso_warning(). */
static bool try_user_file(struct sonde_dso *d, const char *path)
{
	struct rawsyms r = {0};
	struct refused rf = {.len = 0};
	int fd = try_id_r(d, path, d->build_id, d->build_id_len, &rf);

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
	char path[PATHBUF];

	if (!dir || !d->build_id_len)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (build_id_path(path, sizeof(path), dir, d->build_id, d->build_id_len,
				  names[i]) == 0 &&
		    !is_dir(path) && try_user_file(d, path))
			return true;
	return false;
}

bool sonde_debuginfo_load_user(struct sonde_dso *d)
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
	if (sonde_debuginfo_try_buildid_cache(d))
		return true;
	nd = sonde_debuginfo_dirs(st, dirs, sbuf, sizeof(sbuf), MAX_DIRS);
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
	if (!d->build_id_len && (!d->st->opts.osrelease || uname(&u) < 0 ||
				 strcmp(u.release, d->st->opts.osrelease))) {
		sonde_slog_add(&d->log, "this machine's vDSO: the capture is from another kernel; ");
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

int sonde_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
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
	nd = sonde_debuginfo_dirs(d->st, dirs, sbuf, sizeof(sbuf), MAX_DIRS);
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
