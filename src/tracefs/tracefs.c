// SPDX-License-Identifier: MIT
/*
 * tracefs control with plain file I/O, shared by the local tool and the
 * target agent.  Finding tracefs follows the kernel's history: tracefs on
 * its own (/sys/kernel/tracing), else the tracing folder of debugfs.
 *
 * Instances are folders under instances/ that the kernel fills with their
 * own copy of the control files when they are made; the top level is the
 * tracefs root itself.  Every instance call takes a NULL name for the top
 * level so callers address both the same way.
 */
#include <sonde/tracefs.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/strlist.h>

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

/* An instance name becomes one path component: nothing that walks elsewhere. */
static bool instance_name_ok(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int sonde_tracefs_instance_path(const char *tracefs, const char *name, const char *file, char *buf,
				size_t len)
{
	bool top = !name || !name[0];

	if (!top && !instance_name_ok(name))
		return -EINVAL;
	if (top)
		return file ? sonde_path(buf, len, "%s/%s", tracefs, file)
			    : sonde_path(buf, len, "%s", tracefs);
	return file ? sonde_path(buf, len, "%s/instances/%s/%s", tracefs, name, file)
		    : sonde_path(buf, len, "%s/instances/%s", tracefs, name);
}

int sonde_tracefs_instance_create(const char *tracefs, const char *name)
{
	char path[PATH_MAX];
	int r;

	if (!name || !name[0])
		return -EINVAL;
	r = sonde_tracefs_instance_path(tracefs, name, NULL, path, sizeof(path));
	if (r < 0)
		return r;
	/* mkdir in instances/ is the kernel's "create" operation; 0700 is ignored there. */
	return mkdir(path, 0700) < 0 ? -errno : 0;
}

int sonde_tracefs_instance_destroy(const char *tracefs, const char *name)
{
	char path[PATH_MAX];
	int r;

	if (!name || !name[0])
		return -EINVAL;
	r = sonde_tracefs_instance_path(tracefs, name, NULL, path, sizeof(path));
	if (r < 0)
		return r;
	return rmdir(path) < 0 ? -errno : 0;
}

int sonde_tracefs_instance_read(const char *tracefs, const char *name, const char *file, char *buf,
				size_t len)
{
	char path[PATH_MAX];
	int r = sonde_tracefs_instance_path(tracefs, name, file, path, sizeof(path));

	return r < 0 ? r : sonde_read_text(path, buf, len);
}

int sonde_tracefs_instance_write(const char *tracefs, const char *name, const char *file,
				 const char *text)
{
	char path[PATH_MAX];
	int r = sonde_tracefs_instance_path(tracefs, name, file, path, sizeof(path));

	return r < 0 ? r : sonde_write_text(path, text);
}

int sonde_tracefs_instances(const char *tracefs, struct sonde_strlist *out)
{
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), "%s/instances", tracefs);

	return r < 0 ? r : sonde_list_dir(path, true, out);
}

int sonde_tracefs_split_words(const char *text, struct sonde_strlist *out)
{
	const char *p = text;

	while (*p) {
		char word[256];
		size_t n = 0;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '[' || *p == ']')
			p++;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '[' && *p != ']') {
			if (n + 1 < sizeof(word))
				word[n++] = *p;
			p++;
		}
		word[n] = '\0';
		if (n && sonde_strlist_add(out, word) < 0)
			return -ENOMEM;
	}
	return 0;
}
