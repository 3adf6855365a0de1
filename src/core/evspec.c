// SPDX-License-Identifier: MIT
/*
 * The event-spec parser.
 *
 * A spec is split at top-level commas (commas inside { } and inside a
 * PMU's /terms/ belong to their item).  Each item is resolved in the order
 * perf uses: group, PMU syntax (name/terms/), breakpoint, named hw/sw
 * event, cache event, raw code, and finally tracepoint (system:event, with
 * globs expanded against tracefs).  Modifiers follow a ':' (or directly the
 * closing '/' of a PMU item).  Every failure leaves the list as it was and
 * explains itself in l->err.
 */
#include <sonde/evspec.h>

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <linux/hw_breakpoint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/pmu.h>
#include <sonde/tracepoint.h>

#include "suggest.h"

void sonde_evlist_init(struct sonde_evlist *l)
{
	memset(l, 0, sizeof(*l));
}

static void event_fini(struct sonde_event *e)
{
	free(e->name);
	free(e->tp_system);
	free(e->tp_event);
	free(e->filter);
}

void sonde_evlist_fini(struct sonde_evlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		event_fini(&l->events[i]);
	free(l->events);
	memset(l, 0, sizeof(*l));
}

/* Drops events appended after a failure so the list is as before the call. */
static void evlist_truncate(struct sonde_evlist *l, size_t n)
{
	while (l->n > n)
		event_fini(&l->events[--l->n]);
}

static struct sonde_event *evlist_append(struct sonde_evlist *l, const char *name,
					 enum sonde_event_kind kind)
{
	struct sonde_event *e;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct sonde_event *v = realloc(l->events, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->events = v;
		l->cap = cap;
	}
	e = &l->events[l->n];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	if (!e->name)
		return NULL;
	e->kind = kind;
	e->attr.size = sizeof(e->attr);
	e->leader = (int)l->n;
	l->n++;
	return e;
}

/* Parser state for one sonde_evlist_parse() call. */
struct parse {
	struct sonde_evlist *l;
	const struct sonde_roots *roots;
	const char *spec; /* the whole argument, for messages */
};

static int fail(struct parse *ps, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct parse *ps, int err, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sonde_errmsg_set(&ps->l->err, err, "event '%s': %s", ps->spec, msg);
}

/* Modifiers: u k h (privilege levels), G H (guest/host), p (precise, up to 3),
 * I (exclude idle), D (pinned). */
static int apply_modifiers(struct parse *ps, struct sonde_event *e, const char *mods)
{
	bool u = false, k = false, h = false, G = false, H = false;
	int p = 0;

	for (const char *c = mods; *c; c++) {
		switch (*c) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'G': G = true; break;
		case 'H': H = true; break;
		case 'p': p++; break;
		case 'I': e->attr.exclude_idle = 1; break;
		case 'D': e->attr.pinned = 1; break;
		default:
			return fail(ps, SONDE_E_PARSE, "unknown modifier '%c' in ':%s' (valid: u k h G H p I D)",
				    *c, mods);
		}
	}
	if (p > 3)
		return fail(ps, SONDE_E_PARSE, "at most 3 'p' modifiers (precise level 0-3)");
	if (u || k || h) {
		e->attr.exclude_user = !u;
		e->attr.exclude_kernel = !k;
		e->attr.exclude_hv = !h;
		e->flags |= SONDE_EVF_MODS;
	}
	if (G || H) {
		e->attr.exclude_guest = !G;
		e->attr.exclude_host = !H;
	}
	if (p)
		e->attr.precise_ip = (unsigned int)p;
	return 0;
}

static bool is_modifier_string(const char *s)
{
	if (!*s)
		return false;
	return strspn(s, "ukhGHpID") == strlen(s);
}

/*
 * Applies the terms common to every event (period=, freq=, name=) and
 * returns in @pmu_terms (comma-separated) whatever is left for the PMU.
 */
