/* SPDX-License-Identifier: MIT */
/*
 * Register names of perf's --user-regs/--intr-regs for the architecture
 * sonde was built for, as perf names them (arch/<arch>/util/perf_regs.c):
 * a comma-separated list becomes the sample_regs_user/_intr bit mask, bit
 * n being the kernel's PERF_REG_<ARCH>_<NAME> number.  libc only.
 */
#ifndef SONDE_REGS_H
#define SONDE_REGS_H

#include <stddef.h>
#include <stdint.h>

/**
 * sonde_regs_parse() - the mask of a list of register names
 * @list: "ip,sp" (case-insensitive); NULL or "" for every register
 * @mask: receives the bit mask
 * @bad: receives the first unknown name (may be NULL)
 * Return: 0, -EINVAL for an unknown name, -ENOTSUP where this build knows
 * no registers (an architecture without perf register support).
 */
int sonde_regs_parse(const char *list, uint64_t *mask, char *bad, size_t badlen);

/* The register names in bit order ("ax bx ... r15"), for usage errors. */
const char *sonde_regs_list(void);

/* The name of register @bit, or NULL. */
const char *sonde_regs_name(unsigned int bit);

#endif
