/* SPDX-License-Identifier: MIT */
/*
 * This process's vDSO image: the [vdso] of every process on this kernel,
 * which has no file on disk.  A capture's [vdso] samples are named from it
 * (when its build id matches the capture's), and it is what `sonde
 * record` keeps in the build-id cache, as perf does.  libc only.
 */
#ifndef SONDE_VDSO_H
#define SONDE_VDSO_H

#include <stddef.h>

/**
 * sonde_vdso_image() - where this process's vDSO is mapped
 * @image: set to its first byte (borrowed: the mapping lives as long as
 *         the process)
 * Return: 0, or -errno (-ENOENT without a vDSO).
 */
int sonde_vdso_image(const void **image, size_t *len);

/**
 * sonde_vdso_open() - the vDSO mapping of this process copied into a
 * memory file (memfd), which reads like an ELF file at "/proc/self/fd/N"
 * Return: the fd (close it), or -errno (-ENOENT without a vDSO).
 */
int sonde_vdso_open(void);

/* @len bytes of @buf in a new memfd named @name.  Return: the fd or -errno. */
int sonde_memfd_of(const char *name, const void *buf, size_t len);

#endif
