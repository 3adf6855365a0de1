/* SPDX-License-Identifier: MIT */
/*
 * What works on this machine, and why not.
 *
 * sonde_doctor_run() measures facts (sysctls, mounts, sysfs PMUs, tracefs
 * files, the answers of perf_event_open and bpf, tracers tried in a scratch
 * tracefs instance) and turns each into a check: an id, a status, the
 * measured fact and the fix.  Every path root is a field of the config, so
 * tests run the same code against fake trees; the few facts only the kernel
 * can tell (perf_event_open, bpf, the kernel refusing a tracer) go through
 * hooks that tests replace.
 *
 * Other commands reuse the same knowledge for their error messages:
 * sonde_doctor_explain_open_error() turns a perf_event_open failure into
 * the reason and the fix.
 */
#ifndef SONDE_DOCTOR_H
#define SONDE_DOCTOR_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

enum sonde_doctor_status {
	SONDE_DOCTOR_OK,	  /* works */
	SONDE_DOCTOR_WARN,	  /* works with a limit worth knowing */
	SONDE_DOCTOR_UNAVAILABLE, /* not in this kernel or machine */
	SONDE_DOCTOR_FAIL,	  /* present but refused or broken */
};

/* Every string is owned by the report, never NULL, never cut short. */
struct sonde_doctor_check {
	char *id;    /* stable key: "hw_pmu", "tracer.blk", "config.CONFIG_KPROBES" */
	char *title; /* for people */
	enum sonde_doctor_status status;
	char *detail; /* the measured fact: "perf_event_open(cycles): ENOENT" */
	char *fix;    /* what to do about it, or "" */
};

/* The checks in the order they ran.  Owns its array. */
struct sonde_doctor_report {
	struct sonde_doctor_check *v;
	size_t n, cap;
};

/*
 * What only the kernel can answer.  A NULL hook uses the real system call;
 * tests install fakes.  Each returns 0 or -errno.
 */
struct sonde_doctor_hooks {
	/* Opens @attr counting and disabled on the calling thread, then closes it. */
	int (*perf_probe)(const struct perf_event_attr *attr, void *data);
	/* Creates a tiny BPF array map and closes it. */
	int (*bpf_probe)(void *data);
	/* Writes @text to the tracefs file @path (current_tracer). */
	int (*write)(const char *path, const char *text, void *data);
	void *data;
};

struct sonde_doctor_config {
	const char *procfs;  /* "/proc" */
	const char *sysfs;   /* "/sys" */
	const char *tracefs; /* mounted tracefs, or NULL when none is */
	const char *boot;    /* "/boot" (config-RELEASE) */
	const char *mounts;  /* mount table, "/proc/mounts" */
	const char *release; /* kernel release for /boot/config-*, NULL: uname() */
	const char *run_dir; /* where trace -o notes its captures, NULL: SONDE_RUN_DIR */
	/* tracefs was not mounted and the caller mounted it for the checks */
	bool tracefs_mounted_by_caller;
	/* Try tracers refused in instances at the top level when it is idle. */
	bool try_top_level;
	const struct sonde_doctor_hooks *hooks; /* NULL: all real */
};

/* The real machine's roots (tracefs NULL: the caller finds it). */
void sonde_doctor_config_default(struct sonde_doctor_config *cfg);

/**
 * sonde_doctor_report_init() - start an empty report
 * @rep: caller's storage
 */
void sonde_doctor_report_init(struct sonde_doctor_report *rep);
/**
 * sonde_doctor_report_fini() - free every check's texts and the array
 * @rep: the report; empty afterwards
 */
void sonde_doctor_report_fini(struct sonde_doctor_report *rep);

/**
 * sonde_doctor_report_add() - append a check
 * @fix: printf format of the fix, or NULL for none
 *
 * Return: borrowed: the new check (valid until the next add), or NULL
 * when out of memory.
 */
struct sonde_doctor_check *sonde_doctor_report_add(struct sonde_doctor_report *rep, const char *id,
						   const char *title,
						   enum sonde_doctor_status status,
						   const char *detail, const char *fix);

/* Return: borrowed: the check with @id, or NULL. */
const struct sonde_doctor_check *sonde_doctor_find(const struct sonde_doctor_report *rep,
						   const char *id);

/* "ok", "warn", "unavailable", "fail". */
const char *sonde_doctor_status_name(enum sonde_doctor_status s);

