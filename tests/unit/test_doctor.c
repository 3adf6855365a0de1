// SPDX-License-Identifier: MIT
/*
 * sonde doctor against fake machines: the cases this VM can't show
 * (kprobes and modules present, paranoid 3, tracefs not mounted, Arm
 * big.LITTLE PMUs, tracers permitted in instances).
 *
 * Each test builds one fake tree with proc/, sys/, tracefs/ and boot/
 * under it.  What only the kernel decides goes through the doctor's hooks:
 * perf_event_open and bpf answers are the test's, and so are tracefs
 * writes in the tracer tests, because a fake tracefs can't refuse a write
 * from root.  Two tests use real file I/O instead and make the refusal
 * physical: a current_tracer that is a folder fails with EISDIR, and a
 * fake instance (an empty folder after mkdir, unlike a real one) has no
 * current_tracer, which doctor treats like an old kernel's instance.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/doctor.h>
#include <sonde/fileio.h>
#include <sonde/strlist.h>
#include <sonde/tracefs.h>

#include "fake_tree.h"

#define ALL_CAPS "000001ffffffffff"
#define NO_CAPS "0000000000000000"

/* A fake machine and what its kernel answers. */
struct fake {
	char *root;
	char proc[512], sys[512], tfs[512], boot[512], mounts[600];
	struct sonde_doctor_config cfg;
	struct sonde_doctor_hooks hooks;
	struct sonde_doctor_report rep;
	int hw_err, sw_err, bpf_err;
	/* tracefs writes: the kernel's answer for a tracer, and a log of writes */
	int (*answer)(const char *path, const char *text);
	char log[2048];
};

static int fake_perf(const struct perf_event_attr *attr, void *data)
{
	struct fake *f = data;

	return attr->type == PERF_TYPE_SOFTWARE ? f->sw_err : f->hw_err;
}

static int fake_bpf(void *data)
{
	return ((struct fake *)data)->bpf_err;
}

static int fake_write(const char *path, const char *text, void *data)
{
	struct fake *f = data;
	const char *rel = strstr(path, "/tracefs/");
	size_t used = strlen(f->log);

	snprintf(f->log + used, sizeof(f->log) - used, "%s<-%s;", rel ? rel + 9 : path, text);
	return f->answer ? f->answer(path, text) : 0;
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->root = fake_tree_new();
	assert_non_null(f->root);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	snprintf(f->tfs, sizeof(f->tfs), "%s/tracefs", f->root);
	snprintf(f->boot, sizeof(f->boot), "%s/boot", f->root);
	snprintf(f->mounts, sizeof(f->mounts), "%s/mounts", f->proc);
	fake_tree_mkdir(f->root, "boot");
	fake_tree_write(f->root, "proc/sys/kernel/perf_event_paranoid", "2\n");
	fake_tree_write(f->root, "proc/sys/kernel/kptr_restrict", "0\n");
	fake_tree_write(f->root, "proc/kallsyms", "ffffffff81000000 T _stext\n");
	fake_tree_write(f->root, "proc/self/status", "Name:\tx\nCapEff:\t" ALL_CAPS "\n");
	fake_tree_printf(f->root, "proc/mounts", "none %s tracefs rw 0 0\n", f->tfs);
	fake_tree_write(f->root, "sys/bus/event_source/devices/software/type", "1\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/tracepoint/type", "2\n");
	fake_tree_mkdir(f->root, "sys/kernel/tracing");
	fake_tree_write(f->root, "tracefs/available_tracers", "blk function function_graph nop\n");
	fake_tree_write(f->root, "tracefs/current_tracer", "nop\n");
	fake_tree_write(f->root, "tracefs/set_event", "");
	fake_tree_mkdir(f->root, "tracefs/instances");
	fake_tree_mkdir(f->root, "tracefs/events/sched");

	sonde_doctor_config_default(&f->cfg);
	f->cfg.procfs = f->proc;
	f->cfg.sysfs = f->sys;
	f->cfg.tracefs = f->tfs;
	f->cfg.boot = f->boot;
	f->cfg.mounts = f->mounts;
	f->cfg.release = "6.1.0-test";
	f->hooks.perf_probe = fake_perf;
	f->hooks.bpf_probe = fake_bpf;
	f->hooks.write = fake_write;
	f->hooks.data = f;
	f->cfg.hooks = &f->hooks;
	sonde_doctor_report_init(&f->rep);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	sonde_doctor_report_fini(&f->rep);
	fake_tree_remove(f->root);
	free(f);
	return 0;
}

