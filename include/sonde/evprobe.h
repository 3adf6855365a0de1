/* SPDX-License-Identifier: MIT */
/*
 * Asking the kernel whether an event can be opened here, by opening it on
 * the calling thread (counting only, disabled) and closing it again.  The
 * kernel is the only authority: sysfs may list what the hypervisor hides.
 */
#ifndef SONDE_EVPROBE_H
#define SONDE_EVPROBE_H

#include <linux/perf_event.h>

/* Return: 0 when the event opens, else -errno from perf_event_open. */
int sonde_event_probe(const struct perf_event_attr *attr);

/* Probes PERF_COUNT_HW_CPU_CYCLES: whether a hardware PMU counts here. */
int sonde_hw_pmu_probe(void);

/* The perf_event_open system call (glibc has no wrapper). */
int sonde_perf_event_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd,
			  unsigned long flags);

#endif
