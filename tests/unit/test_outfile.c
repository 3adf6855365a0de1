// SPDX-License-Identifier: MIT
/* Output files renamed into place only when committed (src/core/outfile.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/outfile.h>

struct dir {
	char path[64];
	char file[128];
};

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	strcpy(d->path, "/tmp/sonde-outfile-XXXXXX");
	if (!mkdtemp(d->path))
		return -1;
	snprintf(d->file, sizeof(d->file), "%s/perf.data", d->path);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
	if (system(cmd) != 0)
		return -1;
	free(d);
	return 0;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void assert_content(const char *path, const char *text)
{
	char buf[64];

	assert_int_equal(sonde_read_text(path, buf, sizeof(buf)), (int)strlen(text));
	assert_string_equal(buf, text);
}

/* Entries of the folder, so a test sees a temporary file left behind. */
static int nr_entries(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	int n = 0;

	assert_non_null(dir);
	while ((de = readdir(dir)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(dir);
	return n;
}

static void test_abort_keeps_previous(void **state)
{
	struct dir *d = *state;
	struct sonde_outfile of;

	put(d->file, "good");
	assert_int_equal(sonde_outfile_open(&of, d->file, 0600, SONDE_OUTFILE_KEEP_OLD, NULL), 0);
	assert_false(of.stream);
	assert_int_equal(write(of.fd, "bad", 3), 3);
	/* Until committed, the target is the old file. */
	assert_content(d->file, "good");
	sonde_outfile_abort(&of);
	assert_content(d->file, "good");
	assert_int_equal(nr_entries(d->path), 1);
}

static void test_commit_rotates_old(void **state)
{
	struct dir *d = *state;
	struct sonde_outfile of;
	char old[160];

	put(d->file, "first");
	assert_int_equal(sonde_outfile_open(&of, d->file, 0600, SONDE_OUTFILE_KEEP_OLD, NULL), 0);
	assert_int_equal(write(of.fd, "second", 6), 6);
	assert_int_equal(sonde_outfile_commit(&of, NULL), 0);
	assert_content(d->file, "second");
	snprintf(old, sizeof(old), "%s.old", d->file);
	assert_content(old, "first");
	assert_int_equal(nr_entries(d->path), 2);
}

static void test_commit_without_old(void **state)
{
	struct dir *d = *state;
	struct sonde_outfile of;
	struct stat st;

	put(d->file, "first");
	assert_int_equal(sonde_outfile_open(&of, d->file, 0640, 0, NULL), 0);
	assert_int_equal(write(of.fd, "x", 1), 1);
	assert_int_equal(sonde_outfile_commit(&of, NULL), 0);
	assert_content(d->file, "x");
	assert_int_equal(nr_entries(d->path), 1);
	assert_int_equal(stat(d->file, &st), 0);
	assert_int_equal(st.st_mode & 0600, 0600);
	assert_int_equal(st.st_mode & 0007, 0);
}

static void test_symlink_target_replaced(void **state)
{
	struct dir *d = *state;
	struct sonde_outfile of;
	char link[160];
	struct stat st;

	put(d->file, "first");
	snprintf(link, sizeof(link), "%s/link", d->path);
	assert_int_equal(symlink(d->file, link), 0);
	assert_int_equal(sonde_outfile_open(&of, link, 0600, 0, NULL), 0);
	assert_int_equal(write(of.fd, "via", 3), 3);
	assert_int_equal(sonde_outfile_commit(&of, NULL), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_content(d->file, "via");
}

static void test_fifo_is_a_stream(void **state)
{
	struct dir *d = *state;
	struct sonde_outfile of;
	char buf[8] = {0};
	int rfd;

	assert_int_equal(mkfifo(d->file, 0600), 0);
	rfd = open(d->file, O_RDONLY | O_NONBLOCK);
	assert_true(rfd >= 0);
	assert_int_equal(sonde_outfile_open(&of, d->file, 0600, SONDE_OUTFILE_KEEP_OLD, NULL), 0);
	assert_true(of.stream);
	assert_null(of.tmp);
	assert_int_equal(write(of.fd, "pipe", 4), 4);
	assert_int_equal(sonde_outfile_commit(&of, NULL), 0);
	assert_int_equal(read(rfd, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "pipe");
	close(rfd);
	/* Nothing renamed over the FIFO, no .old made of it. */
	assert_int_equal(nr_entries(d->path), 1);
}

static void test_dash_is_stdout(void **state)
{
	struct sonde_outfile of;

	(void)state;
	assert_int_equal(sonde_outfile_open(&of, "-", 0600, SONDE_OUTFILE_STDOUT, NULL), 0);
	assert_int_equal(of.fd, STDOUT_FILENO);
	assert_true(of.stream && of.is_stdout);
	assert_int_equal(sonde_outfile_commit(&of, NULL), 0);
	/* Standard output stays open. */
	assert_true(fcntl(STDOUT_FILENO, F_GETFD) >= 0);
}

static void test_errors_name_the_target(void **state)
{
	struct dir *d = *state;
	struct sonde_outfile of;
	struct sonde_errmsg err = {{0}};
	char sub[160], msg[300];

	assert_int_equal(sonde_outfile_open(&of, d->path, 0600, 0, &err), -EISDIR);
	snprintf(sub, sizeof(sub), "%s/none/perf.data", d->path);
	assert_int_equal(sonde_outfile_open(&of, sub, 0600, 0, &err), -ENOENT);
	snprintf(msg, sizeof(msg), "%s: No such file or directory", sub);
	assert_string_equal(err.text, msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_abort_keeps_previous, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_commit_rotates_old, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_commit_without_old, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlink_target_replaced, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fifo_is_a_stream, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dash_is_stdout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors_name_the_target, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
