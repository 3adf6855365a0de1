/* SPDX-License-Identifier: MIT */
/*
 * Event specifications: perf's -e syntax, parsed once for every command.
 *
 *   cycles,instructions:u          named hardware/software/cache events
 *   r1a8  cpu/event=0x3c,umask=1/  raw codes and PMU terms (sysfs format/)
 *   armv8_pmuv3_0/l1d_cache_refill/ named PMU events (sysfs events/)
 *   sched:sched_wake*              tracepoints, with globs
 *   mem:0x1000:rw                  breakpoints
 *   {cycles,instructions}:k        groups, modifiers u k h G H p I D e
 *   cpu-clock/period=10000/        per-event terms period= freq= name=
 *
 * The result is a list of events, each with its perf_event_attr filled in
 * (type, config, exclusions, precise level, sample period or frequency when
 * a term gave one) and its display name.  The parser reads the sysfs PMU
 * tree and tracefs through the roots it is given, so tests hand it fake
 * trees.  An unknown name is an error whose message names the closest
 * valid names.
 */
#ifndef SONDE_EVSPEC_H
#define SONDE_EVSPEC_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/error.h>

/* Where the kernel's trees are.  Borrowed strings. */
struct sonde_roots {
	const char *sysfs;   /* "/sys", or a fake tree */
	const char *tracefs; /* mounted tracefs, or NULL when there is none */
	const char *procfs;  /* "/proc", or a fake tree; NULL: "/proc" (host facts) */
};

enum sonde_event_kind {
	SONDE_EV_HARDWARE,
	SONDE_EV_SOFTWARE,
	SONDE_EV_CACHE,
	SONDE_EV_RAW,
	SONDE_EV_PMU,
	SONDE_EV_TRACEPOINT,
	SONDE_EV_BREAKPOINT,
};

/* An event's attr carries sample_period/sample_freq only when a term set it. */
#define SONDE_EVF_PERIOD 0x1u /* /period=N/ given */
#define SONDE_EVF_FREQ 0x2u   /* /freq=N/ given */
#define SONDE_EVF_MODS 0x4u   /* a u/k/h modifier restricted the privilege levels */
#define SONDE_EVF_GH 0x8u     /* a G/H modifier chose guest/host (perf's exclude_GH) */

struct sonde_event {
	char *name; /* owned by the list: display name, as perf prints it */
	enum sonde_event_kind kind;
	struct perf_event_attr attr;
	unsigned int flags;
	int leader;	 /* index of the group leader in the list; own index if alone */
	char *tp_system; /* tracepoints: owned, else NULL */
	char *tp_event;	 /* tracepoints: owned, else NULL */
	char *filter;	 /* owned: kernel event filter (record --filter), or NULL */
};

struct sonde_evlist {
	struct sonde_event *events; /* owned array of n events */
	size_t n, cap;
	int ngroups; /* groups opened with { } so far */
	struct sonde_errmsg err;
};

/**
 * sonde_evlist_init() - start an empty event list
 * @l: caller's storage
 */
void sonde_evlist_init(struct sonde_evlist *l);
/**
 * sonde_evlist_fini() - free the events, their names, filters and tracepoint names
 * @l: the list; empty again afterwards
 */
void sonde_evlist_fini(struct sonde_evlist *l);

/*
 * Event @i counts user space only (perf's fallback when the kernel is off
 * limits, sonde_event_fallback_user()): sets exclude_kernel and exclude_hv
 * and renames it as perf does: "task-clock:u", "cpu-clock:pu",
 * "cpu/event=0x3c/u".  Return: 0, or -ENOMEM (the name unchanged).
 */
int sonde_evlist_set_user_only(struct sonde_evlist *l, size_t i);

/**
 * sonde_evlist_parse() - parse one -e argument and append its events
 * @l: the list
 * @spec: comma-separated specs, e.g. "{cycles,instructions}:u,kmem:*"
 * @roots: where sysfs and tracefs are
 *
 * Return: 0, or a negative code with l->err describing the problem (the
 * spec, the position, and for unknown names the closest valid ones).
 * On error the list holds what it held before the call.
 */
int sonde_evlist_parse(struct sonde_evlist *l, const char *spec, const struct sonde_roots *roots);

/* The named hardware and software events and their aliases. */
struct sonde_named_event {
	const char *name;
	const char *alias; /* or NULL */
	uint32_t type;	   /* PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE */
	uint64_t config;
};

/* Return: borrowed: the static table, *n set to its length. */
const struct sonde_named_event *sonde_named_events(size_t *n);

/*
 * The name of a hw/sw event given by type and config (a capture's event
 * that the file does not name: pipe mode).  Return: static, or NULL.
 */
const char *sonde_named_event_of(uint32_t type, uint64_t config);

/* Looks up a named hw/sw event or alias.  Return: borrowed entry or NULL. */
const struct sonde_named_event *sonde_named_event_find(const char *name);

/*
 * Hardware cache events are cache x operation x result, named as perf does
 * ("L1-dcache-load-misses").  sonde_cache_event_name() writes the canonical
 * name of combination @idx (0 <= idx < sonde_cache_event_count()) and its
 * config; it returns false for combinations perf does not list.
 */
unsigned int sonde_cache_event_count(void);
bool sonde_cache_event_name(unsigned int idx, char *buf, size_t len, uint64_t *config);
/* Parses a cache event name or alias ("L1-dcache-load-misses", "l1d-loads"). */
bool sonde_cache_event_parse(const char *name, uint64_t *config);

#endif
