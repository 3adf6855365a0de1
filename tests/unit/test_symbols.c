// SPDX-License-Identifier: MIT
/*
 * The symbol layer against real files built at build time
 * (tests/fixtures/symbols): a -g -O1 PIE with a forced inline, and a
 * relocatable object treated as a kernel module.  Oracles: libelf (symbol
 * addresses), eu-addr2line (lines and inline call sites, every byte of the
 * interesting functions) and LINE_* markers in the sources.  Also: a
 * stripped copy with its debug file found by build id, --symfs with the
 * build-id check, a wrong build id refused with a search log that says
 * why, kallsyms text for the kernel and for modules without a .ko, a .ko
 * placed at saved section addresses, and map_ip on non-zero pgoff maps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/buildid.h>
#include <sonde/symbols.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		fprintf(stderr, "%s not set (run through meson test)\n", name);
		abort();
	}
	return v;
}

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* st_value and st_size of @name in @path's .symtab. */
static void elf_sym(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *e;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	while (!found && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(data, (int)i, &s) &&
			    !strcmp(elf_strptr(e, sh.sh_link, s.st_name), name)) {
				*addr = s.st_value;
				*size = s.st_size;
				found = true;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	if (!found)
		fail_msg("%s not in %s", name, path);
}

/* The line of @src holding @marker. */
static uint32_t marker_line(const char *src, const char *marker)
{
	char line[512];
	uint32_t n = 0;
	FILE *f = fopen(src, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("marker %s not in %s", marker, src);
	return 0;
}

static size_t build_id(const char *path, uint8_t id[SONDE_BUILD_ID_MAX])
{
	int n = sonde_build_id_of_file(path, id);

	assert_true(n > 0);
	return (size_t)n;
}

static char tmp[256];

static int setup(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/sonde-symbols-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* ---- user objects ---------------------------------------------------- */

static void check_functions(struct sonde_dso *d, const char *elf)
{
	static const char *const names[] = {"fix_leaf", "fix_caller", "main"};
	size_t i;

	for (i = 0; i < 3; i++) {
		uint64_t a, sz;
		const struct sonde_symbol *s;

		elf_sym(elf, names[i], &a, &sz);
		s = sonde_dso_find_symbol(d, a);
		assert_non_null(s);
		assert_string_equal(s->name, names[i]);
		assert_int_equal(s->start, a);
		assert_true(s->dso == d);
		s = sonde_dso_find_symbol(d, a + sz - 1);
		assert_non_null(s);
		assert_string_equal(s->name, names[i]);
	}
}

/*
 * Every byte of fix_caller and fix_leaf: srcline and inline call sites as
 * eu-addr2line -i prints them.  Also checks the markers were seen.
 */
static void check_lines(struct sonde_dso *d, const char *elf, const char *src)
{
	uint32_t l_leaf = marker_line(src, "LINE_LEAF"), l_body = marker_line(src, "LINE_INL_BODY");
	uint32_t l_call = marker_line(src, "LINE_CALL");
	bool seen_leaf = false, seen_inl = false;
	const char *fns[] = {"fix_caller", "fix_leaf"};
	size_t f;

	for (f = 0; f < 2; f++) {
		char cmd[8192], out[1024];
		uint64_t a, sz, cur = 0;
		size_t len, k = 0, j;
		struct sonde_srcline want[16];
		FILE *p;

		elf_sym(elf, fns[f], &a, &sz);
		len = (size_t)snprintf(cmd, sizeof(cmd), "%s -a -i -e '%s'", env("ADDR2LINE"), elf);
		for (j = 0; j < sz && len < sizeof(cmd) - 32; j++)
			len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " 0x%llx",
						(unsigned long long)(a + j));
		p = popen(cmd, "r");
		assert_non_null(p);
		/* groups: "0xADDR" then FILE:LINE[:COL] lines, innermost first */
		for (bool more = true; more;) {
			char *c;

			more = fgets(out, sizeof(out), p) != NULL;
			if (!more || !strncmp(out, "0x", 2)) {
				if (k && want[0].line) {
					struct sonde_srcline sl, calls[16];
					const char *names[16];
					int n;

					assert_int_equal(sonde_dso_srcline(d, cur, &sl), 0);
					assert_string_equal(base(sl.file), want[0].file);
					if (sl.line != want[0].line)
						fail_msg("0x%llx: line %u, eu-addr2line %u",
							 (unsigned long long)cur, sl.line,
							 want[0].line);
					n = sonde_dso_inlines(d, cur, names, calls, 16, NULL);
					assert_int_equal(n, (int)k - 1);
					{ /* again, from the caches */
						struct sonde_srcline again;

						assert_int_equal(sonde_dso_srcline(d, cur, &again),
								 0);
						assert_ptr_equal(again.file, sl.file);
						assert_int_equal(again.line, sl.line);
						assert_int_equal(
						    sonde_dso_inlines(d, cur, NULL, NULL, 16, NULL),
						    n);
					}
					for (j = 1; j < k; j++) {
						assert_int_equal(calls[j - 1].line, want[j].line);
						assert_string_equal(base(calls[j - 1].file),
								    want[j].file);
					}
					if (sl.line == l_leaf)
						seen_leaf = true;
					if (sl.line == l_body && n >= 1 &&
					    !strcmp(names[0], "fix_inl") && calls[0].line == l_call)
						seen_inl = true;
				}
				for (j = 0; j < k; j++)
					free((char *)want[j].file);
				k = 0;
				if (more)
					cur = strtoull(out, NULL, 16);
				continue;
			}
			if (k == 16)
				continue;
			c = strchr(out, ':');
			if (!c)
				continue;
			*c = '\0';
			want[k].file = strdup(base(out));
			want[k].line = (uint32_t)strtoul(c + 1, NULL, 10);
			k++;
		}
		pclose(p);
	}
	assert_true(seen_leaf);
	assert_true(seen_inl);
}

static void test_user_object(void **state)
{
	const char *fix = env("SYMFIX");
	struct sonde_symtab *st;
	struct sonde_dso *d;
	uint8_t id[SONDE_BUILD_ID_MAX];
	size_t n = build_id(fix, id);

	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	d = sonde_symtab_findnew_dso(st, fix, id, n);
	assert_non_null(d);
	assert_ptr_equal(sonde_symtab_findnew_dso(st, fix, id, n), d);
	assert_int_equal(sonde_dso_kind(d), SONDE_DSO_USER);
	assert_string_equal(sonde_dso_short_name(d), "symfix");
	assert_null(sonde_dso_symbol_file(d));
	check_functions(d, fix);
	assert_true(sonde_dso_has_symbols(d));
	assert_null(sonde_dso_search_log(d));
	assert_string_equal(sonde_dso_symbol_file(d), fix);
	check_lines(d, fix, env("SYMFIX_SRC"));
	/* ids are dense and lead back */
	assert_true(sonde_symtab_nr_symbols(st) >= 3);
	for (uint32_t i = 0; i < sonde_symtab_nr_symbols(st); i++)
		assert_int_equal(sonde_symtab_symbol(st, i)->id, i);
	assert_null(sonde_symtab_symbol(st, (uint32_t)sonde_symtab_nr_symbols(st)));
	/* outside every function */
	assert_null(sonde_dso_find_symbol(d, 0x7fffffff));
	sonde_symtab_free(st);
}

/* Five names at one address: the one perf's choose_best_symbol() keeps. */
static void test_elf_aliases(void **state)
{
	const char *fix = env("SYMFIX");
	struct sonde_symtab *st;
	struct sonde_dso *d;
	uint64_t a, sz;

	elf_sym(fix, "fix_target", &a, &sz);
	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	d = sonde_symtab_findnew_dso(st, fix, NULL, 0);
	assert_string_equal(sonde_dso_find_symbol(d, a)->name, "fix_target_long");
	assert_int_equal(sonde_dso_find_symbol(d, a)->size, sz);
	sonde_symtab_free(st);
}

/* A C++ mangled name: shown demangled (perf's style, no parameters), kept mangled. */
static void test_demangle(void **state)
{
	const char *fix = env("SYMFIX");
	struct sonde_symtab_opts o = {.no_demangle = true};
	const struct sonde_symbol *s;
	struct sonde_symtab *st;
	struct sonde_dso *d;
	uint64_t a, sz;

	elf_sym(fix, "_ZN3fix6detail6mangleEi", &a, &sz);
	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	d = sonde_symtab_findnew_dso(st, fix, NULL, 0);
	s = sonde_dso_find_symbol(d, a + 1);
	assert_string_equal(s->name, "fix::detail::mangle");
	assert_string_equal(s->mangled, "_ZN3fix6detail6mangleEi");
	/* C names are their own mangled form */
	elf_sym(fix, "fix_leaf", &a, &sz);
	s = sonde_dso_find_symbol(d, a);
	assert_ptr_equal(s->name, s->mangled);
	sonde_symtab_free(st);

	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, fix, NULL, 0);
	elf_sym(fix, "_ZN3fix6detail6mangleEi", &a, &sz);
	assert_string_equal(sonde_dso_find_symbol(d, a)->name, "_ZN3fix6detail6mangleEi");
	sonde_symtab_free(st);
}

/* A stripped copy whose debug file sits in DEBUGDIR/.build-id/xx/rest.debug. */
static void test_stripped_debug_dir(void **state)
{
	const char *fix = env("SYMFIX");
	char dbg[512], hex[2 * SONDE_BUILD_ID_MAX + 1], stripped[512];
	uint8_t id[SONDE_BUILD_ID_MAX];
	size_t n = build_id(fix, id);
	const char *dirs[1] = {dbg};
	struct sonde_symtab_opts o = {.debug_dirs = dirs, .nr_debug_dirs = 1};
	struct sonde_symtab *st;
	struct sonde_dso *d, *d2;
	struct sonde_srcline sl;
	uint64_t a, sz;

	sonde_build_id_hex(id, n, hex);
	snprintf(dbg, sizeof(dbg), "%s/dbg", tmp);
	snprintf(stripped, sizeof(stripped), "%s/symfix-stripped", tmp);
	run("mkdir -p '%s/.build-id/%.2s' && %s --only-keep-debug '%s' '%s/.build-id/%.2s/%s.debug'"
	    " && %s -o '%s' '%s'",
	    dbg, hex, env("OBJCOPY"), fix, dbg, hex, hex + 2, env("STRIP"), stripped, fix);

	/* without the debug dir: the stripped file alone has no fix_leaf */
	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	d = sonde_symtab_findnew_dso(st, stripped, id, n);
	elf_sym(fix, "fix_leaf", &a, &sz);
	const struct sonde_symbol *s = sonde_dso_find_symbol(d, a);
	assert_true(!s || strcmp(s->name, "fix_leaf"));
	sonde_symtab_free(st);

	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, stripped, id, n);
	check_functions(d, fix);
	assert_string_equal(sonde_dso_symbol_file(d), stripped);
	check_lines(d, fix, env("SYMFIX_SRC"));

	sonde_symtab_free(st);

	/* the capture's file is gone: the debug file itself is found by build id
	 * (a new symtab: one build id is one object, whatever its path) */
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d2 = sonde_symtab_findnew_dso(st, "/nonexistent/symfix", id, n);
	check_functions(d2, fix);
	assert_int_equal(sonde_dso_srcline(d2, a, &sl), 0);
	assert_string_equal(base(sl.file), "symfix.c");
	assert_non_null(strstr(sonde_dso_symbol_file(d2), ".build-id"));
	sonde_symtab_free(st);
}