static const struct sonde_doctor_check *get(struct fake *f, const char *id)
{
	const struct sonde_doctor_check *c = sonde_doctor_find(&f->rep, id);

	if (!c)
		fail_msg("no check '%s'", id);
	return c;
}

#define assert_contains(hay, needle)                                                               \
	do {                                                                                       \
		if (!strstr((hay), (needle)))                                                      \
			fail_msg("'%s' does not contain '%s'", (hay), (needle));                   \
	} while (0)

static void test_paranoid3_unprivileged(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	fake_tree_write(f->root, "proc/sys/kernel/perf_event_paranoid", "3\n");
	fake_tree_write(f->root, "proc/self/status", "CapEff:\t" NO_CAPS "\n");
	f->hw_err = -EACCES;
	assert_int_equal(sonde_doctor_check_perf(&f->cfg, &f->rep), 0);
	c = get(f, "perf_event_paranoid");
	assert_int_equal(c->status, SONDE_DOCTOR_FAIL);
	assert_contains(c->detail, "3 (unprivileged users: no perf_event_open at all)");
	assert_contains(c->fix, "sysctl -w kernel.perf_event_paranoid=1");
	c = get(f, "capabilities");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	assert_contains(c->detail, "missing: CAP_PERFMON");
	c = get(f, "hw_pmu");
	assert_int_equal(c->status, SONDE_DOCTOR_FAIL);
	assert_contains(c->detail, "EACCES");
}

static void test_paranoid_root(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	assert_int_equal(sonde_doctor_check_perf(&f->cfg, &f->rep), 0);
	c = get(f, "perf_event_paranoid");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	assert_string_equal(c->fix, "");
	assert_int_equal(get(f, "capabilities")->status, SONDE_DOCTOR_OK);
	assert_int_equal(get(f, "kptr_restrict")->status, SONDE_DOCTOR_OK);
	assert_int_equal(get(f, "sw_events")->status, SONDE_DOCTOR_OK);
}

static void test_kptr_hidden(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;
	char buf[256];

	fake_tree_write(f->root, "proc/kallsyms", "0000000000000000 T _stext\n");
	fake_tree_write(f->root, "proc/sys/kernel/kptr_restrict", "2\n");
	assert_int_equal(sonde_doctor_check_perf(&f->cfg, &f->rep), 0);
	c = get(f, "kptr_restrict");
	assert_int_equal(c->status, SONDE_DOCTOR_FAIL);
	assert_contains(c->fix, "even from root");
	assert_contains(c->fix, "sysctl -w kernel.kptr_restrict=0");
	fake_tree_write(f->root, "proc/sys/kernel/kptr_restrict", "1\n");
	assert_non_null(sonde_doctor_explain_kallsyms(&f->cfg, buf, sizeof(buf)));
	assert_contains(buf, "CAP_SYSLOG");
	/* kptr_restrict is 0 already: zeros come from perf_event_paranoid > 1
	 * (the kernel's kallsyms_show_value), so advising kptr_restrict=0 is wrong. */
	fake_tree_write(f->root, "proc/sys/kernel/kptr_restrict", "0\n");
	assert_non_null(sonde_doctor_explain_kallsyms(&f->cfg, buf, sizeof(buf)));
	assert_null(strstr(buf, "sysctl -w kernel.kptr_restrict"));
	assert_contains(buf, "sysctl -w kernel.perf_event_paranoid=1");
	assert_contains(buf, "(now 2)");
	fake_tree_write(f->root, "proc/kallsyms", "ffffffff81000000 T _stext\n");
	assert_null(sonde_doctor_explain_kallsyms(&f->cfg, buf, sizeof(buf)));
	/* Per-CPU symbols at a real address of 0 come first on some kernels. */
	fake_tree_write(f->root, "proc/kallsyms",
			"0000000000000000 A fixed_percpu_data\n0000000000001000 A cpu_tss_rw\n"
			"ffffffff81000000 T _stext\n");
	assert_null(sonde_doctor_explain_kallsyms(&f->cfg, buf, sizeof(buf)));
}

