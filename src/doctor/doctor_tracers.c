// SPDX-License-Identifier: MIT
/*
 * Which ftrace tracers are listed, and which the kernel actually permits.
 *
 * available_tracers only says what was built; a kernel can still refuse a
 * tracer (EPERM under lockdown or a hypervisor's policy), and some tracers
 * (blk, the latency tracers) only run in the top-level instance.  So each
 * tracer is tried: first in a scratch instance, instances/sonde-doctor-PID,
 * which nobody else uses; then, for a tracer the instance refused, in the
 * top level, but only when the top level is idle (current_tracer is nop
 * and no event is enabled), because switching the top-level tracer resets
 * its buffer and would disturb whoever traces there.  Each accepted tracer
 * is put back to nop at once.
 *
 * Restoring must happen on every path, also when a signal arrives, so the
 * common termination signals are blocked from the instance's creation to
 * its removal; one that arrives meanwhile is delivered on unblocking.
 * sigprocmask, not pthread_sigmask: the callers are single-threaded, and it
 * needs no libpthread on the older C libraries the agent links with.
 */
#include <sonde/doctor.h>
#include <sonde/error.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>
#include <sonde/strlist.h>
#include <sonde/tracefs.h>

#include "doctor_internal.h"

/* What one tracer did, in the scratch instance and at the top level. */
struct trial {
	int inst;	   /* 0, -errno, or 1: not tried */
	bool inst_capable; /* listed in the instance's available_tracers (or unknown) */
	int top;	   /* 0, -errno, or 1: not tried */
	char why_not_top[96];
};

/* Tracers sonde cares about, for the fix when they are not built. */
static const struct {
	const char *name, *config;
} known[] = {
    {"function", "CONFIG_FUNCTION_TRACER=y"},
    {"function_graph", "CONFIG_FUNCTION_GRAPH_TRACER=y"},
    {"blk", "CONFIG_BLK_DEV_IO_TRACE=y"},
};

/*
 * Narrows a function tracer's trial to one function: switching it on for
 * every kernel function patches tens of thousands of call sites (seconds
 * under emulation).  Only where set_ftrace_filter is empty, so nothing of
 * a user's is lost; *set says whether to empty it again afterwards.
 */
static void narrow_filter(const struct sonde_doctor_config *cfg, const char *instance, char *filter,
			  size_t len, bool *set)
{
	char cur[64], first[128];

	*set = false;
	if (sonde_tracefs_instance_path(cfg->tracefs, instance, "set_ftrace_filter", filter, len) <
		0 ||
	    sonde_tracefs_instance_read(cfg->tracefs, instance, "set_ftrace_filter", cur,
					sizeof(cur)) < 0 ||
	    (cur[0] && cur[0] != '#') ||
	    sonde_tracefs_instance_read(cfg->tracefs, NULL, "available_filter_functions", first,
					sizeof(first)) <= 0)
		return;
	first[strcspn(first, " \t\n")] = '\0';
	strcat(first, "\n");
	*set = first[0] != '\n' && sonde_doctor_write(cfg, filter, first) == 0;
}

int sonde_doctor_try_tracer(const struct sonde_doctor_config *cfg, const char *instance,
			    const char *tracer)
{
	char path[PATH_MAX], filter[PATH_MAX];
	bool narrowed = false;
	int r = sonde_tracefs_instance_path(cfg->tracefs, instance, "current_tracer", path,
					    sizeof(path));

	if (r < 0)
		return r;
	if (!strncmp(tracer, "function", 8))
		narrow_filter(cfg, instance, filter, sizeof(filter), &narrowed);
	r = sonde_doctor_write(cfg, path, tracer);
	if (r == 0) {
		/* Twice if need be: leaving a tracer running is the one thing we must not do. */
		if (sonde_doctor_write(cfg, path, "nop") < 0)
			sonde_doctor_write(cfg, path, "nop");
	}
	if (narrowed)
		sonde_doctor_write(cfg, filter, "");
	return r;
}

/* Whether the top level is unused: nop tracer, no events enabled.  Says why not in @why. */
static bool top_idle(const struct sonde_doctor_config *cfg, char *why, size_t len)
{
	char cur[48];
	char *events = NULL, path[PATH_MAX];
	bool idle;
	int r = sonde_tracefs_instance_read(cfg->tracefs, NULL, "current_tracer", cur, sizeof(cur));

	if (r < 0) {
		snprintf(why, len, "top-level current_tracer unreadable (%s)", sonde_strerror(r));
		return false;
	}
	if (strcmp(cur, "nop")) {
		snprintf(why, len, "top level busy (current_tracer is %s)", cur);
		return false;
	}
	if (sonde_path(path, sizeof(path), "%s/set_event", cfg->tracefs) < 0 ||
	    sonde_read_all(path, &events, NULL) < 0) {
		snprintf(why, len, "top-level set_event unreadable");
		return false;
	}
	idle = strspn(events, " \n") == strlen(events);
	free(events);
	if (!idle)
		snprintf(why, len, "top level busy (events enabled in set_event)");
	return idle;
}

