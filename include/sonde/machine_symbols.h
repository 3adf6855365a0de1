/* SPDX-License-Identifier: MIT */
/*
 * The machine model (include/sonde/machine.h) over the symbol world: the
 * host's factory makes every map's object the struct sonde_dso the symbol
 * table keeps for that file (one object per file, however its maps were
 * recorded), and resolving an address adds the object address and the
 * symbol to the map.  Host side; the target side uses the machine with
 * objects of its own (record's build-id pass).
 */
#ifndef SONDE_MACHINE_SYMBOLS_H
#define SONDE_MACHINE_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include <sonde/machine.h>
#include <sonde/symbols.h>

/* Where an address was resolved. */
struct sonde_location {
	const struct sonde_map *map;	/* NULL when no map holds the ip */
	struct sonde_dso *dso;		/* the map's object; NULL with no map */
	uint64_t addr;			/* object address (for symbols), or the ip */
	const struct sonde_symbol *sym; /* NULL when unresolved */
	bool kernel;
};

/**
 * sonde_machine_symbols_new() - an empty machine whose maps hold @st's dsos
 * @st: borrowed; must outlive the machine
 * Return: 0 with *out new (free with sonde_machine_free()), or -ENOMEM.
 */
int sonde_machine_symbols_new(struct sonde_machine **out, struct sonde_symtab *st);

/**
 * sonde_machine_resolve() - map, object and symbol of @ip in @pid, for a
 * machine made by sonde_machine_symbols_new()
 * @cpumode: the record's misc & PERF_RECORD_MISC_CPUMODE_MASK (0 to guess
 *           from the address)
 */
void sonde_machine_resolve(struct sonde_machine *m, uint32_t pid, uint16_t cpumode, uint64_t ip,
			   struct sonde_location *out);

#endif
