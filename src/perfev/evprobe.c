// SPDX-License-Identifier: MIT
/*
 * Probing events by opening them, since the kernel knows best what it
 * supports: an event is opened disabled on the calling thread and closed
 * at once, and the errno is the answer (list, doctor and the default
 * event choice use it).  Also the one perf_event_open() wrapper, and
 * perf's fallback to user space only when perf_event_paranoid forbids
 * counting the kernel.
 */
#include <sonde/evprobe.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sonde/fileio.h>

int sonde_perf_event_open(struct perf_event_attr *attr, int pid, int cpu, int group_fd,
			  unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int sonde_event_probe(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.size = sizeof(a);
	a.disabled = 1;
	a.sample_period = 0;
	a.freq = 0;
	fd = sonde_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int sonde_hw_pmu_probe(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.exclude_kernel = 1;
	return sonde_event_probe(&a);
}

bool sonde_event_fallback_user(struct perf_event_attr *a, int err)
{
	char text[32];
	long paranoid;

	if (err != -EACCES || a->exclude_kernel || a->exclude_user)
		return false;
	if (sonde_read_text("/proc/sys/kernel/perf_event_paranoid", text, sizeof(text)) < 0)
		return false;
	paranoid = strtol(text, NULL, 10);
	if (paranoid <= 1)
		return false;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	return true;
}
