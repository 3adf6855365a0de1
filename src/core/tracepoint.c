// SPDX-License-Identifier: MIT
/*
 * Tracepoint discovery in tracefs's events/ folder: the systems (its
 * subfolders), the events of a system, and an event's numeric id (the
 * perf_event_attr.config of a PERF_TYPE_TRACEPOINT event).  Each call
 * builds a path under the tracefs root it is given (a fake tree in the
 * unit tests) and reads it with the fileio helpers; nothing is cached.
 */
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
