// SPDX-License-Identifier: MIT
/*
 * CPU list notation ("0-3,8,10-11"): comma-separated numbers and inclusive
 * ranges, as -C takes them and sysfs's devices/system/cpu/online writes
 * them.  Text goes through the one id-list parser (idlist.c, with its
 * CPU range check), then is sorted and deduplicated in place, so a
 * sonde_cpulist always holds ascending distinct CPUs; _format() turns it
 * back into the shortest text with ranges.
 */
#include <sonde/cpulist.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/fileio.h>
#include <sonde/idlist.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int sonde_cpulist_parse(const char *text, struct sonde_cpulist *out)
{
	struct sonde_errmsg err;
	size_t n = 0;
	int *v = NULL;
	int r = sonde_idlist_add(text, &sonde_idkind_cpu, &v, &n, &err);

	if (r < 0) {
		free(v);
		return r == -ENOMEM ? r : -EINVAL;
	}
	qsort(v, n, sizeof(*v), cmp_int);
	out->n = 0;
	for (size_t i = 0; i < n; i++)
		if (!i || v[i] != v[i - 1])
			v[out->n++] = v[i];
	out->cpus = v;
	return 0;
}

int sonde_cpulist_online(const char *sysfs, struct sonde_cpulist *out)
{
	char path[PATH_MAX], buf[4096];
	int r = sonde_path(path, sizeof(path), "%s/devices/system/cpu/online", sysfs);

	if (r < 0 || (r = sonde_read_text(path, buf, sizeof(buf))) < 0)
		return r;
	return sonde_cpulist_parse(buf, out);
}

void sonde_cpulist_fini(struct sonde_cpulist *l)
{
	free(l->cpus);
	l->cpus = NULL;
	l->n = 0;
}

void sonde_cpulist_format(const struct sonde_cpulist *l, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && used < len; i++) {
		size_t j = i;

		while (j + 1 < l->n && l->cpus[j + 1] == l->cpus[j] + 1)
			j++;
		if (j > i)
			used += (size_t)snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "",
						 l->cpus[i], l->cpus[j]);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "",
						 l->cpus[i]);
		i = j;
	}
}

bool sonde_cpulist_contains(const struct sonde_cpulist *l, int cpu)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->cpus[i] == cpu)
			return true;
	return false;
}
