// SPDX-License-Identifier: MIT
/*
 * Whole-file helpers for kernel pseudo files (sysfs, procfs, tracefs),
 * which are small and must be read in one go: a pseudo file's size is
 * 0 or a page, so reads loop until EOF instead of trusting st_size.
 * Paths are built with sonde_path(), which refuses to truncate; directory
 * listings come back sorted in a strlist.  Every helper returns 0 (or a
 * length) or -errno and never prints.
 */
#include <sonde/fileio.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sonde_read_text(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		ssize_t r = read(fd, buf + got, len - 1 - got);

		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	return (int)got;
}

int sonde_read_all(const char *path, char **out, size_t *len)
{
	size_t cap = 4096, got = 0;
	char *buf = malloc(cap);
	int fd;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		free(buf);
		return -e;
	}
	for (;;) {
		ssize_t r;

		if (got + 1 >= cap) {
			char *n = realloc(buf, cap * 2);

			if (!n) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = n;
			cap *= 2;
		}
		r = read(fd, buf + got, cap - 1 - got);
		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			free(buf);
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	if (len)
		*len = got;
	return 0;
}

int sonde_read_u64(const char *path, uint64_t *val)
{
	char buf[64], *end;
	int r = sonde_read_text(path, buf, sizeof(buf));

	if (r < 0)
		return r;
	errno = 0;
	*val = strtoull(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

int sonde_write_text(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, text, len);
	if (w < 0 || (size_t)w != len) {
		int e = w < 0 ? errno : EIO;

		close(fd);
		return -e;
	}
	if (close(fd) < 0)
		return -errno;
	return 0;
}

int sonde_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

char *sonde_path_absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return asprintf(&out, "%s/%s", cwd, path) < 0 ? NULL : out;
}

#include <dirent.h>
#include <sonde/strlist.h>

int sonde_list_dir(const char *path, bool dirs_only, struct sonde_strlist *out)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (dirs_only && de->d_type != DT_DIR) {
			struct stat st;

			if (de->d_type != DT_UNKNOWN || fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
			    !S_ISDIR(st.st_mode))
				continue;
		}
		ret = sonde_strlist_add(out, de->d_name);
		if (ret < 0)
			break;
	}
	closedir(d);
	sonde_strlist_sort(out);
	return ret;
}

int sonde_mkdir_parents(const char *path, unsigned int mode)
{
	char buf[4096];
	int r = sonde_path(buf, sizeof(buf), "%s", path);

	if (r < 0)
		return r;
	for (char *p = strchr(buf + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(buf, (mode_t)mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}
