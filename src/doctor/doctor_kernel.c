// SPDX-License-Identifier: MIT
/*
 * Kernel build checks: loadable modules, the bpf syscall and BTF, and the
 * kernel config options sonde depends on.
 *
 * The config is the cause behind most "unavailable" lines, so when it can
 * be found (/proc/config.gz with CONFIG_IKCONFIG_PROC, else the distro's
 * /boot/config-RELEASE) each option is reported as built.  config.gz is
 * decompressed by gzip through popen: the capture layer links libc only,
 * and this is the one place that needs inflate.
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <sonde/error.h>
#include <sonde/fileio.h>

#include "doctor_internal.h"

static const char *const config_options[] = {
    "CONFIG_KPROBES",	      "CONFIG_UPROBE_EVENTS",	      "CONFIG_MODULES",
    "CONFIG_FUNCTION_TRACER", "CONFIG_FUNCTION_GRAPH_TRACER", "CONFIG_BLK_DEV_IO_TRACE",
    "CONFIG_BPF_SYSCALL",     "CONFIG_DEBUG_INFO_BTF",	      "CONFIG_DYNAMIC_FTRACE",
};

static int check_modules(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t n = 0;
	long disabled = 0;
	int r = sonde_path(path, sizeof(path), "%s/modules", cfg->procfs);

	if (r == 0)
		r = sonde_read_all(path, &text, NULL);
	if (r) /* never positive, but the analyzer can't know */
		return sonde_doctor_add(
		    rep, "modules", "loadable modules", SONDE_DOCTOR_UNAVAILABLE,
		    "build the kernel with CONFIG_MODULES=y (everything is in the "
		    "kernel image, so nothing is lost for symbols)",
		    "%s/modules: %s: no loadable module support", cfg->procfs, sonde_strerror(r));
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	free(text);
	sonde_doctor_read_int(cfg->procfs, "sys/kernel/modules_disabled", &disabled);
	if (disabled)
		return sonde_doctor_add(
		    rep, "modules", "loadable modules", SONDE_DOCTOR_WARN,
		    "kernel.modules_disabled=1 can only be undone by a reboot",
		    "%zu loaded; loading disabled (kernel.modules_disabled = 1)", n);
	return sonde_doctor_add(rep, "modules", "loadable modules", SONDE_DOCTOR_OK, NULL,
				"%zu loaded", n);
}

static int check_bpf(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	char en[32], unpriv[64] = "";
	long v;
	int err = sonde_doctor_bpf_probe(cfg), r;
	bool cap = sonde_doctor_has_cap(cfg, DOCTOR_CAP_BPF) ||
		   sonde_doctor_has_cap(cfg, DOCTOR_CAP_SYS_ADMIN);

	if (sonde_doctor_read_int(cfg->procfs, "sys/kernel/unprivileged_bpf_disabled", &v) == 0)
		snprintf(unpriv, sizeof(unpriv), "; kernel.unprivileged_bpf_disabled = %ld", v);
	if (!err)
		r = sonde_doctor_add(rep, "bpf", "BPF", SONDE_DOCTOR_OK, NULL,
				     "bpf(BPF_MAP_CREATE, array): ok%s", unpriv);
	else if (err == -ENOSYS)
		r = sonde_doctor_add(rep, "bpf", "BPF", SONDE_DOCTOR_UNAVAILABLE,
				     "build the kernel with CONFIG_BPF_SYSCALL=y",
				     "bpf(BPF_MAP_CREATE, array): ENOSYS");
	else
		r = sonde_doctor_add(rep, "bpf", "BPF", SONDE_DOCTOR_FAIL,
				     cap ? "a security module (lockdown, SELinux) forbids bpf"
					 : "run as root or grant CAP_BPF (and CAP_PERFMON), or "
					   "sysctl -w kernel.unprivileged_bpf_disabled=0",
				     "bpf(BPF_MAP_CREATE, array): %s%s",
				     sonde_doctor_errno_name(err, en, sizeof(en)), unpriv);
	if (r < 0)
		return r;
	if (sonde_doctor_exists(cfg->sysfs, "kernel/btf/vmlinux"))
		return sonde_doctor_add(rep, "btf", "kernel BTF", SONDE_DOCTOR_OK, NULL,
					"%s/kernel/btf/vmlinux present", cfg->sysfs);
	return sonde_doctor_add(
	    rep, "btf", "kernel BTF", SONDE_DOCTOR_UNAVAILABLE,
	    "build the kernel with CONFIG_DEBUG_INFO_BTF=y (CO-RE BPF tools need it)",
	    "%s/kernel/btf/vmlinux absent", cfg->sysfs);
}