static int apply_generic_terms(struct parse *ps, struct sonde_event *e, const char *terms,
			       char *pmu_terms, size_t len)
{
	char *copy = strdup(terms), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	pmu_terms[0] = '\0';
	for (tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long long v;

		if (eq && !strncmp(tok, "name=", 5)) {
			char *n = strdup(eq + 1);

			if (!n) {
				r = -ENOMEM;
				break;
			}
			free(e->name);
			e->name = n;
			continue;
		}
		if (eq && (!strncmp(tok, "period=", 7) || !strncmp(tok, "freq=", 5))) {
			errno = 0;
			v = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end || v == 0) {
				r = fail(ps, SONDE_E_PARSE, "bad value in term '%s'", tok);
				break;
			}
			if (tok[0] == 'p') {
				e->attr.sample_period = v;
				e->attr.freq = 0;
				e->flags = (e->flags | SONDE_EVF_PERIOD) & ~SONDE_EVF_FREQ;
			} else {
				e->attr.sample_freq = v;
				e->attr.freq = 1;
				e->flags = (e->flags | SONDE_EVF_FREQ) & ~SONDE_EVF_PERIOD;
			}
			continue;
		}
		size_t used = strlen(pmu_terms);

		if (snprintf(pmu_terms + used, len - used, "%s%s", used ? "," : "", tok) >=
		    (int)(len - used))
			r = fail(ps, SONDE_E_PARSE, "terms too long");
	}
	free(copy);
	return r;
}

static int suggest_fail(struct parse *ps, const char *name, const char *what)
{
	char list[300];

	sonde_suggest(name, ps->roots, list, sizeof(list));
	if (list[0])
		return fail(ps, SONDE_E_UNKNOWN_EVENT, "unknown %s '%s'; did you mean %s?", what,
			    name, list);
	return fail(ps, SONDE_E_UNKNOWN_EVENT,
		    "unknown %s '%s' (run 'sonde list' to see the events of this machine)", what,
		    name);
}

/* name/terms/ : a PMU with terms or a named event, or a generic event with terms. */
static int parse_slashed(struct parse *ps, const char *item, const char *slash, const char *mods)
{
	const char *end = strrchr(item, '/');
	char head[128], terms[512], rest[512];
	struct sonde_event *e;
	uint32_t type;
	int r;

	if (end == slash || (size_t)(slash - item) >= sizeof(head) ||
	    (size_t)(end - slash - 1) >= sizeof(terms))
		return fail(ps, SONDE_E_PARSE, "'%s' needs a closing '/'", item);
	memcpy(head, item, (size_t)(slash - item));
	head[slash - item] = '\0';
	memcpy(terms, slash + 1, (size_t)(end - slash - 1));
	terms[end - slash - 1] = '\0';

	/* Generic events accept the per-event terms: cpu-clock/period=1000/. */
	const struct sonde_named_event *ne = sonde_named_event_find(head);
	uint64_t cache_config;

	if (ne || sonde_cache_event_parse(head, &cache_config)) {
		e = evlist_append(ps->l, item, ne ? (ne->type == PERF_TYPE_HARDWARE ? SONDE_EV_HARDWARE
										     : SONDE_EV_SOFTWARE)
						  : SONDE_EV_CACHE);
		if (!e)
			return -ENOMEM;
		e->attr.type = ne ? ne->type : PERF_TYPE_HW_CACHE;
		e->attr.config = ne ? ne->config : cache_config;
		r = apply_generic_terms(ps, e, terms, rest, sizeof(rest));
		if (!r && rest[0])
			r = fail(ps, SONDE_E_PARSE, "'%s' takes only period=, freq= and name= terms",
				 head);
		return r ? r : apply_modifiers(ps, e, mods);
	}

	if (sonde_pmu_type(ps->roots->sysfs, head, &type) < 0)
		return suggest_fail(ps, head, "PMU");
	e = evlist_append(ps->l, item, SONDE_EV_PMU);
	if (!e)
		return -ENOMEM;
	e->attr.type = type;
	r = apply_generic_terms(ps, e, terms, rest, sizeof(rest));
	if (r)
		return r;
	/* A lone word that is not a format term names an event of the PMU. */
	if (rest[0] && !strchr(rest, '=') && !strchr(rest, ',') &&
	    !sonde_pmu_has_term(ps->roots->sysfs, head, rest)) {
		char def[512], full[700];

		if (sonde_pmu_event_terms(ps->roots->sysfs, head, rest, def, sizeof(def)) < 0) {
			snprintf(full, sizeof(full), "%s/%s/", head, rest);
			return suggest_fail(ps, full, "event");
		}
		snprintf(rest, sizeof(rest), "%s", def);
	}
	if (rest[0]) {
		r = sonde_pmu_apply_terms(ps->roots->sysfs, head, rest, &e->attr, &ps->l->err);
		if (r)
			return fail(ps, r, "%s", ps->l->err.text);
	}
	return apply_modifiers(ps, e, mods);
}

