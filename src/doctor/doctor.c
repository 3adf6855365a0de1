// SPDX-License-Identifier: MIT
/*
 * sonde doctor's run: the order the check groups run in (the report they
 * fill is doctor_report.c's).  The groups live in their own files:
 * doctor_perf.c (sysctls, capabilities, PMUs), doctor_tracefs.c (mounts and
 * probe interfaces), doctor_tracers.c (tracers tried in a scratch
 * instance), doctor_kernel.c (modules, BPF, BTF, kernel config).  What
 * other commands (and the agent) link without the checks is apart:
 * doctor_probe.c (the hook dispatch and small readers) and
 * doctor_explain.c (perf_event_open errors explained).
 *
 * Each group measures and reports; none stops the others, because a
 * machine where half the checks can't run is exactly the machine doctor
 * must describe.  Only running out of memory ends the run.
 */
#include <sonde/doctor.h>

#include "doctor_internal.h"

int sonde_doctor_run(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	int r;

	if ((r = sonde_doctor_check_perf(cfg, rep)) < 0)
		return r;
	if ((r = sonde_doctor_check_tracefs(cfg, rep)) < 0)
		return r;
	if ((r = sonde_doctor_check_tracers(cfg, rep)) < 0)
		return r;
	if ((r = sonde_doctor_check_stale(cfg, rep)) < 0)
		return r;
	return sonde_doctor_check_kernel(cfg, rep);
}
