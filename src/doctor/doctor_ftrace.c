// SPDX-License-Identifier: MIT
/*
 * Why function tracing is refused, in words a user can act on.
 *
 * A kernel can list the function tracer in available_tracers and still
 * refuse it: function tracing patches the call sites of kernel functions
 * at run time (dynamic ftrace), and a kernel that forbids patching its own
 * text refuses the tracer and every file that exposes the patch sites
 * (available_filter_functions, set_ftrace_filter, set_ftrace_pid,
 * enabled_functions) with EPERM, while the rest of tracefs works.  The
 * facts gathered here: which of those files open, and the lockdown state
 * (securityfs when mounted, else the kernel config's forced mode).
 * Mainline lockdown's integrity mode does not cover tracefs, so when the
 * lockdown is "integrity" and the refusal is limited to dynamic ftrace,
 * the refusal is the kernel's own policy (a vendor or hypervisor patch),
 * and sonde says so rather than guess further.
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/strlist.h>
#include <sonde/tracefs.h>

#include "doctor_internal.h"

/* Files of dynamic ftrace, opened read-only (harmless) to see whether the kernel allows them. */
static const char *const dyn_files[] = {
    "available_filter_functions",
    "set_ftrace_filter",
    "set_ftrace_pid",
    "enabled_functions",
};

