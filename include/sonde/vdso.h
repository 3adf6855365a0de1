/* SPDX-License-Identifier: MIT */
/*
 * This process's vDSO image: the [vdso] of every process on this kernel,
 * which has no file on disk.  A capture's [vdso] samples are named from it
 * (when its build id matches the capture's), and it is what `sonde
 * record` keeps in the build-id cache, as perf does.  libc only.
 */
#ifndef SONDE_VDSO_H
#define SONDE_VDSO_H

/**
 * sonde_vdso_open() - the vDSO mapping of this process copied into a
 * memory file (memfd), which reads like an ELF file at "/proc/self/fd/N"
 * Return: the fd (close it), or -errno (-ENOENT without a vDSO).
 */
int sonde_vdso_open(void);

#endif
