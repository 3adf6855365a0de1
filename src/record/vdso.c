// SPDX-License-Identifier: MIT
/*
 * The vDSO image of this process, as perf's vdso.c finds it: the
 * [vdso] line of /proc/self/maps gives its range, and the mapping is
 * the whole image (section headers included), so it can be copied into a
 * memfd that file readers (the build-id note reader, libdwfl) take as any
 * ELF file, or written as is into the build-id cache.
 */
#include <sonde/vdso.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int sonde_vdso_image(const void **image, size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long start = 0, end = 0;
	char line[512];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(f);
	if (end <= start)
		return -ENOENT;
	*image = (const void *)start;
	*len = end - start;
	return 0;
}

int sonde_memfd_of(const char *name, const void *buf, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	return fd;
}

int sonde_vdso_open(void)
{
	const void *image;
	size_t len;
	int r = sonde_vdso_image(&image, &len);

	return r < 0 ? r : sonde_memfd_of("sonde-vdso", image, len);
}