static void test_no_pmu(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	f->hw_err = -ENOENT;
	assert_int_equal(sonde_doctor_check_perf(&f->cfg, &f->rep), 0);
	c = get(f, "hw_pmu");
	assert_int_equal(c->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_contains(c->detail, "perf_event_open(cycles): ENOENT; no CPU PMU in sysfs");
	assert_contains(c->fix, "cpu-clock");
	assert_null(sonde_doctor_find(&f->rep, "pmu.cpu"));
}

/* An Arm big.LITTLE board: one PMU per core type, each with its cpus file. */
static void test_big_little(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_cortex_a53/type", "8\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_cortex_a53/cpus", "0-3\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_cortex_a53/format/event",
			"config:0-15\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_cortex_a72/type", "9\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_cortex_a72/cpus", "4-5\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_cortex_a72/format/event",
			"config:0-15\n");
	assert_int_equal(sonde_doctor_check_perf(&f->cfg, &f->rep), 0);
	c = get(f, "hw_pmu");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	assert_contains(c->detail, "2 CPU PMU(s)");
	c = get(f, "pmu.armv8_cortex_a53");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	assert_string_equal(c->detail, "armv8_cortex_a53: type 8, cpus 0-3");
	c = get(f, "pmu.armv8_cortex_a72");
	assert_string_equal(c->detail, "armv8_cortex_a72: type 9, cpus 4-5");
	assert_null(sonde_doctor_find(&f->rep, "pmu.software"));
}

