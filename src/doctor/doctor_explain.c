// SPDX-License-Identifier: MIT
/*
 * Why perf_event_open failed, and the fix, for the commands that print it
 * (record, stat, the agent's ERROR): the kernel's errno is the fact, the
 * paranoid level, capabilities and PMUs in sysfs are the reasons.  Apart
 * from the doctor's checks so the agent links this and doctor_probe.c, not
 * the doctor.
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sonde/pmu.h>
#include <sonde/strlist.h>

#include "doctor_internal.h"

bool sonde_doctor_privileged(const struct sonde_doctor_config *cfg)
{
	return sonde_doctor_has_cap(cfg, DOCTOR_CAP_PERFMON) ||
	       sonde_doctor_has_cap(cfg, DOCTOR_CAP_SYS_ADMIN);
}

/* Appends the CPU PMUs in sysfs (with the CPUs each covers) to @list. */
void sonde_doctor_cpu_pmus(const struct sonde_doctor_config *cfg, struct sonde_strlist *all,
			   struct sonde_strlist *cpu)
{
	sonde_pmu_names(cfg->sysfs, all);
	for (size_t i = 0; i < all->n; i++)
		if (sonde_pmu_is_cpu(cfg->sysfs, all->v[i]))
			sonde_strlist_add(cpu, all->v[i]);
}

bool sonde_doctor_no_pmu_errno(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

/* Whether @attr asks for a CPU's hardware PMU, generic or through its sysfs type. */
static bool wants_cpu_pmu(const struct sonde_doctor_config *cfg, const struct perf_event_attr *attr)
{
	struct sonde_strlist all, cpu;
	bool yes = false;

	if (attr->type == PERF_TYPE_HARDWARE || attr->type == PERF_TYPE_HW_CACHE ||
	    attr->type == PERF_TYPE_RAW)
		return true;
	if (attr->type < PERF_TYPE_MAX)
		return false;
	sonde_strlist_init(&all);
	sonde_strlist_init(&cpu);
	sonde_doctor_cpu_pmus(cfg, &all, &cpu);
	for (size_t i = 0; !yes && i < cpu.n; i++) {
		uint32_t type;

		yes = sonde_pmu_type(cfg->sysfs, cpu.v[i], &type) == 0 && type == attr->type;
	}
	sonde_strlist_fini(&all);
	sonde_strlist_fini(&cpu);
	return yes;
}

static bool has_hw_pmu(const struct sonde_doctor_config *cfg)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.exclude_kernel = 1;
	return !sonde_doctor_no_pmu_errno(sonde_doctor_perf_probe(cfg, &a));
}

/* EACCES/EPERM: which rule refused, from the paranoid level and what the event asks. */
static void explain_access(const struct sonde_doctor_config *cfg,
			   const struct perf_event_attr *attr, char *buf, size_t len)
{
	long v = 2;
	bool have = sonde_doctor_read_int(cfg->procfs, PARANOID, &v) == 0;

	if (sonde_doctor_privileged(cfg)) {
		snprintf(buf, len,
			 "refused although this process has CAP_PERFMON: a security module "
			 "(lockdown, SELinux, AppArmor) or a seccomp filter forbids it");
	} else if (have && v >= 3) {
		snprintf(buf, len,
			 "kernel.perf_event_paranoid=%ld forbids perf_event_open to unprivileged "
			 "users: run as root or grant CAP_PERFMON, or sysctl -w "
			 "kernel.perf_event_paranoid=2 (own user space) or 1 (kernel too)",
			 v);
	} else if (!attr->exclude_kernel && v >= 2) {
		snprintf(buf, len,
			 "kernel.perf_event_paranoid=%ld lets unprivileged users profile user "
			 "space only: add :u to the event, run as root or grant CAP_PERFMON, or "
			 "sysctl -w kernel.perf_event_paranoid=1",
			 v);
	} else if (attr->type == PERF_TYPE_TRACEPOINT && v >= 0) {
		snprintf(buf, len,
			 "tracepoint data needs CAP_PERFMON (or kernel.perf_event_paranoid=-1, now "
			 "%ld): run as root, or sysctl -w kernel.perf_event_paranoid=-1",
			 v);
	} else if (v >= 1) {
		snprintf(buf, len,
			 "CPU-wide events (-a, -C) need kernel.perf_event_paranoid<=0 (now %ld) or "
			 "CAP_PERFMON: run as root, or sysctl -w kernel.perf_event_paranoid=0",
			 v);
	} else {
		snprintf(buf, len,
			 "refused: profiling another user's process needs CAP_PERFMON (or "
			 "ptrace access to it); run as root");
	}
}

