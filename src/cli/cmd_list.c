// SPDX-License-Identifier: MIT
/*
 * sonde list [GLOB|CLASS]: what can be counted here, grouped as perf does.
 * Each group is checked against the kernel, so a machine without a
 * hardware PMU says so instead of offering events that can't open.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/evprobe.h>
#include <sonde/fileio.h>
#include <sonde/pmu.h>
#include <sonde/strlist.h>
#include <sonde/tracepoint.h>

#include "cli.h"

static const char list_usage[] =
    "usage: sonde list [GLOB | hw | sw | cache | pmu | tracepoint | probe]\n"
    "\n"
    "Lists the events of this machine that -e accepts, grouped as perf list does:\n"
    "hardware, software and hardware cache events, raw and PMU syntax, named PMU\n"
    "events from sysfs, breakpoints, tracepoints from tracefs and dynamic probes.\n"
    "A GLOB (e.g. 'sched:*', '*fault*') keeps matching names; a class keeps one group.\n"
    "Groups this machine can't use are marked as such.\n"
    "\n"
    "  --target HOST:PORT|ssh://...|unix:PATH\n"
    "                                list what a target running sonde-agent supports\n"
    "  --token-file FILE             the agent's token (or --token TOKEN, or\n"
    "                                $SONDE_AGENT_TOKEN; see sonde-agent(1))\n";

struct lister {
	const char *glob;  /* NULL: everything */
	const char *klass; /* NULL: every class */
	bool any;
	char tp_why[PATH_MAX + 200]; /* why tracepoints could not be listed, or empty */
};

static bool want_class(const struct lister *ls, const char *klass)
{
	return !ls->klass || !strcmp(ls->klass, klass);
}

static bool matches(const struct lister *ls, const char *name)
{
	return !ls->glob || !fnmatch(ls->glob, name, 0);
}

static void line(struct lister *ls, const char *name, const char *what)
{
	printf("  %-50s [%s]\n", name, what);
	ls->any = true;
}

static void list_named(struct lister *ls, uint32_t type, const char *what)
{
	size_t n;
	const struct sonde_named_event *ev = sonde_named_events(&n);

	for (size_t i = 0; i < n; i++) {
		char name[128];

		if (ev[i].type != type)
			continue;
		if (!matches(ls, ev[i].name) && !(ev[i].alias && matches(ls, ev[i].alias)))
			continue;
		if (ev[i].alias)
			snprintf(name, sizeof(name), "%s OR %s", ev[i].name, ev[i].alias);
		else
			snprintf(name, sizeof(name), "%s", ev[i].name);
		line(ls, name, what);
	}
}

static void list_cache(struct lister *ls, const char *what)
{
	char name[64];
	uint64_t config;

	for (unsigned int i = 0; i < sonde_cache_event_count(); i++)
		if (sonde_cache_event_name(i, name, sizeof(name), &config) && matches(ls, name))
			line(ls, name, what);
}

static void list_pmus(struct lister *ls, const char *sysfs)
{
	struct sonde_strlist pmus, events;
	char name[300];

	sonde_strlist_init(&pmus);
	sonde_pmu_names(sysfs, &pmus);
	for (size_t i = 0; i < pmus.n; i++) {
		sonde_strlist_init(&events);
		sonde_pmu_event_names(sysfs, pmus.v[i], &events);
		for (size_t j = 0; j < events.n; j++) {
			snprintf(name, sizeof(name), "%s/%s/", pmus.v[i], events.v[j]);
			if (matches(ls, name) || matches(ls, events.v[j]))
				line(ls, name, "Kernel PMU event");
		}
		sonde_strlist_fini(&events);
	}
	sonde_strlist_fini(&pmus);
}

/*
 * A probe is an event in tracefs too: listed under probes, it is left out
 * of the tracepoints (@skip, the probe names) so it is listed once.
 */
