/* SPDX-License-Identifier: MIT */
/*
 * Symbols: names, source lines and inlined frames for addresses in user
 * objects, the kernel and its modules, through elfutils' libdwfl.  Host
 * side only (never linked by the agent).
 *
 * A struct sonde_symtab is one report's symbol world.  Objects (struct
 * sonde_dso) are found once per (path, build id) and owned by the symtab;
 * their symbols are interned and handed out as borrowed const pointers
 * valid until sonde_symtab_free().  Lookups are cached per object, so a
 * report that resolves the same address a million times pays for libdwfl
 * once.
 *
 * Addresses: user objects are resolved by "object address", the ELF
 * virtual address of the loaded file (what `nm` prints), obtained from a
 * sample's ip and its mapping with sonde_dso_map_ip().  The kernel and
 * module objects take the runtime kernel address itself.
 */
#ifndef SONDE_SYMBOLS_H
#define SONDE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sonde_symtab;
struct sonde_dso;

/* Where to look; every field may be zero/NULL. */
struct sonde_symtab_opts {
	const char *symfs;	       /* --symfs: capture paths are looked up under it */
	const char *const *debug_dirs; /* --debug-dir, tried before the defaults */
	size_t nr_debug_dirs;
	const char *vmlinux;	   /* -k FILE */
	const char *modules_dir;   /* --modules-dir: holds NAME.ko (searched recursively) */
	const char *const *images; /* --image NAME=PATH, NAME a module or an object basename */
	size_t nr_images;
	const char *osrelease; /* the capture's kernel release (header feature) */
	const char *kallsyms;  /* kallsyms text saved in the capture, borrowed */
	size_t kallsyms_len;
	const char *modules; /* sonde's module sections feature text, borrowed */
	size_t modules_len;
	const char *buildid_dir; /* perf's build-id cache (--buildid-dir, ~/.debug) */
	/* Where this boot's /proc/kallsyms text symbols are cached (created,
	 * mode 0700; the CLI: $XDG_CACHE_HOME/sonde or ~/.cache/sonde, NULL
	 * with SONDE_NO_CACHE).  NULL: no cache, nothing written. */
	const char *kallsyms_cache_dir;
	bool no_proc_kallsyms; /* never read this machine's /proc/kallsyms */
	bool no_inline;	       /* skip inlined frames (faster) */
	bool no_demangle;      /* keep C++/Rust names mangled (--no-demangle) */
};

/**
 * sonde_symtab_new() - a symbol world for one report
 * Return: 0 with *out new (free with sonde_symtab_free()), or -ENOMEM.
 */
int sonde_symtab_new(struct sonde_symtab **out, const struct sonde_symtab_opts *opts);
void sonde_symtab_free(struct sonde_symtab *st);

enum sonde_dso_kind {
	SONDE_DSO_USER = 0,
	SONDE_DSO_KERNEL, /* [kernel.kallsyms] */
	SONDE_DSO_MODULE, /* a kernel module, by name ("[ext4]" in perf's MMAPs) */
	SONDE_DSO_ANON,	  /* [vdso], //anon, [heap]...: no file */
};

/**
 * sonde_symtab_findnew_dso() - the object for a mapping's file
 * @path: the file name as the capture has it ("/usr/lib/libc.so.6",
 *        "[kernel.kallsyms]", "[ext4]", "/lib/modules/.../ext4.ko", "[vdso]")
 * @build_id, @build_id_len: from the MMAP2 record or the BUILD_ID feature, or 0
 *
 * Nothing is opened until the first lookup.
 * Return: borrowed: owned by @st; NULL only when out of memory.
 */
struct sonde_dso *sonde_symtab_findnew_dso(struct sonde_symtab *st, const char *path,
					   const uint8_t *build_id, size_t build_id_len);

/* What a mapping record says about its file; every field may be zero. */
struct sonde_dso_id {
	const uint8_t *build_id; /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	size_t build_id_len;
	uint32_t maj, min; /* MMAP2 without a build id */
	uint64_t ino, ino_generation;
};

/**
 * sonde_symtab_findnew_dso_id() - the object behind a mapping
 *
 * One file is one object, however its mappings were recorded: keyed by
 * build id when @id has one or the capture's build-id table
 * (sonde_symtab_add_build_id()) names one for @path, else by @path with
 * the file's dev and inode.  The first path seen is the object's name.
 * Return: borrowed: owned by @st; NULL only when out of memory.
 */
struct sonde_dso *sonde_symtab_findnew_dso_id(struct sonde_symtab *st, const char *path,
					      const struct sonde_dso_id *id);

/**
 * sonde_symtab_add_build_id() - one entry of the capture's build-id table
 * (HEADER_BUILD_ID), before any object is found.  A path given two
 * different ids keeps neither.
 * Return: 0 or -ENOMEM.
 */
int sonde_symtab_add_build_id(struct sonde_symtab *st, const char *path, const uint8_t *id,
			      size_t len);

/**
 * sonde_dso_kind() - what kind of object @d is
 * @d: the object
 * Return: user file, kernel, kernel module or anonymous (no file).
 */
enum sonde_dso_kind sonde_dso_kind(const struct sonde_dso *d);
/* The name reports show: the file's basename, "[kernel.kallsyms]", "[ext4]". */
const char *sonde_dso_short_name(const struct sonde_dso *d);
/* The path as given. */
const char *sonde_dso_long_name(const struct sonde_dso *d);
/* The object's build id as the capture gave it (MMAP2 or build-id table), else NULL. */
const uint8_t *sonde_dso_build_id(const struct sonde_dso *d, size_t *len);
/* Dense id, 0..sonde_symtab_nr_dsos()-1, in creation order. */
uint32_t sonde_dso_id(const struct sonde_dso *d);
size_t sonde_symtab_nr_dsos(const struct sonde_symtab *st);
/**
 * sonde_symtab_dso() - object @id
 * @st: the symbol table
 * @id: a dense id (sonde_dso_id())
 * Return: borrowed object, or NULL when @id is out of range.
 */
