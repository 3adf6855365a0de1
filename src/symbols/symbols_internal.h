/* SPDX-License-Identifier: MIT */
/*
 * Internals of the symbol layer (src/symbols), shared by its files:
 *   strpool.c   string arena and interning (every name and file handed out)
 *   symtab.c    the container: options, dso registry, symbol ids, sorted tables
 *   dso.c       one object: loading on first use, lookups and their caches
 *   debuginfo.c user objects and the vDSO: where their files are searched
 *   kernel.c    [kernel.kallsyms]: vmlinux (KASLR) or kallsyms text
 *   kmodule.c   kernel modules: .ko placed at the saved section addresses
 *   dso_elf.c   reporting a file to libdwfl, its segments and symbols
 *   debuginfo_find.c  build-id checks, debug directories, the search log
 *               (dso.c calls the loaders, the loaders call the last two,
 *               never back up)
 *   buildids.c  the capture's build-id table (path -> build id)
 */
#ifndef SONDE_SYMBOLS_INTERNAL_H
#define SONDE_SYMBOLS_INTERNAL_H

#include <sonde/buildid.h>
#include <sonde/symbols.h>

#include <elfutils/libdwfl.h>
#include <stdarg.h>

/* ---- strpool.c: an arena of NUL-terminated strings, with interning ---- */

struct strpool_chunk;
struct strpool {
	struct strpool_chunk *chunks; /* owned, newest first */
	const char **set;	      /* interned strings, open addressing */
	size_t set_n, set_cap;
};

void sonde_strpool_fini(struct strpool *p);
/* A copy of @s (@len bytes) in the arena.  Return: borrowed, or NULL (ENOMEM). */
const char *sonde_strpool_add(struct strpool *p, const char *s, size_t len);
/* Like sonde_strpool_add() but equal strings share one copy (file names, inline names). */
const char *sonde_strpool_intern(struct strpool *p, const char *s);

/* ---- a growing message (the search log); never fails, truncates ---- */

struct slog {
	char *p; /* owned */
	size_t len, cap;
};