/**
 * sonde_doctor_run() - run every check
 *
 * Leaves tracefs as it found it: the scratch instance is removed and the
 * top level's current_tracer put back to nop, with SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT blocked meanwhile so that no signal interrupts the restore.
 * A check that can't measure its fact reports that as its status; only a
 * failure of doctor itself (out of memory) is returned.
 * Return: 0 or -errno.
 */
int sonde_doctor_run(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep);

/* The groups sonde_doctor_run() is made of, for callers that need one. */
int sonde_doctor_check_perf(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep);
/**
 * sonde_doctor_check_tracefs() - the tracefs and debugfs checks (mounted, where, usable)
 * @cfg: the roots to look at
 * @rep: receives one check per fact
 * Return: 0, or -ENOMEM (a check that can't measure its fact says so in its
 * status instead).
 */
int sonde_doctor_check_tracefs(const struct sonde_doctor_config *cfg,
			       struct sonde_doctor_report *rep);
/**
 * sonde_doctor_check_tracers() - the tracer checks: a scratch instance, and which tracers work in it
 * @cfg: the roots (cfg->tracefs mounted)
 * @rep: receives one check per fact
 * Removes its scratch instance before it returns.
 * Return: 0, or -ENOMEM (a check that can't measure its fact says so in its
 * status instead).
 */
int sonde_doctor_check_tracers(const struct sonde_doctor_config *cfg,
			       struct sonde_doctor_report *rep);
/**
 * sonde_doctor_check_kernel() - the kernel build checks: config, loadable modules, BPF, BTF
 * @cfg: the roots (procfs, sysfs, boot)
 * @rep: receives one check per fact
 * Return: 0, or -ENOMEM (a check that can't measure its fact says so in its
 * status instead).
 */
int sonde_doctor_check_kernel(const struct sonde_doctor_config *cfg,
			      struct sonde_doctor_report *rep);
/* Leftovers of killed sondes: instances, unsaved trace -o captures. */
int sonde_doctor_check_stale(const struct sonde_doctor_config *cfg,
			     struct sonde_doctor_report *rep);

/**
 * sonde_doctor_try_tracer() - whether a tracefs instance accepts a tracer
 * @tracefs: the tracefs mount point
 * @instance: the instance, or NULL for the top level
 * @tracer: the tracer to set
 *
 * Writes @tracer to the instance's current_tracer and, when accepted,
 * writes nop back at once.  The caller makes sure nop was current.
 * Return: 0 when the kernel accepted it, else its -errno.
 */
int sonde_doctor_try_tracer(const struct sonde_doctor_config *cfg, const char *instance,
			    const char *tracer);

/**
 * sonde_doctor_explain_tracer() - why the kernel refused a tracer, and what to do
 * @tracer: the tracer written to current_tracer
 * @err: the kernel's answer, -errno or errno
 * @buf: receives the explanation (one line)
 *
 * Tells a tracer that is not built from one that is listed but refused,
 * and for a refused function tracer measures why (dynamic ftrace files
 * refused, the lockdown state).  Never fails.  Return: @buf.
 */
const char *sonde_doctor_explain_tracer(const struct sonde_doctor_config *cfg, const char *tracer,
					int err, char *buf, size_t len);

/**
 * sonde_doctor_explain_open_error() - why perf_event_open failed, and the fix
 * @attr: the attribute that failed
 * @err: the failure, -errno or errno
 * @buf: receives the explanation (one line)
 *
 * Reads the facts it needs from the real machine (sysctls, sysfs PMUs, a
 * probe of the cycles event).  Never fails: an error it does not know is
 * explained by its errno text.
 * Return: @buf.
 */
const char *sonde_doctor_explain_open_error(const struct perf_event_attr *attr, int err, char *buf,
					    size_t len);
/* The same against @cfg's roots and hooks. */
const char *sonde_doctor_explain_open_error_at(const struct sonde_doctor_config *cfg,
					       const struct perf_event_attr *attr, int err,
					       char *buf, size_t len);

/**
 * sonde_doctor_explain_kallsyms() - why kernel addresses read as zero
 *
 * Return: @buf with the reason and fix when kallsyms hides its addresses
 * from this process, or NULL when they are visible.
 */
const char *sonde_doctor_explain_kallsyms(const struct sonde_doctor_config *cfg, char *buf,
					  size_t len);

/* The symbolic name of an errno value ("EPERM"), or its number as text in @buf. */
const char *sonde_doctor_errno_name(int err, char *buf, size_t len);

#endif