static void test_symfs_and_wrong_build_id(void **state)
{
	const char *fix = env("SYMFIX");
	char symfs[512], want[600], hex[2 * SONDE_BUILD_ID_MAX + 1];
	uint8_t id[SONDE_BUILD_ID_MAX], bad[SONDE_BUILD_ID_MAX];
	size_t n = build_id(fix, id);
	struct sonde_symtab_opts o = {.symfs = symfs};
	struct sonde_symtab *st;
	struct sonde_dso *d;
	const char *log;

	snprintf(symfs, sizeof(symfs), "%s/symfs", tmp);
	run("mkdir -p '%s/opt/app' && cp '%s' '%s/opt/app/symfix'", symfs, fix, symfs);
	snprintf(want, sizeof(want), "%s/opt/app/symfix", symfs);
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, "/opt/app/symfix", id, n);
	check_functions(d, fix);
	assert_string_equal(sonde_dso_symbol_file(d), want);

	/* same path, another build id: a different object, refused */
	memcpy(bad, id, n);
	bad[0] ^= 0xff;
	d = sonde_symtab_findnew_dso(st, "/opt/app/symfix", bad, n);
	assert_int_equal(sonde_symtab_nr_dsos(st), 2);
	assert_null(sonde_dso_find_symbol(d, 0x1000));
	assert_false(sonde_dso_has_symbols(d));
	log = sonde_dso_search_log(d);
	assert_non_null(log);
	sonde_build_id_hex(bad, n, hex);
	assert_non_null(strstr(log, hex));	 /* the build id sought */
	assert_non_null(strstr(log, want));	 /* the path tried */
	assert_non_null(strstr(log, "refused")); /* and why */
	assert_non_null(strstr(log, "/usr/lib/debug/.build-id/"));
	/* ... and one warning line names the file and both ids */
	{
		char line[1024], have[2 * SONDE_BUILD_ID_MAX + 1];

		sonde_build_id_hex(id, n, have);
		log = sonde_dso_warning(d, line, sizeof(line));
		assert_non_null(log);
		assert_non_null(strstr(log, want));
		assert_non_null(strstr(log, hex));
		assert_non_null(strstr(log, have));
	}
	sonde_symtab_free(st);
}

