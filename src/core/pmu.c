// SPDX-License-Identifier: MIT
/*
 * sysfs PMU descriptions.  A PMU's format/ folder maps term names to bit
 * ranges of the attr's config words ("config:0-7,21", "config1:0-15"); a
 * term's value is spread over those ranges low bits first, as the kernel
 * documents in Documentation/ABI/testing/sysfs-bus-event_source-devices-format.
 */
#include <sonde/pmu.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sonde/fileio.h>

#define PMU_DIR "%s/bus/event_source/devices/%s"

int sonde_pmu_names(const char *sysfs, struct sonde_strlist *out)
{
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), "%s/bus/event_source/devices", sysfs);

	return r < 0 ? r : sonde_list_dir(path, false, out);
}

int sonde_pmu_type(const char *sysfs, const char *pmu, uint32_t *type)
{
	char path[PATH_MAX];
	uint64_t v;
	int r = sonde_path(path, sizeof(path), PMU_DIR "/type", sysfs, pmu);

	if (r < 0 || (r = sonde_read_u64(path, &v)) < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*type = (uint32_t)v;
	return 0;
}

int sonde_pmu_event_names(const char *sysfs, const char *pmu, struct sonde_strlist *out)
{
	struct sonde_strlist all;
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), PMU_DIR "/events", sysfs, pmu);

	if (r < 0)
		return r;
	sonde_strlist_init(&all);
	r = sonde_list_dir(path, false, &all);
	/* NAME.scale, .unit, .per-pkg and .snapshot describe event NAME; they are not events. */
	for (size_t i = 0; r == 0 && i < all.n; i++) {
		static const char *const attrs[] = {".scale", ".unit", ".per-pkg", ".snapshot"};
		size_t n = strlen(all.v[i]);
		bool attr = false;

		for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
			size_t m = strlen(attrs[a]);

			attr |= n > m && !strcmp(all.v[i] + n - m, attrs[a]);
		}
		if (!attr)
			r = sonde_strlist_add(out, all.v[i]);
	}
	sonde_strlist_fini(&all);
	return r;
}

bool sonde_pmu_is_cpu(const char *sysfs, const char *pmu)
{
	char path[PATH_MAX];
	uint32_t type;

	if (sonde_pmu_type(sysfs, pmu, &type) == 0 && type == PERF_TYPE_RAW)
		return true;
	/* Arm PMUs and hybrid x86 cores list the CPUs they cover in "cpus". */
	if (sonde_path(path, sizeof(path), PMU_DIR "/cpus", sysfs, pmu) < 0)
		return false;
	return access(path, F_OK) == 0;
}

int sonde_pmu_event_terms(const char *sysfs, const char *pmu, const char *ev, char *buf, size_t len)
{
	char path[PATH_MAX];
	int r;

	if (strchr(ev, '/') || !strcmp(ev, "..") || !strcmp(ev, "."))
		return -EINVAL;
	r = sonde_path(path, sizeof(path), PMU_DIR "/events/%s", sysfs, pmu, ev);
	return r < 0 ? r : sonde_read_text(path, buf, len);
}

bool sonde_pmu_has_term(const char *sysfs, const char *pmu, const char *term)
{
	char path[PATH_MAX];

	if (strchr(term, '/') || term[0] == '.')
		return false;
	if (sonde_path(path, sizeof(path), PMU_DIR "/format/%s", sysfs, pmu, term) < 0)
		return false;
	return access(path, F_OK) == 0;
}

static uint64_t *config_word(struct perf_event_attr *attr, const char *word)
{
	if (!strcmp(word, "config"))
		return (uint64_t *)&attr->config;
	if (!strcmp(word, "config1"))
		return (uint64_t *)&attr->config1;
	if (!strcmp(word, "config2"))
		return (uint64_t *)&attr->config2;
	return NULL;
}

