/* SPDX-License-Identifier: MIT */
/*
 * Offline DWARF unwinding of `--call-graph dwarf` samples with libdwfl:
 * the user registers and the stack copy saved with a sample, plus the
 * process's mappings at that time, give the user call chain.  Host side.
 *
 * The caller owns the process model: it answers "which file is mapped
 * at this address" through a callback, so this module keeps only libdwfl
 * state (one Dwfl per process, reused across its samples, with modules
 * reported as their mappings are first met).
 */
#ifndef SONDE_UNWIND_H
#define SONDE_UNWIND_H

#include <stddef.h>
#include <stdint.h>

struct sonde_unwinder;

/* A file mapping of the process, as the MMAP/MMAP2 records gave it. */
struct sonde_unwind_map {
	uint64_t start, end, pgoff;
	const char *path; /* the file to read (already redirected under a symfs), borrowed */
};

/* Finds the mapping holding @addr. Return: 0 with *out filled, or -ENOENT. */
typedef int (*sonde_unwind_find_map_fn)(void *ctx, uint32_t pid, uint64_t addr,
					struct sonde_unwind_map *out);

/* One sample's saved user state (perf_event sample fields). */
struct sonde_unwind_sample {
	uint32_t pid, tid;
	uint64_t abi;	      /* PERF_SAMPLE_REGS_ABI_* */
	uint64_t regs_mask;   /* the attr's sample_regs_user */
	const uint64_t *regs; /* one u64 per bit set in regs_mask, low bit first */
	uint32_t nr_regs;
	const uint8_t *stack; /* the copied stack, starting at the sampled SP */
	uint64_t stack_size;  /* bytes valid (dyn_size) */
	const char *arch;     /* the capture's arch feature ("x86_64", "aarch64"), or NULL: host */
};

/**
 * sonde_unwinder_new() - an unwinder for user stacks copied into samples
 * @out: receives the unwinder
 * @find: finds the mapping of an address (required, else -EINVAL)
 * @ctx: passed to @find
 * Return: 0 with *out new (free with sonde_unwinder_free()), -EINVAL or -ENOMEM.
 */
int sonde_unwinder_new(struct sonde_unwinder **out, sonde_unwind_find_map_fn find, void *ctx);
/**
 * sonde_unwinder_free() - free the unwinder and the objects it opened
 * @u: the unwinder, or NULL
 */
void sonde_unwinder_free(struct sonde_unwinder *u);

/**
 * sonde_unwind() - the user call chain of one sample
 * @ips: receives up to @max return addresses, innermost (the sampled ip)
 *       first, as perf's callchain would list them: a caller's entry is
 *       its return address - 1 (inside the call instruction), except
 *       after a signal frame
 * Return: the number of frames (>= 1 when the ip register was saved), or
 * a negative error: -ENODATA (no user registers, or no ip among them),
 * -ENOTSUP (an arch or ABI not unwound here, or files of another machine
 * than the capture's arch), -ENOMEM.
 * Unwinding stops quietly where the stack copy or the CFI ends.
 */
int sonde_unwind(struct sonde_unwinder *u, const struct sonde_unwind_sample *s, uint64_t *ips,
		 size_t max);
/* A process exited or exec'd: forget its libdwfl state. */
void sonde_unwinder_forget(struct sonde_unwinder *u, uint32_t pid);

#endif