static void list_tracepoints(struct lister *ls, const char *tracefs,
			     const struct sonde_strlist *skip)
{
	struct sonde_strlist systems, events;
	char name[300];
	int r;

	sonde_strlist_init(&systems);
	r = sonde_tracepoint_systems(tracefs, &systems);
	/* tracefs is root's alone by default (mode 0700): say so, never list nothing. */
	if (r < 0)
		snprintf(ls->tp_why, sizeof(ls->tp_why), "%s/events: %s%s", tracefs,
			 sonde_strerror(r),
			 r == -EACCES || r == -EPERM ? " (tracefs is readable by root only: run "
						       "as root, or chmod the tracefs mount)"
						     : "");
	for (size_t i = 0; i < systems.n; i++) {
		sonde_strlist_init(&events);
		sonde_tracepoint_events(tracefs, systems.v[i], &events);
		for (size_t j = 0; j < events.n; j++) {
			char id[PATH_MAX];

			snprintf(name, sizeof(name), "%s:%s", systems.v[i], events.v[j]);
			if (!matches(ls, name) || sonde_strlist_contains(skip, name))
				continue;
			/* ftrace's internal formats (ftrace:bprint) have no id and can't be
			 * opened; perf list leaves them out too. */
			if (sonde_path(id, sizeof(id), "%s/events/%s/%s/id", tracefs, systems.v[i],
				       events.v[j]) < 0 ||
			    access(id, F_OK) < 0)
				continue;
			line(ls, name, "Tracepoint event");
		}
		sonde_strlist_fini(&events);
	}
	sonde_strlist_fini(&systems);
}

/*
 * The probes of one kind defined now ("SYS:EVENT", from @kind_events).
 * Return: 0, or -errno when the kernel has no such probes.
 */
static int probe_names(const struct sonde_roots *roots, const char *kind, struct sonde_strlist *out)
{
	char path[PATH_MAX], *text = NULL;
	size_t len;
	int r;

	if (!roots->tracefs)
		return -ENOENT;
	r = sonde_path(path, sizeof(path), "%s/%s_events", roots->tracefs, kind);
	if (r == 0)
		r = sonde_read_all(path, &text, &len);
	if (r < 0)
		return r;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && r == 0;
	     l = strtok_r(NULL, "\n", &save)) {
		/* "p:uprobes/name /bin/x:0x1234": the event is the word after ':'. */
		char *colon = strchr(l, ':'), *sp = colon ? strchr(colon, ' ') : NULL;

		if (!colon || !sp)
			continue;
		*sp = '\0';
		for (char *c = colon + 1; *c; c++)
			if (*c == '/')
				*c = ':';
		r = sonde_strlist_add(out, colon + 1);
	}
	free(text);
	return r;
}

/* Dynamic probes defined now (uprobe_events, kprobe_events), and whether
 * the kernel can make more. */
static void list_probes(struct lister *ls, const struct sonde_roots *roots)
{
	static const char *const kinds[] = {"uprobe", "kprobe"};

	for (size_t k = 0; k < 2; k++) {
		struct sonde_strlist names;

		int r;

		sonde_strlist_init(&names);
		r = probe_names(roots, kinds[k], &names);
		if (r < 0) {
			if (!ls->glob)
				printf("  %-50s [%s]\n", kinds[k],
				       r == -EACCES || r == -EPERM
					   ? "can't tell: tracefs is readable by root only"
					   : "not available here: the kernel has no such probes");
		} else if (!names.n && !ls->glob) {
			printf("  %-50s [%s]\n", kinds[k],
			       k ? "Kernel dynamic probe: none defined now"
				 : "User dynamic probe: none defined now");
		}
		for (size_t i = 0; i < names.n; i++)
			if (matches(ls, names.v[i]))
				line(ls, names.v[i],
				     k ? "Kernel dynamic probe" : "User dynamic probe");
		sonde_strlist_fini(&names);
	}
}