/* One file is one object: by build id where known (the record's own, or the
 * capture's build-id table by path), else by path, device and inode. */
static void test_object_identity(void **state)
{
	const char *fix = env("SYMFIX");
	uint8_t id[SONDE_BUILD_ID_MAX], bad[SONDE_BUILD_ID_MAX];
	size_t n = build_id(fix, id);
	char cache[512], hex[2 * SONDE_BUILD_ID_MAX + 1], line[1024];
	struct sonde_symtab_opts o = {.buildid_dir = cache};
	struct sonde_dso_id synth = {.maj = 254, .ino = 100}, kern = {id, n, 0, 0, 0, 0};
	struct sonde_dso_id ino5 = {.maj = 254, .ino = 5}, ino6 = {.maj = 254, .ino = 6};
	struct sonde_symtab *st;
	struct sonde_dso *d;

	memcpy(bad, id, n);
	bad[0] ^= 0xff;
	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	assert_int_equal(sonde_symtab_add_build_id(st, fix, id, n), 0);
	/* synthesized from /proc (dev/inode) and recorded by the kernel (build id) */
	d = sonde_symtab_findnew_dso_id(st, fix, &synth);
	assert_ptr_equal(sonde_symtab_findnew_dso_id(st, fix, &kern), d);
	assert_ptr_equal(sonde_symtab_findnew_dso_id(st, "/elsewhere/copy", &kern), d);
	assert_int_equal(sonde_symtab_nr_dsos(st), 1);
	/* no build id anywhere: the inode tells files apart */
	d = sonde_symtab_findnew_dso_id(st, "/tmp/x", &ino5);
	assert_ptr_not_equal(sonde_symtab_findnew_dso_id(st, "/tmp/x", &ino6), d);
	assert_ptr_equal(sonde_symtab_findnew_dso_id(st, "/tmp/x", &ino5), d);
	/* a path named with two ids keeps neither */
	assert_int_equal(sonde_symtab_add_build_id(st, "/tmp/y", id, n), 0);
	assert_int_equal(sonde_symtab_add_build_id(st, "/tmp/y", bad, n), 0);
	assert_ptr_not_equal(sonde_symtab_findnew_dso_id(st, "/tmp/y", &ino5),
			     sonde_symtab_findnew_dso_id(st, "/tmp/y", &kern));
	sonde_symtab_free(st);

	/* perf's build-id cache: .build-id/xx/rest -> ../../PATH/ID/elf */
	sonde_build_id_hex(id, n, hex);
	snprintf(cache, sizeof(cache), "%s/bcache", tmp);
	run("mkdir -p '%s/.build-id/%.2s' '%s/opt/app/symfix/%s' && cp '%s' '%s/opt/app/symfix/%s/elf'"
	    " && ln -sfn '../../opt/app/symfix/%s' '%s/.build-id/%.2s/%s'",
	    cache, hex, cache, hex, fix, cache, hex, hex, cache, hex, hex + 2);
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, "/nonexistent/app/symfix", id, n);
	check_functions(d, fix);
	assert_non_null(strstr(sonde_dso_symbol_file(d), "/elf"));
	assert_null(sonde_dso_warning(d, line, sizeof(line)));
	sonde_symtab_free(st);
}