static const char *err_text(int e, char *buf, size_t len)
{
	return e == 0 ? "ok" : sonde_doctor_errno_name(e, buf, len);
}

/* Turns one tracer's trial into its check, tracer.NAME. */
static int report_trial(struct sonde_doctor_report *rep, const char *t, const struct trial *tr,
			char *summary, size_t slen)
{
	char id[64], title[96], inst[96], e1[32], e2[32];
	const char *en;
	int err = tr->top < 0 ? tr->top : tr->inst;

	snprintf(id, sizeof(id), "tracer.%s", t);
	snprintf(title, sizeof(title), "%s tracer", t);
	if (!tr->inst_capable)
		snprintf(inst, sizeof(inst), "not instance-capable");
	else if (tr->inst == 1)
		snprintf(inst, sizeof(inst), "instance: not tried");
	else
		snprintf(inst, sizeof(inst), "instance: %s", err_text(tr->inst, e1, sizeof(e1)));
	if (tr->inst == 0) {
		snprintf(summary, slen, "permitted");
		return sonde_doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL, "permitted (%s)",
					inst);
	}
	if (tr->top == 0 && tr->inst == 1 && tr->inst_capable) {
		/* No scratch instance could be made: the top level is all we know. */
		snprintf(summary, slen, "permitted");
		return sonde_doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL,
					"permitted in the top level (%s)", inst);
	}
	if (tr->top == 0) {
		snprintf(summary, slen, "top-level instance only");
		return sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_WARN,
		    "use it in the top-level instance, alone: sonde does so when "
		    "nothing else traces there",
		    "%s: top-level instance only (%s; top level: ok)", t, inst);
	}
	if (tr->top < 0) {
		en = err_text(err, e2, sizeof(e2));
		snprintf(summary, slen, "refused (%s)", en);
		return sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_FAIL,
		    err == -EPERM ? "the kernel refuses it even to root (lockdown, a security "
				    "module or the hypervisor's policy): use trace events, "
				    "uprobes or BPF instead"
				  : "see the kernel's tracing/error_log",
		    "listed but refused (%s): %s; top level: %s", en, inst,
		    err_text(tr->top, e1, sizeof(e1)));
	}
	/* The top level was not tried: say what we know and why. */
	if (!tr->inst_capable || tr->inst == 1) {
		snprintf(summary, slen, "untested");
		return sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_WARN,
		    "run sonde doctor again while nothing traces in the top level",
		    "%s; top level not tried: %s", inst, tr->why_not_top);
	}
	en = err_text(tr->inst, e2, sizeof(e2));
	snprintf(summary, slen, "refused in instances (%s)", en);
	return sonde_doctor_add(
	    rep, id, title, SONDE_DOCTOR_FAIL,
	    tr->inst == -EPERM ? "the kernel refuses it even to root (lockdown, a "
				 "security module or the hypervisor's policy)"
			       : "see the kernel's tracing/error_log",
	    "refused in instances (%s); top level not tried: %s", en, tr->why_not_top);
}

/* Tries @t in the scratch instance @inst (NULL: none could be made), then the top level. */
static void run_trial(const struct sonde_doctor_config *cfg, const char *inst,
		      const struct sonde_strlist *inst_list, bool have_inst_list, const char *t,
		      struct trial *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->inst = 1;
	tr->top = 1;
	tr->inst_capable = !have_inst_list || sonde_strlist_contains(inst_list, t);
	if (inst && tr->inst_capable) {
		tr->inst = sonde_doctor_try_tracer(cfg, inst, t);
		/* Instances without current_tracer (kernels before 4.x) can't take tracers. */
		if (tr->inst == -ENOENT)
			tr->inst_capable = false;
	}
	if (tr->inst == 0)
		return;
	if (!cfg->try_top_level)
		snprintf(tr->why_not_top, sizeof(tr->why_not_top), "disabled");
	else if (top_idle(cfg, tr->why_not_top, sizeof(tr->why_not_top)))
		tr->top = sonde_doctor_try_tracer(cfg, NULL, t);
}

static int report_blk(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep,
		      bool listed, const char *summary)
{
	bool events = sonde_doctor_exists(cfg->tracefs, "events/block");
	const char *id = "blk", *title = "block I/O tracing";

	if (listed && !strcmp(summary, "permitted"))
		return sonde_doctor_add(rep, id, title, SONDE_DOCTOR_OK, NULL,
					"blk tracer: permitted in instances; block tracepoints: %s",
					events ? "present" : "absent");
	if (listed && !strcmp(summary, "top-level instance only"))
		return sonde_doctor_add(
		    rep, id, title, SONDE_DOCTOR_WARN,
		    "one blk tracing session at a time, in the top level; block "
		    "tracepoints work in instances",
		    "blk tracer: top-level instance only; block tracepoints: %s",
		    events ? "present" : "absent");
	return sonde_doctor_add(
	    rep, id, title, events ? SONDE_DOCTOR_WARN : SONDE_DOCTOR_UNAVAILABLE,
	    listed ? "see tracer.blk" : "build the kernel with CONFIG_BLK_DEV_IO_TRACE=y",
	    "blk tracer: %s; block tracepoints: %s", listed ? summary : "not built",
	    events ? "present" : "absent");
}

