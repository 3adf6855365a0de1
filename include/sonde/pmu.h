/* SPDX-License-Identifier: MIT */
/*
 * PMUs as sysfs describes them (/sys/bus/event_source/devices/NAME):
 * "type" (the attr.type to use), "format/TERM" ("config:0-7,32-35"),
 * "events/NAME" ("event=0x3,umask=0x1").
 */
#ifndef SONDE_PMU_H
#define SONDE_PMU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include <sonde/error.h>
#include <sonde/strlist.h>

/* Names of all PMUs, sorted.  Return: 0 or -errno. */
int sonde_pmu_names(const char *sysfs, struct sonde_strlist *out);
/**
 * sonde_pmu_type() - the perf_event_attr.type of a PMU
 * @sysfs: "/sys", or a fake tree
 * @pmu: the PMU's name (its folder under bus/event_source/devices)
 * @type: receives the number in its type file
 * Return: 0, -errno (no such PMU: -ENOENT), or -ERANGE.
 */
int sonde_pmu_type(const char *sysfs, const char *pmu, uint32_t *type);
/* Names of the PMU's named events (its events/ folder, without .scale/.unit files), sorted. */
int sonde_pmu_event_names(const char *sysfs, const char *pmu, struct sonde_strlist *out);
/* True for a CPU's hardware PMU (cpu, cpu_core, cpu_atom, armv8_*, ...):
 * one with a cpus or cpumask file and an event format, not a software one. */
bool sonde_pmu_is_cpu(const char *sysfs, const char *pmu);

/*
 * Applies a comma-separated term list ("event=0x3,umask=1" or a named
 * event's definition) to @attr using the PMU's format files.  Terms
 * config=, config1=, config2= set the words directly; period= and freq=
 * are not PMU terms and are handled by the caller.
 * Return: 0, or a negative code with @err set.
 */
int sonde_pmu_apply_terms(const char *sysfs, const char *pmu, const char *terms,
			  struct perf_event_attr *attr, struct sonde_errmsg *err);

/* True when @term is one of the PMU's format terms. */
bool sonde_pmu_has_term(const char *sysfs, const char *pmu, const char *term);

/* Reads the definition of named event @ev of @pmu into @buf. */
int sonde_pmu_event_terms(const char *sysfs, const char *pmu, const char *ev, char *buf,
			  size_t len);

#endif
