/* SPDX-License-Identifier: MIT */
/*
 * Machine: the recorded system's state as a capture's records replay it:
 * threads and their commands, each process's address maps, and the
 * kernel's maps (the kernel image and its modules).
 *
 * Target side, libc only: the model knows nothing of symbols.  A map
 * holds an opaque object pointer that the owner's factory callback
 * (given to sonde_machine_new()) returns for each MMAP/MMAP2, from what
 * the record says of the file (struct sonde_object_desc).  The host's
 * session makes its objects symbol-layer dsos
 * (include/sonde/machine_symbols.h); record's build-id pass makes objects
 * it marks as hit.  Resolving an address gives the map: start, end, file
 * offset and object.
 *
 * Processes are found by pid, threads by tid; a thread belongs to the
 * process of its pid.  Forks copy the parent's maps into a new process
 * (dropping whatever a dead process of the same pid left), MMAP/MMAP2
 * replace what they overlap; an exec (COMM with the exec flag) keeps them
 * for the samples taken while the exec runs, until the new image's MMAPs
 * replace them, as perf does.  Everything is owned by the machine and
 * freed with it, except the objects: they belong to the factory's owner.
 */
#ifndef SONDE_MACHINE_H
#define SONDE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/perf_data.h>

struct sonde_machine;

/* Addresses at or above this are kernel ones on the 64-bit arches sonde reads. */
#define SONDE_MACHINE_KERNEL_START 0xffff000000000000ull

/* Which address space an object is mapped in, and what it is there. */
enum sonde_object_kind {
	SONDE_OBJECT_USER,   /* a process's mapping (files, [vdso], anonymous memory) */
	SONDE_OBJECT_KERNEL, /* the kernel image: perf's "[kernel.kallsyms]" map */
	SONDE_OBJECT_MODULE, /* any other kernel-space map (modules, by name or .ko path) */
};

/* What one MMAP/MMAP2 record says about the object it maps; borrowed for the call. */
struct sonde_object_desc {
	const char *filename;	 /* "[kernel.kallsyms]" for the kernel image (perf's
			       * "[kernel.kallsyms]_text" suffix dropped), "//anon"
			       * for a map without a name */
	const uint8_t *build_id; /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID, else NULL */
	size_t build_id_len;
	uint32_t maj, min; /* MMAP2 without a build id, else 0 */
	uint64_t ino, ino_generation;
	enum sonde_object_kind kind;
	uint32_t pid; /* the process that mapped it; UINT32_MAX for kernel space */
};

/*
 * The factory: the object for a new map.  Return: a pointer the maps
 * store and hand back (borrowed by the machine, which never frees or
 * dereferences it), or NULL when out of memory (the record fails with
 * -ENOMEM).  The same object may be returned for many maps.
 */
typedef void *(*sonde_machine_object_fn)(void *ctx, const struct sonde_object_desc *d);

struct sonde_map {
	uint64_t start, end; /* [start, end) runtime addresses */
	uint64_t pgoff;	     /* file offset of start (kernel: as the MMAP gave it) */
	void *object;	     /* the factory's */
};

struct sonde_thread {
	uint32_t pid, tid;
	uint32_t comm; /* interned: sonde_machine_str() */
	/* comm came from a COMM record (or is the idle task's): a fork passes
	 * it on; a thread never named keeps ":TID" and its children their own. */
	bool comm_set;
};

/**
 * sonde_machine_new() - an empty machine
 * @object: the factory called once per MMAP/MMAP2 record
 * @ctx: passed to @object
 * Return: 0 with *out new (free with sonde_machine_free()), or -ENOMEM.
 */
int sonde_machine_new(struct sonde_machine **out, sonde_machine_object_fn object, void *ctx);

/** sonde_machine_free() - frees @m and its threads, maps and strings (not the objects); NULL is fine. */
void sonde_machine_free(struct sonde_machine *m);

/**
 * sonde_machine_process() - apply a side-band record (MMAP, MMAP2, COMM,
 * FORK); other types are ignored.
 * Return: 0 or -ENOMEM.
 */
int sonde_machine_process(struct sonde_machine *m, const struct sonde_pd_record *rec,
			  const struct sonde_pd_event *ev);

/**
 * sonde_machine_find_thread() - the thread @tid as last seen (its latest comm)
 * Return: borrowed (valid until the next thread is made), or NULL.
 */
const struct sonde_thread *sonde_machine_find_thread(const struct sonde_machine *m, uint32_t tid);

/**
 * sonde_machine_findnew_thread() - the thread @tid, made on first sight
 * with perf's name for a thread without a COMM (":TID", "swapper" for 0)
 * Return: borrowed (valid until the next thread is made), or NULL when out of memory.
 */
struct sonde_thread *sonde_machine_findnew_thread(struct sonde_machine *m, uint32_t pid,
						  uint32_t tid);

/**
 * sonde_machine_kernel_ip() - does an address of a record with @cpumode
 * belong to kernel space?
 * @cpumode: the record's misc & PERF_RECORD_MISC_CPUMODE_MASK (0 to guess
 *           from the address)
 */
static inline bool sonde_machine_kernel_ip(uint16_t cpumode, uint64_t ip)
{
	return cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL ||
	       (cpumode == 0 && ip >= SONDE_MACHINE_KERNEL_START);
}

/**
 * sonde_machine_find_map() - the map holding @ip: the kernel's maps for a
 * kernel address (sonde_machine_kernel_ip()), else process @pid's.  With
 * an unknown @cpumode (0) the other space is tried too, as perf does.
 * Return: borrowed (valid until the next record is processed), or NULL.
 */
const struct sonde_map *sonde_machine_find_map(struct sonde_machine *m, uint32_t pid,
					       uint16_t cpumode, uint64_t ip);

/** sonde_machine_str() - interned string @id (comms); borrowed, "" for an unknown id. */
const char *sonde_machine_str(const struct sonde_machine *m, uint32_t id);

/** sonde_machine_intern() - interns @s. Return: its id, or UINT32_MAX when out of memory. */
uint32_t sonde_machine_intern(struct sonde_machine *m, const char *s);

/** sonde_machine_for_each_thread() - calls @fn for every thread seen. */
void sonde_machine_for_each_thread(struct sonde_machine *m,
				   void (*fn)(void *ctx, const struct sonde_thread *t), void *ctx);

#endif
