// SPDX-License-Identifier: MIT
/*
 * PERF_RECORD_NAMESPACES of a task that already runs, as perf record
 * --namespaces synthesizes them (perf_event__synthesize_namespaces): the
 * device and inode of each /proc/PID/task/TID/ns link, in the kernel's
 * order (net, uts, ipc, pid, user, mnt, cgroup).  A namespace the kernel
 * lacks stays 0/0, as in perf's records.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <linux/perf_event.h>

#include <sonde/fileio.h>

#include "synth_internal.h"

static const char *const ns_names[] = {"net", "uts", "ipc", "pid", "user", "mnt", "cgroup"};
#define NR_NS (sizeof(ns_names) / sizeof(ns_names[0]))

struct rec_namespaces {
	struct sonde_rec_header h;
	uint32_t pid, tid;
	uint64_t nr_namespaces;
	struct {
		uint64_t dev, ino;
	} link[NR_NS];
};

int sonde_synth_namespaces(const struct sonde_synth *s, pid_t pid, pid_t tid)
{
	union sonde_rec_buf buf;
	struct rec_namespaces *r = (struct rec_namespaces *)buf.b;
	int ret = sonde_synth_check(s);

	if (ret < 0)
		return ret;
	memset(r, 0, sizeof(*r));
	r->h.type = PERF_RECORD_NAMESPACES;
	r->pid = (uint32_t)pid;
	r->tid = (uint32_t)tid;
	r->nr_namespaces = NR_NS;
	for (size_t i = 0; i < NR_NS; i++) {
		char path[512];
		struct stat st;

		if (sonde_path(path, sizeof(path), "%s/%d/task/%d/ns/%s", s->procfs, (int)pid,
			       (int)tid, ns_names[i]) == 0 &&
		    stat(path, &st) == 0) {
			r->link[i].dev = (uint64_t)st.st_dev;
			r->link[i].ino = (uint64_t)st.st_ino;
		}
	}
	return sonde_synth_finish(s, &buf, sizeof(*r), NULL);
}
