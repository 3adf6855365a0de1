/* SPDX-License-Identifier: MIT */
/* Small whole-file reads and writes of kernel pseudo files (sysfs, procfs, tracefs). */
#ifndef SONDE_FILEIO_H
#define SONDE_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Reads at most len-1 bytes of @path into @buf, NUL-terminated, trailing
 * newline removed.  Return: bytes kept, or -errno. */
int sonde_read_text(const char *path, char *buf, size_t len);
/* Reads a whole file of any size.  Return: 0 with *out new (free()), or -errno. */
int sonde_read_all(const char *path, char **out, size_t *len);
/* Parses a file holding one unsigned number (decimal, or 0x hex). */
int sonde_read_u64(const char *path, uint64_t *val);
/* Writes @text to an existing file (O_WRONLY|O_TRUNC).  Return: 0 or -errno. */
int sonde_write_text(const char *path, const char *text);
/* snprintf into @buf, returning -ENAMETOOLONG when it does not fit. */
int sonde_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Creates every missing folder above the last '/' of @path with @mode.
 * Return: 0 or the -errno of the first mkdir that failed (EEXIST is fine). */
int sonde_mkdir_parents(const char *path, unsigned int mode);

#include <stdbool.h>
struct sonde_strlist;
/* Appends the names in folder @path (no dot entries), folders only when
 * @dirs_only, sorted.  Return: 0 or -errno. */
int sonde_list_dir(const char *path, bool dirs_only, struct sonde_strlist *out);
#endif
