// SPDX-License-Identifier: MIT
/*
 * perf_event checks: the sysctls that gate it, this process's
 * capabilities, whether a hardware PMU counts.  The explanation of
 * perf_event_open failures that other commands print is doctor_explain.c.
 *
 * The kernel's answer is the fact; sysfs and sysctls are the reasons.  A
 * hypervisor can list a PMU in sysfs and still refuse to count (or the
 * reverse), so the hardware check opens cycles and only then looks at
 * sysfs to explain the answer.  The paranoid levels are those of
 * Documentation/admin-guide/perf-security.rst, plus Debian's level 3
 * (no perf_event_open at all without CAP_PERFMON).
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/pmu.h>
#include <sonde/strlist.h>

#include "doctor_internal.h"

#define KPTR "sys/kernel/kptr_restrict"

static const char *paranoid_meaning(long v)
{
	if (v <= -1)
		return "no restriction";
	if (v == 0)
		return "unprivileged users: no raw tracepoint data";
	if (v == 1)
		return "unprivileged users: no CPU-wide events";
	if (v == 2)
		return "unprivileged users: user space of their own processes only";
	return "unprivileged users: no perf_event_open at all";
}

static int check_paranoid(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	const char *id = "perf_event_paranoid", *title = "kernel.perf_event_paranoid";
	bool priv = sonde_doctor_privileged(cfg);
	long v;
	int r = sonde_doctor_read_int(cfg->procfs, PARANOID, &v);

	if (r < 0)
		return sonde_doctor_add(rep, id, title, SONDE_DOCTOR_UNAVAILABLE,
					"build the kernel with CONFIG_PERF_EVENTS=y",
					"%s/" PARANOID ": %s: the kernel has no perf events",
					cfg->procfs, sonde_strerror(r));
	if (priv || v <= 1)
		return sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_OK, NULL, "%ld (%s)%s", v, paranoid_meaning(v),
		    priv && v > -1 ? "; this process has CAP_PERFMON: not limited" : "");
	return sonde_doctor_add(
	    rep, id, title, v >= 3 ? SONDE_DOCTOR_FAIL : SONDE_DOCTOR_WARN,
	    "run as root or grant CAP_PERFMON, or: sysctl -w "
	    "kernel.perf_event_paranoid=1 (kernel profiling) or -1 (everything)",
	    "%ld (%s)", v, paranoid_meaning(v));
}

/*
 * Whether kallsyms shows real addresses to us: the first text symbol's
 * address is nonzero.  (Per-CPU symbols come first on some kernels with
 * real addresses of 0, so the first line proves nothing.)
 */
static int kallsyms_visible(const struct sonde_doctor_config *cfg)
{
	char path[PATH_MAX], line[256], type;
	unsigned long long addr = 0;
	int r = sonde_path(path, sizeof(path), "%s/kallsyms", cfg->procfs), found = 0;
	FILE *f;

	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (int n = 0; n < 100000 && fgets(line, sizeof(line), f); n++)
		if (sscanf(line, "%llx %c", &addr, &type) == 2 && (type == 't' || type == 'T')) {
			found = 1;
			break;
		}
	fclose(f);
	if (!found)
		return -ENODATA;
	return addr != 0;
}

const char *sonde_doctor_explain_kallsyms(const struct sonde_doctor_config *cfg, char *buf,
					  size_t len)
{
	long v = -1, paranoid = 2;

	if (kallsyms_visible(cfg) != 0)
		return NULL;
	sonde_doctor_read_int(cfg->procfs, KPTR, &v);
	sonde_doctor_read_int(cfg->procfs, PARANOID, &paranoid);
	/* The kernel's rule (kallsyms_show_value): kptr_restrict 0 shows addresses
	 * to everyone only while perf_event_paranoid <= 1, else to CAP_SYSLOG. */
	if (v >= 2)
		snprintf(buf, len,
			 "kernel.kptr_restrict=2 hides kernel addresses even from root: "
			 "sysctl -w kernel.kptr_restrict=0");
	else if (v <= 0)
		snprintf(buf, len,
			 "kernel.kptr_restrict=0 shows kernel addresses to unprivileged users only "
			 "while kernel.perf_event_paranoid<=1 (now %ld): run as root (CAP_SYSLOG), "
			 "or sysctl -w kernel.perf_event_paranoid=1",
			 paranoid);
	else
		snprintf(buf, len,
			 "kernel.kptr_restrict=1 shows kernel addresses to CAP_SYSLOG only: run "
			 "as root, or sysctl -w kernel.kptr_restrict=0%s",
			 paranoid > 1 ? " kernel.perf_event_paranoid=1" : "");
	return buf;
}

static int check_kptr(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	const char *id = "kptr_restrict", *title = "kernel.kptr_restrict";
	char why[256];
	long v = -1;
	int vis = kallsyms_visible(cfg);

	sonde_doctor_read_int(cfg->procfs, KPTR, &v);
	if (vis < 0)
		return sonde_doctor_add(rep, id, title, SONDE_DOCTOR_UNAVAILABLE,
					"build the kernel with CONFIG_KALLSYMS=y",
					"%s/kallsyms: %s: kernel samples can't be symbolized",
					cfg->procfs, sonde_strerror(vis));
	if (vis)
		return sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_OK, NULL,
		    "kernel.kptr_restrict = %ld; /proc/kallsyms shows addresses", v);
	return sonde_doctor_add(
	    rep, id, title, SONDE_DOCTOR_FAIL, sonde_doctor_explain_kallsyms(cfg, why, sizeof(why)),
	    "kernel.kptr_restrict = %ld; /proc/kallsyms shows zero addresses", v);
}

