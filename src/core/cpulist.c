// SPDX-License-Identifier: MIT
/* CPU list notation: comma-separated numbers and inclusive ranges. */
#include <sonde/cpulist.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/fileio.h>

#define CPU_MAX 8192

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int sonde_cpulist_parse(const char *text, struct sonde_cpulist *out)
{
	size_t cap = 16, n = 0;
	int *v = malloc(cap * sizeof(*v));
	const char *p = text;

	if (!v)
		return -ENOMEM;
	while (*p) {
		char *end;
		long lo, hi;

		if (!isdigit((unsigned char)*p))
			goto bad;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			if (!isdigit((unsigned char)*p))
				goto bad;
			hi = strtol(p, &end, 10);
		}
		if (lo < 0 || hi < lo || hi >= CPU_MAX)
			goto bad;
		for (long c = lo; c <= hi; c++) {
			if (n == cap) {
				int *nv = realloc(v, cap * 2 * sizeof(*v));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap *= 2;
			}
			v[n++] = (int)c;
		}
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto bad;
		else if (*p == '\n')
			break;
	}
	if (!n)
		goto bad;
	qsort(v, n, sizeof(*v), cmp_int);
	out->n = 0;
	for (size_t i = 0; i < n; i++)
		if (!i || v[i] != v[i - 1])
			v[out->n++] = v[i];
	out->cpus = v;
	return 0;
bad:
	free(v);
	return -EINVAL;
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
