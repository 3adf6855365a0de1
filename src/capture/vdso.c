// SPDX-License-Identifier: MIT
/*
 * The vDSO image of this process, as perf's vdso.c finds it: the
 * [vdso] line of /proc/self/maps gives its range, and the mapping is
 * copied whole (the image includes its section headers) into a memfd, so
 * file readers (the build-id note reader, libdwfl) take it as any ELF file.
 */
#include <sonde/vdso.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int sonde_vdso_open(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long start = 0, end = 0;
	char line[512];
	int fd;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
	fclose(f);
	if (end <= start)
		return -ENOENT;
	fd = memfd_create("sonde-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, (const void *)start, end - start) != (ssize_t)(end - start)) {
		close(fd);
		return -EIO;
	}
	return fd;
}
