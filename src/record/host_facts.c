// SPDX-License-Identifier: MIT
/*
 * Host facts for the perf.data header: what perf records about the machine
 * (uname, CPU counts, CPU model, memory), read with libc alone so the
 * static agent can fill them on the target.  The files (cpuinfo, meminfo,
 * arm64's MIDR) are read under the roots given, so a unit test runs this
 * on a fake tree; the format layer only encodes the result
 * (sonde_pd_writer_set_host()).
 */
#include <sonde/record.h>

#include <sonde/fileio.h>
#include <sonde/perf_data.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

/* The value of "key : value" in /proc/cpuinfo's first block, trimmed. */
static bool cpuinfo_value(const char *line, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	const char *v;
	size_t n;

	if (strncmp(line, key, kl) != 0)
		return false;
	v = line + kl + strspn(line + kl, " \t");
	if (*v != ':')
		return false;
	for (v++; *v == ' ' || *v == '\t'; v++)
		;
	n = strcspn(v, "\n");
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	snprintf(out, cap, "%.*s", (int)n, v);
	return true;
}

/* fopen() of "ROOT/REL" for reading, or NULL. */
static FILE *open_at(const char *root, const char *rel)
{
	char path[4096];

	if (sonde_path(path, sizeof(path), "%s/%s", root, rel) < 0)
		return NULL;
	return fopen(path, "re");
}

static void read_cpuinfo(struct sonde_pd_host *h, const char *procfs)
{
	char line[512], vendor[64] = "", family[32] = "", model[32] = "", stepping[32] = "";
	FILE *f = open_at(procfs, "cpuinfo");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '\n')
			break; /* first CPU only */
		if (!h->cpudesc[0] &&
		    !cpuinfo_value(line, "model name", h->cpudesc, sizeof(h->cpudesc)) &&
		    !cpuinfo_value(line, "Processor", h->cpudesc, sizeof(h->cpudesc)))
			cpuinfo_value(line, "cpu model", h->cpudesc, sizeof(h->cpudesc));
		cpuinfo_value(line, "vendor_id", vendor, sizeof(vendor));
		cpuinfo_value(line, "cpu family", family, sizeof(family));
		cpuinfo_value(line, "model", model, sizeof(model));
		cpuinfo_value(line, "stepping", stepping, sizeof(stepping));
	}
	fclose(f);
	/* x86 form of perf's cpuid: vendor,family,model,stepping */
	/* A cpuid that does not fit is no cpuid (the return is checked, so -Os
	 * builds don't warn of truncation). */
	if (vendor[0] && family[0] && model[0] &&
	    snprintf(h->cpuid, sizeof(h->cpuid), "%s,%s,%s,%s", vendor, family, model,
		     stepping[0] ? stepping : "0") >= (int)sizeof(h->cpuid))
		h->cpuid[0] = '\0';
}

/* arm64: perf's cpuid is the MIDR of the first CPU as 0x%016lx. */
static void read_midr(struct sonde_pd_host *h, const char *sysfs)
{
	char buf[64];
	FILE *f;

	if (h->cpuid[0])
		return;
	f = open_at(sysfs, "devices/system/cpu/cpu0/regs/identification/midr_el1");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		copy(h->cpuid, sizeof(h->cpuid), buf);
	}
	fclose(f);
}

static void read_meminfo(struct sonde_pd_host *h, const char *procfs)
{
	char line[256];
	unsigned long long kb;
	FILE *f = open_at(procfs, "meminfo");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
			h->total_mem_kb = kb;
			break;
		}
	fclose(f);
}

int sonde_record_host_fill(struct sonde_pd_host *h, const struct sonde_roots *roots)
{
	const char *procfs = roots && roots->procfs ? roots->procfs : "/proc";
	const char *sysfs = roots && roots->sysfs ? roots->sysfs : "/sys";
	struct utsname u;
	long n;

	memset(h, 0, sizeof(*h));
	if (uname(&u) != 0)
		return -errno;
	copy(h->hostname, sizeof(h->hostname), u.nodename);
	copy(h->osrelease, sizeof(h->osrelease), u.release);
	copy(h->arch, sizeof(h->arch), u.machine);
	copy(h->version, sizeof(h->version), "sonde");
	n = sysconf(_SC_NPROCESSORS_CONF);
	h->nr_cpus_avail = n > 0 ? (uint32_t)n : 0;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	h->nr_cpus_online = n > 0 ? (uint32_t)n : 0;
	read_cpuinfo(h, procfs);
	read_midr(h, sysfs);
	read_meminfo(h, procfs);
	return 0;
}
