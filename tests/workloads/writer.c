// SPDX-License-Identifier: MIT
/* writer SIZE...: one write(2) of each SIZE bytes to /dev/null, in order. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	for (int i = 1; i < argc; i++) {
		size_t n = strtoul(argv[i], NULL, 0);

		if (n > sizeof(buf) || write(fd, buf, n) != (ssize_t)n)
			return 1;
	}
	return 0;
}
