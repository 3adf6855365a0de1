// SPDX-License-Identifier: MIT
/* Fake kernel trees for tests: mkdtemp, mkdir -p, write, rm -r. */
#include "fake_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fake_tree_new(void)
{
	const char *tmp = getenv("TMPDIR");
	char *path;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (asprintf(&path, "%s/sonde-fake-XXXXXX", tmp) < 0)
		return NULL;
	if (!mkdtemp(path)) {
		free(path);
		return NULL;
	}
	return path;
}

/* mkdir -p of @path itself. */
static int mkdir_p(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			int e = errno;

			*p = c;
			return -e;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

int fake_tree_mkdir(const char *root, const char *relpath)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", root, relpath);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return mkdir_p(path);
}

int fake_tree_write(const char *root, const char *relpath, const char *text)
{
	char path[PATH_MAX], *slash;
	size_t len = strlen(text);
	ssize_t w;
	int fd, n = snprintf(path, sizeof(path), "%s/%s", root, relpath);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	slash = strrchr(path, '/');
	*slash = '\0';
	n = mkdir_p(path);
	*slash = '/';
	if (n < 0)
		return n;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	w = write(fd, text, len);
	if (w < 0 || (size_t)w != len) {
		int e = w < 0 ? errno : EIO;

		close(fd);
		return -e;
	}
	return close(fd) < 0 ? -errno : 0;
}

int fake_tree_printf(const char *root, const char *relpath, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	r = fake_tree_write(root, relpath, text);
	free(text);
	return r;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void fake_tree_remove(char *root)
{
	if (!root)
		return;
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
}
