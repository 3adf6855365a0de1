// SPDX-License-Identifier: MIT
/*
 * Configuration reaches the symbol layer as options, never through the
 * environment: the /proc/kallsyms cache is written only into the
 * directory opts.kallsyms_cache_dir names (nothing with NULL, whatever
 * $HOME and $XDG_CACHE_HOME say), and the library's debug notes (cache
 * miss, write, hit; where an object's symbols came from) go through the
 * log hook.  Needs this machine's /proc/kallsyms with addresses (root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/log.h>
#include <sonde/symbols.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static char dir[] = "/tmp/sonde-symcfg-XXXXXX";
static char notes[8192];

static void hook(enum sonde_log_level level, const char *msg, void *data)
{
	(void)data;
	if (level == SONDE_LOG_DEBUG && strlen(notes) + strlen(msg) + 2 < sizeof(notes)) {
		strcat(notes, msg);
		strcat(notes, "\n");
	}
}

/* Resolves one kernel address (loads kallsyms) with @cache_dir. */
static void load_kernel(const char *cache_dir)
{
	struct utsname u;
	struct sonde_symtab_opts so = {.kallsyms_cache_dir = cache_dir, .vmlinux = "/nonexistent"};
	struct sonde_symtab *st;
	struct sonde_dso *d;

	assert_int_equal(uname(&u), 0);
	so.osrelease = u.release;
	assert_int_equal(sonde_symtab_new(&st, &so), 0);
	d = sonde_symtab_findnew_dso(st, "[kernel.kallsyms]", NULL, 0);
	assert_non_null(d);
	sonde_dso_find_symbol(d, 0xffffffff81000000ull);
	sonde_symtab_free(st);
}

/* Entries of @path (0 when it does not exist). */
static int count(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_cache_dir_option(void **state)
{
	char cache[256], file[512];
	struct dirent *e;
	DIR *d;

	(void)state;
	if (access("/proc/kallsyms", R_OK) || geteuid() != 0)
		skip();
	/* The environment must not matter to the library. */
	setenv("HOME", dir, 1);
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("SONDE_NO_CACHE");
	notes[0] = '\0';
	load_kernel(NULL);
	assert_int_equal(count(dir), 0);
	if (!strstr(notes, "[kernel.kallsyms]: ") || !strstr(notes, "symbols from /proc/kallsyms"))
		fail_msg("no load note:\n%s", notes);
	assert_null(strstr(notes, "kallsyms cache"));

	/* A directory given: created, the cache written, then read back. */
	snprintf(cache, sizeof(cache), "%s/a/b", dir);
	notes[0] = '\0';
	load_kernel(cache);
	assert_int_equal(count(cache), 1);
	if (!strstr(notes, ": miss") || !strstr(notes, ": written"))
		fail_msg("no miss/write notes:\n%s", notes);
	notes[0] = '\0';
	load_kernel(cache);
	if (!strstr(notes, ": hit"))
		fail_msg("no hit note:\n%s", notes);

	assert_non_null(d = opendir(cache));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(file, sizeof(file), "%s/%s", cache, e->d_name);
			unlink(file);
		}
	closedir(d);
	rmdir(cache);
	snprintf(cache, sizeof(cache), "%s/a", dir);
	rmdir(cache);
}

static int setup(void **state)
{
	(void)state;
	sonde_log_set(hook, NULL);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cache_dir_option),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
