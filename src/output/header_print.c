// SPDX-License-Identifier: MIT
/*
 * perf report --header for sonde: the capture's feature sections printed
 * with perf's labels and value shapes, so that a user (or a script) that
 * reads perf's header reads sonde's the same way, on perf's files and on
 * sonde's.  Values the reader already parsed (host strings, cmdline,
 * sample times) come from sonde_pd_reader_features(); the sections only
 * this view needs (EVENT_DESC as written, PMU_MAPPINGS, GROUP_DESC,
 * capabilities, clock data) are decoded here through a bounds-checked
 * cursor, since a feature section is outside data.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <sonde/attr_fields.h>
#include <sonde/header_print.h>
#include <sonde/perf_data.h>

/* perf 6.1's feature names, by bit (tools/perf/util/header.c feat_ops). */
static const char *const feat_names[SONDE_PD_FEAT_LAST_PERF] = {
    [SONDE_PD_FEAT_TRACING_DATA] = "TRACING_DATA",
    [SONDE_PD_FEAT_BUILD_ID] = "BUILD_ID",
    [SONDE_PD_FEAT_HOSTNAME] = "HOSTNAME",
    [SONDE_PD_FEAT_OSRELEASE] = "OSRELEASE",
    [SONDE_PD_FEAT_VERSION] = "VERSION",
    [SONDE_PD_FEAT_ARCH] = "ARCH",
    [SONDE_PD_FEAT_NRCPUS] = "NRCPUS",
    [SONDE_PD_FEAT_CPUDESC] = "CPUDESC",
    [SONDE_PD_FEAT_CPUID] = "CPUID",
    [SONDE_PD_FEAT_TOTAL_MEM] = "TOTAL_MEM",
    [SONDE_PD_FEAT_CMDLINE] = "CMDLINE",
    [SONDE_PD_FEAT_EVENT_DESC] = "EVENT_DESC",
    [SONDE_PD_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
    [SONDE_PD_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
    [SONDE_PD_FEAT_BRANCH_STACK] = "BRANCH_STACK",
    [SONDE_PD_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
    [SONDE_PD_FEAT_GROUP_DESC] = "GROUP_DESC",
    [SONDE_PD_FEAT_AUXTRACE] = "AUXTRACE",
    [SONDE_PD_FEAT_STAT] = "STAT",
    [SONDE_PD_FEAT_CACHE] = "CACHE",
    [SONDE_PD_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
    [SONDE_PD_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
    [SONDE_PD_FEAT_CLOCKID] = "CLOCKID",
    [SONDE_PD_FEAT_DIR_FORMAT] = "DIR_FORMAT",
    [SONDE_PD_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
    [SONDE_PD_FEAT_BPF_BTF] = "BPF_BTF",
    [SONDE_PD_FEAT_COMPRESSED] = "COMPRESSED",
    [SONDE_PD_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
    [SONDE_PD_FEAT_CLOCK_DATA] = "CLOCK_DATA",
    [SONDE_PD_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
    [SONDE_PD_FEAT_PMU_CAPS] = "PMU_CAPS",
};

/* A bounds-checked walk over one feature section. */
struct cur {
	const uint8_t *p;
	uint64_t left;
	bool bad;
};

static uint32_t u32(struct cur *c)
{
	uint32_t v = 0;

	if (c->left < 4) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	c->left -= 4;
	return v;
}

static uint64_t u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->left < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return v;
}

static const void *bytes(struct cur *c, uint64_t n)
{
	const void *p = c->p;

	if (c->left < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return p;
}

/* perf's string: u32 length (padded), NUL-terminated text inside it. */
static const char *str(struct cur *c)
{
	uint32_t len = u32(c);
	const char *s = c->bad ? NULL : bytes(c, len);

	if (!s || !len || !memchr(s, '\0', len)) {
		c->bad = true;
		return "";
	}
	return s;
}

static bool section(struct sonde_pd_reader *r, unsigned bit, struct cur *c)
{
	const void *data;
	uint64_t size;

	if (sonde_pd_reader_feature(r, bit, &data, &size) < 0)
		return false;
	*c = (struct cur){data, size, false};
	return true;
}

static void attr_field(void *ctx, const char *name, const char *value)
{
	fprintf(ctx, ", %s = %s", name, value);
}

static void event_desc(FILE *out, struct sonde_pd_reader *r)
{
	struct cur c;
	uint32_t n, sz;

	if (!section(r, SONDE_PD_FEAT_EVENT_DESC, &c))
		return;
	n = u32(&c);
	sz = u32(&c);
	/* Check the whole section first: perf prints all or nothing. */
	struct cur chk = c;

	for (uint32_t i = 0; i < n && !chk.bad; i++) {
		uint32_t nids;

		bytes(&chk, sz);
		nids = u32(&chk);
		str(&chk);
		bytes(&chk, (uint64_t)nids * 8);
	}
	if (c.bad || chk.bad || sz < 64) {
		fprintf(out, "# event desc: not available or unable to read\n");
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct perf_event_attr a;
		const void *raw = bytes(&c, sz);
		uint32_t nids = u32(&c);
		const char *name = str(&c);

		memset(&a, 0, sizeof(a));
		memcpy(&a, raw, sz < sizeof(a) ? sz : sizeof(a));
		fprintf(out, "# event : name = %s, ", name);
		if (nids) {
			fprintf(out, ", id = {");
			for (uint32_t k = 0; k < nids; k++)
				fprintf(out, "%s %" PRIu64, k ? "," : "", u64(&c));
			fprintf(out, " }");
		}
		sonde_attr_fields(&a, attr_field, out);
		fputc('\n', out);
	}
}

static void cmdline(FILE *out, const struct sonde_pd_features *f)
{
	fprintf(out, "# cmdline : ");
	for (uint32_t i = 0; i < f->cmdline_argc; i++) {
		/* perf escapes single quotes as \' */
		for (const char *s = f->cmdline_argv[i]; *s; s++)
			fputs(*s == '\'' ? "\\'" : (char[]){*s, '\0'}, out);
		fputc(' ', out);
	}
	fputc('\n', out);
}

static void pmu_mappings(FILE *out, struct sonde_pd_reader *r)
{
	struct cur c;
	uint32_t n;

	if (!section(r, SONDE_PD_FEAT_PMU_MAPPINGS, &c))
		return;
	n = u32(&c);
	if (!n) {
		fprintf(out, "# pmu mappings: not available\n");
		return;
	}
	fprintf(out, "# pmu mappings: ");
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		uint32_t type = u32(&c);
		const char *name = str(&c);

		if (!c.bad)
			fprintf(out, "%s%s = %" PRIu32, i ? ", " : "", name, type);
	}
	fputc('\n', out);
	if (c.bad)
		fprintf(out, "# pmu mappings: unable to read\n");
}

/* The name perf gives an event of the file (its EVENT_DESC name). */
static const char *event_name(struct sonde_pd_reader *r, uint32_t idx)
{
	const struct sonde_pd_attr *a =
	    idx < sonde_pd_reader_nr_attrs(r) ? sonde_pd_reader_attr(r, idx) : NULL;

	return a && a->name ? a->name : "(unnamed)";
}

static void group_desc(FILE *out, struct sonde_pd_reader *r)
{
	struct sonde_pd_group g[64];
	size_t n = sonde_pd_reader_groups(r, g, sizeof(g) / sizeof(g[0]));

	for (size_t i = 0; i < n; i++) {
		if (g[i].nr < 2)
			continue;
		fprintf(out, "# group: %s{%s", g[i].name ? g[i].name : "",
			event_name(r, g[i].leader));
		for (uint32_t k = 1; k < g[i].nr; k++)
			fprintf(out, ",%s", event_name(r, g[i].leader + k));
		fprintf(out, "}\n");
	}
}

static void sample_time(FILE *out, const struct sonde_pd_features *f)
{
	uint64_t t[2] = {f->first_sample_time, f->last_sample_time};
	const char *label[2] = {"first", "last"};

	for (int i = 0; i < 2; i++)
		fprintf(out, "# time of %s sample : %" PRIu64 ".%06" PRIu64 "\n", label[i],
			t[i] / 1000000000u, t[i] % 1000000000u / 1000u);
	fprintf(out, "# sample duration : %10.3f ms\n",
		(double)(f->last_sample_time - f->first_sample_time) / 1e6);
}

/* u32 count, then "name", "value" string pairs: perf's capability list. */
static void caps(FILE *out, struct cur *c, const char *pmu, uint32_t n)
{
	if (!n) {
		fprintf(out, "# %s pmu capabilities: not available\n", pmu);
		return;
	}
	fprintf(out, "# %s pmu capabilities: ", pmu);
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		const char *name = str(c), *value = str(c);

		fprintf(out, "%s%s=%s", i ? ", " : "", name, value);
	}
	fputc('\n', out);
}

static void cpu_pmu_caps(FILE *out, struct sonde_pd_reader *r)
{
	struct cur c;

	if (section(r, SONDE_PD_FEAT_CPU_PMU_CAPS, &c))
		caps(out, &c, "cpu", u32(&c));
}

static void pmu_caps(FILE *out, struct sonde_pd_reader *r)
{
	struct cur c;
	uint32_t n;

	if (!section(r, SONDE_PD_FEAT_PMU_CAPS, &c))
		return;
	n = u32(&c);
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		uint32_t ncaps = u32(&c);
		struct cur names = c;
		const char *pmu;

		/* The PMU's name follows its capabilities: skip them to read it. */
		for (uint32_t k = 0; k < 2 * ncaps && !names.bad; k++)
			str(&names);
		pmu = str(&names);
		if (names.bad)
			return;
		caps(out, &c, pmu, ncaps);
		c = names;
	}
}

static const char *clock_name(uint32_t id)
{
	switch (id) {
	case CLOCK_MONOTONIC:
		return "monotonic";
	case CLOCK_MONOTONIC_RAW:
		return "monotonic_raw";
	case CLOCK_REALTIME:
		return "realtime";
	case CLOCK_BOOTTIME:
		return "boottime";
	case CLOCK_TAI:
		return "tai";
	default:
		return "(unknown)";
	}
}

static void clock_data(FILE *out, struct sonde_pd_reader *r)
{
	struct cur c;
	uint32_t clockid;
	uint64_t tod, clk;
	time_t sec;
	struct tm tm;
	char date[64] = "<error>";

	if (!section(r, SONDE_PD_FEAT_CLOCK_DATA, &c))
		return;
	u32(&c); /* version */
	clockid = u32(&c);
	tod = u64(&c);
	clk = u64(&c);
	if (c.bad)
		return;
	sec = (time_t)(tod / 1000000000u);
	if (localtime_r(&sec, &tm))
		strftime(date, sizeof(date), "%F %T", &tm);
	fprintf(out, "# clockid: %s (%u)\n", clock_name(clockid), clockid);
	fprintf(out, "# reference time: %s.%06u = %ld.%06u (TOD) = %ld.%09ld (%s)\n", date,
		(unsigned)(tod % 1000000000u / 1000u), (long)sec,
		(unsigned)(tod % 1000000000u / 1000u), (long)(clk / 1000000000u),
		(long)(clk % 1000000000u), clock_name(clockid));
}

static void compressed(FILE *out, const struct sonde_pd_features *f)
{
	fprintf(out, "# compressed : %s, level = %d, ratio = %d\n",
		f->comp_type == 1 ? "Zstd" : "Unknown", (int)f->comp_level, (int)f->comp_ratio);
}

static void dir_format(FILE *out, struct sonde_pd_reader *r)
{
	struct cur c;

	if (section(r, SONDE_PD_FEAT_DIR_FORMAT, &c))
		fprintf(out, "# directory data version : %" PRIu64 "\n", u64(&c));
}

/* One feature's lines, in perf's words; nothing for those perf doesn't print. */
static void feature(FILE *out, struct sonde_pd_reader *r, const struct sonde_pd_features *f,
		    unsigned bit)
{
	switch (bit) {
	case SONDE_PD_FEAT_HOSTNAME:
		fprintf(out, "# hostname : %s\n", f->hostname ? f->hostname : "(null)");
		break;
	case SONDE_PD_FEAT_OSRELEASE:
		fprintf(out, "# os release : %s\n", f->osrelease ? f->osrelease : "(null)");
		break;
	case SONDE_PD_FEAT_VERSION:
		fprintf(out, "# perf version : %s\n", f->version ? f->version : "(null)");
		break;
	case SONDE_PD_FEAT_ARCH:
		fprintf(out, "# arch : %s\n", f->arch ? f->arch : "(null)");
		break;
	case SONDE_PD_FEAT_NRCPUS:
		fprintf(out, "# nrcpus online : %u\n# nrcpus avail : %u\n", f->nr_cpus_online,
			f->nr_cpus_avail);
		break;
	case SONDE_PD_FEAT_CPUDESC:
		fprintf(out, "# cpudesc : %s\n", f->cpudesc ? f->cpudesc : "(null)");
		break;
	case SONDE_PD_FEAT_CPUID:
		fprintf(out, "# cpuid : %s\n", f->cpuid ? f->cpuid : "(null)");
		break;
	case SONDE_PD_FEAT_TOTAL_MEM:
		fprintf(out, "# total memory : %" PRIu64 " kB\n", f->total_mem_kb);
		break;
	case SONDE_PD_FEAT_CMDLINE:
		cmdline(out, f);
		break;
	case SONDE_PD_FEAT_EVENT_DESC:
		event_desc(out, r);
		break;
	case SONDE_PD_FEAT_CPU_TOPOLOGY:
	case SONDE_PD_FEAT_NUMA_TOPOLOGY:
	case SONDE_PD_FEAT_CACHE:
	case SONDE_PD_FEAT_MEM_TOPOLOGY:
	case SONDE_PD_FEAT_HYBRID_TOPOLOGY:
		fprintf(out, "# %s info available, use -I to display\n", feat_names[bit]);
		break;
	case SONDE_PD_FEAT_BRANCH_STACK:
		fprintf(out, "# contains samples with branch stack\n");
		break;
	case SONDE_PD_FEAT_PMU_MAPPINGS:
		pmu_mappings(out, r);
		break;
	case SONDE_PD_FEAT_GROUP_DESC:
		group_desc(out, r);
		break;
	case SONDE_PD_FEAT_AUXTRACE:
		fprintf(out, "# contains AUX area data (e.g. instruction trace)\n");
		break;
	case SONDE_PD_FEAT_STAT:
		fprintf(out, "# contains stat data\n");
		break;
	case SONDE_PD_FEAT_SAMPLE_TIME:
		sample_time(out, f);
		break;
	case SONDE_PD_FEAT_CLOCKID:
		fprintf(out, "# clockid frequency: %" PRIu64 " MHz\n", f->clockid_res_ns * 1000);
		break;
	case SONDE_PD_FEAT_DIR_FORMAT:
		dir_format(out, r);
		break;
	case SONDE_PD_FEAT_COMPRESSED:
		compressed(out, f);
		break;
	case SONDE_PD_FEAT_CPU_PMU_CAPS:
		cpu_pmu_caps(out, r);
		break;
	case SONDE_PD_FEAT_CLOCK_DATA:
		clock_data(out, r);
		break;
	case SONDE_PD_FEAT_PMU_CAPS:
		pmu_caps(out, r);
		break;
	default: /* TRACING_DATA, BUILD_ID: perf prints nothing; BPF: not decoded */
		break;
	}
}

int sonde_header_print(FILE *out, struct sonde_pd_reader *r, time_t mtime)
{
	const struct sonde_pd_file_header *h = sonde_pd_reader_header(r);
	const struct sonde_pd_features *f = sonde_pd_reader_features(r);
	char when[64];

	if (sonde_pd_reader_is_pipe(r))
		return -EINVAL;
	/* ctime()'s layout, as perf prints it. */
	struct tm tm;

	if (!localtime_r(&mtime, &tm) || !strftime(when, sizeof(when), "%a %b %e %T %Y", &tm))
		snprintf(when, sizeof(when), "?");
	fprintf(out, "# ========\n");
	fprintf(out, "# captured on    : %s\n", when);
	fprintf(out, "# header version : 1\n");
	fprintf(out, "# data offset    : %" PRIu64 "\n", h->data.offset);
	fprintf(out, "# data size      : %" PRIu64 "\n", h->data.size);
	fprintf(out, "# feat offset    : %" PRIu64 "\n", h->data.offset + h->data.size);
	for (unsigned bit = 1; bit < SONDE_PD_FEAT_LAST_PERF; bit++)
		if (sonde_pd_reader_has_feature(r, bit))
			feature(out, r, f, bit);
	fprintf(out, "# missing features: ");
	for (unsigned bit = 1; bit < SONDE_PD_FEAT_LAST_PERF; bit++)
		if (!sonde_pd_reader_has_feature(r, bit))
			fprintf(out, "%s ", feat_names[bit]);
	fprintf(out, "\n# ========\n#\n");
	return 0;
}
