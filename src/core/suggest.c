// SPDX-License-Identifier: MIT
/*
 * "Did you mean" for event names: the candidates are every name the
 * parser would accept on this machine (generic events and aliases, cache
 * events, PMUs and their named events, tracepoints), ranked by edit
 * distance.  A candidate is close when it is within a third of the
 * name's length; a tracepoint whose event part matches exactly but whose
 * system differs is always close (sys_enter_write under the wrong system).
 */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/pmu.h>
#include <sonde/strlist.h>
#include <sonde/tracepoint.h>

#define MAX_SUGGEST 3

unsigned int sonde_edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned int *row, d;

	if (n > 256 || m > 256)
		return 1000;
	row = malloc((m + 1) * sizeof(*row));
	if (!row)
		return 1000;
	for (size_t j = 0; j <= m; j++)
		row[j] = (unsigned int)j;
	for (size_t i = 1; i <= n; i++) {
		unsigned int diag = row[0];

		row[0] = (unsigned int)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned int up = row[j];
			unsigned int cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			unsigned int best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	d = row[m];
	free(row);
	return d;
}

struct ranked {
	char name[128];
	unsigned int dist;
};

struct ranking {
	const char *query;
	unsigned int limit;
	struct ranked best[MAX_SUGGEST];
	int n;
};

static void consider(struct ranking *rk, const char *cand, unsigned int dist)
{
	int pos;

	if (dist > rk->limit)
		return;
	for (int i = 0; i < rk->n; i++)
		if (!strcmp(rk->best[i].name, cand))
			return;
	for (pos = rk->n; pos > 0 && rk->best[pos - 1].dist > dist; pos--)
		;
	if (pos >= MAX_SUGGEST)
		return;
	if (rk->n < MAX_SUGGEST)
		rk->n++;
	memmove(&rk->best[pos + 1], &rk->best[pos],
		(size_t)(rk->n - 1 - pos) * sizeof(rk->best[0]));
	snprintf(rk->best[pos].name, sizeof(rk->best[pos].name), "%s", cand);
	rk->best[pos].dist = dist;
}

static void consider_name(struct ranking *rk, const char *cand)
{
	consider(rk, cand, sonde_edit_distance(rk->query, cand));
}

static void consider_tracepoints(struct ranking *rk, const char *tracefs)
{
	struct sonde_strlist systems, events;
	const char *colon = strchr(rk->query, ':');
	char full[300];

	sonde_strlist_init(&systems);
	if (sonde_tracepoint_systems(tracefs, &systems) < 0)
		goto out;
	for (size_t i = 0; i < systems.n; i++) {
		sonde_strlist_init(&events);
		sonde_tracepoint_events(tracefs, systems.v[i], &events);
		for (size_t j = 0; j < events.n; j++) {
			snprintf(full, sizeof(full), "%s:%s", systems.v[i], events.v[j]);
			if (colon && !strcmp(colon + 1, events.v[j]))
				consider(rk, full, 0);
			else
				consider_name(rk, full);
		}
		sonde_strlist_fini(&events);
	}
out:
	sonde_strlist_fini(&systems);
}

static void consider_pmus(struct ranking *rk, const char *sysfs)
{
	struct sonde_strlist pmus, events;
	char full[300];

	sonde_strlist_init(&pmus);
	if (sonde_pmu_names(sysfs, &pmus) < 0)
		goto out;
	for (size_t i = 0; i < pmus.n; i++) {
		consider_name(rk, pmus.v[i]);
		sonde_strlist_init(&events);
		sonde_pmu_event_names(sysfs, pmus.v[i], &events);
		for (size_t j = 0; j < events.n; j++) {
			snprintf(full, sizeof(full), "%s/%s/", pmus.v[i], events.v[j]);
			consider_name(rk, full);
		}
		sonde_strlist_fini(&events);
	}
out:
	sonde_strlist_fini(&pmus);
}

/* A candidate is close within a third of the name's length (two edits at least). */
static void ranking_init(struct ranking *rk, const char *name)
{
	rk->query = name;
	rk->n = 0;
	rk->limit = (unsigned int)strlen(name) / 3;
	if (rk->limit < 2)
		rk->limit = 2;
}

static void ranking_print(const struct ranking *rk, char *out, size_t len)
{
	out[0] = '\0';
	for (int i = 0; i < rk->n; i++) {
		size_t used = strlen(out);

		snprintf(out + used, len - used, "%s'%s'", i ? ", " : "", rk->best[i].name);
	}
}

void sonde_suggest_among(const char *name, const char *const *names, size_t n, char *out,
			 size_t len)
{
	struct ranking rk;

	ranking_init(&rk, name);
	for (size_t i = 0; i < n; i++)
		consider_name(&rk, names[i]);
	ranking_print(&rk, out, len);
}

void sonde_suggest(const char *name, const struct sonde_roots *roots, char *out, size_t len)
{
	struct ranking rk;
	size_t n;
	const struct sonde_named_event *named = sonde_named_events(&n);
	char buf[64];
	uint64_t config;

	ranking_init(&rk, name);
	for (size_t i = 0; i < n; i++) {
		consider_name(&rk, named[i].name);
		if (named[i].alias)
			consider_name(&rk, named[i].alias);
	}
	for (unsigned int i = 0; i < sonde_cache_event_count(); i++)
		if (sonde_cache_event_name(i, buf, sizeof(buf), &config))
			consider_name(&rk, buf);
	if (roots && roots->sysfs)
		consider_pmus(&rk, roots->sysfs);
	if (roots && roots->tracefs)
		consider_tracepoints(&rk, roots->tracefs);
	ranking_print(&rk, out, len);
}
