/* SPDX-License-Identifier: MIT */
/*
 * What the doctor_*.c files share and nothing else sees: the hook
 * dispatch (real system call unless a test installed a fake) and small
 * readers of the path roots.
 */
#ifndef SONDE_DOCTOR_INTERNAL_H
#define SONDE_DOCTOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <sonde/doctor.h>
#include <sonde/strlist.h>

/* Hooks, falling back to the real calls. */
int sonde_doctor_perf_probe(const struct sonde_doctor_config *cfg,
			    const struct perf_event_attr *attr);
int sonde_doctor_bpf_probe(const struct sonde_doctor_config *cfg);
int sonde_doctor_write(const struct sonde_doctor_config *cfg, const char *path, const char *text);

/* Reads "ROOT/REL" as a signed integer (sysctls can be -1).  Return: 0 or -errno. */
int sonde_doctor_read_int(const char *root, const char *rel, long *val);

/* tracefs is mode 0700 by default: what a user who can't read it should do. */
#define DOCTOR_FIX_TRACEFS_ROOT                                                                    \
	"tracefs is readable by root only: run sonde doctor as root (or chmod the tracefs mount)"
/* Whether @err means "not allowed" rather than "not there". */
#define DOCTOR_DENIED(err) ((err) == -EACCES || (err) == -EPERM)
/* Whether "ROOT/REL" exists. */
bool sonde_doctor_exists(const char *root, const char *rel);

/* Adds a check with printf-formatted detail; fix may be NULL.  Return: 0 or -ENOMEM. */
int sonde_doctor_add(struct sonde_doctor_report *rep, const char *id, const char *title,
		     enum sonde_doctor_status status, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Finds the kernel config; @where receives its path.  Return: 0 with *text new, or -ENOENT. */
int sonde_doctor_load_config(const struct sonde_doctor_config *cfg, char **text, char *where,
			     size_t len, char *tried, size_t tlen);
/* The value of @opt in config @text: "y", "m", "n" (is not set), or NULL when absent. */
const char *sonde_doctor_config_value(const char *text, const char *opt, char *buf, size_t len);

/* Whether dynamic ftrace's files open; adds check "ftrace.dynamic".  Return: 0 or -ENOMEM. */
int sonde_doctor_check_dynamic_ftrace(const struct sonde_doctor_config *cfg,
				      struct sonde_doctor_report *rep);

/* Whether this process has capability @cap in its effective set (procfs/self/status). */
bool sonde_doctor_has_cap(const struct sonde_doctor_config *cfg, unsigned int cap);

/* doctor_explain.c, shared with the checks. */
#define PARANOID "sys/kernel/perf_event_paranoid"
/* CAP_PERFMON or CAP_SYS_ADMIN. */
bool sonde_doctor_privileged(const struct sonde_doctor_config *cfg);
/* Appends every PMU in sysfs to @all and the CPU PMUs to @cpu. */
void sonde_doctor_cpu_pmus(const struct sonde_doctor_config *cfg, struct sonde_strlist *all,
			   struct sonde_strlist *cpu);
/* An errno that means "no such PMU or event here". */
bool sonde_doctor_no_pmu_errno(int err);

/* Capability numbers, from linux/capability.h (kept here: older headers lack the new ones). */
enum {
	DOCTOR_CAP_SYS_ADMIN = 21,
	DOCTOR_CAP_SYSLOG = 34,
	DOCTOR_CAP_PERFMON = 38,
	DOCTOR_CAP_BPF = 39,
};

#endif
