// SPDX-License-Identifier: MIT
/*
 * sonde doctor's frame: the report (a growable array of checks), the hook
 * dispatch, and the order the check groups run in.  The groups live in
 * their own files: doctor_perf.c (sysctls, capabilities, PMUs, and the
 * explanation of perf_event_open errors), doctor_tracefs.c (mounts and
 * probe interfaces), doctor_tracers.c (tracers tried in a scratch
 * instance), doctor_kernel.c (modules, BPF, BTF, kernel config).
 *
 * Each group measures and reports; none stops the others, because a
 * machine where half the checks can't run is exactly the machine doctor
 * must describe.  Only running out of memory ends the run.
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdarg.h>
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

void sonde_doctor_report_init(struct sonde_doctor_report *rep)
{
	memset(rep, 0, sizeof(*rep));
}

void sonde_doctor_report_fini(struct sonde_doctor_report *rep)
{
	free(rep->v);
	memset(rep, 0, sizeof(*rep));
}

struct sonde_doctor_check *sonde_doctor_report_add(struct sonde_doctor_report *rep, const char *id,
						   const char *title,
						   enum sonde_doctor_status status,
						   const char *detail, const char *fix)
{
	struct sonde_doctor_check *c;

	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 32;
		struct sonde_doctor_check *v = realloc(rep->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		rep->v = v;
		rep->cap = cap;
	}
	c = &rep->v[rep->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->title, sizeof(c->title), "%s", title);
	c->status = status;
	snprintf(c->detail, sizeof(c->detail), "%s", detail ? detail : "");
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
	return c;
}

const struct sonde_doctor_check *sonde_doctor_find(const struct sonde_doctor_report *rep,
						   const char *id)
{
	for (size_t i = 0; i < rep->n; i++)
		if (!strcmp(rep->v[i].id, id))
			return &rep->v[i];
	return NULL;
}

const char *sonde_doctor_status_name(enum sonde_doctor_status s)
{
	switch (s) {
	case SONDE_DOCTOR_OK:
		return "ok";
	case SONDE_DOCTOR_WARN:
		return "warn";
	case SONDE_DOCTOR_UNAVAILABLE:
		return "unavailable";
	case SONDE_DOCTOR_FAIL:
		return "fail";
	}
	return "?";
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

int doctor_perf_probe(const struct sonde_doctor_config *cfg, const struct perf_event_attr *attr)
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

int doctor_bpf_probe(const struct sonde_doctor_config *cfg)
{
	if (cfg->hooks && cfg->hooks->bpf_probe)
		return cfg->hooks->bpf_probe(cfg->hooks->data);
	return real_bpf_probe();
}

int doctor_write(const struct sonde_doctor_config *cfg, const char *path, const char *text)
{
	if (cfg->hooks && cfg->hooks->write)
		return cfg->hooks->write(path, text, cfg->hooks->data);
	return sonde_write_text(path, text);
}

int doctor_read_int(const char *root, const char *rel, long *val)
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

bool doctor_exists(const char *root, const char *rel)
{
	char path[PATH_MAX];

	return root && sonde_path(path, sizeof(path), "%s/%s", root, rel) == 0 &&
	       access(path, F_OK) == 0;
}

int doctor_add(struct sonde_doctor_report *rep, const char *id, const char *title,
	       enum sonde_doctor_status status, const char *fix, const char *fmt, ...)
{
	char detail[sizeof(((struct sonde_doctor_check *)0)->detail)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return sonde_doctor_report_add(rep, id, title, status, detail, fix) ? 0 : -ENOMEM;
}

bool doctor_has_cap(const struct sonde_doctor_config *cfg, unsigned int cap)
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

int sonde_doctor_run(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	int r;

	if ((r = sonde_doctor_check_perf(cfg, rep)) < 0)
		return r;
	if ((r = sonde_doctor_check_tracefs(cfg, rep)) < 0)
		return r;
	if ((r = sonde_doctor_check_tracers(cfg, rep)) < 0)
		return r;
	if ((r = sonde_doctor_check_stale(cfg, rep)) < 0)
		return r;
	return sonde_doctor_check_kernel(cfg, rep);
}