static int check_caps(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	static const struct {
		unsigned int cap;
		const char *name;
	} caps[] = {
	    {DOCTOR_CAP_PERFMON, "CAP_PERFMON"},
	    {DOCTOR_CAP_BPF, "CAP_BPF"},
	    {DOCTOR_CAP_SYSLOG, "CAP_SYSLOG"},
	    {DOCTOR_CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
	};
	char have[128] = "", lack[128] = "";

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		char *dst = sonde_doctor_has_cap(cfg, caps[i].cap) ? have : lack;
		size_t used = strlen(dst);

		snprintf(dst + used, sizeof(have) - used, "%s%s", used ? " " : "", caps[i].name);
	}
	if (sonde_doctor_privileged(cfg))
		return sonde_doctor_add(rep, "capabilities", "capabilities", SONDE_DOCTOR_OK, NULL,
					"uid %u; effective: %s%s%s", (unsigned int)geteuid(), have,
					lack[0] ? "; missing: " : "", lack);
	return sonde_doctor_add(
	    rep, "capabilities", "capabilities", SONDE_DOCTOR_WARN,
	    "run as root, or: setcap cap_perfmon,cap_bpf,cap_syslog+ep $(command -v "
	    "sonde)",
	    "uid %u; effective: %s; missing: %s", (unsigned int)geteuid(), have[0] ? have : "none",
	    lack);
}

static void join(const struct sonde_strlist *l, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", i ? " " : "", l->v[i]);
	}
}

static int check_pmus(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	const char *id = "hw_pmu", *title = "hardware PMU";
	struct sonde_strlist all, cpu;
	struct perf_event_attr a;
	char names[256], en[32];
	int err, r = 0;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.exclude_kernel = 1; /* what every user may count at paranoid 2 */
	err = sonde_doctor_perf_probe(cfg, &a);
	sonde_strlist_init(&all);
	sonde_strlist_init(&cpu);
	sonde_doctor_cpu_pmus(cfg, &all, &cpu);
	join(&all, names, sizeof(names));
	if (!err)
		r = sonde_doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL,
				     "perf_event_open(cycles): ok; %zu CPU PMU(s) in sysfs", cpu.n);
	else if (sonde_doctor_no_pmu_errno(err))
		r = sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_UNAVAILABLE,
		    "no hardware PMU (a VM without PMU passthrough?): enable the vPMU "
		    "in the hypervisor (QEMU/KVM: -cpu host,pmu=on); meanwhile sample "
		    "with -e cpu-clock",
		    "perf_event_open(cycles): %s; %s (sysfs PMUs: %s)",
		    sonde_doctor_errno_name(err, en, sizeof(en)),
		    cpu.n ? "sysfs lists a CPU PMU the kernel won't count with"
			  : "no CPU PMU in sysfs",
		    names[0] ? names : "none");
	else
		r = sonde_doctor_add(rep, id, title, SONDE_DOCTOR_FAIL,
				     "see perf_event_paranoid and capabilities above",
				     "perf_event_open(cycles): %s",
				     sonde_doctor_errno_name(err, en, sizeof(en)));
	/* One line per CPU PMU: on big.LITTLE each core type has its own. */
	for (size_t i = 0; r == 0 && i < cpu.n; i++) {
		char cid[64], path[PATH_MAX], cpus[128] = "?";
		uint32_t type = 0;

		snprintf(cid, sizeof(cid), "pmu.%s", cpu.v[i]);
		sonde_pmu_type(cfg->sysfs, cpu.v[i], &type);
		if (sonde_path(path, sizeof(path), "%s/bus/event_source/devices/%s/cpus",
			       cfg->sysfs, cpu.v[i]) == 0 &&
		    sonde_read_text(path, cpus, sizeof(cpus)) < 0 &&
		    sonde_path(path, sizeof(path), "%s/bus/event_source/devices/%s/cpumask",
			       cfg->sysfs, cpu.v[i]) == 0 &&
		    sonde_read_text(path, cpus, sizeof(cpus)) < 0)
			snprintf(cpus, sizeof(cpus), "all");
		r = sonde_doctor_add(rep, cid, "CPU PMU", err ? SONDE_DOCTOR_FAIL : SONDE_DOCTOR_OK,
				     err ? "the PMU is listed but does not count: see hw_pmu"
					 : NULL,
				     "%s: type %u, cpus %s", cpu.v[i], type, cpus);
	}
	sonde_strlist_fini(&all);
	sonde_strlist_fini(&cpu);
	return r;
}

static int check_software(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	struct perf_event_attr a;
	char en[32];
	int err;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.exclude_kernel = 1;
	err = sonde_doctor_perf_probe(cfg, &a);
	if (!err)
		return sonde_doctor_add(rep, "sw_events", "software events", SONDE_DOCTOR_OK, NULL,
					"perf_event_open(cpu-clock): ok");
	return sonde_doctor_add(rep, "sw_events", "software events",
				err == -ENOSYS ? SONDE_DOCTOR_UNAVAILABLE : SONDE_DOCTOR_FAIL,
				err == -ENOSYS ? "build the kernel with CONFIG_PERF_EVENTS=y"
					       : "see perf_event_paranoid and capabilities above",
				"perf_event_open(cpu-clock): %s",
				sonde_doctor_errno_name(err, en, sizeof(en)));
}

int sonde_doctor_check_perf(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	int r;

	if ((r = check_paranoid(cfg, rep)) < 0 || (r = check_kptr(cfg, rep)) < 0 ||
	    (r = check_caps(cfg, rep)) < 0 || (r = check_pmus(cfg, rep)) < 0)
		return r;
	return check_software(cfg, rep);
}