static void test_tracefs_not_mounted(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	fake_tree_write(f->root, "proc/mounts", "proc /proc proc rw 0 0\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/kprobe/type", "6\n");
	f->cfg.tracefs = NULL;
	assert_int_equal(sonde_doctor_check_tracefs(&f->cfg, &f->rep), 0);
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	c = get(f, "tracefs");
	assert_int_equal(c->status, SONDE_DOCTOR_FAIL);
	assert_string_equal(c->fix, "mount -t tracefs nodev /sys/kernel/tracing");
	c = get(f, "debugfs");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	c = get(f, "kprobes");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	assert_contains(c->detail, "kprobe_events: tracefs not mounted; kprobe PMU: present");
	assert_contains(c->fix, "mount -t tracefs");
	c = get(f, "tracers");
	assert_int_equal(c->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_int_equal(get(f, "trace_events")->status, SONDE_DOCTOR_WARN);
}

static void test_tracefs_mounted_by_caller(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	f->cfg.tracefs_mounted_by_caller = true;
	assert_int_equal(sonde_doctor_check_tracefs(&f->cfg, &f->rep), 0);
	c = get(f, "tracefs");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	assert_contains(c->detail, "was not mounted");
	assert_contains(c->fix, "/etc/fstab");
}

static void test_no_tracing_kernel(void **state)
{
	struct fake *f = *state;
	char path[600];

	snprintf(path, sizeof(path), "%s/kernel/tracing", f->sys);
	assert_int_equal(rmdir(path), 0);
	fake_tree_write(f->root, "proc/mounts", "");
	f->cfg.tracefs = NULL;
	assert_int_equal(sonde_doctor_check_tracefs(&f->cfg, &f->rep), 0);
	assert_int_equal(get(f, "tracefs")->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_contains(get(f, "tracefs")->fix, "CONFIG_FTRACE=y");
}

static void test_probes_present(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	fake_tree_write(f->root, "tracefs/kprobe_events", "");
	fake_tree_write(f->root, "tracefs/uprobe_events", "");
	fake_tree_write(f->root, "sys/bus/event_source/devices/kprobe/type", "6\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/uprobe/type", "7\n");
	assert_int_equal(sonde_doctor_check_tracefs(&f->cfg, &f->rep), 0);
	c = get(f, "kprobes");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	assert_string_equal(c->detail, "kprobe_events: present; kprobe PMU: present");
	assert_int_equal(get(f, "uprobes")->status, SONDE_DOCTOR_OK);
	assert_int_equal(get(f, "trace_events")->status, SONDE_DOCTOR_OK);
	assert_int_equal(get(f, "tracefs")->status, SONDE_DOCTOR_OK);
}

static void test_probes_absent(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	assert_int_equal(sonde_doctor_check_tracefs(&f->cfg, &f->rep), 0);
	c = get(f, "kprobes");
	assert_int_equal(c->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_contains(c->fix, "CONFIG_KPROBES=y");
	assert_contains(get(f, "uprobes")->fix, "CONFIG_UPROBE_EVENTS=y");
}

static void test_modules(void **state)
{
	struct fake *f = *state;

	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	assert_int_equal(get(f, "modules")->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_contains(get(f, "modules")->fix, "CONFIG_MODULES=y");
	sonde_doctor_report_fini(&f->rep);

	fake_tree_write(f->root, "proc/modules",
			"ext4 1 0 - Live 0xffffffffc0000000\nloop 2 0 - Live 0xffffffffc0100000\n");
	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	assert_int_equal(get(f, "modules")->status, SONDE_DOCTOR_OK);
	assert_string_equal(get(f, "modules")->detail, "2 loaded");
	sonde_doctor_report_fini(&f->rep);

	fake_tree_write(f->root, "proc/sys/kernel/modules_disabled", "1\n");
	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	assert_int_equal(get(f, "modules")->status, SONDE_DOCTOR_WARN);
}

static void test_bpf(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	fake_tree_write(f->root, "proc/sys/kernel/unprivileged_bpf_disabled", "2\n");
	fake_tree_write(f->root, "sys/kernel/btf/vmlinux", "x");
	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	c = get(f, "bpf");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	assert_contains(c->detail, "kernel.unprivileged_bpf_disabled = 2");
	assert_int_equal(get(f, "btf")->status, SONDE_DOCTOR_OK);
	sonde_doctor_report_fini(&f->rep);

	fake_tree_write(f->root, "proc/self/status", "CapEff:\t" NO_CAPS "\n");
	f->bpf_err = -EPERM;
	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	c = get(f, "bpf");
	assert_int_equal(c->status, SONDE_DOCTOR_FAIL);
	assert_contains(c->detail, "EPERM");
	assert_contains(c->fix, "CAP_BPF");
	sonde_doctor_report_fini(&f->rep);

	f->bpf_err = -ENOSYS;
	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	assert_int_equal(get(f, "bpf")->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_contains(get(f, "bpf")->fix, "CONFIG_BPF_SYSCALL=y");
}

static void test_config_boot(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	fake_tree_write(f->root, "boot/config-6.1.0-test",
			"CONFIG_KPROBES=y\n# CONFIG_MODULES is not set\nCONFIG_BLK_DEV_IO_TRACE=y\n"
			"CONFIG_BPF_SYSCALL=m\n");
	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	c = get(f, "kernel_config");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	assert_contains(c->detail, "boot/config-6.1.0-test");
	assert_int_equal(get(f, "config.CONFIG_KPROBES")->status, SONDE_DOCTOR_OK);
	assert_string_equal(get(f, "config.CONFIG_KPROBES")->detail, "CONFIG_KPROBES=y");
	assert_int_equal(get(f, "config.CONFIG_BPF_SYSCALL")->status, SONDE_DOCTOR_OK);
	c = get(f, "config.CONFIG_MODULES");
	assert_int_equal(c->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_string_equal(c->detail, "CONFIG_MODULES is not set");
	assert_string_equal(c->fix, "build the kernel with CONFIG_MODULES=y");
	c = get(f, "config.CONFIG_DEBUG_INFO_BTF");
	assert_contains(c->detail, "is absent");
}

static void test_config_gz(void **state)
{
	struct fake *f = *state;
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "printf 'CONFIG_UPROBE_EVENTS=y\\n' | gzip -c > '%s/config.gz'",
		 f->proc);
	assert_int_equal(system(cmd), 0);
	/* /proc/config.gz wins over /boot. */
	fake_tree_write(f->root, "boot/config-6.1.0-test", "# CONFIG_UPROBE_EVENTS is not set\n");
	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	assert_contains(get(f, "kernel_config")->detail, "proc/config.gz");
	assert_int_equal(get(f, "config.CONFIG_UPROBE_EVENTS")->status, SONDE_DOCTOR_OK);
}

static void test_config_missing(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	assert_int_equal(sonde_doctor_check_kernel(&f->cfg, &f->rep), 0);
	c = get(f, "kernel_config");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	assert_contains(c->detail, "kernel config not found");
	assert_contains(c->fix, "CONFIG_IKCONFIG_PROC=y");
	assert_null(sonde_doctor_find(&f->rep, "config.CONFIG_KPROBES"));
}

/* This VM's kernel: function refused everywhere, blk refused in instances. */
static int answer_like_here(const char *path, const char *text)
{
	bool in_instance = strstr(path, "/instances/") != NULL;

	if (!strcmp(text, "function"))
		return -EPERM;
	if (!strcmp(text, "blk") && in_instance)
		return -EINVAL;
	return 0;
}

static void test_tracers_like_here(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;
	struct sonde_strlist inst;
	char cur[64];
	char expect[512];

	f->answer = answer_like_here;
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	c = get(f, "tracers");
	assert_string_equal(c->detail, "available_tracers: blk function function_graph nop");
	c = get(f, "tracer.blk");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	assert_contains(c->detail, "blk: top-level instance only");
	c = get(f, "tracer.function");
	assert_int_equal(c->status, SONDE_DOCTOR_FAIL);
	assert_contains(c->detail, "refused (EPERM)");
	c = get(f, "tracer.function_graph");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	c = get(f, "blk");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	assert_contains(c->detail, "top-level instance only");
	assert_null(sonde_doctor_find(&f->rep, "scratch_instance"));

	/* Every accepted tracer is followed by nop, in the same place. */
	snprintf(expect, sizeof(expect),
		 "instances/sonde-doctor-%ld/current_tracer<-blk;current_tracer<-blk;"
		 "current_tracer<-nop;instances/sonde-doctor-%ld/current_tracer<-function;"
		 "current_tracer<-function;instances/sonde-doctor-%ld/current_tracer<-"
		 "function_graph;instances/sonde-doctor-%ld/current_tracer<-nop;",
		 (long)getpid(), (long)getpid(), (long)getpid(), (long)getpid());
	assert_string_equal(f->log, expect);
	/* The scratch instance is gone, the top level untouched. */
	sonde_strlist_init(&inst);
	assert_int_equal(sonde_tracefs_instances(f->tfs, &inst), 0);
	assert_int_equal(inst.n, 0);
	sonde_strlist_fini(&inst);
	assert_true(sonde_tracefs_instance_read(f->tfs, NULL, "current_tracer", cur, sizeof(cur)) >
		    0);
	assert_string_equal(cur, "nop");
}

static void test_tracers_top_busy(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	f->answer = answer_like_here;
	fake_tree_write(f->root, "tracefs/current_tracer", "function_graph\n");
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	c = get(f, "tracer.blk");
	assert_int_equal(c->status, SONDE_DOCTOR_FAIL);
	assert_contains(c->detail, "top level busy (current_tracer is function_graph)");
	/* The top level was never written. */
	assert_null(strstr(f->log, ";current_tracer<-"));
	assert_int_equal(strncmp(f->log, "instances/", 10), 0);
	sonde_doctor_report_fini(&f->rep);

	fake_tree_write(f->root, "tracefs/current_tracer", "nop\n");
	fake_tree_write(f->root, "tracefs/set_event", "sched:sched_switch\n");
	f->log[0] = '\0';
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	assert_contains(get(f, "tracer.blk")->detail, "events enabled in set_event");
	assert_null(strstr(f->log, ";current_tracer<-"));
	sonde_doctor_report_fini(&f->rep);

	fake_tree_write(f->root, "tracefs/set_event", "");
	f->cfg.try_top_level = false;
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	assert_contains(get(f, "tracer.blk")->detail, "top level not tried: disabled");
}

/* A kernel that permits every tracer in instances (and lacks function_graph). */
static void test_tracers_permitted(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;

	f->answer = NULL; /* everything accepted */
	fake_tree_write(f->root, "tracefs/available_tracers", "blk function nop\n");
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	c = get(f, "tracer.blk");
	assert_int_equal(c->status, SONDE_DOCTOR_OK);
	assert_contains(c->detail, "permitted (instance: ok)");
	assert_int_equal(get(f, "blk")->status, SONDE_DOCTOR_OK);
	c = get(f, "tracer.function_graph");
	assert_int_equal(c->status, SONDE_DOCTOR_UNAVAILABLE);
	assert_contains(c->fix, "CONFIG_FUNCTION_GRAPH_TRACER=y");
}

/* No hooks: real file I/O on the fake tree.  The fake instance is an empty folder, so its
 * current_tracer is missing (ENOENT), as on kernels whose instances had no tracers. */
static void test_tracers_real_io(void **state)
{
	struct fake *f = *state;
	const struct sonde_doctor_check *c;
	struct sonde_strlist inst;
	char cur[64];

	f->cfg.hooks = NULL;
	fake_tree_write(f->root, "tracefs/available_tracers", "blk nop\n");
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	c = get(f, "tracer.blk");
	assert_int_equal(c->status, SONDE_DOCTOR_WARN);
	assert_contains(c->detail, "blk: top-level instance only (not instance-capable");
	assert_true(sonde_tracefs_instance_read(f->tfs, NULL, "current_tracer", cur, sizeof(cur)) >
		    0);
	assert_string_equal(cur, "nop");
	sonde_strlist_init(&inst);
	assert_int_equal(sonde_tracefs_instances(f->tfs, &inst), 0);
	assert_int_equal(inst.n, 0);
	sonde_strlist_fini(&inst);
}

/* No instances folder: everything is tried in the top level, and that is said. */
static void test_tracers_no_instances(void **state)
{
	struct fake *f = *state;
	char path[600];

	snprintf(path, sizeof(path), "%s/instances", f->tfs);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(sonde_doctor_check_tracers(&f->cfg, &f->rep), 0);
	assert_int_equal(get(f, "scratch_instance")->status, SONDE_DOCTOR_WARN);
	assert_contains(get(f, "scratch_instance")->detail, "ENOENT");
	assert_int_equal(get(f, "tracer.function")->status, SONDE_DOCTOR_OK);
	assert_contains(get(f, "tracer.function")->detail, "permitted in the top level");
}

/* A refusal made physical: writing into a folder fails with EISDIR, even for root. */
static void test_try_tracer_eisdir(void **state)
{
	struct fake *f = *state;
	char path[600], cur[64];

	f->cfg.hooks = NULL;
	assert_int_equal(sonde_doctor_try_tracer(&f->cfg, NULL, "blk"), 0);
	assert_true(sonde_tracefs_instance_read(f->tfs, NULL, "current_tracer", cur, sizeof(cur)) >
		    0);
	assert_string_equal(cur, "nop");
	snprintf(path, sizeof(path), "%s/current_tracer", f->tfs);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(sonde_doctor_try_tracer(&f->cfg, NULL, "blk"), -EISDIR);
	assert_int_equal(sonde_doctor_try_tracer(&f->cfg, "../x", "blk"), -EINVAL);
}

static void test_explain_no_pmu(void **state)
{
	struct fake *f = *state;
	struct perf_event_attr a = {.type = PERF_TYPE_HARDWARE, .config = 0};
	char buf[512];

	f->hw_err = -ENOENT;
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -ENOENT, buf, sizeof(buf));
	assert_contains(buf, "ENOENT");
	assert_contains(buf, "no hardware PMU");
	assert_contains(buf, "cpu-clock");
	/* errno given positive works the same */
	sonde_doctor_explain_open_error_at(&f->cfg, &a, EOPNOTSUPP, buf, sizeof(buf));
	assert_contains(buf, "no hardware PMU");
	/* a sysfs CPU PMU by its dynamic type counts as hardware too */
	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_pmuv3/type", "8\n");
	fake_tree_write(f->root, "sys/bus/event_source/devices/armv8_pmuv3/cpus", "0-3\n");
	a.type = 8;
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -ENOENT, buf, sizeof(buf));
	assert_contains(buf, "no hardware PMU");
}

static void test_explain_pmu_present(void **state)
{
	struct fake *f = *state;
	struct perf_event_attr a = {.type = PERF_TYPE_HARDWARE, .config = 0};
	char buf[512];

	a.sample_period = 4000;
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EOPNOTSUPP, buf, sizeof(buf));
	assert_contains(buf, "not sample it");
	a.sample_period = 0;
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -ENOENT, buf, sizeof(buf));
	assert_contains(buf, "does not support the event");
	a.precise_ip = 3;
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EINVAL, buf, sizeof(buf));
	assert_contains(buf, ":p");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EBUSY, buf, sizeof(buf));
	assert_contains(buf, "nmi_watchdog");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EMFILE, buf, sizeof(buf));
	assert_contains(buf, "ulimit -n");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -ENOSYS, buf, sizeof(buf));
	assert_contains(buf, "CONFIG_PERF_EVENTS=y");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EXDEV, buf, sizeof(buf));
	assert_contains(buf, strerror(EXDEV));
}

