// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the id-list parser (sonde_idlist_add, and
 * sonde_cpulist_parse over it): every command's -p/-t/-P/--pid/-C text.
 *
 * Each input is parsed as every kind, and the parser's promises are
 * checked: every id it returns is inside the kind's range; a failure says
 * why in a NUL-terminated message and keeps the ids before the bad token
 * (never more than there are tokens); a success returns one id per token
 * for kinds without ranges.  A broken promise aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/cpulist.h>
#include <sonde/idlist.h>

static size_t tokens(const char *s)
{
	size_t n = 1;

	for (; *s; s++)
		n += *s == ',';
	return n;
}

static void check_kind(const char *text, const struct sonde_idkind *k)
{
	struct sonde_errmsg err = {{0}};
	int *v = NULL;
	size_t n = 0;
	int r = sonde_idlist_add(text, k, &v, &n, &err);

	for (size_t i = 0; i < n; i++)
		if (v[i] < k->min || v[i] > k->max)
			abort();
	if (r && (!err.text[0] || !memchr(err.text, '\0', sizeof(err.text))))
		abort();
	if (!k->ranges && (r ? n >= tokens(text) : n != tokens(text)))
		abort();
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sonde_cpulist l;
	char *text;

	if (size > 256)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check_kind(text, &sonde_idkind_pid);
	check_kind(text, &sonde_idkind_sample_tid);
	check_kind(text, &sonde_idkind_cpu);
	if (sonde_cpulist_parse(text, &l) == 0) {
		/* Ascending, no duplicates, in range. */
		for (size_t i = 0; i < l.n; i++)
			if (l.cpus[i] < 0 || l.cpus[i] > SONDE_CPU_MAX ||
			    (i && l.cpus[i] <= l.cpus[i - 1]))
				abort();
		sonde_cpulist_fini(&l);
	}
	free(text);
	return 0;
}
