// SPDX-License-Identifier: MIT
/*
 * The agent's token file, both sides.
 *
 * Every TCP connection to an agent authenticates with a token: one given
 * (--token-file), or one the agent makes at start in a file only its user
 * can read, by default /run/sonde-agent/token (root) or
 * $XDG_RUNTIME_DIR/sonde-agent/token.  Reading that file is the proof: a
 * local user who can't read it can't use the agent, whatever port it
 * listens on.  A token is made in a temporary file and link()ed into
 * place, so agents started side by side agree on one token and none reads
 * a half-written file; an existing default file is used only when it is a
 * regular file of this user that nobody else can read or write (a given
 * --token-file is the admin's choice: the agent warns about its mode).  libc only: the
 * static agent links this, and the host reads the default file when its
 * target is on loopback.
 */
#include <sonde/agent.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_BYTES 32

const char *sonde_agent_token_default_path(const char *run, char *buf, size_t len)
{
	int n;

	if (geteuid() == 0)
		n = snprintf(buf, len, "/run/sonde-agent/token");
	else if (run && run[0] == '/')
		n = snprintf(buf, len, "%s/sonde-agent/token", run);
	else
		return NULL;
	return n > 0 && (size_t)n < len ? buf : NULL;
}

/* Reads the open token file @fd: trailing newlines and spaces dropped. */
static int read_fd(int fd, char **tok, size_t *len)
{
	char buf[SONDE_AGENT_MAX_TOKEN + 2];
	size_t n = 0;
	ssize_t r;

	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		n += (size_t)r;
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	if (!n || n > SONDE_AGENT_MAX_TOKEN)
		return -EINVAL;
	if (!(*tok = malloc(n + 1)))
		return -ENOMEM;
	memcpy(*tok, buf, n);
	(*tok)[n] = '\0';
	*len = n;
	return 0;
}

int sonde_agent_token_read(const char *path, char **tok, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = read_fd(fd, tok, len);
	close(fd);
	return r;
}

/* A file (or directory) of ours that no one else can write (or, for the
 * token, read). */
static int check_private(const struct stat *st, mode_t others)
{
	if (st->st_uid != geteuid())
		return -EPERM;
	return st->st_mode & others ? -EPERM : 0;
}

static int make_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	if (slash == path)
		return 0;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	/* Only a directory nobody else can write: no one can swap our file. */
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return check_private(&st, S_IWGRP | S_IWOTH);
}

static int random_token(char *out, size_t outlen)
{
	uint8_t raw[TOKEN_BYTES];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t r = getrandom(raw + got, sizeof(raw) - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		got += (size_t)r;
	}
	for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < outlen; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* Writes a new token to a temporary file beside @path and links it into
 * place: 0, or -EEXIST when another agent was first. */
static int create(const char *path)
{
	char tmp[4200], tok[2 * TOKEN_BYTES + 2];
	int fd, r;

	if ((r = random_token(tok, sizeof(tok))) < 0)
		return r;
	strcat(tok, "\n");
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = write(fd, tok, strlen(tok)) == (ssize_t)strlen(tok) && fsync(fd) == 0 ? 0 : -EIO;
	close(fd);
	if (r == 0 && link(tmp, path) < 0)
		r = -errno;
	unlink(tmp);
	return r;
}

int sonde_agent_token_load(const char *path, bool strict, char **tok, size_t *len)
{
	bool made = false;
	struct stat st;
	int fd, r;

	for (int attempt = 0; attempt < 2; attempt++) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		if ((r = make_dir(path)) < 0)
			return r;
		r = create(path);
		if (r < 0 && r != -EEXIST)
			return r;
		made = r == 0;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		r = -EINVAL;
	else
		r = strict || made ? check_private(&st, S_IRWXG | S_IRWXO) : 0;
	if (r == 0)
		r = read_fd(fd, tok, len);
	close(fd);
	return r < 0 ? r : made;
}