void sonde_slog_add(struct slog *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sonde_slog_fini(struct slog *l);

/* ---- symtab.c ---- */

/*
 * A symbol before sorting.  Aliases (symbols at one start) are settled by
 * perf's rule (symtab.c): binding and the order they came in (seq) matter.
 */
struct rawsym {
	uint64_t start, size;
	const char *name;    /* as shown: demangled for user objects (in install) */
	const char *mangled; /* as in the symbol table; in the pool */
	uint32_t seq;	     /* position in the source (symbol table, kallsyms line) */
	uint8_t binding;     /* STB_GLOBAL, STB_WEAK or STB_LOCAL */
};

struct rawsyms {
	struct rawsym *v; /* owned */
	size_t n, cap;
};

int sonde_rawsyms_add(struct rawsyms *r, uint64_t start, uint64_t size, const char *name,
		      uint8_t binding);

/* A kallsyms text symbol, sorted by address then line; module NULL for the kernel. */
struct ksym {
	uint64_t addr;
	const char *name, *module; /* interned */
	uint32_t seq;		   /* line number: aliases keep the file's order */
	char type;		   /* 't', 'T', 'w' or 'W' */
};

/* One block of the saved modules text. */
struct kmod_section {
	const char *name; /* ".text" */
	uint64_t addr;
};

struct kmod_info {
	const char *name, *path; /* interned; path may be "[name]" */
	uint64_t base, size;
	struct kmod_section *secs; /* owned */
	size_t nr_secs;
};

/* One path of the capture's build-id table. */
struct hdr_bid {
	const char *path; /* interned; NULL: empty slot */
	uint8_t id[SONDE_BUILD_ID_MAX];
	size_t len;
	bool ambiguous; /* named with two ids: not used */
};

struct sonde_symtab {
	struct sonde_symtab_opts opts; /* strings copied into pool */
	struct strpool pool;
	struct sonde_dso **dsos; /* owned */
	size_t nr_dsos, cap_dsos;
	struct sonde_dso **dso_hash; /* by (path, build id) */
	size_t dso_hash_cap;
	struct hdr_bid *hbids; /* owned: the capture's build-id table by path */
	size_t nr_hbids, hbids_cap;
	const struct sonde_symbol **by_id; /* symbol ids, borrowed from the dsos */
	size_t nr_syms, cap_syms;
	/* kallsyms text, parsed on first need (kernel.c) */
	bool ksyms_loaded;
	struct ksym *ksyms; /* owned */
	size_t nr_ksyms;
	const char *ksyms_source; /* where they came from, for the log */
	/* saved modules text, parsed on first need (kmodule.c) */
	bool kmods_loaded;
	struct kmod_info *kmods; /* owned */
	size_t nr_kmods;
};

/*
 * Sorts @r, keeps one symbol per start (perf's choice), gives size-0 symbols
 * the distance to the next one (or @last_end for the last), registers ids.
 * @adjust is added to every start.  Return: 0 or -ENOMEM; @r is emptied.
 */
int sonde_symtab_install_symbols(struct sonde_symtab *st, struct sonde_dso *d, struct rawsyms *r,
				 int64_t adjust, uint64_t last_end);

/* ---- demangle.c ---- */

/*
 * @name demangled (C++, Rust; "X@plt" as X demangled + "@plt"), in the
 * pool, or @name itself when it is not mangled or opts.no_demangle.
 */
const char *sonde_symbols_demangle(struct sonde_symtab *st, const char *name);

/* ---- plt.c ---- */

/*
 * Appends a symbol per PLT entry of @elf ("name@plt", as perf's
 * dso__synthesize_plt_symbols) and one ".plt" for the lazy-binding
 * header.  Return: 0, or -ENOMEM.
 */
int sonde_plt_collect_symbols(struct sonde_dso *d, Elf *elf, struct rawsyms *r);

/* ---- buildids.c ---- */

/* The build id the capture's table gives @path (unique), or NULL with *len 0. */
const uint8_t *sonde_symtab_header_build_id(const struct sonde_symtab *st, const char *path,
					    size_t *len);

/* ---- dso.c ---- */

struct symcache_ent {
	uint64_t addr;
	const struct sonde_symbol *sym; /* NULL: empty; &dso_nosym: a miss */
};

struct linecache_ent {
	uint64_t addr;
	const char *file; /* NULL: empty */
	uint32_t line;	  /* 0 with file "": a miss */
};

struct inlrec {
	const char *name, *file;
	uint32_t line;
};

struct inlcache_ent {
	uint64_t addr;
	uint32_t first, n; /* into dso->inl; n == UINT32_MAX: empty */
	const char *outer; /* the DWARF function there (interned), NULL: none */
};

struct load_seg {
	uint64_t vaddr, offset, filesz;
};

struct sonde_dso {
	struct sonde_symtab *st;
	const char *long_name, *short_name; /* interned */
	uint8_t build_id[SONDE_BUILD_ID_MAX];
	size_t build_id_len;
	enum sonde_dso_kind kind;
	uint32_t id;
	uint32_t maj, min; /* the file's identity when no build id is known */
	uint64_t ino, ino_gen;
	/* A file at the object's path whose build id differs (rebuilt since the capture) */
	const char *stale_path; /* interned, or NULL */
	uint8_t stale_id[SONDE_BUILD_ID_MAX];
	size_t stale_id_len;
	char modname[64]; /* MODULE: the kernel's name for it ('-' read as '_') */

	bool loaded;		 /* a load was attempted */
	const char *symbol_file; /* interned, or NULL */
	/* The ELF file symbols were read from (a path that opens it: the
	 * DWARF unwinder reads its CFI and code there too), interned, or NULL */
	const char *object_file;
	int image_fd; /* [vdso] of this kernel: the memfd object_file names; -1 */
	Dwfl *dwfl;   /* owned, one per object; NULL without a file */
	Dwfl_Module *mod;
	int64_t adjust;		   /* object address = libdwfl address + adjust (KASLR) */
	struct sonde_symbol *syms; /* owned, sorted by start */
	size_t nr_syms;

	struct symcache_ent *symcache; /* owned, SYMCACHE_SIZE */
	struct linecache_ent *linecache;
	struct inlcache_ent *inlcache;
	struct inlrec *inl; /* owned */
	size_t nr_inl, cap_inl;

	struct load_seg *segs; /* owned: PT_LOAD of the file, for map_ip */
	size_t nr_segs;
	bool segs_read;

	struct slog log;

	/* kmodule.c: the .ko handed to libdwfl's find_elf, and its sections */
	const char *ko_path;
	int ko_fd;
	const struct kmod_info *kmod;
};

/* Loads symbols on first use.  Return: true when the object has symbols. */
bool sonde_dso_load(struct sonde_dso *d);

/* ---- dso_elf.c: below the loaders, which call it ---- */

/* Reads PT_LOAD headers of @elf into d->segs. */
void sonde_dso_read_segments(struct sonde_dso *d, Elf *elf);
/* Reports @path (@fd consumed either way) to a new Dwfl of @d as an
 * ET_EXEC/ET_DYN object at its own ELF addresses.  Return: true on success. */
bool sonde_dso_report_elf(struct sonde_dso *d, const char *path, int fd);
/* Forgets what sonde_dso_report_elf() or a module report set up. */
void sonde_dso_unreport(struct sonde_dso *d);
/* Collects function symbols of d->mod into @r; @text/@stext get the values of
 * _text/_stext when non-NULL. */
int sonde_dso_collect_symbols(struct sonde_dso *d, struct rawsyms *r, uint64_t *text,
			      uint64_t *stext);

/* ---- debuginfo_find.c: below every loader ---- */

#define DEBUGINFO_MAX_DIRS 32
#define DEBUGINFO_PATHBUF 4096

/* The libdwfl find_debuginfo callback shared by every object. */
int sonde_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			 char **debuginfo_file_name);
/*
 * Opens @path when it exists and, when @d has a build id, matches it.
 * Logs why not otherwise.  Return: an fd, or -1.
 */
