/* SPDX-License-Identifier: MIT */
/*
 * What the perf.data fuzz targets do with a reader once it opened: touch
 * every feature string and event name, walk and decode every record
 * (touching the last byte of each array the decoder lends), then walk the
 * records again in time order when the reader can rewind.
 */
#ifndef SONDE_FUZZ_PD_WALK_H
#define SONDE_FUZZ_PD_WALK_H

#include <sonde/pd_ordered.h>
#include <sonde/perf_data.h>

#include <string.h>

static inline int walk_record(void *ctx, const struct sonde_pd_record *rec,
			      const struct sonde_pd_event *ev)
{
	(void)ctx;
	/* Touch the first and last byte the walk lends. */
	return ((const uint8_t *)rec->data)[rec->size - 1] == 0xfe && ev->type == 0xfe ? -1 : 0;
}

static inline void fuzz_pd_walk(struct sonde_pd_reader *r)
{
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	const struct sonde_pd_features *f;
	volatile size_t sink = 0;

	f = sonde_pd_reader_features(r);
	for (uint32_t i = 0; i < f->cmdline_argc; i++)
		sink += strlen(f->cmdline_argv[i]);
	for (size_t i = 0; i < f->nr_build_ids; i++)
		sink += strlen(f->build_ids[i].filename);
	const char *strs[] = {f->hostname, f->osrelease, f->version, f->arch, f->cpudesc, f->cpuid};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		sink += strs[i] ? strlen(strs[i]) : 0;
	if (f->tracing_data_size)
		sink += ((const uint8_t *)f->tracing_data)[f->tracing_data_size - 1];
	for (size_t i = 0; i < sonde_pd_reader_nr_attrs(r); i++) {
		const struct sonde_pd_attr *a = sonde_pd_reader_attr(r, i);

		sink += a->name ? strlen(a->name) : 0;
	}
	for (int n = 0; n < 100000 && sonde_pd_reader_next(r, &rec) == 1; n++) {
		if (sonde_pd_reader_parse(r, &rec, &ev) != 0)
			continue;
		if (ev.type == PERF_RECORD_SAMPLE) {
			for (uint64_t i = 0; i < ev.sample.callchain_nr; i++)
				sink += ev.sample.callchain[i];
			if (ev.sample.raw_size)
				sink += ev.sample.raw[ev.sample.raw_size - 1];
			if (ev.sample.regs_user_nr)
				sink += ev.sample.regs_user[ev.sample.regs_user_nr - 1];
			if (ev.sample.stack_user_size)
				sink += ev.sample.stack_user[ev.sample.stack_user_size - 1];
			if (ev.sample.branch_nr)
				sink += ev.sample.branch_entries[ev.sample.branch_nr * 3 - 1];
			if (ev.sample.read_values && ev.sample.read_nr)
				sink +=
				    ev.sample
					.read_values[ev.sample.read_nr * ev.sample.read_stride - 1];
		} else if (ev.type == PERF_RECORD_MMAP || ev.type == PERF_RECORD_MMAP2) {
			sink += strlen(ev.mmap.filename);
		} else if (ev.type == PERF_RECORD_COMM) {
			sink += strlen(ev.comm.comm);
		}
		if (rec.extra_size)
			sink += ((const uint8_t *)rec.extra)[rec.extra_size - 1];
	}
	/* The same records again through the time-ordering walk. */
	if (sonde_pd_reader_rewind(r) == 0)
		sonde_pd_walk_ordered(r, walk_record, NULL, NULL, NULL, NULL);
	(void)sink;
}

#endif