int sonde_doctor_check_tracers(const struct sonde_doctor_config *cfg,
			       struct sonde_doctor_report *rep)
{
	struct sonde_strlist top, inst_list;
	char text[1024], inst[64], blk[64] = "", en[32];
	sigset_t block, old;
	int r, made;
	bool have_inst_list = false;

	if (!cfg->tracefs)
		return sonde_doctor_add(rep, "tracers", "ftrace tracers", SONDE_DOCTOR_UNAVAILABLE,
					"mount -t tracefs nodev /sys/kernel/tracing",
					"tracefs not mounted");
	r = sonde_tracefs_instance_read(cfg->tracefs, NULL, "available_tracers", text,
					sizeof(text));
	if (r < 0)
		return sonde_doctor_add(rep, "tracers", "ftrace tracers",
					DOCTOR_DENIED(r) ? SONDE_DOCTOR_FAIL
							 : SONDE_DOCTOR_UNAVAILABLE,
					DOCTOR_DENIED(r) ? DOCTOR_FIX_TRACEFS_ROOT
							 : "build the kernel with CONFIG_FTRACE=y",
					"available_tracers: %s", sonde_strerror(r));
	sonde_strlist_init(&top);
	sonde_strlist_init(&inst_list);
	if (sonde_tracefs_split_words(text, &top) < 0 ||
	    sonde_doctor_add(rep, "tracers", "ftrace tracers", SONDE_DOCTOR_OK, NULL,
			     "available_tracers: %s", text) < 0) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		char id[64], fix[96], title[96];

		if (sonde_strlist_contains(&top, known[i].name))
			continue;
		snprintf(id, sizeof(id), "tracer.%s", known[i].name);
		snprintf(fix, sizeof(fix), "build the kernel with %s", known[i].config);
		snprintf(title, sizeof(title), "%s tracer", known[i].name);
		if ((r = sonde_doctor_add(rep, id, title, SONDE_DOCTOR_UNAVAILABLE, fix,
					  "not listed in available_tracers")) < 0)
			goto out;
	}

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);
	snprintf(inst, sizeof(inst), "sonde-doctor-%ld", (long)getpid());
	made = sonde_tracefs_instance_create(cfg->tracefs, inst);
	if (made == 0) {
		char list[1024];

		have_inst_list =
		    sonde_tracefs_instance_read(cfg->tracefs, inst, "available_tracers", list,
						sizeof(list)) >= 0 &&
		    sonde_tracefs_split_words(list, &inst_list) == 0;
		/* The scratch buffer need not fill while tracers come and go. */
		sonde_tracefs_instance_write(cfg->tracefs, inst, "tracing_on", "0");
	}
	r = 0;
	for (size_t i = 0; r == 0 && i < top.n; i++) {
		struct trial tr;
		char summary[64];

		/* mmiotrace takes CPUs offline while it runs: never tried. */
		if (!strcmp(top.v[i], "nop") || !strcmp(top.v[i], "mmiotrace"))
			continue;
		run_trial(cfg, made == 0 ? inst : NULL, &inst_list, have_inst_list, top.v[i], &tr);
		r = report_trial(rep, top.v[i], &tr, summary, sizeof(summary));
		if (!strcmp(top.v[i], "blk"))
			snprintf(blk, sizeof(blk), "%s", summary);
	}
	if (made == 0) {
		int d = sonde_tracefs_instance_destroy(cfg->tracefs, inst);

		/* EBUSY is transient (a reader still closing); one retry after a moment. */
		if (d == -EBUSY) {
			usleep(100000);
			d = sonde_tracefs_instance_destroy(cfg->tracefs, inst);
		}
		if (d < 0 && r == 0)
			r = sonde_doctor_add(rep, "scratch_instance", "scratch instance",
					     SONDE_DOCTOR_FAIL, "rmdir it by hand",
					     "instances/%s left behind: %s", inst,
					     sonde_doctor_errno_name(d, en, sizeof(en)));
	} else if (r == 0) {
		r = sonde_doctor_add(rep, "scratch_instance", "scratch instance", SONDE_DOCTOR_WARN,
				     made == -ENOENT ? "instances need Linux 3.10 or later" : NULL,
				     "instances/%s: %s: tracers tried in the top level only", inst,
				     sonde_doctor_errno_name(made, en, sizeof(en)));
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		r = report_blk(cfg, rep, sonde_strlist_contains(&top, "blk"), blk);
	if (r == 0)
		r = sonde_doctor_check_dynamic_ftrace(cfg, rep);
out:
	sonde_strlist_fini(&top);
	sonde_strlist_fini(&inst_list);
	return r;
}