/* ---- map_ip ----------------------------------------------------------- */

static void test_map_ip(void **state)
{
	const char *fix = env("SYMFIX");
	struct sonde_symtab *st;
	struct sonde_dso *d, *anon;
	uint64_t a, sz, start = 0x555555556000ull;
	int fd = open(fix, O_RDONLY);
	Elf *e;
	size_t ph, i;
	bool data_seen = false;

	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	d = sonde_symtab_findnew_dso(st, fix, NULL, 0);
	elf_sym(fix, "fix_leaf", &a, &sz);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_int_equal(elf_getphdrnum(e, &ph), 0);
	for (i = 0; i < ph; i++) {
		GElf_Phdr p;
		uint64_t pgoff, ip;

		gelf_getphdr(e, (int)i, &p);
		if (p.p_type != PT_LOAD || !p.p_offset)
			continue;
		/* the mapping of this segment: page-aligned file offset */
		pgoff = p.p_offset & ~0xfffull;
		if (p.p_flags & PF_X) {
			assert_true(a >= p.p_vaddr && a < p.p_vaddr + p.p_filesz);
			ip = start + (a - p.p_vaddr + p.p_offset - pgoff);
			assert_int_equal(sonde_dso_map_ip(d, ip, start, pgoff), a);
			assert_string_equal(
			    sonde_dso_find_symbol(d, sonde_dso_map_ip(d, ip, start, pgoff))->name,
			    "fix_leaf");
		} else if (p.p_vaddr != p.p_offset) { /* RW segment: vaddr and offset differ */
			ip = start + (p.p_offset - pgoff) + 8;
			assert_int_equal(sonde_dso_map_ip(d, ip, start, pgoff), p.p_vaddr + 8);
			data_seen = true;
		}
	}
	assert_true(data_seen);
	elf_end(e);
	close(fd);
	/* no file: plain offset */
	anon = sonde_symtab_findnew_dso(st, "//anon", NULL, 0);
	assert_int_equal(sonde_dso_kind(anon), SONDE_DSO_ANON);
	assert_int_equal(sonde_dso_map_ip(anon, 0x7000, 0x5000, 0x1000), 0x3000);
	assert_null(sonde_dso_find_symbol(anon, 0x3000));
	assert_non_null(sonde_dso_search_log(anon));
	sonde_symtab_free(st);
}

