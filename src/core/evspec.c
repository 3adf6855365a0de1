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
 *
 * perf 6.1 is the reference, attr for attr: every event starts with
 * exclude_guest set (perf's event_attr_init), modifiers follow perf's
 * get_event_modifier() (group modifiers add to the members' own), and
 * tracepoint globs expand in readdir order, systems then events, because
 * that is the order perf opens and prints them in.
 */
#include <sonde/evspec.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fnmatch.h>
#include <linux/hw_breakpoint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sonde/fileio.h>
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

int sonde_evlist_set_user_only(struct sonde_evlist *l, size_t i)
{
	struct sonde_event *e = &l->events[i];
	/* perf adds no ':' when the name has one (modifiers) or a PMU's slashes. */
	const char *sep = strpbrk(e->name, ":/") ? "" : ":";
	char *name;

	if (asprintf(&name, "%s%su", e->name, sep) < 0)
		return -ENOMEM;
	free(e->name);
	e->name = name;
	e->attr.exclude_kernel = 1;
	e->attr.exclude_hv = 1;
	return 0;
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
	/* perf's event_attr_init(): not a guest-side perf, so count the host only. */
	e->attr.exclude_guest = 1;
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

static int fail(struct parse *ps, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct parse *ps, int err, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sonde_errmsg_set(&ps->l->err, err, "event '%s': %s", ps->spec, msg);
}

/*
 * Modifiers, with perf's semantics (get_event_modifier() in perf's
 * parse-events.c): the first of u/k/h excludes every privilege level and
 * each letter then lets one back in; likewise the first G/H for guest and
 * host.  'u' and 'p' also exclude the guest unless G/H was given.  For a
 * group (@add) the group's modifiers start from each member's own state,
 * so {cycles:u,instructions}:k counts cycles in user and kernel.  Letters
 * may not repeat, except p (precise level, at most 3).
 */
#define MODIFIERS "ukhGHpIDe"

struct mods {
	bool eu, ek, eh, eH, eG, eI, gh, pinned, exclusive;
	unsigned int precise;
};

static int parse_modifiers(struct parse *ps, const char *str, const struct sonde_event *from,
			   struct mods *m)
{
	bool exclude;

	for (const char *c = str; *c; c++) {
		if (!strchr(MODIFIERS, *c))
			return fail(ps, SONDE_E_PARSE,
				    "unknown modifier '%c' in ':%s' (valid: u k h G H p I D e)", *c,
				    str);
		if (*c != 'p' && strchr(c + 1, *c))
			return fail(ps, SONDE_E_PARSE, "modifier '%c' repeated in ':%s'", *c, str);
	}
	memset(m, 0, sizeof(*m));
	if (from) {
		m->eu = from->attr.exclude_user;
		m->ek = from->attr.exclude_kernel;
		m->eh = from->attr.exclude_hv;
		m->eH = from->attr.exclude_host;
		m->eG = from->attr.exclude_guest;
		m->eI = from->attr.exclude_idle;
		m->gh = from->flags & SONDE_EVF_GH;
		m->precise = from->attr.precise_ip;
		m->pinned = from->attr.pinned;
		m->exclusive = from->attr.exclusive;
	}
	exclude = m->eu || m->ek || m->eh;
	for (const char *c = str; *c; c++) {
		switch (*c) {
		case 'u':
		case 'k':
		case 'h':
			if (!exclude)
				exclude = m->eu = m->ek = m->eh = true;
			if (*c == 'u') {
				m->eu = false;
				if (!m->gh)
					m->eG = true;
			}
			if (*c == 'k')
				m->ek = false;
			if (*c == 'h')
				m->eh = false;
			break;
		case 'G':
		case 'H':
			if (!m->gh)
				m->gh = m->eG = m->eH = true;
			if (*c == 'G')
				m->eG = false;
			else
				m->eH = false;
			break;
		case 'p':
			m->precise++;
			/* Precise sampling requires exclude_guest. */
			if (!m->gh)
				m->eG = true;
			break;
		case 'I':
			m->eI = true;
			break;
		case 'D':
			m->pinned = true;
			break;
		case 'e':
			m->exclusive = true;
			break;
		}
	}
	if (m->precise > 3)
		return fail(ps, SONDE_E_PARSE,
			    "at most 3 'p' modifiers (precise level 0-3) in ':%s'", str);
	return 0;
}

static void set_modifiers(struct sonde_event *e, const struct mods *m, bool leader)
{
	e->attr.exclude_user = m->eu;
	e->attr.exclude_kernel = m->ek;
	e->attr.exclude_hv = m->eh;
	e->attr.exclude_host = m->eH;
	e->attr.exclude_guest = m->eG;
	e->attr.exclude_idle = m->eI;
	e->attr.precise_ip = m->precise;
	e->flags &= ~(SONDE_EVF_MODS | SONDE_EVF_GH);
	if (m->eu || m->ek || m->eh)
		e->flags |= SONDE_EVF_MODS;
	if (m->gh)
		e->flags |= SONDE_EVF_GH;
	/* Pinning and exclusivity are properties of a group, set on its leader. */
	if (leader) {
		e->attr.pinned = m->pinned;
		e->attr.exclusive = m->exclusive;
	}
}

/* Applies the modifiers written after one event (NULL or "" for none). */
static int apply_modifiers(struct parse *ps, struct sonde_event *e, const char *mods)
{
	struct mods m;
	int r;

	if (!mods || !*mods)
		return 0;
	r = parse_modifiers(ps, mods, NULL, &m);
	if (!r)
		set_modifiers(e, &m, true);
	return r;
}

static bool is_modifier_string(const char *s)
{
	if (!*s)
		return false;
	return strspn(s, MODIFIERS) == strlen(s);
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

/* A name that becomes part of a sysfs or tracefs path: not empty, no '/', no leading '.'. */
static bool safe_name(const char *s)
{
	return *s && *s != '.' && !strchr(s, '/');
}

/* rNNNN: a raw hardware event code, hex digits only (as perf's lexer). */
static bool parse_raw(const char *name, uint64_t *config)
{
	size_t n;

	if (name[0] != 'r')
		return false;
	n = strspn(name + 1, "0123456789abcdefABCDEF");
	if (!n || name[1 + n] || n > 16)
		return false;
	*config = strtoull(name + 1, NULL, 16);
	return true;
}

/* The events that need no tree: named hw/sw events, cache events, raw codes. */
static bool find_generic(const char *name, enum sonde_event_kind *kind, uint32_t *type,
			 uint64_t *config)
{
	const struct sonde_named_event *ne = sonde_named_event_find(name);

	if (ne) {
		*kind = ne->type == PERF_TYPE_HARDWARE ? SONDE_EV_HARDWARE : SONDE_EV_SOFTWARE;
		*type = ne->type;
		*config = ne->config;
		return true;
	}
	if (sonde_cache_event_parse(name, config)) {
		*kind = SONDE_EV_CACHE;
		*type = PERF_TYPE_HW_CACHE;
		return true;
	}
	if (parse_raw(name, config)) {
		*kind = SONDE_EV_RAW;
		*type = PERF_TYPE_RAW;
		return true;
	}
	return false;
}

/*
 * Bare words among a PMU's terms that are not format terms name events of
 * the PMU (sysfs events/NAME holds "event=0x3,umask=0x1"): their
 * definitions take their place, so that later terms refine them, as in
 * cpu/mem-loads,ldlat=30/.
 */
static int expand_pmu_events(struct parse *ps, const char *pmu, const char *terms, char *out,
			     size_t len)
{
	char *copy = strdup(terms), *save = NULL, *tok;
	size_t used = 0;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	out[0] = '\0';
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char def[512];
		int n;

		if (!strchr(tok, '=') && !sonde_pmu_has_term(ps->roots->sysfs, pmu, tok)) {
			char full[600];

			if (!safe_name(tok) || sonde_pmu_event_terms(ps->roots->sysfs, pmu, tok,
								     def, sizeof(def)) < 0) {
				snprintf(full, sizeof(full), "%s/%s/", pmu, tok);
				r = suggest_fail(ps, full, "event");
				break;
			}
			tok = def;
		}
		n = snprintf(out + used, len - used, "%s%s", used ? "," : "", tok);
		if (n < 0 || (size_t)n >= len - used) {
			r = fail(ps, SONDE_E_LIMIT, "terms of %s too long", pmu);
			break;
		}
		used += (size_t)n;
	}
	free(copy);
	return r;
}

/*
 * HEAD/terms/[:]mods : a generic event or raw code with per-event terms
 * (cpu-clock/period=1000/), or a PMU with format terms and named events
 * (armv8_pmuv3_0/l1d_cache_refill/, cpu/event=0x3c,umask=0/u).  The
 * event's name is the whole item, as perf shows it.
 */
static int parse_slashed(struct parse *ps, const char *item, const char *slash, const char *end,
			 const char *mods)
{
	char *head = strndup(item, (size_t)(slash - item));
	char *terms = strndup(slash + 1, (size_t)(end - slash - 1));
	char rest[1024], expanded[2048];
	enum sonde_event_kind kind;
	struct sonde_event *e;
	uint32_t type;
	uint64_t config;
	int r;

	if (!head || !terms) {
		r = -ENOMEM;
		goto out;
	}
	if (find_generic(head, &kind, &type, &config)) {
		e = evlist_append(ps->l, item, kind);
		r = -ENOMEM;
		if (!e)
			goto out;
		e->attr.type = type;
		e->attr.config = config;
		r = apply_generic_terms(ps, e, terms, rest, sizeof(rest));
		if (!r && rest[0])
			r = fail(ps, SONDE_E_PARSE,
				 "'%s' takes only period=, freq= and name= terms, not '%s'", head,
				 rest);
		if (!r)
			r = apply_modifiers(ps, e, mods);
		goto out;
	}
	if (!safe_name(head) || sonde_pmu_type(ps->roots->sysfs, head, &type) < 0) {
		r = suggest_fail(ps, head, "PMU");
		goto out;
	}
	e = evlist_append(ps->l, item, SONDE_EV_PMU);
	r = -ENOMEM;
	if (!e)
		goto out;
	e->attr.type = type;
	r = apply_generic_terms(ps, e, terms, rest, sizeof(rest));
	if (!r)
		r = expand_pmu_events(ps, head, rest, expanded, sizeof(expanded));
	if (!r && expanded[0]) {
		r = sonde_pmu_apply_terms(ps->roots->sysfs, head, expanded, &e->attr, &ps->l->err);
		if (r)
			r = fail(ps, r, "%s", ps->l->err.text);
	}
	if (!r)
		r = apply_modifiers(ps, e, mods);
out:
	free(head);
	free(terms);
	return r;
}

/* mem:ADDR[/LEN][:ACCESS][:MODIFIERS], ACCESS made of r, w and x (default rw). */
static int parse_breakpoint(struct parse *ps, const char *item)
{
	const char *p = item + 4, *mods = NULL;
	char *end;
	unsigned long long addr, len = 0;
	unsigned int type = 0;
	struct sonde_event *e;

	if (!isxdigit((unsigned char)*p))
		return fail(ps, SONDE_E_PARSE,
			    "breakpoint '%s' needs an address (mem:ADDR[/LEN][:rwx])", item);
	errno = 0;
	addr = strtoull(p, &end, 0);
	if (errno || end == p)
		return fail(ps, SONDE_E_PARSE,
			    "breakpoint '%s' needs an address (mem:ADDR[/LEN][:rwx])", item);
	if (*end == '/') {
		p = end + 1;
		errno = 0;
		len = isdigit((unsigned char)*p) ? strtoull(p, &end, 0) : 0;
		if (errno || (len != 1 && len != 2 && len != 4 && len != 8))
			return fail(ps, SONDE_E_PARSE,
				    "breakpoint length in '%s' must be 1, 2, 4 or 8", item);
	}
	/* Access letters and modifier letters don't overlap, so ":u" is a modifier. */
	if (*end == ':' && end[1] && strspn(end + 1, "rwx") == strcspn(end + 1, ":")) {
		for (p = end + 1; *p && *p != ':'; p++)
			type |= *p == 'r'   ? HW_BREAKPOINT_R
				: *p == 'w' ? HW_BREAKPOINT_W
					    : HW_BREAKPOINT_X;
		end = (char *)p;
	}
	if (*end == ':') {
		mods = end + 1;
		if (*mods && !is_modifier_string(mods))
			return fail(
			    ps, SONDE_E_PARSE,
			    "breakpoint '%s': '%s' is neither an access (r, w, x) nor modifiers",
			    item, mods);
	} else if (*end) {
		return fail(ps, SONDE_E_PARSE, "trailing '%s' in breakpoint '%s'", end, item);
	}
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
	return apply_modifiers(ps, e, mods);
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
	int r;

	if (!safe_name(sys) || !safe_name(ev))
		return -ENOENT;
	r = sonde_tracepoint_id(ps->roots->tracefs, sys, ev, &id);
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
	return apply_modifiers(ps, e, mods);
}

/*
 * Folders of @path in readdir order, not sorted: perf expands tracepoint
 * globs in that order (tracefs lists the newest system or event first), and
 * sonde's expansions must match perf's event for event.
 */
static int list_subdirs(const char *path, struct sonde_strlist *out)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (!r && (de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR &&
		    (de->d_type != DT_UNKNOWN || fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
		     !S_ISDIR(st.st_mode)))
			continue;
		r = sonde_strlist_add(out, de->d_name);
	}
	closedir(d);
	return r;
}

/* Expands one system's events matching @ev; events without an id (ftrace's
 * internal formats) can't be opened and are skipped, as perf list does. */
static int expand_events(struct parse *ps, const char *sys, const char *ev, const char *mods)
{
	struct sonde_strlist events;
	char path[PATH_MAX];
	int r = sonde_path(path, sizeof(path), "%s/events/%s", ps->roots->tracefs, sys);

	sonde_strlist_init(&events);
	if (!r)
		r = list_subdirs(path, &events);
	for (size_t j = 0; !r && j < events.n; j++) {
		if (fnmatch(ev, events.v[j], 0))
			continue;
		r = add_tracepoint(ps, sys, events.v[j], mods);
		if (r == -ENOENT)
			r = 0;
	}
	sonde_strlist_fini(&events);
	return r;
}

/* system:event, either part possibly a glob. */
static int parse_tracepoint(struct parse *ps, const char *item, const char *sys, const char *ev,
			    const char *mods)
{
	struct sonde_strlist systems;
	char path[PATH_MAX];
	size_t before = ps->l->n;
	int r;

	if (!*sys || !*ev)
		return fail(ps, SONDE_E_PARSE, "'%s' needs a system and an event (system:event)",
			    item);
	if (mods && *mods && !is_modifier_string(mods))
		return fail(ps, SONDE_E_PARSE,
			    "unknown modifier in ':%s' of '%s' (valid: u k h G H p I D e)", mods,
			    item);
	if (!ps->roots->tracefs)
		return fail(
		    ps, SONDE_E_NO_TRACEFS,
		    "'%s' is a tracepoint but tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)",
		    item);
	if (!has_glob(sys) && !has_glob(ev)) {
		r = add_tracepoint(ps, sys, ev, mods);
		if (r == -ENOENT || r == -ENOTDIR || r == -ENAMETOOLONG)
			return suggest_fail(ps, item, "tracepoint");
		if (r < 0 && r > SONDE_E_FIRST_)
			return fail(ps, r, "can't read the id of tracepoint %s: %s", item,
				    sonde_strerror(r));
		return r;
	}
	sonde_strlist_init(&systems);
	r = sonde_path(path, sizeof(path), "%s/events", ps->roots->tracefs);
	if (!r)
		r = list_subdirs(path, &systems);
	for (size_t i = 0; !r && i < systems.n; i++)
		if (!fnmatch(sys, systems.v[i], 0))
			r = expand_events(ps, systems.v[i], ev, mods);
	sonde_strlist_fini(&systems);
	if (r < 0 && r > SONDE_E_FIRST_)
		return fail(ps, r, "can't expand %s in tracefs: %s", item, sonde_strerror(r));
	if (!r && ps->l->n == before)
		return suggest_fail(ps, item, "tracepoint (no match for the pattern)");
	return r;
}

static int parse_item(struct parse *ps, char *item)
{
	const char *slash = strchr(item, '/');
	char *colon, *mods;
	enum sonde_event_kind kind;
	struct sonde_event *e;
	uint32_t type;
	uint64_t config;
	int r;

	if (!*item)
		return fail(ps, SONDE_E_PARSE, "empty event name");
	if (!strncmp(item, "mem:", 4))
		return parse_breakpoint(ps, item);
	if (slash) {
		const char *end = strrchr(item, '/');

		mods = (char *)end + 1;
		if (end == slash)
			return fail(ps, SONDE_E_PARSE, "'%s' needs a closing '/'", item);
		if (*mods == ':')
			mods++;
		if (*mods && !is_modifier_string(mods))
			return fail(ps, SONDE_E_PARSE, "unexpected '%s' after '%.*s'", mods,
				    (int)(end + 1 - item), item);
		return parse_slashed(ps, item, slash, end, mods);
	}
	colon = strchr(item, ':');
	if (colon)
		*colon = '\0';
	if (find_generic(item, &kind, &type, &config)) {
		if (colon)
			*colon = ':';
		e = evlist_append(ps->l, item, kind);
		if (!e)
			return -ENOMEM;
		e->attr.type = type;
		e->attr.config = config;
		return apply_modifiers(ps, e, colon ? colon + 1 : NULL);
	}
	if (!colon)
		return suggest_fail(ps, item, "event");
	/* system:event[:modifiers]; messages name "system:event". */
	char *sys = strndup(item, (size_t)(colon - item));

	if (!sys)
		return -ENOMEM;
	*colon = ':';
	mods = strchr(colon + 1, ':');
	if (mods)
		*mods = '\0';
	r = parse_tracepoint(ps, item, sys, colon + 1, mods ? mods + 1 : NULL);
	free(sys);
	return r;
}

/*
 * Splits @s at top-level commas: not inside { } nor inside a PMU's /terms/.
 * A breakpoint's mem:ADDR/LEN has a single '/', so slashes count as term
 * delimiters only outside mem: items (@sub is the start of the current item,
 * inside groups too).
 */
static int split_items(struct parse *ps, char *s, int (*fn)(struct parse *, char *, void *),
		       void *arg)
{
	char *start = s, *sub = s;
	int depth = 0;
	bool in_terms = false;

	for (char *p = s;; p++) {
		if (*p == '{' && !in_terms) {
			depth++;
			sub = p + 1;
		} else if (*p == '}' && !in_terms) {
			if (--depth < 0)
				return fail(ps, SONDE_E_PARSE, "unmatched '}'");
		} else if (*p == '/') {
			while (*sub == ' ')
				sub++;
			if (strncmp(sub, "mem:", 4))
				in_terms = !in_terms;
		} else if ((*p == ',' && !in_terms) || !*p) {
			bool last = !*p;
			int r;

			sub = p + 1;
			if (depth && !last)
				continue;
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

/* An item at the top: an event, or a {group}:mods whose modifiers add to each member's own. */
static int parse_top(struct parse *ps, char *item, void *arg)
{
	char *close, *mods = NULL;
	size_t first = ps->l->n;
	struct mods m;
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
	if (mods && *mods && (r = parse_modifiers(ps, mods, NULL, &m)))
		return r;
	*close = '\0';
	r = split_items(ps, item + 1, parse_member, NULL);
	*close = '}';
	if (r)
		return r;
	if (ps->l->n == first)
		return fail(ps, SONDE_E_PARSE, "empty group");
	for (size_t i = first; i < ps->l->n; i++) {
		struct sonde_event *e = &ps->l->events[i];

		e->leader = (int)first;
		if (mods && *mods) {
			r = parse_modifiers(ps, mods, e, &m);
			if (r)
				return r;
			set_modifiers(e, &m, i == first);
		}
	}
	ps->l->ngroups++;
	return 0;
}

int sonde_evlist_parse(struct sonde_evlist *l, const char *spec, const struct sonde_roots *roots)
{
	struct parse ps = {.l = l, .roots = roots, .spec = spec};
	size_t before = l->n;
	int ngroups = l->ngroups;
	char *copy = strdup(spec);
	int r;

	if (!copy)
		return sonde_errmsg_set(&l->err, -ENOMEM, "event '%s': out of memory", spec);
	r = split_items(&ps, copy, parse_top, NULL);
	free(copy);
	if (r == -ENOMEM)
		sonde_errmsg_set(&l->err, r, "event '%s': out of memory", spec);
	if (r) {
		evlist_truncate(l, before);
		l->ngroups = ngroups;
	}
	return r;
}
