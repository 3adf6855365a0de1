/* SPDX-License-Identifier: MIT */
/*
 * Build ids (the GNU build-id note) of ELF files, the running kernel and
 * its modules: how a host matches the objects of a capture with its own
 * copies, whatever their paths.  libc only: read on the target.
 */
#ifndef SONDE_BUILDID_H
#define SONDE_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define SONDE_BUILD_ID_MAX 20

/* Finds NT_GNU_BUILD_ID in a notes blob (/sys/kernel/notes, a PT_NOTE segment).
 * Return: the id's length (> 0) copied into @id, or -ENOENT. */
int sonde_build_id_from_notes(const void *notes, size_t len, uint8_t id[SONDE_BUILD_ID_MAX]);
/* The build id of ELF file @path (32 or 64 bit, either byte order). */
int sonde_build_id_of_file(const char *path, uint8_t id[SONDE_BUILD_ID_MAX]);
/* The running kernel's, from @sysfs/kernel/notes. */
int sonde_build_id_of_kernel(const char *sysfs, uint8_t id[SONDE_BUILD_ID_MAX]);
/* A loaded module's, from @sysfs/module/NAME/notes/.note.gnu.build-id. */
int sonde_build_id_of_module(const char *sysfs, const char *name, uint8_t id[SONDE_BUILD_ID_MAX]);
/**
 * sonde_buildid_cache_add() - keeps the ELF image in @fd in perf's build-id
 * cache @dir (perf's layout: DIR/NAME/HEX/vdso, "elf" for a file, and the
 * link DIR/.build-id/HE/X... -> ../../NAME/HEX), as `perf record` does
 * @name: the object as the capture names it, "[vdso]" or an absolute path
 * @id: the capture's build id for it (@len bytes); the image must carry it
 * Return: 0 (also when the entry was there), -ESTALE when the image's
 * build id is another, or -errno.
 */
int sonde_buildid_cache_add(const char *dir, const char *name, const uint8_t *id, size_t len,
			    int fd);
/* Lowercase hex of @id into @buf (2 * len + 1 bytes). */
void sonde_build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif
