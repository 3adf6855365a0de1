// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the event-spec parser (sonde_evlist_parse).
 *
 * The parser reads sysfs PMU descriptions and tracefs through the roots it
 * is given; here those are fake trees made once in LLVMFuzzerInitialize(),
 * so every input sees the same small, fast machine: an x86-like cpu PMU, an
 * Arm armv8_pmuv3_0 PMU, a PMU with spread-out format bits, and a few
 * tracepoint systems (one event without an id).
 *
 * Each input is parsed twice into one list (the second call appends), and
 * the parser's promises are checked: a failure leaves the list and its
 * group count as they were and says why; every event has a name and a
 * leader that is a leader at or before it.  A broken promise aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/evspec.h>

#include "fake_tree.h"

static char *sysfs, *tracefs;
static struct sonde_roots roots;

static const char *const sysfs_files[][2] = {
    {"bus/event_source/devices/cpu/type", "4\n"},
    {"bus/event_source/devices/cpu/cpus", "0-3\n"},
    {"bus/event_source/devices/cpu/format/event", "config:0-7\n"},
    {"bus/event_source/devices/cpu/format/umask", "config:8-15\n"},
    {"bus/event_source/devices/cpu/format/inv", "config:23\n"},
    {"bus/event_source/devices/cpu/format/cmask", "config:24-31\n"},
    {"bus/event_source/devices/cpu/format/ldlat", "config1:0-15\n"},
    {"bus/event_source/devices/cpu/format/fe", "config2:0-23\n"},
    {"bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n"},
    {"bus/event_source/devices/cpu/events/mem-loads.scale", "1\n"},
    {"bus/event_source/devices/cpu/events/needs", "event=0x2e,umask=?\n"},
    {"bus/event_source/devices/cpu/events/bad", "event=zz,=,,umask\n"},
    {"bus/event_source/devices/armv8_pmuv3_0/type", "10\n"},
    {"bus/event_source/devices/armv8_pmuv3_0/cpus", "0-5\n"},
    {"bus/event_source/devices/armv8_pmuv3_0/format/event", "config:0-15\n"},
    {"bus/event_source/devices/armv8_pmuv3_0/format/long", "config1:0\n"},
    {"bus/event_source/devices/armv8_pmuv3_0/events/l1d_cache_refill", "event=0x03\n"},
    {"bus/event_source/devices/armv8_pmuv3_0/events/cpu_cycles", "event=0x0011\n"},
    {"bus/event_source/devices/spread/type", "11\n"},
    {"bus/event_source/devices/spread/format/ev", "config:0-3,8-11,60-63\n"},
    {"bus/event_source/devices/spread/format/hi", "config1:32-63\n"},
    {"bus/event_source/devices/spread/format/bad", "config:7-3\n"},
    {"bus/event_source/devices/spread/format/junk", "conf\n"},
    {"bus/event_source/devices/software/type", "1\n"},
    {"bus/event_source/devices/tracepoint/type", "2\n"},
    {"bus/event_source/devices/huge/type", "99999999999\n"},
};

static const char *const tracepoints[][2] = {
    {"sched/sched_switch", "316"},
    {"sched/sched_wakeup", "317"},
    {"sched/sched_wakeup_new", "318"},
    {"sched/sched_waking", "319"},
    {"kmem/kmalloc", "400"},
    {"kmem/kfree", "401"},
    {"syscalls/sys_enter_getppid", "500"},
    {"syscalls/sys_exit_getppid", "501"},
    {"ftrace/function", "1"},
    {"ftrace/bprint", NULL},
    {"bad/noid", "x"},
};

static void cleanup(void)
{
	fake_tree_remove(sysfs);
	fake_tree_remove(tracefs);
	sysfs = tracefs = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sysfs = fake_tree_new();
	tracefs = fake_tree_new();
	if (!sysfs || !tracefs)
		abort();
	atexit(cleanup);
	for (size_t i = 0; i < sizeof(sysfs_files) / sizeof(sysfs_files[0]); i++)
		if (fake_tree_write(sysfs, sysfs_files[i][0], sysfs_files[i][1]) < 0)
			abort();
	for (size_t i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++) {
		char path[256];

		snprintf(path, sizeof(path), "events/%s/format", tracepoints[i][0]);
		if (fake_tree_write(tracefs, path, "name: x\n") < 0)
			abort();
		snprintf(path, sizeof(path), "events/%s/id", tracepoints[i][0]);
		if (tracepoints[i][1] && fake_tree_write(tracefs, path, tracepoints[i][1]) < 0)
			abort();
	}
	if (fake_tree_write(tracefs, "events/enable", "0\n") < 0)
		abort();
	roots.sysfs = sysfs;
	roots.tracefs = tracefs;
	return 0;
}

static void check(const struct sonde_evlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct sonde_event *e = &l->events[i];

		if (!e->name || e->leader < 0 || (size_t)e->leader > i ||
		    l->events[e->leader].leader != e->leader || e->attr.size != sizeof(e->attr))
			abort();
		if (e->kind == SONDE_EV_TRACEPOINT && (!e->tp_system || !e->tp_event))
			abort();
	}
}

static void parse_checked(struct sonde_evlist *l, const char *spec)
{
	size_t n = l->n;
	int ngroups = l->ngroups;
	int r = sonde_evlist_parse(l, spec, &roots);

	if (r > 0)
		abort();
	if (r < 0 && (l->n != n || l->ngroups != ngroups || !l->err.text[0] ||
		      !memchr(l->err.text, '\0', sizeof(l->err.text))))
		abort();
	check(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sonde_evlist l;
	char *spec;

	/* -e values are short; long inputs only slow the search down. */
	if (size > 1024)
		return 0;
	spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	sonde_evlist_init(&l);
	parse_checked(&l, spec);
	parse_checked(&l, spec);
	sonde_evlist_fini(&l);
	free(spec);
	return 0;
}
