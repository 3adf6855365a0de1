// SPDX-License-Identifier: MIT
/*
 * What sondes that were killed left behind: tracefs instances
 * (instances/sonde-PID with the PID gone, often still tracing into a
 * buffer nobody reads) and unsaved `trace -o` captures noted in the run
 * folder (sonde/ftrace_leftover.h).  The doctor only reports: the next
 * `sonde trace` removes the instances, `sonde trace recover` saves the
 * captures.  sonde makes no probes of its own, so there are none to find.
 */
#include <sonde/doctor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/ftrace_leftover.h>
#include <sonde/strlist.h>

#include "doctor_internal.h"

static int check_instances(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	const char *id = "stale.instances", *title = "stale sonde instances";
	struct sonde_strlist dead;
	char names[256] = "", fix[384];
	size_t used = 0;
	int r;

	if (!cfg->tracefs)
		return 0;
	sonde_strlist_init(&dead);
	if (sonde_trace_dead_instances(cfg->tracefs, &dead) < 0 || !dead.n) {
		sonde_strlist_fini(&dead);
		return sonde_doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL, "none");
	}
	for (size_t i = 0; i < dead.n && used < sizeof(names); i++)
		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? " " : "",
					 dead.v[i]);
	snprintf(fix, sizeof(fix),
		 "the next 'sonde trace' removes them (or: rmdir %s/instances/%s ...)",
		 cfg->tracefs, dead.v[0]);
	r = sonde_doctor_add(rep, id, title, SONDE_DOCTOR_WARN, fix,
			     "%zu left in %s/instances, still holding their buffers: %s", dead.n,
			     cfg->tracefs, names);
	sonde_strlist_fini(&dead);
	return r;
}

static int check_captures(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	const char *id = "stale.captures", *title = "unsaved trace captures";
	struct sonde_trace_leftover *v;
	char detail[300] = "", fix[384] = "";
	size_t n, used = 0, with_data = 0;
	int r;

	if (sonde_trace_leftover_find(cfg->run_dir ? cfg->run_dir : SONDE_RUN_DIR, &v, &n) < 0)
		n = 0, v = NULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = sonde_trace_leftover_bytes(&v[i]);

		if (bytes && used < sizeof(detail)) {
			used += (size_t)snprintf(detail + used, sizeof(detail) - used,
						 "%s%s (pid %ld, %.1f KB of pages)",
						 with_data ? ", " : "", v[i].output, (long)v[i].pid,
						 (double)bytes / 1024);
			if (!with_data)
				snprintf(fix, sizeof(fix), "sonde trace recover %s", v[i].output);
		}
		with_data += bytes != 0;
		sonde_trace_leftover_fini(&v[i]);
	}
	free(v);
	if (!with_data)
		return sonde_doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL, "none");
	r = sonde_doctor_add(rep, id, title, SONDE_DOCTOR_WARN, fix,
			     "%zu trace.dat not written: %s", with_data, detail);
	return r;
}

int sonde_doctor_check_stale(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	int r = check_instances(cfg, rep);

	return r < 0 ? r : check_captures(cfg, rep);
}