/* ---- kernel ------------------------------------------------------------ */

/*
 * Aliases in kallsyms, as this kernel lists getppid's: perf sizes every
 * symbol up to the next one, so of three names at one address only the
 * last reaches past it and wins (perf report: __x64_sys_getppid), although
 * __ia32_sys_getppid is as global and longer.  Lines out of order (module
 * symbols) keep their order among aliases: the sort is by line, not name.
 */
static const char kallsyms_aliases[] = "ffffffff813827a0 t __pfx___do_sys_getppid\n"
				       "ffffffff813827b0 t __do_sys_getppid\n"
				       "ffffffff813827b0 T __ia32_sys_getppid\n"
				       "ffffffff813827b0 T __x64_sys_getppid\n"
				       "ffffffff81382800 t zzz_local\n"
				       "ffffffff81382800 W aaa_weak\n"
				       "ffffffff81382900 T next_fn\n"
				       "ffffffff81382000 T early_fn\n"; /* out of order */

static void test_kallsyms_aliases(void **state)
{
	struct sonde_symtab_opts o = {.kallsyms = kallsyms_aliases,
				      .kallsyms_len = sizeof(kallsyms_aliases) - 1,
				      .no_proc_kallsyms = true};
	struct sonde_symtab *st;
	struct sonde_dso *k;

	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	k = sonde_symtab_findnew_dso(st, "[kernel.kallsyms]", NULL, 0);
	assert_string_equal(sonde_dso_find_symbol(k, 0xffffffff813827b4ull)->name,
			    "__x64_sys_getppid");
	/* the last of the run wins even when it is weak and the first is local */
	assert_string_equal(sonde_dso_find_symbol(k, 0xffffffff81382810ull)->name, "aaa_weak");
	assert_string_equal(sonde_dso_find_symbol(k, 0xffffffff81382010ull)->name, "early_fn");
	sonde_symtab_free(st);
}

/* This machine's /proc/kallsyms is used only for a capture of this very
 * kernel: same release and, when the capture names one, same build id. */
static void test_proc_kallsyms_of_another_kernel(void **state)
{
	struct utsname u;
	struct sonde_symtab_opts o = {.osrelease = u.release, .kallsyms = NULL};
	uint8_t id[SONDE_BUILD_ID_MAX];
	struct sonde_symtab *st;
	struct sonde_dso *k;
	char line[1024];
	int n = sonde_build_id_of_kernel("/sys", id);
	uint64_t text = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (f) { /* hidden addresses (not root): nothing to show either way */
		if (fscanf(f, "%" SCNx64, &text) != 1)
			text = 0;
		fclose(f);
	}
	if (n <= 0 || !text || uname(&u) < 0)
		skip();
	setenv("SONDE_NO_CACHE", "1", 1);
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	k = sonde_symtab_findnew_dso(st, "[kernel.kallsyms]", id, (size_t)n);
	assert_non_null(sonde_dso_find_symbol(k, text + 0x100));
	assert_null(sonde_dso_warning(k, line, sizeof(line)));
	sonde_symtab_free(st);
	id[0] ^= 0xff; /* a rebuilt kernel of the same release */
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	k = sonde_symtab_findnew_dso(st, "[kernel.kallsyms]", id, (size_t)n);
	assert_null(sonde_dso_find_symbol(k, text + 0x100));
	assert_non_null(sonde_dso_warning(k, line, sizeof(line)));
	assert_non_null(strstr(line, "/proc/kallsyms"));
	sonde_symtab_free(st);
}

