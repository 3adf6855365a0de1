// SPDX-License-Identifier: MIT
/*
 * Test-only dump of a perf.data file through sonde's reader, as JSON:
 * header features, events, per-type record counts, the sample count and
 * the commands seen.  The integration tests compare it with perf.
 *
 *   perf_data_dump FILE
 *
 * Exit 0 when the file was read to its end (a truncated tail included),
 * 1 on an error (the JSON still says what was read, with "error").
 */
#include <sonde/perf_data.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void jstr(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void kv_str(const char *k, const char *v)
{
	printf("\"%s\": ", k);
	if (v)
		jstr(v);
	else
		printf("null");
	printf(",\n");
}

int main(int argc, char **argv)
{
	struct sonde_pd_reader *r;
	struct sonde_errmsg em;
	const struct sonde_pd_features *f;
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	static uint64_t counts[256];
	uint64_t samples = 0, parse_errors = 0, callchain_samples = 0, raw_samples = 0;
	char comms[4096] = "";
	size_t clen = 0;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: perf_data_dump FILE\n");
		return 2;
	}
	if (sonde_pd_reader_open(&r, argv[1], &em)) {
		printf("{\"error\": ");
		jstr(em.text);
		printf("}\n");
		return 1;
	}
	f = sonde_pd_reader_features(r);
	printf("{\n\"pipe\": %s,\n", sonde_pd_reader_is_pipe(r) ? "true" : "false");
	kv_str("hostname", f->hostname);
	kv_str("osrelease", f->osrelease);
	kv_str("version", f->version);
	kv_str("arch", f->arch);
	kv_str("cpudesc", f->cpudesc);
	kv_str("cpuid", f->cpuid);
	printf("\"nr_cpus_avail\": %u,\n\"nr_cpus_online\": %u,\n", f->nr_cpus_avail,
	       f->nr_cpus_online);
	printf("\"total_mem_kb\": %" PRIu64 ",\n", f->total_mem_kb);
	printf("\"tracing_data_size\": %" PRIu64 ",\n", f->tracing_data_size);
	printf("\"nr_build_ids\": %zu,\n", f->nr_build_ids);
	printf("\"cmdline\": [");
	for (uint32_t i = 0; i < f->cmdline_argc; i++) {
		printf(i ? ", " : "");
		jstr(f->cmdline_argv[i]);
	}
	printf("],\n\"features\": [");
	for (unsigned b = 0, n = 0; b < SONDE_PD_FEAT_BITS; b++)
		if (sonde_pd_reader_has_feature(r, b))
			printf("%s%u", n++ ? ", " : "", b);
	printf("],\n");
	if (f->has_sample_time)
		printf("\"sample_time\": [%" PRIu64 ", %" PRIu64 "],\n", f->first_sample_time,
		       f->last_sample_time);

	while ((ret = sonde_pd_reader_next(r, &rec)) == 1) {
		counts[rec.type & 0xff]++;
		if (sonde_pd_reader_parse(r, &rec, &ev)) {
			parse_errors++;
			continue;
		}
		if (rec.type == PERF_RECORD_SAMPLE) {
			samples++;
			callchain_samples += ev.sample.callchain_nr > 0;
			raw_samples += ev.sample.raw_size > 0;
		} else if (rec.type == PERF_RECORD_COMM && clen + 40 < sizeof(comms)) {
			clen +=
			    (size_t)snprintf(comms + clen, sizeof(comms) - clen, "%s[%u,\"%s\"]",
					     clen ? ", " : "", ev.comm.pid, ev.comm.comm);
		}
	}
	/* events after the records: pipe mode learns them from HEADER_ATTR */
	printf("\"events\": [");
	for (size_t i = 0; i < sonde_pd_reader_nr_attrs(r); i++) {
		const struct sonde_pd_attr *a = sonde_pd_reader_attr(r, i);

		printf("%s{\"name\": ", i ? ", " : "");
		if (a->name)
			jstr(a->name);
		else
			printf("null");
		printf(", \"type\": %u, \"config\": %llu, \"sample_type\": %llu, \"nr_ids\": %zu}",
		       a->attr.type, (unsigned long long)a->attr.config,
		       (unsigned long long)a->attr.sample_type, a->nr_ids);
	}
	printf("],\n\"records\": {");
	for (unsigned t = 0, n = 0; t < 256; t++)
		if (counts[t])
			printf("%s\"%s\": %" PRIu64, n++ ? ", " : "", sonde_pd_record_name(t),
			       counts[t]);
	printf("},\n\"samples\": %" PRIu64 ",\n\"callchain_samples\": %" PRIu64
	       ",\n\"raw_samples\": %" PRIu64 ",\n\"parse_errors\": %" PRIu64 ",\n",
	       samples, callchain_samples, raw_samples, parse_errors);
	printf("\"comms\": [%s],\n", comms);
	printf("\"tail\": \"%s\",\n", sonde_pd_reader_tail(r) == SONDE_PD_TAIL_CLEAN ? "clean"
				      : sonde_pd_reader_tail(r) == SONDE_PD_TAIL_TRUNCATED
					  ? "truncated"
					  : "unfinished");
	printf("\"error\": ");
	if (ret < 0)
		jstr(sonde_pd_reader_errmsg(r));
	else
		printf("null");
	printf("\n}\n");
	sonde_pd_reader_close(r);
	return ret < 0 ? 1 : 0;
}