static void test_explain_access(void **state)
{
	struct fake *f = *state;
	struct perf_event_attr a = {.type = PERF_TYPE_HARDWARE, .config = 0};
	char buf[512];

	fake_tree_write(f->root, "proc/self/status", "CapEff:\t" NO_CAPS "\n");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EACCES, buf, sizeof(buf));
	assert_contains(buf, "perf_event_open: EACCES: kernel.perf_event_paranoid=2");
	assert_contains(buf, "add :u");
	assert_contains(buf, "sysctl -w kernel.perf_event_paranoid=1");
	a.exclude_kernel = 1;
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EACCES, buf, sizeof(buf));
	assert_contains(buf, "CPU-wide");
	fake_tree_write(f->root, "proc/sys/kernel/perf_event_paranoid", "3\n");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EACCES, buf, sizeof(buf));
	assert_contains(buf, "kernel.perf_event_paranoid=3 forbids");
	fake_tree_write(f->root, "proc/sys/kernel/perf_event_paranoid", "1\n");
	a.type = PERF_TYPE_TRACEPOINT;
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EACCES, buf, sizeof(buf));
	assert_contains(buf, "tracepoint data needs CAP_PERFMON");
	fake_tree_write(f->root, "proc/self/status", "CapEff:\t" ALL_CAPS "\n");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EPERM, buf, sizeof(buf));
	assert_contains(buf, "security module");
}

