/* SPDX-License-Identifier: MIT */
/* CPU lists in the kernel's notation ("0-3,8,10-11"), as -C and sysfs use. */
#ifndef SONDE_CPULIST_H
#define SONDE_CPULIST_H

#include <stdbool.h>
#include <stddef.h>

struct sonde_cpulist {
	int *cpus; /* owned, ascending, no duplicates */
	size_t n;
};

/* Return: 0, or -EINVAL for bad syntax, -ENOMEM. */
int sonde_cpulist_parse(const char *text, struct sonde_cpulist *out);
/* The online CPUs, from @sysfs/devices/system/cpu/online. */
int sonde_cpulist_online(const char *sysfs, struct sonde_cpulist *out);
/**
 * sonde_cpulist_fini() - free the CPU array
 * @l: the list; empty again afterwards (n is 0)
 */
void sonde_cpulist_fini(struct sonde_cpulist *l);
/* Whether @cpu is in @l (an empty list holds none). */
bool sonde_cpulist_contains(const struct sonde_cpulist *l, int cpu);
/* Writes the list back in range notation. */
void sonde_cpulist_format(const struct sonde_cpulist *l, char *buf, size_t len);

#endif
