// SPDX-License-Identifier: MIT
/*
 * perf_event checks: the sysctls that gate it, this process's
 * capabilities, whether a hardware PMU counts, and the explanation of
 * perf_event_open failures that other commands print.
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

#define PARANOID "sys/kernel/perf_event_paranoid"
#define KPTR "sys/kernel/kptr_restrict"

static bool privileged(const struct sonde_doctor_config *cfg)
{
	return doctor_has_cap(cfg, DOCTOR_CAP_PERFMON) || doctor_has_cap(cfg, DOCTOR_CAP_SYS_ADMIN);
}

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
	bool priv = privileged(cfg);
	long v;
	int r = doctor_read_int(cfg->procfs, PARANOID, &v);

	if (r < 0)
		return doctor_add(rep, id, title, SONDE_DOCTOR_UNAVAILABLE,
				  "build the kernel with CONFIG_PERF_EVENTS=y",
				  "%s/" PARANOID ": %s: the kernel has no perf events", cfg->procfs,
				  sonde_strerror(r));
	if (priv || v <= 1)
		return doctor_add(
		    rep, id, title, SONDE_DOCTOR_OK, NULL, "%ld (%s)%s", v, paranoid_meaning(v),
		    priv && v > -1 ? "; this process has CAP_PERFMON: not limited" : "");
	return doctor_add(rep, id, title, v >= 3 ? SONDE_DOCTOR_FAIL : SONDE_DOCTOR_WARN,
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
	doctor_read_int(cfg->procfs, KPTR, &v);
	doctor_read_int(cfg->procfs, PARANOID, &paranoid);
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

	doctor_read_int(cfg->procfs, KPTR, &v);
	if (vis < 0)
		return doctor_add(rep, id, title, SONDE_DOCTOR_UNAVAILABLE,
				  "build the kernel with CONFIG_KALLSYMS=y",
				  "%s/kallsyms: %s: kernel samples can't be symbolized",
				  cfg->procfs, sonde_strerror(vis));
	if (vis)
		return doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL,
				  "kernel.kptr_restrict = %ld; /proc/kallsyms shows addresses", v);
	return doctor_add(rep, id, title, SONDE_DOCTOR_FAIL,
			  sonde_doctor_explain_kallsyms(cfg, why, sizeof(why)),
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
		char *dst = doctor_has_cap(cfg, caps[i].cap) ? have : lack;
		size_t used = strlen(dst);

		snprintf(dst + used, sizeof(have) - used, "%s%s", used ? " " : "", caps[i].name);
	}
	if (privileged(cfg))
		return doctor_add(rep, "capabilities", "capabilities", SONDE_DOCTOR_OK, NULL,
				  "uid %u; effective: %s%s%s", (unsigned int)geteuid(), have,
				  lack[0] ? "; missing: " : "", lack);
	return doctor_add(rep, "capabilities", "capabilities", SONDE_DOCTOR_WARN,
			  "run as root, or: setcap cap_perfmon,cap_bpf,cap_syslog+ep $(command -v "
			  "sonde)",
			  "uid %u; effective: %s; missing: %s", (unsigned int)geteuid(),
			  have[0] ? have : "none", lack);
}

/* Appends the CPU PMUs in sysfs (with the CPUs each covers) to @list. */
static void cpu_pmus(const struct sonde_doctor_config *cfg, struct sonde_strlist *all,
		     struct sonde_strlist *cpu)
{
	sonde_pmu_names(cfg->sysfs, all);
	for (size_t i = 0; i < all->n; i++)
		if (sonde_pmu_is_cpu(cfg->sysfs, all->v[i]))
			sonde_strlist_add(cpu, all->v[i]);
}

static void join(const struct sonde_strlist *l, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", i ? " " : "", l->v[i]);
	}
}

static bool no_pmu_errno(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
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
	err = doctor_perf_probe(cfg, &a);
	sonde_strlist_init(&all);
	sonde_strlist_init(&cpu);
	cpu_pmus(cfg, &all, &cpu);
	join(&all, names, sizeof(names));
	if (!err)
		r = doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL,
			       "perf_event_open(cycles): ok; %zu CPU PMU(s) in sysfs", cpu.n);
	else if (no_pmu_errno(err))
		r = doctor_add(rep, id, title, SONDE_DOCTOR_UNAVAILABLE,
			       "no hardware PMU (a VM without PMU passthrough?): enable the vPMU "
			       "in the hypervisor (QEMU/KVM: -cpu host,pmu=on); meanwhile sample "
			       "with -e cpu-clock",
			       "perf_event_open(cycles): %s; %s (sysfs PMUs: %s)",
			       sonde_doctor_errno_name(err, en, sizeof(en)),
			       cpu.n ? "sysfs lists a CPU PMU the kernel won't count with"
				     : "no CPU PMU in sysfs",
			       names[0] ? names : "none");
	else
		r = doctor_add(rep, id, title, SONDE_DOCTOR_FAIL,
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
		r = doctor_add(rep, cid, "CPU PMU", err ? SONDE_DOCTOR_FAIL : SONDE_DOCTOR_OK,
			       err ? "the PMU is listed but does not count: see hw_pmu" : NULL,
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
	err = doctor_perf_probe(cfg, &a);
	if (!err)
		return doctor_add(rep, "sw_events", "software events", SONDE_DOCTOR_OK, NULL,
				  "perf_event_open(cpu-clock): ok");
	return doctor_add(rep, "sw_events", "software events",
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
	cpu_pmus(cfg, &all, &cpu);
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
	return !no_pmu_errno(doctor_perf_probe(cfg, &a));
}

/* EACCES/EPERM: which rule refused, from the paranoid level and what the event asks. */
static void explain_access(const struct sonde_doctor_config *cfg,
			   const struct perf_event_attr *attr, char *buf, size_t len)
{
	long v = 2;
	bool have = doctor_read_int(cfg->procfs, PARANOID, &v) == 0;

	if (privileged(cfg)) {
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
		   doctor_read_int(cfg->procfs, "sys/kernel/perf_event_max_sample_rate", &rate) ==
		       0 &&
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
