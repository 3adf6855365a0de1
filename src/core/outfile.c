// SPDX-License-Identifier: MIT
/*
 * Output files written under a temporary name and renamed into place
 * once complete (see sonde/outfile.h).  The temporary file sits beside the
 * target, "DIR/.NAME.sonde-PID-N", created with O_EXCL so two writers
 * never share one, and with the caller's mode so the umask applies as it
 * would to the target itself.
 */
#include <sonde/outfile.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tries this many temporary names before giving up (they collide only
 * when a crashed writer of the same pid left one behind). */
#define TMP_TRIES 100

static int set_err(struct sonde_errmsg *err, int e, const char *path)
{
	if (err)
		sonde_errmsg_set(err, e, "%s: %s", path, sonde_strerror(e));
	return e;
}

/* The target with symlinks resolved, so the rename replaces the file
 * the link points to and not the link.  Return: new string or NULL. */
static char *target_path(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *real = realpath(path, NULL);

		if (real)
			return real;
	}
	return strdup(path);
}

/* Opens a target that is written in place: a FIFO or a device. */
static int open_stream(struct sonde_outfile *of, struct sonde_errmsg *err)
{
	of->fd = open(of->path, O_WRONLY | O_CLOEXEC);
	if (of->fd < 0) {
		int e = -errno;

		set_err(err, e, of->path);
		free(of->path);
		of->path = NULL;
		return e;
	}
	of->stream = true;
	return 0;
}

static int open_tmp(struct sonde_outfile *of, mode_t mode, struct sonde_errmsg *err)
{
	const char *slash = strrchr(of->path, '/');
	int dirlen = slash ? (int)(slash - of->path + 1) : 0;
	size_t cap = strlen(of->path) + 48;
	int e = -EEXIST;

	if (!(of->tmp = malloc(cap)))
		return set_err(err, -ENOMEM, of->path);
	for (unsigned n = 0; n < TMP_TRIES && e == -EEXIST; n++) {
		snprintf(of->tmp, cap, "%.*s.%s.sonde-%ld-%u", dirlen, of->path, of->path + dirlen,
			 (long)getpid(), n);
		of->fd = open(of->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		e = of->fd < 0 ? -errno : 0;
	}
	if (e) {
		/* Name the target: the temporary name means nothing to the user. */
		set_err(err, e, of->path);
		free(of->tmp);
		free(of->path);
		of->tmp = of->path = NULL;
	}
	return e;
}

int sonde_outfile_open(struct sonde_outfile *of, const char *path, mode_t mode, unsigned flags,
		       struct sonde_errmsg *err)
{
	struct stat st;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->flags = flags;
	if ((flags & SONDE_OUTFILE_STDOUT) && !strcmp(path, "-")) {
		of->fd = STDOUT_FILENO;
		of->stream = of->is_stdout = true;
		return 0;
	}
	if (!(of->path = target_path(path)))
		return set_err(err, -ENOMEM, path);
	if (stat(of->path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			free(of->path);
			of->path = NULL;
			return set_err(err, -EISDIR, path);
		}
		if (!S_ISREG(st.st_mode))
			return open_stream(of, err);
	}
	return open_tmp(of, mode, err);
}

/* Moves an existing non-empty capture aside as PATH.old. */
static int keep_old(const char *path, char **old, struct sonde_errmsg *err)
{
	struct stat st;
	size_t n = strlen(path) + 5;

	*old = NULL;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	if (!(*old = malloc(n)))
		return set_err(err, -ENOMEM, path);
	snprintf(*old, n, "%s.old", path);
	if (rename(path, *old) < 0) {
		int e = -errno;

		if (err)
			sonde_errmsg_set(err, e, "can't keep %s as %s: %s", path, *old,
					 sonde_strerror(e));
		free(*old);
		*old = NULL;
		return e;
	}
	return 0;
}

static void finish(struct sonde_outfile *of)
{
	free(of->path);
	free(of->tmp);
	of->path = of->tmp = NULL;
	of->fd = -1;
}

int sonde_outfile_commit(struct sonde_outfile *of, struct sonde_errmsg *err)
{
	char *old = NULL;
	int e = 0;

	if (of->is_stdout) {
		finish(of);
		return 0;
	}
	if (of->fd >= 0 && close(of->fd) < 0)
		e = set_err(err, -errno, of->path);
	of->fd = -1;
	if (!e && of->tmp && (of->flags & SONDE_OUTFILE_KEEP_OLD))
		e = keep_old(of->path, &old, err);
	if (!e && of->tmp && rename(of->tmp, of->path) < 0) {
		e = set_err(err, -errno, of->path);
		/* Put the previous capture back where it was. */
		if (old)
			rename(old, of->path);
	}
	if (e && of->tmp)
		unlink(of->tmp);
	free(old);
	finish(of);
	return e;
}

void sonde_outfile_abort(struct sonde_outfile *of)
{
	if (of->fd >= 0 && !of->is_stdout)
		close(of->fd);
	if (of->tmp)
		unlink(of->tmp);
	finish(of);
}
