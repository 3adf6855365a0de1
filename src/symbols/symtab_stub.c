// SPDX-License-Identifier: MIT
/* Placeholder until the libdwfl symbol layer lands: objects, no symbols. */
#include <sonde/symbols.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sonde_dso {
	char *path;
	const char *short_name;
	enum sonde_dso_kind kind;
	uint32_t id;
};

struct sonde_symtab {
	struct sonde_dso **v;
	size_t n;
};

int sonde_symtab_new(struct sonde_symtab **out, const struct sonde_symtab_opts *opts)
{
	(void)opts;
	return (*out = calloc(1, sizeof(**out))) ? 0 : -ENOMEM;
}

void sonde_symtab_free(struct sonde_symtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i]->path);
		free(st->v[i]);
	}
	free(st->v);
	free(st);
}

struct sonde_dso *sonde_symtab_findnew_dso(struct sonde_symtab *st, const char *path,
					   const uint8_t *build_id, size_t build_id_len)
{
	struct sonde_dso *d, **v;
	const char *slash;

	(void)build_id, (void)build_id_len;
	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(st->v[i]->path, path))
			return st->v[i];
	if (!(v = realloc(st->v, (st->n + 1) * sizeof(*v))))
		return NULL;
	st->v = v;
	if (!(d = calloc(1, sizeof(*d))) || !(d->path = strdup(path))) {
		free(d);
		return NULL;
	}
	slash = strrchr(d->path, '/');
	d->short_name = slash ? slash + 1 : d->path;
	d->kind = !strcmp(path, "[kernel.kallsyms]") ? SONDE_DSO_KERNEL
		  : path[0] == '['		       ? SONDE_DSO_MODULE
		  : path[0] == '/'		       ? SONDE_DSO_USER
						       : SONDE_DSO_ANON;
	if (!strcmp(path, "[vdso]"))
		d->kind = SONDE_DSO_ANON;
	d->id = (uint32_t)st->n;
	st->v[st->n++] = d;
	return d;
}

enum sonde_dso_kind sonde_dso_kind(const struct sonde_dso *d) { return d->kind; }
const char *sonde_dso_short_name(const struct sonde_dso *d) { return d->short_name; }
const char *sonde_dso_long_name(const struct sonde_dso *d) { return d->path; }
uint32_t sonde_dso_id(const struct sonde_dso *d) { return d->id; }
size_t sonde_symtab_nr_dsos(const struct sonde_symtab *st) { return st->n; }
struct sonde_dso *sonde_symtab_dso(const struct sonde_symtab *st, uint32_t id) { return id < st->n ? st->v[id] : NULL; }

uint64_t sonde_dso_map_ip(struct sonde_dso *d, uint64_t ip, uint64_t map_start, uint64_t map_pgoff)
{
	return d->kind == SONDE_DSO_USER ? ip - map_start + map_pgoff : ip;
}

const struct sonde_symbol *sonde_dso_find_symbol(struct sonde_dso *d, uint64_t addr)
{
	(void)d, (void)addr;
	return NULL;
}

size_t sonde_symtab_nr_symbols(const struct sonde_symtab *st) { (void)st; return 0; }
const struct sonde_symbol *sonde_symtab_symbol(const struct sonde_symtab *st, uint32_t id) { (void)st, (void)id; return NULL; }
int sonde_dso_srcline(struct sonde_dso *d, uint64_t addr, struct sonde_srcline *out) { (void)d, (void)addr, (void)out; return -ENOENT; }
int sonde_dso_inlines(struct sonde_dso *d, uint64_t addr, const char **names, struct sonde_srcline *calls, size_t max) { (void)d, (void)addr, (void)names, (void)calls, (void)max; return 0; }
const char *sonde_dso_search_log(const struct sonde_dso *d) { (void)d; return NULL; }
bool sonde_dso_has_symbols(const struct sonde_dso *d) { (void)d; return false; }
const char *sonde_dso_symbol_file(const struct sonde_dso *d) { (void)d; return NULL; }

#include <sonde/unwind.h>

struct sonde_unwinder {
	int unused;
};

int sonde_unwinder_new(struct sonde_unwinder **out, sonde_unwind_find_map_fn find, void *ctx)
{
	(void)find, (void)ctx;
	return (*out = calloc(1, sizeof(**out))) ? 0 : -ENOMEM;
}

void sonde_unwinder_free(struct sonde_unwinder *u) { free(u); }
int sonde_unwind(struct sonde_unwinder *u, const struct sonde_unwind_sample *s, uint64_t *ips, size_t max) { (void)u, (void)s, (void)ips, (void)max; return -ENOTSUP; }
void sonde_unwinder_forget(struct sonde_unwinder *u, uint32_t pid) { (void)u, (void)pid; }
