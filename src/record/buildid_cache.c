// SPDX-License-Identifier: MIT
/*
 * Writing perf's build-id cache, as `perf record` does at its end, so a
 * report elsewhere (another machine, a later kernel) finds the objects a
 * capture names by build id, and perf's own tools find them too.  perf
 * 6.1's layout (util/build-id.c), measured with `perf record`:
 *
 *   DIR/[vdso]/<hex>/vdso                the image ("elf" for a file)
 *   DIR/.build-id/<hex:2>/<hex+2>  ->  ../../[vdso]/<hex>
 *
 * A path object lives under DIR/<its absolute path>/<hex>/ the same way.
 * Entries are written to a temporary name and renamed, so a reader never
 * sees half an image; an entry already there is kept.
 */
#include <sonde/buildid.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>

/* Copies all of @in to the new file @path (mode 0644). */
static int copy_fd(int in, const char *path)
{
	char buf[16384];
	off_t off = 0;
	ssize_t n;
	int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), r = 0;

	if (out < 0)
		return -errno;
	while ((n = pread(in, buf, sizeof(buf), off)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			r = -EIO;
			break;
		}
		off += n;
	}
	if (n < 0 && !r)
		r = -errno;
	if (close(out) < 0 && !r)
		r = -errno;
	if (r < 0)
		unlink(path);
	return r;
}

int sonde_buildid_cache_add(const char *dir, const char *name, const uint8_t *id, size_t len,
			    int fd)
{
	const char *leaf = strcmp(name, "[vdso]") ? "elf" : "vdso";
	const char *rel = name[0] == '/' ? name + 1 : name;
	char hex[2 * SONDE_BUILD_ID_MAX + 1], path[PATH_MAX], tmp[PATH_MAX + 16];
	char link[PATH_MAX], target[PATH_MAX];
	uint8_t have[SONDE_BUILD_ID_MAX];
	int r;

	if (!len || len > SONDE_BUILD_ID_MAX || strstr(name, "/../") || !*rel)
		return -EINVAL;
	/* Never an image under a build id that is not its own. */
	snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
	r = sonde_build_id_of_file(tmp, have);
	if (r < 0)
		return r;
	if ((size_t)r != len || memcmp(have, id, len))
		return -ESTALE;
	sonde_build_id_hex(id, len, hex);
	if ((r = sonde_path(path, sizeof(path), "%s/%s/%s/%s", dir, rel, hex, leaf)) < 0 ||
	    (r = sonde_path(tmp, sizeof(tmp), "%s.%d", path, (int)getpid())) < 0 ||
	    (r = sonde_path(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, hex, hex + 2)) < 0 ||
	    (r = sonde_path(target, sizeof(target), "../../%s/%s", rel, hex)) < 0)
		return r;
	if (access(path, F_OK) != 0) {
		if ((r = sonde_mkdir_parents(path, 0755)) < 0 || (r = copy_fd(fd, tmp)) < 0)
			return r;
		if (rename(tmp, path) < 0) {
			r = -errno;
			unlink(tmp);
			return r;
		}
	}
	if ((r = sonde_mkdir_parents(link, 0755)) < 0)
		return r;
	if (symlink(target, link) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}