/* Decompresses @path with gzip.  Return: 0 with *out new (free()), or -errno. */
static int read_gzip(const char *path, char **out)
{
	char cmd[PATH_MAX + 32];
	size_t cap = 1 << 16, got = 0;
	char *buf;
	FILE *p;
	int status;

	/* The path goes into a shell command: refuse anything a quote could escape. */
	if (strchr(path, '\'') || sonde_path(cmd, sizeof(cmd), "gzip -dc '%s' 2>/dev/null", path))
		return -EINVAL;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	p = popen(cmd, "re");
	if (!p) {
		free(buf);
		return -errno;
	}
	for (;;) {
		size_t n;

		if (cap - got < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = fread(buf + got, 1, cap - got - 1, p);
		if (!n)
			break;
		got += n;
	}
	status = pclose(p);
	buf[got] = '\0';
	if (status != 0 || !got) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}

int sonde_doctor_load_config(const struct sonde_doctor_config *cfg, char **text, char *where,
			     size_t len, char *tried, size_t tlen)
{
	struct utsname u;
	const char *release = cfg->release;

	if (sonde_path(where, len, "%s/config.gz", cfg->procfs) == 0 && access(where, R_OK) == 0 &&
	    read_gzip(where, text) == 0)
		return 0;
	snprintf(tried, tlen, "%s", where);
	if (!release) {
		if (uname(&u) < 0)
			return -ENOENT;
		release = u.release;
	}
	if (sonde_path(where, len, "%s/config-%s", cfg->boot, release) == 0 &&
	    sonde_read_all(where, text, NULL) == 0)
		return 0;
	snprintf(tried + strlen(tried), tlen - strlen(tried), ", %s", where);
	return -ENOENT;
}

const char *sonde_doctor_config_value(const char *text, const char *opt, char *buf, size_t len)
{
	size_t ol = strlen(opt);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (!strncmp(l, opt, ol) && l[ol] == '=') {
			size_t n = strcspn(l + ol + 1, "\n");

			snprintf(buf, len, "%.*s", (int)n, l + ol + 1);
			return buf;
		}
		if (!strncmp(l, "# ", 2) && !strncmp(l + 2, opt, ol) &&
		    !strncmp(l + 2 + ol, " is not set", 11))
			return "n";
	}
	return NULL;
}

static int check_config(const struct sonde_doctor_config *cfg, struct sonde_doctor_report *rep)
{
	char where[PATH_MAX], tried[2 * PATH_MAX + 8] = "";
	char *text = NULL;
	int r = sonde_doctor_load_config(cfg, &text, where, sizeof(where), tried, sizeof(tried));

	if (r < 0)
		return sonde_doctor_add(
		    rep, "kernel_config", "kernel config", SONDE_DOCTOR_WARN,
		    "build with CONFIG_IKCONFIG_PROC=y for /proc/config.gz, or install "
		    "the kernel's config as /boot/config-$(uname -r)",
		    "kernel config not found (tried %s)", tried);
	r = sonde_doctor_add(rep, "kernel_config", "kernel config", SONDE_DOCTOR_OK, NULL,
			     "read %s", where);
	for (size_t i = 0; r == 0 && i < sizeof(config_options) / sizeof(config_options[0]); i++) {
		const char *opt = config_options[i];
		char id[64], fix[96], val[64];
		const char *v = sonde_doctor_config_value(text, opt, val, sizeof(val));
		bool built = v && (!strcmp(v, "y") || !strcmp(v, "m"));

		snprintf(id, sizeof(id), "config.%s", opt);
		snprintf(fix, sizeof(fix), "build the kernel with %s=y", opt);
		if (built)
			r = sonde_doctor_add(rep, id, opt, SONDE_DOCTOR_OK, NULL, "%s=%s", opt, v);
		else
			r = sonde_doctor_add(
			    rep, id, opt, SONDE_DOCTOR_UNAVAILABLE, fix, "%s %s", opt,
			    v ? "is not set" : "is absent (its dependencies are not set)");
	}
	free(text);
	return r;
}

int sonde_doctor_check_kernel(const struct sonde_doctor_config *cfg,
			      struct sonde_doctor_report *rep)
{
	int r;

	if ((r = check_modules(cfg, rep)) < 0 || (r = check_bpf(cfg, rep)) < 0)
		return r;
	return check_config(cfg, rep);
}
