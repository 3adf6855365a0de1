/* SPDX-License-Identifier: MIT */
/*
 * Asking the kernel whether an event can be opened here, by opening it on
 * the calling thread (counting only, disabled) and closing it again.  The
 * kernel is the only authority: sysfs may list what the hypervisor hides.
 */
#ifndef SONDE_EVPROBE_H
#define SONDE_EVPROBE_H

#include <linux/perf_event.h>
#include <stdbool.h>

/* Return: 0 when the event opens, else -errno from perf_event_open. */
int sonde_event_probe(const struct perf_event_attr *attr);

/* Probes PERF_COUNT_HW_CPU_CYCLES: whether a hardware PMU counts here. */
int sonde_hw_pmu_probe(void);

/* The perf_event_open system call (glibc has no wrapper). */
int sonde_perf_event_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd,
			  unsigned long flags);

/**
 * sonde_event_fallback_user() - perf's fallback when the kernel is off limits
 * @a: the attr that failed to open (changed when this returns true)
 * @err: the failure, -errno
 *
 * When kernel.perf_event_paranoid > 1 refuses an event that counts the
 * kernel (EACCES), perf (evsel__fallback) retries it counting user space
 * only: exclude_kernel and exclude_hv, the event renamed with :u.  Events
 * that exclude user space are left alone (they would count nothing).
 *
 * Return: true when @a now excludes the kernel and the open should be
 * retried.
 */
bool sonde_event_fallback_user(struct perf_event_attr *a, int err);

#endif
