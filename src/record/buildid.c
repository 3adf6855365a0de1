// SPDX-License-Identifier: MIT
/*
 * GNU build-id notes, read with plain file I/O: the note is found through
 * the program headers (PT_NOTE), which every linked object has, falling
 * back to the section headers (SHT_NOTE) for relocatable .ko files.  Every
 * offset and size read from the file is checked against the file's size.
 */
#include <sonde/buildid.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>

static uint32_t rd32(const unsigned char *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const unsigned char *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

static uint16_t rd16(const unsigned char *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

/* Notes in either byte order: @swap says whether the blob's differs from ours. */
static int find_in_notes(const unsigned char *p, size_t len, bool swap,
			 uint8_t id[SONDE_BUILD_ID_MAX])
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz = rd32(p + off, swap), descsz = rd32(p + off + 4, swap);
		uint32_t type = rd32(p + off + 8, swap);
		size_t name_off = off + 12, desc_off = name_off + ((namesz + 3u) & ~3u);
		size_t next = desc_off + ((descsz + 3u) & ~3u);

		if (namesz > len || descsz > len || next > len || next <= off)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4) &&
		    descsz > 0) {
			size_t n = descsz > SONDE_BUILD_ID_MAX ? SONDE_BUILD_ID_MAX : descsz;

			memcpy(id, p + desc_off, n);
			return (int)n;
		}
		off = next;
	}
	return -ENOENT;
}

int sonde_build_id_from_notes(const void *notes, size_t len, uint8_t id[SONDE_BUILD_ID_MAX])
{
	return find_in_notes(notes, len, false, id);
}

static int read_at(int fd, void *buf, size_t len, uint64_t off, uint64_t fsize)
{
	if (off > fsize || len > fsize - off)
		return -EINVAL;
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

/* Scans @n note regions (offset, size pairs) of the file. */
static int scan_regions(int fd, uint64_t fsize, const uint64_t (*regions)[2], size_t n, bool swap,
			uint8_t id[SONDE_BUILD_ID_MAX])
{
	for (size_t i = 0; i < n; i++) {
		uint64_t size = regions[i][1];
		unsigned char *buf;
		int r;

		if (!size || size > (1u << 20))
			continue;
		buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		r = read_at(fd, buf, size, regions[i][0], fsize);
		if (r == 0)
			r = find_in_notes(buf, size, swap, id);
		free(buf);
		if (r > 0)
			return r;
	}
	return -ENOENT;
}

int sonde_build_id_of_file(const char *path, uint8_t id[SONDE_BUILD_ID_MAX])
{
	unsigned char eh[64], hdr[64];
	uint64_t regions[64][2];
	struct stat st;
	size_t nreg = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = -ENOENT;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || read_at(fd, eh, sizeof(eh), 0, (uint64_t)st.st_size) < 0 ||
	    memcmp(eh, ELFMAG, SELFMAG)) {
		close(fd);
		return -ENOEXEC;
	}
	bool is64 = eh[EI_CLASS] == ELFCLASS64;
	bool swap = (eh[EI_DATA] == ELFDATA2MSB) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	uint64_t fsize = (uint64_t)st.st_size;
	uint64_t phoff = is64 ? rd64(eh + 32, swap) : rd32(eh + 28, swap);
	uint64_t shoff = is64 ? rd64(eh + 40, swap) : rd32(eh + 32, swap);
	uint16_t phentsize = rd16(eh + (is64 ? 54 : 42), swap),
		 phnum = rd16(eh + (is64 ? 56 : 44), swap);
	uint16_t shentsize = rd16(eh + (is64 ? 58 : 46), swap),
		 shnum = rd16(eh + (is64 ? 60 : 48), swap);

	for (uint16_t i = 0; i < phnum && nreg < 64 && phentsize <= sizeof(hdr); i++) {
		if (read_at(fd, hdr, phentsize, phoff + (uint64_t)i * phentsize, fsize) < 0)
			break;
		if (rd32(hdr, swap) != PT_NOTE)
			continue;
		regions[nreg][0] = is64 ? rd64(hdr + 8, swap) : rd32(hdr + 4, swap);
		regions[nreg][1] = is64 ? rd64(hdr + 32, swap) : rd32(hdr + 16, swap);
		nreg++;
	}
	r = scan_regions(fd, fsize, regions, nreg, swap, id);
	if (r > 0)
		goto out;
	nreg = 0;
	for (uint16_t i = 0; i < shnum && nreg < 64 && shentsize <= sizeof(hdr); i++) {
		if (read_at(fd, hdr, shentsize, shoff + (uint64_t)i * shentsize, fsize) < 0)
			break;
		if (rd32(hdr + 4, swap) != SHT_NOTE)
			continue;
		regions[nreg][0] = is64 ? rd64(hdr + 24, swap) : rd32(hdr + 16, swap);
		regions[nreg][1] = is64 ? rd64(hdr + 32, swap) : rd32(hdr + 20, swap);
		nreg++;
	}
	r = scan_regions(fd, fsize, regions, nreg, swap, id);
out:
	close(fd);
	return r;
}

static int from_notes_file(const char *path, uint8_t id[SONDE_BUILD_ID_MAX])
{
	char *buf;
	size_t len;
	int r = sonde_read_all(path, &buf, &len);

	if (r < 0)
		return r;
	r = sonde_build_id_from_notes(buf, len, id);
	free(buf);
	return r;
}

int sonde_build_id_of_kernel(const char *sysfs, uint8_t id[SONDE_BUILD_ID_MAX])
{
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), "%s/kernel/notes", sysfs);

	return r < 0 ? r : from_notes_file(path, id);
}

int sonde_build_id_of_module(const char *sysfs, const char *name, uint8_t id[SONDE_BUILD_ID_MAX])
{
	char path[PATH_MAX];
	int r;

	if (strchr(name, '/'))
		return -EINVAL;
	r = sonde_path(path, sizeof(path), "%s/module/%s/notes/.note.gnu.build-id", sysfs, name);
	return r < 0 ? r : from_notes_file(path, id);
}

void sonde_build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * len] = '\0';
}
