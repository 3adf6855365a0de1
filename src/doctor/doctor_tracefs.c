// SPDX-License-Identifier: MIT
/*
 * tracefs checks: where tracefs and debugfs are mounted, and which probe
 * interfaces the kernel offers (trace events, kprobes, uprobes).
 *
 * A probe interface shows up in two places: its tracefs control file
 * (kprobe_events, uprobe_events) and its perf PMU in sysfs
 * (event_source/devices/kprobe), which perf_event_open uses to make a
 * probe without tracefs.  Both are reported, because a tool may need
 * either; the kernel config option that adds them is the fix.
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sonde/error.h>
#include <sonde/fileio.h>
#include <sonde/strlist.h>

#include "doctor_internal.h"

/* The first mount point of filesystem @type in the mount table, or "". */
static void find_mount(const char *mounts, const char *type, char *buf, size_t len)
{
	char line[1024];
	FILE *f = fopen(mounts, "re");

	buf[0] = '\0';
	if (!f)
		return;
	while (!buf[0] && fgets(line, sizeof(line), f)) {
		char dev[256], dir[512], t[64];

		if (sscanf(line, "%255s %511s %63s", dev, dir, t) == 3 && !strcmp(t, type))
			snprintf(buf, len, "%s", dir);
	}
	fclose(f);
}

static int check_mounts(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	char tfs[512], dfs[512];
	int r;

	find_mount(cfg->mounts, "tracefs", tfs, sizeof(tfs));
	find_mount(cfg->mounts, "debugfs", dfs, sizeof(dfs));
	if (cfg->tracefs && cfg->tracefs_mounted_by_caller)
		r = sonde_doctor_add(
		    rep, "tracefs", "tracefs", SONDE_DOCTOR_WARN,
		    "mount it at boot: 'tracefs /sys/kernel/tracing tracefs defaults 0 0' "
		    "in /etc/fstab (sonde mounts it itself when run as root)",
		    "was not mounted; mounted at %s for these checks", cfg->tracefs);
	else if (cfg->tracefs)
		r = sonde_doctor_add(rep, "tracefs", "tracefs", SONDE_DOCTOR_OK, NULL,
				     "mounted at %s%s", cfg->tracefs,
				     tfs[0] ? "" : " (debugfs's tracing folder)");
	else if (sonde_doctor_exists(cfg->sysfs, "kernel/tracing"))
		r = sonde_doctor_add(rep, "tracefs", "tracefs", SONDE_DOCTOR_FAIL,
				     "mount -t tracefs nodev /sys/kernel/tracing",
				     "not mounted (%s/kernel/tracing exists: the kernel has it)",
				     cfg->sysfs);
	else
		r = sonde_doctor_add(rep, "tracefs", "tracefs", SONDE_DOCTOR_UNAVAILABLE,
				     "build the kernel with CONFIG_FTRACE=y and CONFIG_TRACING=y",
				     "not mounted, and %s/kernel/tracing does not exist",
				     cfg->sysfs);
	if (r < 0)
		return r;
	if (dfs[0])
		return sonde_doctor_add(rep, "debugfs", "debugfs", SONDE_DOCTOR_OK, NULL,
					"mounted at %s", dfs);
	if (cfg->tracefs)
		return sonde_doctor_add(rep, "debugfs", "debugfs", SONDE_DOCTOR_OK, NULL,
					"not mounted (not needed: tracefs is)");
	return sonde_doctor_add(
	    rep, "debugfs", "debugfs", SONDE_DOCTOR_WARN,
	    "mount -t debugfs none /sys/kernel/debug (old kernels keep tracing there)",
	    "not mounted");
}

static int check_events(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	const char *id = "trace_events", *title = "trace events (tracepoints)";
	bool pmu = sonde_doctor_exists(cfg->sysfs, "bus/event_source/devices/tracepoint");
	struct sonde_strlist subs;
	char path[4096];
	int r = -ENOENT;

	sonde_strlist_init(&subs);
	if (cfg->tracefs && sonde_path(path, sizeof(path), "%s/events", cfg->tracefs) == 0)
		r = sonde_list_dir(path, true, &subs);
	if (r == 0 && subs.n)
		r = sonde_doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL,
				     "%zu event systems in tracefs; tracepoint PMU %s", subs.n,
				     pmu ? "present" : "absent");
	else if (DOCTOR_DENIED(r))
		r = sonde_doctor_add(rep, id, title, SONDE_DOCTOR_FAIL, DOCTOR_FIX_TRACEFS_ROOT,
				     "%s: %s; tracepoint PMU %s", path, sonde_strerror(r),
				     pmu ? "present" : "absent");
	else if (pmu)
		r = sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_WARN,
		    cfg->tracefs ? NULL : "mount -t tracefs nodev /sys/kernel/tracing",
		    "tracepoint PMU present; %s",
		    cfg->tracefs ? "tracefs has no events" : "tracefs not mounted");
	else
		r = sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_UNAVAILABLE,
		    "build the kernel with CONFIG_EVENT_TRACING=y (CONFIG_FTRACE=y)",
		    "no tracepoint PMU; %s",
		    cfg->tracefs ? "no tracefs events" : "tracefs not mounted");
	sonde_strlist_fini(&subs);
	return r;
}

/* kprobes or uprobes: the tracefs file and the perf PMU. */
static int check_probe(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep,
		       const char *kind, const char *title, const char *config)
{
	char file[32], pmu_rel[64], fix[128];
	bool in_tracefs, pmu;

	snprintf(file, sizeof(file), "%s_events", kind);
	snprintf(pmu_rel, sizeof(pmu_rel), "bus/event_source/devices/%s", kind);
	snprintf(fix, sizeof(fix), "build the kernel with %s", config);
	in_tracefs = sonde_doctor_exists(cfg->tracefs, file);
	pmu = sonde_doctor_exists(cfg->sysfs, pmu_rel);
	if (in_tracefs || pmu)
		return sonde_doctor_add(rep, kind[0] == 'k' ? "kprobes" : "uprobes", title,
					in_tracefs && pmu ? SONDE_DOCTOR_OK : SONDE_DOCTOR_WARN,
					in_tracefs || cfg->tracefs
					    ? NULL
					    : "mount -t tracefs nodev /sys/kernel/tracing",
					"%s: %s; %s PMU: %s", file,
					in_tracefs     ? "present"
					: cfg->tracefs ? "absent"
						       : "tracefs not mounted",
					kind, pmu ? "present" : "absent");
	return sonde_doctor_add(rep, kind[0] == 'k' ? "kprobes" : "uprobes", title,
				SONDE_DOCTOR_UNAVAILABLE, fix,
				"no %s in tracefs, no %s PMU in sysfs", file, kind);
}

int sonde_doctor_check_tracefs(const struct sonde_doctor_config *cfg,
			       struct sonde_doctor_report *rep)
{
	int r;

	if ((r = check_mounts(cfg, rep)) < 0 || (r = check_events(cfg, rep)) < 0 ||
	    (r = check_probe(cfg, rep, "kprobe", "kprobes",
			     "CONFIG_KPROBES=y and CONFIG_KPROBE_EVENTS=y")) < 0)
		return r;
	return check_probe(cfg, rep, "uprobe", "uprobes",
			   "CONFIG_UPROBES=y and CONFIG_UPROBE_EVENTS=y");
}