const char *sonde_doctor_explain_open_error_at(const struct sonde_doctor_config *cfg,
					       const struct perf_event_attr *attr, int err,
					       char *buf, size_t len)
{
	char why[320], en[32];
	bool cpu_pmu = wants_cpu_pmu(cfg, attr);
	bool sampling = attr->sample_period != 0; /* sample_freq shares the field */
	long rate;

	if (err > 0)
		err = -err;
	if ((err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) && cpu_pmu &&
	    !has_hw_pmu(cfg)) {
		snprintf(why, sizeof(why),
			 "this machine has no hardware PMU (a VM without PMU passthrough?): use "
			 "cpu-clock");
	} else if (err == -EOPNOTSUPP && sampling) {
		snprintf(why, sizeof(why),
			 "the PMU can count this event but not sample it (no overflow "
			 "interrupt): count it with 'sonde stat', or sample cpu-clock");
	} else if (err == -ENOENT && attr->type == PERF_TYPE_TRACEPOINT) {
		snprintf(why, sizeof(why),
			 "no tracepoint with this id in this kernel: see 'sonde list tracepoint'");
	} else if (err == -ENOENT || err == -EOPNOTSUPP) {
		snprintf(why, sizeof(why),
			 "this PMU does not support the event (or its "
			 "modifiers) on this CPU: see 'sonde list'");
	} else if (err == -EACCES || err == -EPERM) {
		explain_access(cfg, attr, why, sizeof(why));
	} else if (err == -EBUSY) {
		snprintf(why, sizeof(why),
			 "the counter is taken by another user (the NMI watchdog holds one: "
			 "sysctl -w kernel.nmi_watchdog=0)");
	} else if (err == -EMFILE) {
		snprintf(why, sizeof(why),
			 "too many open files (one per event and CPU): raise the limit, ulimit -n");
	} else if (err == -ENOSYS) {
		snprintf(why, sizeof(why),
			 "this kernel has no perf events: build it with CONFIG_PERF_EVENTS=y");
	} else if (err == -EINVAL && attr->precise_ip) {
		snprintf(why, sizeof(why),
			 "this CPU can't give precise samples of this event: drop the :p modifier");
	} else if (err == -EINVAL && attr->freq &&
		   sonde_doctor_read_int(cfg->procfs, "sys/kernel/perf_event_max_sample_rate",
					 &rate) == 0 &&
		   attr->sample_freq > (unsigned long long)rate) {
		snprintf(
		    why, sizeof(why),
		    "frequency %llu Hz is above kernel.perf_event_max_sample_rate (%ld): lower "
		    "-F, or sysctl -w kernel.perf_event_max_sample_rate=%llu",
		    (unsigned long long)attr->sample_freq, rate,
		    (unsigned long long)attr->sample_freq);
	} else if (err == -E2BIG) {
		snprintf(why, sizeof(why),
			 "the kernel is older than sonde's perf_event_attr and rejects its size");
	} else {
		snprintf(why, sizeof(why), "%s", sonde_strerror(err));
	}
	snprintf(buf, len, "perf_event_open: %s: %s", sonde_doctor_errno_name(err, en, sizeof(en)),
		 why);
	return buf;
}

const char *sonde_doctor_explain_open_error(const struct perf_event_attr *attr, int err, char *buf,
					    size_t len)
{
	struct sonde_doctor_config cfg;

	sonde_doctor_config_default(&cfg);
	return sonde_doctor_explain_open_error_at(&cfg, attr, err, buf, len);
}
