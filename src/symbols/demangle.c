// SPDX-License-Identifier: MIT
/*
 * C++ and Rust names as people read them, with the field's demangler:
 * libiberty's cplus_demangle(), which GNU binutils, gdb and perf use.  In
 * its automatic style it reads the Itanium C++ ABI (_Z...), Rust's legacy
 * scheme (_ZN...17h<hash>E, the hash dropped) and Rust's v0 (_R...).
 *
 * The options follow perf report 6.1: no parameter lists and no
 * qualifiers (perf adds them only with -v), so a row reads
 * "llvm::FoldingSetBase::FindNodeOrInsertPos" and overloads share it.
 * Only user-space objects are demangled, as perf (its demangle_kernel
 * option is off by default); every symbol keeps its mangled name too.
 *
 * Names are demangled once, when an object's symbols are loaded; the
 * cheap prefix test keeps C names (most of them) off the demangler.
 */
#include "symbols_internal.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

static bool maybe_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

const char *sonde_symbols_demangle(struct sonde_symtab *st, const char *name)
{
	static const char plt[] = "@plt";
	size_t len = strlen(name), pl = sizeof(plt) - 1;
	bool is_plt = len > pl && !strcmp(name + len - pl, plt);
	char buf[1024], *dm;
	const char *out;

	if (st->opts.no_demangle || !maybe_mangled(name))
		return name;
	/* a PLT entry: the target's name demangled, then "@plt" (as perf) */
	if (is_plt) {
		if (len - pl >= sizeof(buf))
			return name;
		memcpy(buf, name, len - pl);
		buf[len - pl] = '\0';
	}
	dm = cplus_demangle(is_plt ? buf : name, DMGL_AUTO);
	if (!dm || !dm[0]) {
		free(dm);
		return name;
	}
	len = strlen(dm);
	if (is_plt) {
		char *grown = realloc(dm, len + pl + 1);

		if (!grown) {
			free(dm);
			return name;
		}
		dm = grown;
		memcpy(dm + len, plt, pl + 1);
		len += pl;
	}
	out = sonde_strpool_add(&st->pool, dm, len);
	free(dm);
	return out ? out : name;
}
