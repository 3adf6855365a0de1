// SPDX-License-Identifier: MIT
/*
 * The header features of a capture, gathered on the machine that records
 * (the target, for a remote capture): facts about the host, the tracing
 * data that lets tracepoint fields be decoded offline, and what sonde
 * keeps for offline kernel symbolization in its own sections, which perf
 * never sees (a trailer, src/format/pd_trailer.c), and the machine's shape
 * perf's readers use (host_topology.c).
 */
#include <sonde/record.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/perf_data.h>
#include <sonde/synth.h>
#include <sonde/tracing_data.h>

int sonde_record_header_features(struct sonde_pd_writer *w, int argc, const char *const *argv)
{
	struct sonde_pd_host h;
	int r = sonde_record_host_fill(&h, NULL);

	if (r == 0)
		r = sonde_pd_writer_set_host(w, &h);
	if (r == 0)
		r = sonde_record_topology_features(w, "/sys", h.nr_cpus_avail);
	if (r == 0)
		r = sonde_pd_writer_set_cmdline(w, argc, argv);
	return r;
}

int sonde_record_tracing_data(struct sonde_pd_writer *w, const struct sonde_record *r,
			      const char *tracefs)
{
	const struct sonde_evlist *l = r->o.events;
	struct sonde_tp_name *tps = calloc(l->n ? l->n : 1, sizeof(*tps));
	struct sonde_errmsg err;
	size_t n = 0, len;
	char *blob;
	int ret;

	if (!tps)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		if (l->events[i].kind == SONDE_EV_TRACEPOINT)
			tps[n++] =
			    (struct sonde_tp_name){l->events[i].tp_system, l->events[i].tp_event};
	if (!n || !tracefs) {
		free(tps);
		return 0;
	}
	ret = sonde_tracing_data_build(tracefs, tps, n, &blob, &len, &err);
	free(tps);
	if (ret < 0)
		return ret;
	ret = sonde_pd_writer_set_tracing_data(w, blob, len);
	free(blob);
	return ret;
}

static int sample_time(struct sonde_pd_writer *w, const struct sonde_record *r)
{
	uint64_t first = 0, last = 0;

	for (size_t k = 0; k < r->nrings; k++) {
		const struct sonde_ring_stats *st = &r->stats[k];

		if (!st->samples)
			continue;
		if (!first || st->first_time < first)
			first = st->first_time;
		if (st->last_time > last)
			last = st->last_time;
	}
	return first ? sonde_pd_writer_set_sample_time(w, first, last) : 0;
}

static int sonde_blob(struct sonde_pd_writer *w, unsigned int feat,
		      int (*make)(const char *, const char *, char **, size_t *))
{
	char *blob;
	size_t len;
	int r = make("/proc", "/sys", &blob, &len);

	if (r < 0)
		return r;
	r = sonde_pd_writer_set_sonde_feature(w, feat, blob, len);
	free(blob);
	return r;
}

static int kallsyms_blob(const char *procfs, const char *sysfs, char **blob, size_t *len)
{
	(void)sysfs;
	return sonde_kallsyms_snapshot(procfs, blob, len);
}

/*
 * GROUP_DESC: the {a,b} groups of the capture (leader index, members), so
 * perf report --group and perf evlist -g show them as perf's own captures.
 * Written only when a group has more than one event, as perf does.
 */
static int group_desc(struct sonde_pd_writer *w, const struct sonde_record *r)
{
	const struct sonde_evlist *l = r->o.events;
	struct sonde_pd_group *g = calloc(l->n ? l->n : 1, sizeof(*g));
	size_t n = 0;
	int ret;

	if (!g)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		uint32_t members = 0;

		for (size_t k = i; k < l->n && l->events[k].leader == (int)i; k++)
			members++;
		if (members >= 2)
			g[n++] = (struct sonde_pd_group){NULL, (uint32_t)i, members};
	}
	ret = sonde_pd_writer_set_groups(w, g, n);
	free(g);
	return ret;
}

int sonde_record_end_features(struct sonde_pd_writer *w, const struct sonde_record *r,
			      const char *tracefs, bool kallsyms)
{
	int first = 0, ret;

	/* Set already when the output is a stream (it must precede the records). */
	ret = sonde_pd_writer_feature(w, SONDE_PD_FEAT_TRACING_DATA, &(const void *){NULL},
				      &(size_t){0})
		  ? 0
		  : sonde_record_tracing_data(w, r, tracefs);
	if (ret < 0 && !first)
		first = ret;
	ret = sample_time(w, r);
	if (ret < 0 && !first)
		first = ret;
	ret = group_desc(w, r);
	if (ret < 0 && !first)
		first = ret;
	/* No /proc/modules (a kernel without modules) is not an error. */
	ret = sonde_blob(w, SONDE_PD_SFEAT_MODULES, sonde_module_sections);
	if (ret < 0 && ret != -ENOENT && !first)
		first = ret;
	if (kallsyms) {
		ret = sonde_blob(w, SONDE_PD_SFEAT_KALLSYMS, kallsyms_blob);
		if (ret < 0 && !first)
			first = ret;
	}
	return first;
}