/* mem:ADDR[/LEN][:rwx] */
static int parse_breakpoint(struct parse *ps, const char *item)
{
	const char *p = item + 4;
	char *end;
	unsigned long long addr, len = 0;
	unsigned int type = 0;
	struct sonde_event *e;

	errno = 0;
	addr = strtoull(p, &end, 0);
	if (errno || end == p)
		return fail(ps, SONDE_E_PARSE, "breakpoint '%s' needs an address (mem:ADDR[/LEN][:rwx])",
			    item);
	if (*end == '/') {
		p = end + 1;
		len = strtoull(p, &end, 0);
		if (end == p || (len != 1 && len != 2 && len != 4 && len != 8))
			return fail(ps, SONDE_E_PARSE, "breakpoint length must be 1, 2, 4 or 8");
	}
	if (*end == ':') {
		for (p = end + 1; *p; p++) {
			if (*p == 'r')
				type |= HW_BREAKPOINT_R;
			else if (*p == 'w')
				type |= HW_BREAKPOINT_W;
			else if (*p == 'x')
				type |= HW_BREAKPOINT_X;
			else
				return fail(ps, SONDE_E_PARSE,
					    "breakpoint access '%s' is not made of r, w and x", end + 1);
		}
		end = (char *)p;
	}
	if (*end)
		return fail(ps, SONDE_E_PARSE, "trailing '%s' in breakpoint '%s'", end, item);
	if (!type)
		type = HW_BREAKPOINT_RW;
	if ((type & HW_BREAKPOINT_X) && (type & HW_BREAKPOINT_RW))
		return fail(ps, SONDE_E_PARSE, "a breakpoint can't combine x with r or w");
	e = evlist_append(ps->l, item, SONDE_EV_BREAKPOINT);
	if (!e)
		return -ENOMEM;
	e->attr.type = PERF_TYPE_BREAKPOINT;
	e->attr.bp_type = type;
	e->attr.bp_addr = addr;
	e->attr.bp_len = len ? len : (type & HW_BREAKPOINT_X) ? sizeof(long) : HW_BREAKPOINT_LEN_4;
	e->attr.sample_period = 1;
	return 0;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int add_tracepoint(struct parse *ps, const char *sys, const char *ev, const char *mods)
{
	char name[512];
	uint64_t id;
	struct sonde_event *e;
	int r = sonde_tracepoint_id(ps->roots->tracefs, sys, ev, &id);

	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "%s:%s", sys, ev);
	e = evlist_append(ps->l, name, SONDE_EV_TRACEPOINT);
	if (!e)
		return -ENOMEM;
	e->tp_system = strdup(sys);
	e->tp_event = strdup(ev);
	if (!e->tp_system || !e->tp_event)
		return -ENOMEM;
	e->attr.type = PERF_TYPE_TRACEPOINT;
	e->attr.config = id;
	e->attr.sample_period = 1;
	return mods ? apply_modifiers(ps, e, mods) : 0;
}