int sonde_debuginfo_try(struct sonde_dso *d, const char *path);

/* The build id of the last file sonde_debuginfo_try_id() refused for a mismatch. */
struct debuginfo_refused {
	uint8_t id[SONDE_BUILD_ID_MAX];
	int len;
};

/* sonde_debuginfo_try() against @want (none when @want_len is 0); @rf, when
 * not NULL, receives the build id of a file refused for a mismatch. */
int sonde_debuginfo_try_id(struct sonde_dso *d, const char *path, const uint8_t *want,
			   size_t want_len, struct debuginfo_refused *rf);
/* "DIR/.build-id/ab/cdef...SUFFIX".  Return: 0 or -ENAMETOOLONG. */
int sonde_debuginfo_build_id_path(char *buf, size_t len, const char *dir, const uint8_t *id,
				  size_t n, const char *suffix);
/* Debug directories in search order: opts->debug_dirs, SYMFS/usr/lib/debug, /usr/lib/debug. */
size_t sonde_debuginfo_dirs(const struct sonde_symtab *st, const char **dirs, char *buf,
			    size_t buflen, size_t max);

/* ---- debuginfo.c: user objects and the vDSO ---- */

/* Loads @d from perf's build-id cache (opts.buildid_dir). Return: true on success. */
bool sonde_debuginfo_try_buildid_cache(struct sonde_dso *d);
/* Loads [vdso]: perf's build-id cache, else this machine's vDSO (same build id). */
bool sonde_debuginfo_load_vdso(struct sonde_dso *d);
/* Opens a user object's file (symfs, the path itself, --image, build-id dirs). */
bool sonde_debuginfo_load_user(struct sonde_dso *d);

/* ---- kernel.c / kmodule.c ---- */

bool sonde_kernel_load(struct sonde_dso *d);
bool sonde_kmodule_load(struct sonde_dso *d);
/* Parses kallsyms text (/proc/kallsyms format) into st->ksyms. */
int sonde_kernel_parse_kallsyms(struct sonde_symtab *st, const char *text, size_t len);
void sonde_kernel_load_ksyms(struct sonde_symtab *st);
/* Parses the saved modules text into st->kmods. */
int sonde_kmodule_parse(struct sonde_symtab *st, const char *text, size_t len);
/* Installs kallsyms symbols of @module (NULL: the kernel). Return: true if any. */
bool sonde_kernel_install_ksyms(struct sonde_dso *d, const char *module, uint64_t last_end);
const struct kmod_info *sonde_kmodule_info(struct sonde_symtab *st, const char *name);

#endif