static void test_explain_freq(void **state)
{
	struct fake *f = *state;
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .freq = 1};
	char buf[512];

	a.sample_freq = 200000;
	fake_tree_write(f->root, "proc/sys/kernel/perf_event_max_sample_rate", "100000\n");
	sonde_doctor_explain_open_error_at(&f->cfg, &a, -EINVAL, buf, sizeof(buf));
	assert_contains(buf, "perf_event_max_sample_rate (100000)");
}

static void test_whole_run(void **state)
{
	struct fake *f = *state;

	f->answer = answer_like_here;
	assert_int_equal(sonde_doctor_run(&f->cfg, &f->rep), 0);
	/* one of each group, in order */
	assert_string_equal(f->rep.v[0].id, "perf_event_paranoid");
	assert_non_null(sonde_doctor_find(&f->rep, "tracefs"));
	assert_non_null(sonde_doctor_find(&f->rep, "tracer.blk"));
	assert_string_equal(f->rep.v[f->rep.n - 1].id, "kernel_config");
	assert_string_equal(sonde_doctor_status_name(SONDE_DOCTOR_UNAVAILABLE), "unavailable");
}

static void test_tracefs_api(void **state)
{
	struct fake *f = *state;
	struct sonde_strlist l;
	char buf[600];

	assert_int_equal(sonde_tracefs_instance_path("/t", NULL, "trace", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/t/trace");
	assert_int_equal(sonde_tracefs_instance_path("/t", "a", "trace", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/t/instances/a/trace");
	assert_int_equal(sonde_tracefs_instance_path("/t", "a", NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/t/instances/a");
	assert_int_equal(sonde_tracefs_instance_path("/t", "a/b", NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sonde_tracefs_instance_path("/t", "..", NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sonde_tracefs_instance_path("/t", "a", NULL, buf, 4), -ENAMETOOLONG);

	assert_int_equal(sonde_tracefs_instance_create(f->tfs, "one"), 0);
	assert_int_equal(sonde_tracefs_instance_create(f->tfs, "one"), -EEXIST);
	assert_int_equal(sonde_tracefs_instance_create(f->tfs, NULL), -EINVAL);
	sonde_strlist_init(&l);
	assert_int_equal(sonde_tracefs_instances(f->tfs, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "one");
	sonde_strlist_fini(&l);
	assert_int_equal(sonde_tracefs_instance_destroy(f->tfs, "one"), 0);
	assert_int_equal(sonde_tracefs_instance_destroy(f->tfs, "one"), -ENOENT);
	assert_int_equal(sonde_tracefs_instance_destroy(f->tfs, NULL), -EINVAL);

	assert_int_equal(sonde_tracefs_instance_write(f->tfs, NULL, "current_tracer", "blk"), 0);
	assert_int_equal(
	    sonde_tracefs_instance_read(f->tfs, NULL, "current_tracer", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "blk");

	sonde_strlist_init(&l);
	assert_int_equal(sonde_tracefs_split_words("blk [function] nop\n", &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[1], "function");
	sonde_strlist_fini(&l);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_paranoid3_unprivileged),
	    T(test_paranoid_root),
	    T(test_kptr_hidden),
	    T(test_no_pmu),
	    T(test_big_little),
	    T(test_tracefs_not_mounted),
	    T(test_tracefs_mounted_by_caller),
	    T(test_no_tracing_kernel),
	    T(test_probes_present),
	    T(test_probes_absent),
	    T(test_modules),
	    T(test_bpf),
	    T(test_config_boot),
	    T(test_config_gz),
	    T(test_config_missing),
	    T(test_tracers_like_here),
	    T(test_tracers_top_busy),
	    T(test_tracers_permitted),
	    T(test_tracers_real_io),
	    T(test_tracers_no_instances),
	    T(test_try_tracer_eisdir),
	    T(test_explain_no_pmu),
	    T(test_explain_pmu_present),
	    T(test_explain_access),
	    T(test_explain_freq),
	    T(test_whole_run),
	    T(test_tracefs_api),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