static const char kallsyms[] = "ffffffff81000000 T _text\n"
			       "ffffffff81000100 T start_kernel\n"
			       "ffffffff81000200 t helper_fn\n"
			       "ffffffff81000300 D some_data\n"
			       "ffffffff81000400 W weak_fn\n"
			       "ffffffffc0a00000 t mod_fn1\t[my_mod]\n"
			       "ffffffffc0a00080 T mod_fn2\t[my_mod]\n"
			       "0000000000000000 T hidden\n"
			       "garbage line\n"
			       "ffffffffc0b00000 t other_fn\t[other]"; /* no final newline */

static void test_kallsyms(void **state)
{
	struct sonde_symtab_opts o = {
	    .kallsyms = kallsyms, .kallsyms_len = sizeof(kallsyms) - 1, .no_proc_kallsyms = true};
	struct sonde_symtab *st;
	struct sonde_dso *k, *m, *m2, *none;
	const struct sonde_symbol *s;
	struct sonde_srcline sl;

	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	k = sonde_symtab_findnew_dso(st, "[kernel.kallsyms]", NULL, 0);
	assert_int_equal(sonde_dso_kind(k), SONDE_DSO_KERNEL);
	assert_int_equal(sonde_dso_map_ip(k, 0xffffffff81000150ull, 0, 0), 0xffffffff81000150ull);
	s = sonde_dso_find_symbol(k, 0xffffffff81000150ull);
	assert_non_null(s);
	assert_string_equal(s->name, "start_kernel");
	assert_int_equal(s->size, 0x100);
	/* some_data is not text: helper_fn runs to weak_fn */
	assert_string_equal(sonde_dso_find_symbol(k, 0xffffffff81000350ull)->name, "helper_fn");
	assert_string_equal(sonde_dso_find_symbol(k, 0xffffffff81000400ull)->name, "weak_fn");
	assert_null(sonde_dso_find_symbol(k, 0xffffffff80000000ull));
	/* module symbols do not belong to the kernel */
	s = sonde_dso_find_symbol(k, 0xffffffffc0a00010ull);
	assert_true(!s || strcmp(s->name, "mod_fn1"));
	assert_int_equal(sonde_dso_srcline(k, 0xffffffff81000150ull, &sl), -ENOENT);
	assert_string_equal(sonde_dso_symbol_file(k), "kallsyms saved in the capture");

	/* a module without a .ko: kallsyms "[my_mod]" lines, '-' read as '_' */
	m = sonde_symtab_findnew_dso(st, "[my-mod]", NULL, 0);
	assert_int_equal(sonde_dso_kind(m), SONDE_DSO_MODULE);
	assert_string_equal(sonde_dso_short_name(m), "[my_mod]");
	assert_string_equal(sonde_dso_find_symbol(m, 0xffffffffc0a00010ull)->name, "mod_fn1");
	assert_string_equal(sonde_dso_find_symbol(m, 0xffffffffc0a00090ull)->name, "mod_fn2");
	m2 = sonde_symtab_findnew_dso(st, "/lib/modules/6.1.0/kernel/other.ko", NULL, 0);
	assert_int_equal(sonde_dso_kind(m2), SONDE_DSO_MODULE);
	assert_string_equal(sonde_dso_find_symbol(m2, 0xffffffffc0b00004ull)->name, "other_fn");
	none = sonde_symtab_findnew_dso(st, "[nothere]", NULL, 0);
	assert_null(sonde_dso_find_symbol(none, 0xffffffffc0a00010ull));
	assert_non_null(strstr(sonde_dso_search_log(none), "nothere"));
	sonde_symtab_free(st);

	/* no kallsyms and no vmlinux: unresolved, and the log says so */
	o.kallsyms = NULL;
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	k = sonde_symtab_findnew_dso(st, "[kernel.kallsyms]", NULL, 0);
	assert_null(sonde_dso_find_symbol(k, 0xffffffff81000150ull));
	assert_non_null(strstr(sonde_dso_search_log(k), "kallsyms"));
	sonde_symtab_free(st);
}

/* ---- a kernel module (.ko) --------------------------------------------- */

static void test_module_ko(void **state)
{
	const char *ko = env("KMODFIX");
	char dir[512], modules[512], path[600];
	uint64_t a, sz, e, esz, text = 0xffffffffc0a00000ull;
	struct sonde_symtab_opts o = {.modules_dir = dir, .no_proc_kallsyms = true};
	struct sonde_symtab *st;
	struct sonde_dso *d;
	const struct sonde_symbol *s;
	struct sonde_srcline sl;

	snprintf(dir, sizeof(dir), "%s/mods", tmp);
	snprintf(path, sizeof(path), "%s/kernel/drivers/misc/sym-mod.ko", dir);
	run("mkdir -p '%s/kernel/drivers/misc' && cp '%s' '%s'", dir, ko, path);
	snprintf(modules, sizeof(modules),
		 "other 0xffffffffc0900000 4096 [other]\n\t.text 0xffffffffc0900000\n"
		 "sym_mod 0x%llx 8192 /lib/modules/6.1.0/kernel/drivers/misc/sym-mod.ko\n"
		 "\t.bss 0xffffffffc0a01000\n\t.data 0xffffffffc0a00800\n\t.text 0x%llx\n",
		 (unsigned long long)text, (unsigned long long)text);
	o.modules = modules;
	o.modules_len = strlen(modules);
	elf_sym(ko, "kmod_helper", &a, &sz);
	elf_sym(ko, "kmod_entry", &e, &esz);

	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, "[sym_mod]", NULL, 0);
	s = sonde_dso_find_symbol(d, text + a + 1);
	assert_non_null(s);
	assert_string_equal(s->name, "kmod_helper");
	assert_int_equal(s->start, text + a);
	assert_string_equal(sonde_dso_symbol_file(d), path);
	assert_string_equal(sonde_dso_find_symbol(d, text + e)->name, "kmod_entry");
	assert_int_equal(sonde_dso_srcline(d, text + a, &sl), 0);
	assert_string_equal(base(sl.file), "kmodfix.c");
	assert_int_equal(sl.line, marker_line(env("KMODFIX_SRC"), "LINE_KMOD"));
	/* the unplaced address (the .o's own 0-based layout) resolves to nothing */
	assert_null(sonde_dso_find_symbol(d, a));
	sonde_symtab_free(st);

	/* --image wins, and is found for the capture path too */
	const char *im[1] = {path};
	char image[700];

	snprintf(image, sizeof(image), "sym_mod=%s", path);
	im[0] = image;
	o.modules_dir = NULL;
	o.images = im;
	o.nr_images = 1;
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, "/lib/modules/6.1.0/kernel/drivers/misc/sym-mod.ko", NULL,
				     0);
	assert_string_equal(sonde_dso_short_name(d), "[sym_mod]");
	assert_string_equal(sonde_dso_find_symbol(d, text + a)->name, "kmod_helper");
	sonde_symtab_free(st);

	/* no .ko anywhere: the log names the places tried */
	o.images = NULL;
	o.nr_images = 0;
	o.modules_dir = dir;
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, "[other]", NULL, 0);
	assert_null(sonde_dso_find_symbol(d, 0xffffffffc0900000ull));
	assert_non_null(strstr(sonde_dso_search_log(d), dir));
	sonde_symtab_free(st);
}

/* @len bytes of @path at @addr: of the section named @scn_name at offset
 * @addr (a relocatable file), or of the section holding vaddr @addr. */
static void file_bytes(const char *path, const char *scn_name, uint64_t addr, size_t len,
		       uint8_t *out)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstr;
	bool found = false;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstr), 0);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		uint64_t off;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_PROGBITS)
			continue;
		if (scn_name ? strcmp(elf_strptr(elf, shstr, sh.sh_name), scn_name)
			     : (addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size))
			continue;
		off = scn_name ? addr : addr - sh.sh_addr;
		d = elf_getdata(scn, NULL);
		assert_true(off + len <= d->d_size);
		memcpy(out, (const uint8_t *)d->d_buf + off, len);
		found = true;
	}
	assert_true(found);
	elf_end(elf);
	close(fd);
}

