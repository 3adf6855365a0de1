// SPDX-License-Identifier: MIT
/* Tracepoint discovery in tracefs's events/ folder. */
#include <sonde/tracepoint.h>

#include <limits.h>

#include <sonde/fileio.h>

int sonde_tracepoint_systems(const char *tracefs, struct sonde_strlist *out)
{
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), "%s/events", tracefs);

	return r < 0 ? r : sonde_list_dir(path, true, out);
}

int sonde_tracepoint_events(const char *tracefs, const char *system, struct sonde_strlist *out)
{
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), "%s/events/%s", tracefs, system);

	return r < 0 ? r : sonde_list_dir(path, true, out);
}

int sonde_tracepoint_id(const char *tracefs, const char *system, const char *event, uint64_t *id)
{
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), "%s/events/%s/%s/id", tracefs, system, event);

	return r < 0 ? r : sonde_read_u64(path, id);
}