struct sonde_dso *sonde_symtab_dso(const struct sonde_symtab *st, uint32_t id);

/**
 * sonde_dso_map_ip() - object address of a user-space @ip
 * @map_start, @map_pgoff: the MMAP/MMAP2 record's start and pgoff
 *
 * Uses the object's program headers (opening it on first use); falls back
 * to ip - map_start + map_pgoff when the file cannot be read.  Kernel and
 * module objects return @ip.
 */
uint64_t sonde_dso_map_ip(struct sonde_dso *d, uint64_t ip, uint64_t map_start, uint64_t map_pgoff);

/* An interned function symbol; borrowed, valid until sonde_symtab_free(). */
struct sonde_symbol {
	const char *name;     /* as shown: C++/Rust names of user objects demangled
				* (libiberty, perf's style: no parameters) */
	uint64_t start, size; /* object addresses */
	struct sonde_dso *dso;
	uint32_t id;	     /* dense over the symtab: 0..sonde_symtab_nr_symbols()-1 */
	const char *mangled; /* as in the symbol table (== name when not mangled) */
};

/**
 * sonde_dso_find_symbol() - the function holding object address @addr
 * Return: borrowed symbol, or NULL (unresolved: show hex with the object).
 */
const struct sonde_symbol *sonde_dso_find_symbol(struct sonde_dso *d, uint64_t addr);
/**
 * sonde_symtab_nr_symbols() - the number of symbols the table holds so far
 * @st: the symbol table
 * Return: the count; ids for sonde_symtab_symbol() are below it.
 */
size_t sonde_symtab_nr_symbols(const struct sonde_symtab *st);
/**
 * sonde_symtab_symbol() - symbol @id
 * @st: the symbol table
 * @id: a dense id (struct sonde_symbol's id)
 * Return: borrowed symbol, or NULL when @id is out of range.
 */
const struct sonde_symbol *sonde_symtab_symbol(const struct sonde_symtab *st, uint32_t id);

/* A source position; file borrowed (interned), line 0 when unknown. */
struct sonde_srcline {
	const char *file;
	uint32_t line;
};

/* Source line of object address @addr (of the innermost inlined code). Return: 0 or -ENOENT. */
int sonde_dso_srcline(struct sonde_dso *d, uint64_t addr, struct sonde_srcline *out);

/*
 * The compilation directory of the code at @addr (DW_AT_comp_dir), which
 * relative source file names are relative to.  Return: borrowed
 * (interned), or NULL when unknown.
 */
const char *sonde_dso_comp_dir(struct sonde_dso *d, uint64_t addr);

/*
 * Inlined frames at @addr, innermost first: @names[i] is the inlined
 * function, @calls[i] where it was inlined (the caller's line).  Fills at
 * most @max.  With @outer, also the function the DWARF places at @addr, the
 * one those frames are inlined into, named as addr2line and perf name it
 * (the linkage name, demangled): perf 6.1 shows an unwound frame under this
 * name, as "(inlined)", when it differs from the symbol's
 * (__libc_start_main_impl for __libc_start_main@@GLIBC_2.34); borrowed
 * (interned), or NULL without DWARF there.  One lookup gives both.
 * Return: the number of frames (0 when none), or an error.
 */
int sonde_dso_inlines(struct sonde_dso *d, uint64_t addr, const char **names,
		      struct sonde_srcline *calls, size_t max, const char **outer);

/**
 * sonde_dso_read_bytes() - the code at object addresses [@addr, @addr + @len)
 *
 * Read from the object's own file, the one whose symbols the layer
 * loaded: a stripped binary's code comes from the binary itself, never
 * from its separate debug file (where code sections are NOBITS); a .ko's
 * from its sections as placed at the capture's addresses (relocations
 * are not applied to code: calls into the kernel show as unrelocated).
 * Copies at most up to the end of the section holding @addr.
 * Return: the number of bytes copied into @buf, or -ENOENT when no file
 * section with contents holds @addr.
 */
long sonde_dso_read_bytes(struct sonde_dso *d, uint64_t addr, size_t len, void *buf);

/*
 * Why an object stayed unresolved (for --verbose): a borrowed message
 * naming where it looked ("/usr/lib/debug/.build-id/ab/cdef.debug: not
 * found; ..."), or NULL when it resolved.
 */
const char *sonde_dso_search_log(const struct sonde_dso *d);
/*
 * A warning worth one line without --verbose, or NULL: the object's file
 * was found with a different build id than the capture's (rebuilt or
 * updated since), no matching copy was found anywhere (build-id cache,
 * debug dirs), so its samples stay unresolved.  Return: @buf holding the
 * line (no newline), or NULL.
 */
const char *sonde_dso_warning(const struct sonde_dso *d, char *buf, size_t len);
/* True when symbols were found (after at least one lookup). */
bool sonde_dso_has_symbols(const struct sonde_dso *d);
/* The file actually used for symbols (may differ from the long name), or NULL. */
const char *sonde_dso_symbol_file(const struct sonde_dso *d);
/*
 * The ELF file the object's symbols are read from, found as symbols are
 * (--image, --symfs, the build-id cache, debug dirs; the [vdso] from the
 * cache or this kernel's image, build ids checked): a path that opens it,
 * for readers of its code and CFI such as the DWARF unwinder.  Loads the
 * object.  Return: borrowed (valid while @d lives), or NULL when none
 * was found.
 */
const char *sonde_dso_object_file(struct sonde_dso *d);

#endif
