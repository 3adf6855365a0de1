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
/* Lowercase hex of @id into @buf (2 * len + 1 bytes). */
void sonde_build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif
