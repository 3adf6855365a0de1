/* SPDX-License-Identifier: MIT */
/*
 * Structure checks of a trace.dat before libtracecmd reads it.
 * libtracecmd and libtraceevent trust the lengths and offsets they read,
 * so a damaged file can take the reader down; these checks walk the
 * file's layout (trace-cmd's trace-cmd.dat(5): version 6 sections in
 * order, version 7 section headers) and say where it stops making sense.
 */
#ifndef SONDE_TRACE_DAT_CHECK_H
#define SONDE_TRACE_DAT_CHECK_H

#include <stddef.h>
#include <stdint.h>

/**
 * trace_dat_check() - walk a trace.dat image's layout
 * @data, @size: the whole file
 * @good: receives how far the walk got (the offset of the last checked byte + 1)
 * @err: receives "offset 0x...: what is wrong" on failure
 *
 * Return: 0 when the layout holds, -1 otherwise.
 */
int trace_dat_check(const uint8_t *data, size_t size, uint64_t *good, char *err, size_t len);

#endif
