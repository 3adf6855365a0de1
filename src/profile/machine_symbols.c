// SPDX-License-Identifier: MIT
/*
 * The host's objects for the machine model: each MMAP's file becomes the
 * symbol table's dso for it (sonde_symtab_findnew_dso_id(): by build id,
 * else by device and inode, else by path), and a resolved address becomes
 * an object address and a symbol of that dso.  Called once per sample and
 * per call-chain frame, so it adds nothing to the machine's map search
 * but the dso's own address translation and symbol lookup.
 */
#include <sonde/machine_symbols.h>

/* The factory: the machine's desc of an MMAP's file -> the dso of that file. */
static void *dso_of(void *ctx, const struct sonde_object_desc *d)
{
	struct sonde_dso_id id = {d->build_id, d->build_id_len, d->maj,
				  d->min,      d->ino,		d->ino_generation};

	return sonde_symtab_findnew_dso_id(ctx, d->filename, &id);
}

int sonde_machine_symbols_new(struct sonde_machine **out, struct sonde_symtab *st)
{
	return sonde_machine_new(out, dso_of, st);
}

void sonde_machine_resolve(struct sonde_machine *m, uint32_t pid, uint16_t cpumode, uint64_t ip,
			   struct sonde_location *out)
{
	const struct sonde_map *map = sonde_machine_find_map(m, pid, cpumode, ip);
	struct sonde_dso *dso;
	enum sonde_dso_kind kind;

	if (!map) {
		*out = (struct sonde_location){.addr = ip,
					       .kernel = sonde_machine_kernel_ip(cpumode, ip)};
		return;
	}
	dso = map->object;
	kind = sonde_dso_kind(dso);
	out->map = map;
	out->dso = dso;
	out->kernel = kind == SONDE_DSO_KERNEL || kind == SONDE_DSO_MODULE;
	out->addr = sonde_dso_map_ip(dso, ip, map->start, map->pgoff);
	out->sym = sonde_dso_find_symbol(dso, out->addr);
}
