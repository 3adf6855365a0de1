/* SPDX-License-Identifier: MIT */
/*
 * Machine: the recorded system's state as a capture's records replay it:
 * threads and their commands, each process's address maps, and the
 * kernel's maps (the kernel image and its modules).  Host side: maps
 * point at struct sonde_dso objects of the symbol layer, so resolving a
 * sample's ip is one map search plus one symbol lookup.
 *
 * Processes are found by pid, threads by tid; a thread belongs to the
 * process of its pid.  Forks copy the parent's maps into a new process,
 * MMAP/MMAP2 replace what they overlap; an exec (COMM with the exec flag)
 * keeps them for the samples taken while the exec runs, until the new
 * image's MMAPs replace them, as perf does.  Everything is owned by the machine and freed with it.
 */
#ifndef SONDE_MACHINE_H
#define SONDE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/perf_data.h>
#include <sonde/symbols.h>

struct sonde_machine;

struct sonde_map {
	uint64_t start, end; /* [start, end) runtime addresses */
	uint64_t pgoff;	     /* file offset of start (kernel: as the MMAP gave it) */
	struct sonde_dso *dso;
};

struct sonde_thread {
	uint32_t pid, tid;
	uint32_t comm; /* interned: sonde_machine_str() */
};

/* Where an address was resolved. */
struct sonde_location {
	const struct sonde_map *map;	/* NULL when no map holds the ip */
	struct sonde_dso *dso;		/* NULL with no map */
	uint64_t addr;			/* object address (for symbols), or the ip */
	const struct sonde_symbol *sym; /* NULL when unresolved */
	bool kernel;
};

/**
 * sonde_machine_new() - an empty machine over a symbol world
 * @st: borrowed; must outlive the machine
 * Return: 0 with *out new (free with sonde_machine_free()), or -ENOMEM.
 */
int sonde_machine_new(struct sonde_machine **out, struct sonde_symtab *st);
void sonde_machine_free(struct sonde_machine *m);

/**
 * sonde_machine_process() - apply a side-band record (MMAP, MMAP2, COMM,
 * FORK, EXIT); other types are ignored.
 * Return: 0 or -ENOMEM.
 */
int sonde_machine_process(struct sonde_machine *m, const struct sonde_pd_record *rec,
			  const struct sonde_pd_event *ev);

/* Borrowed: the thread @tid (made on first sight, comm "pid:tid" unknown as ":TID"). */
/* The thread @tid as last seen (its latest comm). Return: borrowed, or NULL. */
const struct sonde_thread *sonde_machine_find_thread(const struct sonde_machine *m, uint32_t tid);
struct sonde_thread *sonde_machine_findnew_thread(struct sonde_machine *m, uint32_t pid,
						  uint32_t tid);

/**
 * sonde_machine_resolve() - map, object and symbol of @ip in @pid
 * @cpumode: the record's misc & PERF_RECORD_MISC_CPUMODE_MASK (0 to guess
 *           from the address)
 */
void sonde_machine_resolve(struct sonde_machine *m, uint32_t pid, uint16_t cpumode, uint64_t ip,
			   struct sonde_location *out);

/* Borrowed: interned string @id (comms). */
const char *sonde_machine_str(const struct sonde_machine *m, uint32_t id);
/* Interns @s. Return: its id, or UINT32_MAX when out of memory. */
uint32_t sonde_machine_intern(struct sonde_machine *m, const char *s);

/* Calls @fn for every thread seen. */
void sonde_machine_for_each_thread(struct sonde_machine *m,
				   void (*fn)(void *ctx, const struct sonde_thread *t), void *ctx);

#endif
