// SPDX-License-Identifier: MIT
/*
 * tracefs control with plain file I/O, shared by the local tool and the
 * target agent.  Finding tracefs follows the kernel's history: tracefs on
 * its own (/sys/kernel/tracing), else the tracing folder of debugfs.
 */
#include <sonde/tracefs.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>

#define TRACEFS_DEFAULT "/sys/kernel/tracing"

int sonde_tracefs_find(const char *mounts, char *buf, size_t len, bool mount_if_missing)
{
	char line[1024], debugfs[512] = "";
	FILE *f = fopen(mounts, "re");
	int found = 0;

	if (f) {
		while (!found && fgets(line, sizeof(line), f)) {
			char dev[256], dir[512], type[64];

			if (sscanf(line, "%255s %511s %63s", dev, dir, type) != 3)
				continue;
			if (!strcmp(type, "tracefs"))
				found = sonde_path(buf, len, "%s", dir) == 0;
			else if (!strcmp(type, "debugfs") && !debugfs[0])
				snprintf(debugfs, sizeof(debugfs), "%s", dir);
		}
		fclose(f);
	}
	if (found)
		return 0;
	if (debugfs[0]) {
		struct stat st;

		if (sonde_path(buf, len, "%s/tracing", debugfs) == 0 && stat(buf, &st) == 0 &&
		    access(buf, F_OK) == 0) {
			char probe[600];

			/* debugfs/tracing is only an automount of tracefs when it has files. */
			snprintf(probe, sizeof(probe), "%s/trace", buf);
			if (access(probe, F_OK) == 0)
				return 0;
		}
	}
	if (!mount_if_missing)
		return -ENOENT;
	if (mount("nodev", TRACEFS_DEFAULT, "tracefs", 0, NULL) < 0 && errno != EBUSY)
		return -errno;
	return sonde_path(buf, len, "%s", TRACEFS_DEFAULT) < 0 ? -ENAMETOOLONG : 0;
}