/* Opens each file; @refused lists the refused ones.  Return: the first refusal (-errno) or 0. */
static int probe_dynamic(const struct sonde_doctor_config *cfg, char *refused, size_t len,
			 int *nmissing)
{
	int first = 0;
	size_t used = 0;

	refused[0] = '\0';
	*nmissing = 0;
	for (size_t i = 0; i < sizeof(dyn_files) / sizeof(dyn_files[0]); i++) {
		char path[PATH_MAX];
		int fd;

		if (sonde_path(path, sizeof(path), "%s/%s", cfg->tracefs, dyn_files[i]) < 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (errno == ENOENT) {
			(*nmissing)++;
			continue;
		}
		if (!first)
			first = -errno;
		used += (size_t)snprintf(refused + used, len - used, "%s%s", used ? ", " : "",
					 dyn_files[i]);
		if (used >= len)
			used = len - 1;
	}
	return first;
}

/* "integrity", "none", ..., with where it was read; "" when unknown. */
static void lockdown_state(const struct sonde_doctor_config *cfg, char *buf, size_t len)
{
	char path[PATH_MAX], text[128], where[PATH_MAX], tried[2 * PATH_MAX + 8], val[16];
	char *config = NULL;

	buf[0] = '\0';
	if (sonde_path(path, sizeof(path), "%s/kernel/security/lockdown", cfg->sysfs) == 0 &&
	    sonde_read_text(path, text, sizeof(text)) >= 0) {
		char *l = strchr(text, '['), *r = l ? strchr(l, ']') : NULL;

		if (l && r) {
			snprintf(buf, len, "lockdown=%.*s", (int)(r - l - 1), l + 1);
			return;
		}
	}
	if (sonde_doctor_load_config(cfg, &config, where, sizeof(where), tried, sizeof(tried)) < 0)
		return;
	if (sonde_doctor_config_value(config, "CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY", val,
				      sizeof(val)) &&
	    !strcmp(val, "y"))
		snprintf(buf, len,
			 "lockdown=confidentiality, forced by the kernel's configuration");
	else if (sonde_doctor_config_value(config, "CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY", val,
					   sizeof(val)) &&
		 !strcmp(val, "y"))
		snprintf(buf, len, "lockdown=integrity, forced by the kernel's configuration");
	free(config);
}

/* The common explanation of a kernel that refuses dynamic ftrace.
 * Return: new (free()), or NULL without memory. */
static char *explain_dynamic(const struct sonde_doctor_config *cfg, const char *refused)
{
	char lock[128], *why;
	int n;

	lockdown_state(cfg, lock, sizeof(lock));
	if (!strncmp(lock, "lockdown=confidentiality", 24))
		n = asprintf(
		    &why,
		    "the kernel is locked down (%s), which forbids tracefs function tracing "
		    "(%s refused with EPERM)",
		    lock, refused);
	else
		n = asprintf(&why,
			     "the kernel forbids dynamic ftrace, the run-time patching of kernel "
			     "functions that function tracing needs: %s refuse to open with EPERM "
			     "while the rest of tracefs works%s%s%s",
			     refused, lock[0] ? " (" : "", lock,
			     lock[0] && strstr(lock, "integrity")
				 ? ": mainline's integrity mode allows tracefs, so this is the "
				   "kernel's own policy, a vendor or hypervisor patch)"
				 : (lock[0] ? ")" : ""));
	return n < 0 ? NULL : why;
}

int sonde_doctor_check_dynamic_ftrace(const struct sonde_doctor_config *cfg,
				      struct sonde_doctor_report *rep)
{
	char refused[256], *why;
	int missing, r;

	if (!cfg->tracefs)
		return 0;
	r = probe_dynamic(cfg, refused, sizeof(refused), &missing);
	if (r == 0 && missing == (int)(sizeof(dyn_files) / sizeof(dyn_files[0])))
		return sonde_doctor_add(
		    rep, "ftrace.dynamic", "dynamic ftrace (function filters)",
		    SONDE_DOCTOR_UNAVAILABLE, "build the kernel with CONFIG_DYNAMIC_FTRACE=y",
		    "no set_ftrace_filter: function filters (-f, --notrace) are "
		    "not available");
	if (r == 0)
		return sonde_doctor_add(
		    rep, "ftrace.dynamic", "dynamic ftrace (function filters)", SONDE_DOCTOR_OK,
		    NULL, "set_ftrace_filter, set_ftrace_pid, available_filter_functions open");
	why = explain_dynamic(cfg, refused);
	if (!why)
		return -ENOMEM;
	r = sonde_doctor_add(
	    rep, "ftrace.dynamic", "dynamic ftrace (function filters)", SONDE_DOCTOR_FAIL,
	    "function tracing can't work on this kernel: use trace events (sonde "
	    "trace -e), uprobes or BPF, or trace functions in a VM with a stock kernel",
	    "%s", why);
	free(why);
	return r;
}

const char *sonde_doctor_explain_tracer(const struct sonde_doctor_config *cfg, const char *tracer,
					int err, char *buf, size_t len)
{
	struct sonde_strlist list;
	char text[1024] = "", refused[256], en[32];
	bool listed;
	int missing;

	if (err > 0)
		err = -err;
	sonde_strlist_init(&list);
	if (cfg->tracefs)
		sonde_tracefs_instance_read(cfg->tracefs, NULL, "available_tracers", text,
					    sizeof(text));
	sonde_tracefs_split_words(text, &list);
	listed = sonde_strlist_contains(&list, tracer);
	sonde_strlist_fini(&list);
	if (!listed) {
		const char *config = !strcmp(tracer, "function") ? "CONFIG_FUNCTION_TRACER"
				     : !strcmp(tracer, "function_graph")
					 ? "CONFIG_FUNCTION_GRAPH_TRACER"
				     : !strcmp(tracer, "blk") ? "CONFIG_BLK_DEV_IO_TRACE"
							      : NULL;

		if (config)
			snprintf(buf, len,
				 "this kernel has no %s tracer: it was built without %s "
				 "(available_tracers: %s)",
				 tracer, config, text[0] ? text : "none");
		else
			snprintf(buf, len, "this kernel has no '%s' tracer (available_tracers: %s)",
				 tracer, text[0] ? text : "none");
		return buf;
	}
	if (err == -EPERM && !strncmp(tracer, "function", 8) && cfg->tracefs &&
	    probe_dynamic(cfg, refused, sizeof(refused), &missing) == -EPERM) {
		char *why = explain_dynamic(cfg, refused);

		snprintf(buf, len,
			 "this kernel lists the %s tracer but refuses it (EPERM): %s.  Use trace "
			 "events (-e), or trace functions in a VM (see sonde doctor)",
			 tracer, why ? why : "dynamic ftrace is refused");
		free(why);
		return buf;
	}
	if (err == -EPERM)
		snprintf(buf, len,
			 "this kernel lists the %s tracer but refuses it (EPERM): lockdown, a "
			 "security module or the hypervisor's policy forbids it even to root",
			 tracer);
	else
		snprintf(buf, len, "the kernel refused the %s tracer (%s): see %s/error_log",
			 tracer, sonde_doctor_errno_name(err, en, sizeof(en)),
			 cfg->tracefs ? cfg->tracefs : "tracefs");
	return buf;
}