/* system:event, either part possibly a glob. */
static int parse_tracepoint(struct parse *ps, const char *item, const char *sys, const char *ev,
			    const char *mods)
{
	struct sonde_strlist systems, events;
	size_t before = ps->l->n;
	int r = 0;

	if (!ps->roots->tracefs)
		return fail(ps, SONDE_E_NO_TRACEFS,
			    "'%s' is a tracepoint but tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)",
			    item);
	if (!has_glob(sys) && !has_glob(ev)) {
		r = add_tracepoint(ps, sys, ev, mods);
		if (r == -ENOENT)
			return suggest_fail(ps, item, "tracepoint");
		if (r < 0 && r > SONDE_E_FIRST_)
			return fail(ps, r, "can't read the id of tracepoint %s: %s", item,
				    sonde_strerror(r));
		return r;
	}
	sonde_strlist_init(&systems);
	r = sonde_tracepoint_systems(ps->roots->tracefs, &systems);
	for (size_t i = 0; !r && i < systems.n; i++) {
		if (fnmatch(sys, systems.v[i], 0))
			continue;
		sonde_strlist_init(&events);
		r = sonde_tracepoint_events(ps->roots->tracefs, systems.v[i], &events);
		for (size_t j = 0; !r && j < events.n; j++)
			if (!fnmatch(ev, events.v[j], 0))
				r = add_tracepoint(ps, systems.v[i], events.v[j], mods);
		sonde_strlist_fini(&events);
	}
	sonde_strlist_fini(&systems);
	if (r < 0 && r > SONDE_E_FIRST_)
		return fail(ps, r, "can't expand %s in tracefs: %s", item, sonde_strerror(r));
	if (!r && ps->l->n == before)
		return suggest_fail(ps, item, "tracepoint (no match for the pattern)");
	return r;
}

/* rNNNN: a raw hardware event code in hex. */
static bool parse_raw(const char *name, uint64_t *config)
{
	char *end;

	if (name[0] != 'r' || !isxdigit((unsigned char)name[1]))
		return false;
	errno = 0;
	*config = strtoull(name + 1, &end, 16);
	return !errno && !*end;
}

static int parse_item(struct parse *ps, char *item)
{
	const char *slash = strchr(item, '/');
	char *colon;
	uint64_t config;
	struct sonde_event *e;
	const struct sonde_named_event *ne;

	if (!*item)
		return fail(ps, SONDE_E_PARSE, "empty event name");
	if (!strncmp(item, "mem:", 4))
		return parse_breakpoint(ps, item);
	if (slash) {
		char *end = strrchr(item, '/');
		const char *mods = end + 1;

		if (*mods == ':')
			mods++;
		if (*mods && !is_modifier_string(mods))
			return fail(ps, SONDE_E_PARSE, "unexpected '%s' after '%s'", mods, item);
		char save = end[1];

		end[1] = '\0';
		int r = parse_slashed(ps, item, slash, mods);

		end[1] = save;
		return r;
	}
	colon = strchr(item, ':');
	if (colon) {
		*colon = '\0';
		/* A generic event followed by modifiers, or a tracepoint. */
		ne = sonde_named_event_find(item);
		bool cache = !ne && sonde_cache_event_parse(item, &config);
		bool raw = !ne && !cache && parse_raw(item, &config);

		*colon = ':';
		if (!ne && !cache && !raw) {
			char *mods = strchr(colon + 1, ':');
			int r;

			if (mods)
				*mods = '\0';
			*colon = '\0';
			r = parse_tracepoint(ps, item, item, colon + 1,
					     mods ? mods + 1 : NULL);
			*colon = ':';
			if (mods)
				*mods = ':';
			return r;
		}
	}
	if (colon)
		*colon = '\0';
	ne = sonde_named_event_find(item);
	if (ne) {
		if (colon)
			*colon = ':';
		e = evlist_append(ps->l, item, ne->type == PERF_TYPE_HARDWARE ? SONDE_EV_HARDWARE
									 : SONDE_EV_SOFTWARE);
		if (!e)
			return -ENOMEM;
		e->attr.type = ne->type;
		e->attr.config = ne->config;
	} else if (sonde_cache_event_parse(item, &config)) {
		if (colon)
			*colon = ':';
		e = evlist_append(ps->l, item, SONDE_EV_CACHE);
		if (!e)
			return -ENOMEM;
		e->attr.type = PERF_TYPE_HW_CACHE;
		e->attr.config = config;
	} else if (parse_raw(item, &config)) {
		if (colon)
			*colon = ':';
		e = evlist_append(ps->l, item, SONDE_EV_RAW);
		if (!e)
			return -ENOMEM;
		e->attr.type = PERF_TYPE_RAW;
		e->attr.config = config;
	} else {
		int r = suggest_fail(ps, item, "event");

		if (colon)
			*colon = ':';
		return r;
	}
	return colon ? apply_modifiers(ps, e, colon + 1) : 0;
}