/* Spreads @val over the bit ranges of format text @fmt ("config1:0-15,32-47"). */
static int apply_format(const char *fmt, uint64_t val, struct perf_event_attr *attr,
			const char *term, struct sonde_errmsg *err)
{
	char word[16];
	const char *colon = strchr(fmt, ':'), *p;
	uint64_t *dst;
	unsigned int used = 0;

	if (!colon || (size_t)(colon - fmt) >= sizeof(word))
		return sonde_errmsg_set(err, SONDE_E_FORMAT, "format of term '%s' is '%s'", term,
					fmt);
	memcpy(word, fmt, (size_t)(colon - fmt));
	word[colon - fmt] = '\0';
	dst = config_word(attr, word);
	if (!dst)
		return sonde_errmsg_set(err, SONDE_E_FORMAT, "term '%s' sets unknown field '%s'",
					term, word);
	for (p = colon + 1; *p;) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return sonde_errmsg_set(err, SONDE_E_FORMAT, "format of term '%s' is '%s'",
						term, fmt);
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				return sonde_errmsg_set(err, SONDE_E_FORMAT,
							"format of term '%s' is '%s'", term, fmt);
		}
		if (hi < lo || hi > 63)
			return sonde_errmsg_set(err, SONDE_E_FORMAT, "format of term '%s' is '%s'",
						term, fmt);
		for (unsigned long b = lo; b <= hi; b++, used++) {
			if (used < 64 && (val >> used) & 1)
				*dst |= 1ull << b;
			else
				*dst &= ~(1ull << b);
		}
		if (*end && *end != ',')
			return sonde_errmsg_set(err, SONDE_E_FORMAT, "format of term '%s' is '%s'",
						term, fmt);
		p = *end == ',' ? end + 1 : end;
	}
	if (!used)
		return sonde_errmsg_set(err, SONDE_E_FORMAT, "format of term '%s' is '%s'", term,
					fmt);
	if (used < 64 && (val >> used))
		return sonde_errmsg_set(err, -ERANGE,
					"value 0x%llx too big for term '%s' (%u bits)",
					(unsigned long long)val, term, used);
	return 0;
}

static int apply_term(const char *sysfs, const char *pmu, const char *term, const char *value,
		      struct perf_event_attr *attr, struct sonde_errmsg *err)
{
	char path[PATH_MAX], fmt[256];
	uint64_t val = 1, *word;
	int r;

	if (value) {
		char *end;

		/* "?" marks a parameter the user must give; perf requires it too.
		 * A later term of the same name gives it (see sonde_pmu_apply_terms). */
		if (!strcmp(value, "?"))
			return sonde_errmsg_set(err, SONDE_E_PARSE,
						"term '%s' of %s needs a value (%s=N)", term, pmu,
						term);
		errno = 0;
		val = strtoull(value, &end, 0);
		if (errno || end == value || *end)
			return sonde_errmsg_set(err, SONDE_E_PARSE, "bad value '%s' for term '%s'",
						value, term);
	}
	word = config_word(attr, term);
	if (word) {
		*word = val;
		return 0;
	}
	if (strchr(term, '/') || term[0] == '.')
		return sonde_errmsg_set(err, SONDE_E_PARSE, "bad term '%s'", term);
	r = sonde_path(path, sizeof(path), PMU_DIR "/format/%s", sysfs, pmu, term);
	if (r == 0)
		r = sonde_read_text(path, fmt, sizeof(fmt));
	if (r < 0) {
		struct sonde_strlist terms;
		char list[200] = "";

		sonde_strlist_init(&terms);
		if (sonde_path(path, sizeof(path), PMU_DIR "/format", sysfs, pmu) == 0)
			sonde_list_dir(path, false, &terms);
		for (size_t i = 0; i < terms.n; i++) {
			size_t used = strlen(list);

			snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
				 terms.v[i]);
		}
		sonde_strlist_fini(&terms);
		return sonde_errmsg_set(err, SONDE_E_UNKNOWN_EVENT,
					"PMU %s has no term '%s' (its terms: %s)", pmu, term,
					list[0] ? list : "none");
	}
	return apply_format(fmt, val, attr, term, err);
}

/* True when the terms still to come (@rest, strtok_r's remainder) set @term. */
static bool given_later(const char *rest, const char *term)
{
	size_t n = strlen(term);

	for (const char *p = rest; p && *p;) {
		while (*p == ' ' || *p == '\n' || *p == ',')
			p++;
		if (!strncmp(p, term, n) && (p[n] == '=' || p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

int sonde_pmu_apply_terms(const char *sysfs, const char *pmu, const char *terms,
			  struct perf_event_attr *attr, struct sonde_errmsg *err)
{
	char *copy = strdup(terms), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && r == 0; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		while (*tok == ' ' || *tok == '\n')
			tok++;
		if (!*tok)
			continue;
		if (eq)
			*eq = '\0';
		if (eq && !strcmp(eq + 1, "?") && given_later(save, tok))
			continue;
		r = apply_term(sysfs, pmu, tok, eq ? eq + 1 : NULL, attr, err);
	}
	free(copy);
	return r;
}