int cmd_list(int argc, char **argv, struct cli *cli)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"target", required_argument, NULL, 'T'},
					     {"token-file", required_argument, NULL, 'K'},
					     {"token", required_argument, NULL, 'k'},
					     {0}};
	const char *target = NULL;
	struct cli_agent_auth auth = {0};
	static const char *const classes[] = {"hw", "sw", "cache", "pmu", "tracepoint", "probe"};
	struct lister ls = {0};
	const struct sonde_roots *roots;
	const char *hw_what = "Hardware event", *cache_what = "Hardware cache event";
	int c, hw;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(list_usage, stdout);
			return EXIT_OK;
		}
		if (c == 'T' || c == 'K' || c == 'k') {
			*(c == 'T' ? &target : c == 'K' ? &auth.token_file : &auth.token) = optarg;
			continue;
		}
		return cli_usage_error("list", "unknown option");
	}
	if (optind < argc - 1)
		return cli_usage_error("list", "give at most one GLOB");
	if (target)
		return list_remote(target, &auth, optind < argc ? argv[optind] : NULL);
	if (optind < argc) {
		for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
			if (!strcmp(argv[optind], classes[i]))
				ls.klass = classes[i];
		if (!ls.klass)
			ls.glob = argv[optind];
	}
	roots = cli_roots(cli);
	hw = sonde_hw_pmu_probe();
	if (hw < 0) {
		hw_what = "Hardware event; not supported here: no hardware PMU";
		cache_what = "Hardware cache event; not supported here: no hardware PMU";
	}
	if (!ls.glob && !ls.klass) {
		printf("\nList of pre-defined events (to be used in -e):\n\n");
		if (hw < 0)
			printf(
			    "  Note: this machine has no usable hardware PMU (perf_event_open: %s);\n"
			    "  hardware, cache and raw events can't be counted here.  cpu-clock and\n"
			    "  task-clock sample by timer instead.\n\n",
			    sonde_strerror(hw));
	}
	if (want_class(&ls, "hw"))
		list_named(&ls, PERF_TYPE_HARDWARE, hw_what);
	if (want_class(&ls, "sw"))
		list_named(&ls, PERF_TYPE_SOFTWARE, "Software event");
	if (want_class(&ls, "cache"))
		list_cache(&ls, cache_what);
	if (want_class(&ls, "pmu")) {
		if (!ls.glob) {
			line(&ls, "rNNN",
			     hw < 0 ? "Raw hardware event descriptor; not supported here"
				    : "Raw hardware event descriptor");
			line(&ls, "PMU/t1=v1[,t2=v2,t3 ...]/modifier",
			     "Raw hardware event descriptor (terms in sysfs format/)");
		}
		list_pmus(&ls, roots->sysfs);
		if (!ls.glob)
			line(&ls, "mem:<addr>[/len][:access]", "Hardware breakpoint");
	}
	if (want_class(&ls, "tracepoint")) {
		struct sonde_strlist probes;

		sonde_strlist_init(&probes);
		if (want_class(&ls, "probe")) {
			probe_names(roots, "uprobe", &probes);
			probe_names(roots, "kprobe", &probes);
		}
		if (roots->tracefs)
			list_tracepoints(&ls, roots->tracefs, &probes);
		else
			snprintf(ls.tp_why, sizeof(ls.tp_why),
				 "tracefs is not mounted and could not be mounted; run as root or "
				 "mount -t tracefs nodev /sys/kernel/tracing");
		sonde_strlist_fini(&probes);
		/* Asked for tracepoints and got none: an error, not an empty list. */
		if (ls.tp_why[0] && ls.klass) {
			cli_error("can't list tracepoints: %s", ls.tp_why);
			return EXIT_FAIL;
		}
		if (ls.tp_why[0] && !ls.glob)
			printf("  tracepoints: not available (%s)\n", ls.tp_why);
	}
	if (want_class(&ls, "probe"))
		list_probes(&ls, roots);
	if (ls.glob && !ls.any) {
		cli_error("no event matches '%s'%s%s", ls.glob,
			  ls.tp_why[0] ? "; tracepoints could not be read: " : "", ls.tp_why);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