/* Splits @s at top-level commas: not inside { } nor inside a PMU's /terms/. */
static int split_items(struct parse *ps, char *s, int (*fn)(struct parse *, char *, void *),
		       void *arg)
{
	char *start = s;
	int depth = 0;
	bool in_terms = false;

	for (char *p = s;; p++) {
		if (*p == '{')
			depth++;
		else if (*p == '}') {
			if (--depth < 0)
				return fail(ps, SONDE_E_PARSE, "unmatched '}'");
		} else if (*p == '/' && strncmp(start, "mem:", 4))
			in_terms = !in_terms;
		else if ((*p == ',' && !depth && !in_terms) || !*p) {
			bool last = !*p;
			int r;

			if (depth)
				return fail(ps, SONDE_E_PARSE, "unmatched '{'");
			*p = '\0';
			while (*start == ' ')
				start++;
			r = fn(ps, start, arg);
			if (r)
				return r;
			if (last)
				return 0;
			start = p + 1;
			in_terms = false;
		}
	}
}

static int parse_member(struct parse *ps, char *item, void *arg)
{
	(void)arg;
	if (*item == '{')
		return fail(ps, SONDE_E_PARSE, "groups can't be nested");
	return parse_item(ps, item);
}

static int parse_top(struct parse *ps, char *item, void *arg)
{
	char *close, *mods = NULL;
	size_t first = ps->l->n;
	int r;

	(void)arg;
	if (*item != '{')
		return parse_item(ps, item);
	close = strrchr(item, '}');
	if (!close)
		return fail(ps, SONDE_E_PARSE, "unmatched '{'");
	if (close[1] == ':')
		mods = close + 2;
	else if (close[1])
		return fail(ps, SONDE_E_PARSE, "unexpected '%s' after a group", close + 1);
	*close = '\0';
	r = split_items(ps, item + 1, parse_member, NULL);
	if (r)
		return r;
	if (ps->l->n == first)
		return fail(ps, SONDE_E_PARSE, "empty group");
	for (size_t i = first; i < ps->l->n; i++) {
		ps->l->events[i].leader = (int)first;
		if (mods) {
			r = apply_modifiers(ps, &ps->l->events[i], mods);
			if (r)
				return r;
		}
	}
	ps->l->ngroups++;
	return 0;
}

int sonde_evlist_parse(struct sonde_evlist *l, const char *spec, const struct sonde_roots *roots)
{
	struct parse ps = {.l = l, .roots = roots, .spec = spec};
	size_t before = l->n;
	char *copy = strdup(spec);
	int r;

	if (!copy)
		return -ENOMEM;
	r = split_items(&ps, copy, parse_top, NULL);
	free(copy);
	if (r == -ENOMEM)
		sonde_errmsg_set(&l->err, r, "event '%s': out of memory", spec);
	if (r)
		evlist_truncate(l, before);
	return r;
}
