// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the two texts the symbol layer reads from a
 * capture: kallsyms ("ADDR TYPE NAME [MODULE]") and sonde's module
 * sections ("NAME 0xBASE SIZE PATH" then "\t.SECTION 0xADDR" lines).
 * The input is split at its first NUL: kallsyms before, modules after.
 *
 * --symfs points nowhere, so module paths named by the input never reach
 * real files.  Checked promises: each object's symbols are sorted, don't
 * start inside the previous one, and every symbol is found at its start.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols_internal.h"

static void check_dso(struct sonde_dso *d)
{
	size_t i;

	sonde_dso_find_symbol(d, 0);
	sonde_dso_find_symbol(d, UINT64_MAX);
	for (i = 0; i < d->nr_syms; i++) {
		const struct sonde_symbol *s = &d->syms[i];

		if (i && s->start <= d->syms[i - 1].start)
			abort();
		if (s->size && sonde_dso_find_symbol(d, s->start) != s)
			abort();
		if (!s->name || s->dso != d)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nul = memchr(data, 0, size);
	struct sonde_symtab_opts o = {
	    .symfs = "/nonexistent-sonde-fuzz",
	    .no_proc_kallsyms = true,
	};
	struct sonde_symtab *st;
	size_t i, n;

	o.kallsyms = text;
	o.kallsyms_len = nul ? (size_t)(nul - text) : size;
	if (nul) {
		o.modules = nul + 1;
		o.modules_len = size - o.kallsyms_len - 1;
	}
	if (sonde_symtab_new(&st, &o) < 0)
		return 0;
	check_dso(sonde_symtab_findnew_dso(st, "[kernel.kallsyms]", NULL, 0));
	sonde_kmodule_info(st, "");
	n = st->nr_kmods;
	for (i = 0; i < n && i < 8; i++) {
		char name[300];

		snprintf(name, sizeof(name), "[%s]", st->kmods[i].name);
		check_dso(sonde_symtab_findnew_dso(st, name, NULL, 0));
	}
	for (i = 0; i < st->nr_ksyms && i < 8; i++) {
		char name[300];

		if (!st->ksyms[i].module)
			continue;
		snprintf(name, sizeof(name), "[%s]", st->ksyms[i].module);
		check_dso(sonde_symtab_findnew_dso(st, name, NULL, 0));
	}
	sonde_symtab_free(st);
	return 0;
}
