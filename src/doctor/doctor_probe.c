// SPDX-License-Identifier: MIT
/*
 * The doctor's hook dispatch (a test's fakes, else the real system call
 * or file) and the small readers every check and explainer uses.  Nothing
 * here refers to a check, so the explainers link without the doctor
 * itself (the agent links this file and doctor_explain.c only).
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sonde/evprobe.h>
#include <sonde/fileio.h>

#include "doctor_internal.h"

void sonde_doctor_config_default(struct sonde_doctor_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->procfs = "/proc";
	cfg->sysfs = "/sys";
	cfg->boot = "/boot";
	cfg->mounts = "/proc/mounts";
	cfg->try_top_level = true;
}

/*
 * Our own table rather than strerrorname_np(): that is glibc 2.32+ only,
 * and the agent also links against older glibc and musl.  The detail lines
 * quote the kernel's answer by name because that is what people search for.
 */
const char *sonde_doctor_errno_name(int err, char *buf, size_t len)
{
	static const struct {
		int e;
		const char *name;
	} names[] = {
	    {EPERM, "EPERM"},
	    {ENOENT, "ENOENT"},
	    {ESRCH, "ESRCH"},
	    {EINTR, "EINTR"},
	    {EIO, "EIO"},
	    {ENXIO, "ENXIO"},
	    {E2BIG, "E2BIG"},
	    {EBADF, "EBADF"},
	    {EAGAIN, "EAGAIN"},
	    {ENOMEM, "ENOMEM"},
	    {EACCES, "EACCES"},
	    {EFAULT, "EFAULT"},
	    {EBUSY, "EBUSY"},
	    {EEXIST, "EEXIST"},
	    {ENODEV, "ENODEV"},
	    {ENOTDIR, "ENOTDIR"},
	    {EISDIR, "EISDIR"},
	    {EINVAL, "EINVAL"},
	    {ENFILE, "ENFILE"},
	    {EMFILE, "EMFILE"},
	    {ENOSPC, "ENOSPC"},
	    {EROFS, "EROFS"},
	    {ERANGE, "ERANGE"},
	    {ENOSYS, "ENOSYS"},
	    {ENOTSUP, "EOPNOTSUPP"},
	    {ENAMETOOLONG, "ENAMETOOLONG"},
	};

	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].name;
	snprintf(buf, len, "errno %d", err);
	return buf;
}

int sonde_doctor_perf_probe(const struct sonde_doctor_config *cfg,
			    const struct perf_event_attr *attr)
{
	if (cfg->hooks && cfg->hooks->perf_probe)
		return cfg->hooks->perf_probe(attr, cfg->hooks->data);
	return sonde_event_probe(attr);
}

/* The smallest thing the bpf syscall can make: a one-slot array map. */
static int real_bpf_probe(void)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int sonde_doctor_bpf_probe(const struct sonde_doctor_config *cfg)
{
	if (cfg->hooks && cfg->hooks->bpf_probe)
		return cfg->hooks->bpf_probe(cfg->hooks->data);
	return real_bpf_probe();
}

int sonde_doctor_write(const struct sonde_doctor_config *cfg, const char *path, const char *text)
{
	if (cfg->hooks && cfg->hooks->write)
		return cfg->hooks->write(path, text, cfg->hooks->data);
	return sonde_write_text(path, text);
}

int sonde_doctor_read_int(const char *root, const char *rel, long *val)
{
	char path[PATH_MAX], buf[64], *end;
	int r = sonde_path(path, sizeof(path), "%s/%s", root, rel);

	if (r < 0 || (r = sonde_read_text(path, buf, sizeof(buf))) < 0)
		return r;
	errno = 0;
	*val = strtol(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

bool sonde_doctor_exists(const char *root, const char *rel)
{
	char path[PATH_MAX];

	return root && sonde_path(path, sizeof(path), "%s/%s", root, rel) == 0 &&
	       access(path, F_OK) == 0;
}

bool sonde_doctor_has_cap(const struct sonde_doctor_config *cfg, unsigned int cap)
{
	char path[PATH_MAX], line[256];
	uint64_t eff = 0;
	bool found = false;
	FILE *f;

	if (sonde_path(path, sizeof(path), "%s/self/status", cfg->procfs) < 0)
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %" SCNx64, &eff) == 1;
	fclose(f);
	return found && cap < 64 && (eff >> cap) & 1;
}