/* Code bytes for annotate: from the object's own file, never a debug file. */
static void test_read_bytes(void **state)
{
	const char *fix = env("SYMFIX");
	char dbg[512], hex[2 * SONDE_BUILD_ID_MAX + 1], stripped[512];
	uint8_t id[SONDE_BUILD_ID_MAX], want[4096], got[4096];
	size_t n = build_id(fix, id);
	const char *dirs[1] = {dbg};
	struct sonde_symtab_opts o = {.debug_dirs = dirs, .nr_debug_dirs = 1};
	struct sonde_symtab *st;
	struct sonde_dso *d;
	uint64_t a, sz;

	elf_sym(fix, "fix_leaf", &a, &sz);
	assert_true(sz > 0 && sz <= sizeof(want));
	file_bytes(fix, NULL, a, sz, want);
	sonde_build_id_hex(id, n, hex);
	snprintf(dbg, sizeof(dbg), "%s/rb-dbg", tmp);
	snprintf(stripped, sizeof(stripped), "%s/symfix-rb-stripped", tmp);
	run("mkdir -p '%s/.build-id/%.2s' && %s --only-keep-debug '%s' '%s/.build-id/%.2s/%s.debug'"
	    " && %s -o '%s' '%s'",
	    dbg, hex, env("OBJCOPY"), fix, dbg, hex, hex + 2, env("STRIP"), stripped, fix);
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	/* the file itself, and the stripped copy with its debug file */
	d = sonde_symtab_findnew_dso(st, fix, id, n);
	assert_int_equal(sonde_dso_read_bytes(d, a, sz, got), (long)sz);
	assert_memory_equal(got, want, sz);
	sonde_symtab_free(st);
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, stripped, id, n);
	memset(got, 0, sizeof(got));
	assert_int_equal(sonde_dso_read_bytes(d, a, sz, got), (long)sz);
	assert_memory_equal(got, want, sz);
	/* only the debug file left: its code sections are NOBITS */
	sonde_symtab_free(st);
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, "/nonexistent/symfix", id, n);
	assert_non_null(sonde_dso_find_symbol(d, a));
	assert_int_equal(sonde_dso_read_bytes(d, a, sz, got), -ENOENT);
	/* outside every section; no object */
	assert_int_equal(sonde_dso_read_bytes(d, 0x7fffffff0000ull, 4, got), -ENOENT);
	assert_int_equal(sonde_dso_read_bytes(NULL, a, 4, got), -EINVAL);
	sonde_symtab_free(st);
}

/* A .ko's code where the capture placed its .text. */
static void test_read_bytes_ko(void **state)
{
	const char *ko = env("KMODFIX");
	char modules[512], image[600];
	const char *im[1] = {image};
	uint8_t want[4096], got[4096];
	uint64_t a, sz, text = 0xffffffffc0a00000ull;
	struct sonde_symtab_opts o = {.images = im, .nr_images = 1, .no_proc_kallsyms = true};
	struct sonde_symtab *st;
	struct sonde_dso *d;

	snprintf(image, sizeof(image), "sym_mod=%s", ko);
	snprintf(modules, sizeof(modules), "sym_mod 0x%llx 8192 [sym_mod]\n\t.text 0x%llx\n",
		 (unsigned long long)text, (unsigned long long)text);
	o.modules = modules;
	o.modules_len = strlen(modules);
	elf_sym(ko, "kmod_helper", &a, &sz);
	assert_true(sz > 0 && sz <= sizeof(want));
	file_bytes(ko, ".text", a, sz, want);
	assert_int_equal(sonde_symtab_new(&st, &o), 0);
	d = sonde_symtab_findnew_dso(st, "[sym_mod]", NULL, 0);
	assert_int_equal(sonde_dso_read_bytes(d, text + a, sz, got), (long)sz);
	assert_memory_equal(got, want, sz);
	/* the file's own 0-based layout is not where the module runs */
	assert_int_equal(sonde_dso_read_bytes(d, a, sz, got), -ENOENT);
	sonde_symtab_free(st);
}

/* ---- the hot path: a million cached lookups ----------------------------- */

static void test_many_lookups(void **state)
{
	const char *fix = env("SYMFIX");
	struct sonde_symtab *st;
	struct sonde_dso *d;
	uint64_t a, sz, c, csz;
	size_t i, hits = 0;

	assert_int_equal(sonde_symtab_new(&st, NULL), 0);
	d = sonde_symtab_findnew_dso(st, fix, NULL, 0);
	elf_sym(fix, "fix_leaf", &a, &sz);
	elf_sym(fix, "fix_caller", &c, &csz);
	for (i = 0; i < 1000000; i++) {
		uint64_t addr = (i & 1) ? a + i % sz : c + i % csz;
		const struct sonde_symbol *s = sonde_dso_find_symbol(d, addr);

		if (s && !strcmp(s->name, (i & 1) ? "fix_leaf" : "fix_caller"))
			hits++;
	}
	assert_int_equal(hits, 1000000);
	sonde_symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_user_object),
	    cmocka_unit_test(test_stripped_debug_dir),
	    cmocka_unit_test(test_symfs_and_wrong_build_id),
	    cmocka_unit_test(test_object_identity),
	    cmocka_unit_test(test_proc_kallsyms_of_another_kernel),
	    cmocka_unit_test(test_map_ip),
	    cmocka_unit_test(test_elf_aliases),
	    cmocka_unit_test(test_demangle),
	    cmocka_unit_test(test_kallsyms),
	    cmocka_unit_test(test_kallsyms_aliases),
	    cmocka_unit_test(test_module_ko),
	    cmocka_unit_test(test_read_bytes),
	    cmocka_unit_test(test_read_bytes_ko),
	    cmocka_unit_test(test_many_lookups),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
