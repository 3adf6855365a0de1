// SPDX-License-Identifier: MIT
/*
 * Trying a file against the capture's build id, the debug directories in
 * search order, and libdwfl's find_debuginfo callback that searches them
 * for an object's separate debug file (the order is in debuginfo.c).
 *
 * The bottom of the symbol loaders: debuginfo.c, kernel.c and kmodule.c
 * open their candidates here, and dso_elf.c hands sonde_debuginfo_find()
 * to every Dwfl it makes.  Nothing here calls back into them.
 */
#include "symbols_internal.h"

#include <sonde/fileio.h>
#include <sonde/log.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t sonde_debuginfo_dirs(const struct sonde_symtab *st, const char **dirs, char *buf,
			    size_t buflen, size_t max)
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

int sonde_debuginfo_try_id(struct sonde_dso *d, const char *path, const uint8_t *want,
			   size_t want_len, struct debuginfo_refused *rf)
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
		sonde_slog_add(&d->log, "%s: build id %s differs from the capture's %s, refused; ",
			       path, a, b);
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
	return sonde_debuginfo_try_id(d, path, want, want_len, NULL);
}

int sonde_debuginfo_try(struct sonde_dso *d, const char *path)
{
	return try_id(d, path, d->build_id, d->build_id_len);
}

int sonde_debuginfo_build_id_path(char *buf, size_t len, const char *dir, const uint8_t *id,
				  size_t n, const char *suffix)
{
	char hex[2 * SONDE_BUILD_ID_MAX + 1];

	sonde_build_id_hex(id, n, hex);
	return sonde_path(buf, len, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffix);
}

int sonde_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			 char **debuginfo_file_name)
{
	struct sonde_dso *d = *userdata;
	char path[DEBUGINFO_PATHBUF], sbuf[DEBUGINFO_PATHBUF], dir[DEBUGINFO_PATHBUF];
	const char *dirs[DEBUGINFO_MAX_DIRS];
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
	nd = sonde_debuginfo_dirs(d->st, dirs, sbuf, sizeof(sbuf), DEBUGINFO_MAX_DIRS);
	for (i = 0; id && i < nd; i++) {
		if (sonde_debuginfo_build_id_path(path, sizeof(path), dirs[i], id, idlen,
						  ".debug") < 0)
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
