// SPDX-License-Identifier: MIT
/*
 * The HTML report: the page embedded from web/ at build time (see
 * web/embed.py and the generated report_html_page.c), with the report
 * model written into it as one JSON block:
 *
 *   header, events    what was captured (the capture's header features);
 *                     group: events side by side (--group), else the page
 *                     shows one event at a time, as perf's sections
 *   funcs, dsos       the functions of every stack, columnar
 *   nodes             the global call-path trie (parent, func), root 0
 *   functions         the profile's entries (the text report's numbers),
 *                     self and total per event, for the whole capture
 *   timeline          samples folded into time bins by (bin, leaf node,
 *                     thread, cpu, event) plus tracepoint marks: the page
 *                     rebuilds any time range's trie and totals from these
 *   code              per-line and per-instruction heat of the hottest
 *                     functions from sonde annotate's model (disassembly,
 *                     lines, sources): a block of its own, with a
 *                     "provider" field naming who filled it
 *
 * Everything is aggregated here, so the file's size follows the number
 * of distinct stacks and bins, not the number of samples.  The page reads
 * numbers from flat arrays (columnar or strided) because they parse and
 * iterate fastest in a browser.
 */
#include <sonde/json.h>
#include <sonde/report_print.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* From the generated report_html_page.c: the page, split where the data goes. */
extern const unsigned char sonde_html_head[];
extern const size_t sonde_html_head_len;
extern const unsigned char sonde_html_tail[];
extern const size_t sonde_html_tail_len;

#define MAX_BINS 1000
#define MAX_CELLS 400000 /* fewer bins beyond this many cells */
#define MAX_MARKS 20000	 /* tracepoint marks kept (by time, the first ones) */
#define CODE_FUNCS 12	 /* functions in the Code view */
#define CODE_LINES 400	 /* source lines shown per function, at most */
#define CODE_INSNS 300	 /* instructions shown whole up to this size, */
#define CODE_CONTEXT 8	 /* else sampled ones with this many either side */

static void header(struct sonde_json *j, const struct sonde_report *rep,
		   const struct sonde_print_opts *o)
{
	const struct sonde_pd_features *ft = sonde_pd_reader_features(rep->ses->reader);

	sonde_json_key(j, "header");
	sonde_json_obj_begin(j);
	sonde_json_kstr(j, "file", o->file ?: "");
	sonde_json_key(j, "cmdline");
	sonde_json_arr_begin(j);
	for (uint32_t i = 0; i < ft->cmdline_argc; i++)
		sonde_json_str(j, ft->cmdline_argv[i] ?: "");
	sonde_json_arr_end(j);
	sonde_json_kstr(j, "hostname", ft->hostname ?: "");
	sonde_json_kstr(j, "osrelease", ft->osrelease ?: "");
	sonde_json_kstr(j, "arch", ft->arch ?: "");
	sonde_json_kstr(j, "cpudesc", ft->cpudesc ?: "");
	sonde_json_kstr(j, "perf_version", ft->version ?: "");
	sonde_json_ku64(j, "nr_cpus", ft->has_nrcpus ? ft->nr_cpus_online : 0);
	sonde_json_obj_end(j);
}

static void events(struct sonde_json *j, const struct sonde_report *rep)
{
	const struct sonde_profile *p = rep->profile;

	sonde_json_key(j, "events");
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < rep->ses->nevents; e++) {
		const struct perf_event_attr *a = &rep->ses->events[e]->attr;
		struct sonde_counts t = sonde_profile_total(p, e);

		sonde_json_obj_begin(j);
		sonde_json_kstr(j, "name", rep->ses->event_names[e] ?: "");
		sonde_json_ku64(j, "type", a->type);
		sonde_json_ku64(j, "config", a->config);
		sonde_json_kbool(j, "freq", a->freq);
		sonde_json_ku64(j, a->freq ? "sample_freq" : "sample_period", a->sample_period);
		sonde_json_kbool(j, "tracepoint", a->type == PERF_TYPE_TRACEPOINT);
		sonde_json_ku64(j, "samples", t.samples);
		sonde_json_ku64(j, "period", t.period);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
}

/* Dense indexes of the objects the page names (-1: none). */
static int32_t *dso_index(struct sonde_json *j, const struct sonde_report *rep)
{
	const struct sonde_timeline *tl = rep->timeline;
	size_t nd = sonde_symtab_nr_dsos(rep->ses->symtab), shown = 0;
	int32_t *ix = malloc((nd + 1) * sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i <= nd; i++)
		ix[i] = -1;
	sonde_json_key(j, "dsos");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < sonde_timeline_nr_funcs(tl); i++) {
		const struct sonde_dso *d = sonde_timeline_func(tl, i)->dso;

		if (!d || ix[sonde_dso_id(d)] >= 0)
			continue;
		ix[sonde_dso_id(d)] = (int32_t)shown++;
		sonde_json_str(j, sonde_report_dso_name(d));
	}
	sonde_json_arr_end(j);
	return ix;
}

static void funcs(struct sonde_json *j, const struct sonde_report *rep, const int32_t *dix)
{
	const struct sonde_timeline *tl = rep->timeline;
	size_t n = sonde_timeline_nr_funcs(tl);
	char b[64];

	sonde_json_key(j, "funcs");
	sonde_json_obj_begin(j);
	sonde_json_key(j, "name");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct sonde_tl_func *fn = sonde_timeline_func(tl, i);
		struct sonde_frame fr = {.sym = fn->sym, .addr = fn->addr};

		sonde_json_str(j, fn->inlined ? fn->inlined
					      : sonde_report_sym_name(NULL, &fr, b, sizeof(b)));
	}
	sonde_json_arr_end(j);
	/* Inlined bodies show in trees and flame graphs, never as rows. */
	sonde_json_key(j, "inlined");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		sonde_json_u64(j, sonde_timeline_func(tl, i)->inlined != NULL);
	sonde_json_arr_end(j);
	sonde_json_key(j, "dso");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct sonde_dso *d = sonde_timeline_func(tl, i)->dso;

		sonde_json_i64(j, d ? dix[sonde_dso_id(d)] : -1);
	}
	sonde_json_arr_end(j);
	sonde_json_key(j, "kernel");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		sonde_json_u64(j, sonde_timeline_func(tl, i)->kernel);
	sonde_json_arr_end(j);
	sonde_json_obj_end(j);
}

static void nodes(struct sonde_json *j, const struct sonde_timeline *tl)
{
	size_t n = sonde_timeline_nr_nodes(tl);
	uint32_t parent, func;

	sonde_json_key(j, "nodes");
	sonde_json_obj_begin(j);
	sonde_json_key(j, "parent");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		sonde_timeline_node(tl, i, &parent, &func);
		sonde_json_i64(j, i ? (int)parent : -1);
	}
	sonde_json_arr_end(j);
	sonde_json_key(j, "func");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		sonde_timeline_node(tl, i, &parent, &func);
		sonde_json_i64(j, i ? (int)func : -1);
	}
	sonde_json_arr_end(j);
	sonde_json_obj_end(j);
}

/* Unresolved functions sorted by (dso, addr), to find a profile entry's function. */
struct unres {
	const struct sonde_dso *dso;
	uint64_t addr;
	uint32_t func;
};

static int unres_cmp(const void *a, const void *b)
{
	const struct unres *x = a, *y = b;

	if (x->dso != y->dso)
		return (uintptr_t)x->dso < (uintptr_t)y->dso ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* An entry's counts per event, flat: samples, period, samples, period... */
static void counts_flat(struct sonde_json *j, const struct sonde_profile *p,
			struct sonde_counts (*get)(const struct sonde_profile *, size_t, size_t),
			size_t i, size_t nev)
{
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < nev; e++) {
		struct sonde_counts c = get(p, i, e);

		sonde_json_u64(j, c.samples);
		sonde_json_u64(j, c.period);
	}
	sonde_json_arr_end(j);
}

/* The profile's entries (sorted by dso,sym for this view) as rows of functions. */
static int functions(struct sonde_json *j, const struct sonde_report *rep, size_t sort_event)
{
	const struct sonde_profile *p = rep->profile;
	const struct sonde_timeline *tl = rep->timeline;
	size_t n = sonde_profile_nr_entries(p), nf = sonde_timeline_nr_funcs(tl), nu = 0;
	size_t nsyms = sonde_symtab_nr_symbols(rep->ses->symtab);
	uint32_t *by_sym = malloc((nsyms + 1) * sizeof(*by_sym));
	struct unres *u = malloc((nf + 1) * sizeof(*u));
	size_t *idx = malloc((n + 1) * sizeof(*idx));
	int ret = 0;

	if (!by_sym || !u || !idx) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nsyms; i++)
		by_sym[i] = UINT32_MAX;
	for (size_t i = 0; i < nf; i++) {
		const struct sonde_tl_func *fn = sonde_timeline_func(tl, i);

		if (fn->sym && !fn->inlined)
			by_sym[fn->sym->id] = (uint32_t)i;
		else if (!fn->sym)
			u[nu++] = (struct unres){fn->dso, fn->addr, (uint32_t)i};
	}
	qsort(u, nu, sizeof(*u), unres_cmp);
	sonde_profile_sort(p, sort_event, true, idx);
	sonde_json_key(j, "functions");
	sonde_json_arr_begin(j);
	for (size_t r = 0; r < n; r++) {
		const struct sonde_entry_key *k = sonde_profile_entry_key(p, idx[r]);
		uint32_t func = UINT32_MAX;

		if (k->sym) {
			func = k->sym->id < nsyms ? by_sym[k->sym->id] : UINT32_MAX;
		} else {
			struct unres key = {k->dso, k->addr, 0}, *hit;

			hit = bsearch(&key, u, nu, sizeof(*u), unres_cmp);
			func = hit ? hit->func : UINT32_MAX;
		}
		if (func == UINT32_MAX)
			continue;
		sonde_json_obj_begin(j);
		sonde_json_ku64(j, "func", func);
		sonde_json_key(j, "self");
		counts_flat(j, p, sonde_profile_entry_self, idx[r], rep->ses->nevents);
		sonde_json_key(j, "total");
		counts_flat(j, p, sonde_profile_entry_total, idx[r], rep->ses->nevents);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
out:
	free(by_sym);
	free(u);
	free(idx);
	return ret;
}

static int timeline(struct sonde_json *j, const struct sonde_report *rep)
{
	const struct sonde_timeline *tl = rep->timeline;
	size_t nbins = MAX_BINS, ncells = 0, nmarks = 0, dropped = 0;
	struct sonde_tl_cell *cells = NULL;
	uint64_t first, last, span;
	bool tp = false;
	int ret;

	sonde_timeline_span(tl, &first, &last);
	span = last - first + 1;
	if (span < nbins)
		nbins = (size_t)span;
	for (;;) {
		if ((ret = sonde_timeline_bins(tl, nbins, &cells, &ncells)))
			return ret;
		if (ncells <= MAX_CELLS || nbins <= 50)
			break;
		free(cells);
		nbins /= 2;
	}
	sonde_json_key(j, "timeline");
	sonde_json_obj_begin(j);
	sonde_json_ku64(j, "first_ns", first);
	sonde_json_ku64(j, "span_ns", span);
	sonde_json_ku64(j, "nbins", nbins);
	sonde_json_key(j, "threads");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < sonde_timeline_nr_threads(tl); i++) {
		const struct sonde_tl_thread *t = sonde_timeline_thread(tl, i);

		sonde_json_arr_begin(j);
		sonde_json_u64(j, t->pid);
		sonde_json_u64(j, t->tid);
		sonde_json_str(j, sonde_machine_str(rep->ses->machine, t->comm));
		sonde_json_arr_end(j);
	}
	sonde_json_arr_end(j);
	/* bin, leaf, thread, cpu (-1: none), event, samples, period */
	sonde_json_key(j, "cells");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < ncells; i++) {
		const struct sonde_tl_cell *c = &cells[i];

		sonde_json_u64(j, c->bin);
		sonde_json_u64(j, c->leaf);
		sonde_json_u64(j, c->thread);
		sonde_json_i64(j, c->cpu == UINT32_MAX ? -1 : (int)c->cpu);
		sonde_json_u64(j, c->event);
		sonde_json_u64(j, c->samples);
		sonde_json_u64(j, c->period);
	}
	sonde_json_arr_end(j);
	free(cells);
	/* Tracepoint samples as marks: ns from first, cpu, thread, event. */
	sonde_json_key(j, "marks");
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < rep->ses->nevents; e++)
		tp |= rep->ses->events[e]->attr.type == PERF_TYPE_TRACEPOINT;
	for (size_t i = 0; tp && i < sonde_timeline_nr_samples(tl); i++) {
		uint64_t t;
		uint32_t cpu, thread, ev;

		sonde_timeline_sample(tl, i, &t, &cpu, &thread, &ev);
		if (rep->ses->events[ev]->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		if (nmarks == MAX_MARKS) {
			dropped++;
			continue;
		}
		nmarks++;
		sonde_json_u64(j, t - first);
		sonde_json_i64(j, cpu == UINT32_MAX ? -1 : (int)cpu);
		sonde_json_u64(j, thread);
		sonde_json_u64(j, ev);
	}
	sonde_json_arr_end(j);
	sonde_json_ku64(j, "marks_dropped", dropped);
	sonde_json_obj_end(j);
	return 0;
}

/* ---- code: sonde annotate's model --------------------------------------- */

/* The trie function of @sym (not an inlined body), or UINT32_MAX. */
static uint32_t func_of_sym(const struct sonde_timeline *tl, const struct sonde_symbol *sym)
{
	for (size_t i = 0; i < sonde_timeline_nr_funcs(tl); i++) {
		const struct sonde_tl_func *fn = sonde_timeline_func(tl, i);

		if (fn->sym == sym && !fn->inlined)
			return (uint32_t)i;
	}
	return UINT32_MAX;
}

static void samples_array(struct sonde_json *j, const struct sonde_counts *c, size_t ne)
{
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < ne; e++)
		sonde_json_u64(j, c ? c[e].samples : 0);
	sonde_json_arr_end(j);
}

/*
 * One function from an annotation: every instruction with its text and
 * counts, the lines of its main source file with their counts, and that
 * file's text around them.
 */
static void annotated_func(struct sonde_json *j, const struct sonde_annotation *a, uint32_t func)
{
	const struct sonde_annotate_source *src = a->nsources ? &a->sources[0] : NULL;
	size_t ne = a->nevents;
	uint32_t lo = UINT32_MAX, hi = 0;

	bool *keep = calloc(a->ninsns + 1, sizeof(*keep));

	/* Big functions: only the sampled instructions and their neighbours. */
	for (size_t i = 0; keep && i < a->ninsns; i++) {
		bool hit = a->ninsns <= CODE_INSNS;

		for (size_t e = 0; !hit && e < ne; e++)
			hit = a->insns[i].counts && a->insns[i].counts[e].samples;
		for (size_t j = i > CODE_CONTEXT ? i - CODE_CONTEXT : 0;
		     hit && j < a->ninsns && j <= i + CODE_CONTEXT; j++)
			keep[j] = true;
	}
	sonde_json_obj_begin(j);
	sonde_json_ku64(j, "func", func);
	sonde_json_key(j, "insns");
	sonde_json_arr_begin(j);
	for (size_t i = 0; keep && i < a->ninsns; i++) {
		const struct sonde_annotate_insn *in = &a->insns[i];
		bool main_file = in->line != SIZE_MAX && a->lines[in->line].source == 0;

		if (!keep[i])
			continue;
		sonde_json_arr_begin(j);
		sonde_json_hex(j, in->addr);
		sonde_json_u64(j, main_file ? in->src.line : 0);
		samples_array(j, in->counts, ne);
		sonde_json_arr_end(j);
	}
	sonde_json_arr_end(j);
	sonde_json_key(j, "asm");
	sonde_json_obj_begin(j);
	for (size_t i = 0; keep && i < a->ninsns; i++) {
		char addr[24];

		if (!keep[i] || !a->insns[i].text || !a->insns[i].text[0])
			continue;
		snprintf(addr, sizeof(addr), "0x%" PRIx64, a->insns[i].addr);
		sonde_json_kstr(j, addr, a->insns[i].text);
	}
	sonde_json_obj_end(j);
	sonde_json_kstr(j, "file", src ? (src->path ? src->path : src->file) ?: "" : "");
	sonde_json_key(j, "lines");
	sonde_json_arr_begin(j);
	for (size_t l = 0; l < a->nlines; l++) {
		const struct sonde_annotate_line *ln = &a->lines[l];

		if (ln->source != 0 || !ln->src.line)
			continue;
		sonde_json_arr_begin(j);
		sonde_json_u64(j, ln->src.line);
		samples_array(j, ln->counts, ne);
		sonde_json_arr_end(j);
		lo = ln->src.line < lo ? ln->src.line : lo;
		hi = ln->src.line > hi ? ln->src.line : hi;
	}
	if (lo == UINT32_MAX)
		lo = hi = 0;
	lo = lo > 3 ? lo - 3 : 1;
	hi = hi + 3 < lo + CODE_LINES ? hi + 3 : lo + CODE_LINES;
	sonde_json_arr_end(j);
	sonde_json_ku64(j, "first_line", lo);
	sonde_json_key(j, "text");
	sonde_json_arr_begin(j);
	for (uint32_t l = lo; src && src->nlines && l <= hi; l++) {
		size_t len;
		const char *t = sonde_annotate_source_line(src, l, &len);

		if (!t)
			break;
		/* The text up to a NUL, as the page always had it. */
		sonde_json_strn(j, t, strnlen(t, len));
	}
	sonde_json_arr_end(j);
	sonde_json_obj_end(j);
	free(keep);
}

static int code(struct sonde_json *j, const struct sonde_report *rep,
		const struct sonde_print_opts *o)
{
	const struct sonde_symbol *syms[CODE_FUNCS];
	size_t n = sonde_annotate_hottest(o->annotate, o->sort_event, syms, CODE_FUNCS);
	struct sonde_annotate_build_opts none = {0};
	int ret = 0;

	if (n > CODE_FUNCS)
		n = CODE_FUNCS;
	sonde_json_key(j, "code");
	sonde_json_obj_begin(j);
	sonde_json_kstr(j, "provider", "annotate");
	sonde_json_key(j, "functions");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n && !ret; i++) {
		uint32_t func = func_of_sym(rep->timeline, syms[i]);
		struct sonde_annotation *a;

		if (func == UINT32_MAX)
			continue;
		ret = sonde_annotation_build(&a, o->annotate, syms[i],
					     o->annotate_build ? o->annotate_build : &none);
		if (ret)
			break;
		annotated_func(j, a, func);
		sonde_annotation_free(a);
	}
	sonde_json_arr_end(j);
	sonde_json_obj_end(j);
	return ret;
}

int sonde_report_print_html(FILE *f, const struct sonde_report *rep,
			    const struct sonde_print_opts *o)
{
	static const char open[] = "<script type=\"application/json\" id=\"sonde-data\">";
	static const char close[] = "</script>\n";
	struct sonde_json js, *j = &js;
	int32_t *dix;
	int ret;

	if (!rep->timeline || !o->annotate)
		return -EINVAL;
	/* "</" must not appear inside the <script> block: HTML escaping. */
	sonde_json_init_file(j, f, SONDE_JSON_HTML);
	sonde_json_raw(j, sonde_html_head, sonde_html_head_len);
	sonde_json_raw(j, open, sizeof(open) - 1);
	sonde_json_obj_begin(j);
	sonde_json_ku64(j, "version", 1);
	sonde_json_ku64(j, "sort_event", o->sort_event);
	sonde_json_kbool(j, "group", o->group);
	header(j, rep, o);
	events(j, rep);
	sonde_json_ku64(j, "samples", sonde_timeline_nr_samples(rep->timeline));
	sonde_json_ku64(j, "lost", rep->ses->lost);
	sonde_json_ku64(j, "lost_samples", rep->ses->lost_samples);
	sonde_json_ku64(j, "throttled", rep->ses->throttled);
	sonde_json_ku64(j, "filtered_out", rep->ses->filtered_out);
	if (!(dix = dso_index(j, rep)))
		return -ENOMEM;
	funcs(j, rep, dix);
	free(dix);
	nodes(j, rep->timeline);
	if ((ret = functions(j, rep, o->sort_event)) || (ret = timeline(j, rep)) ||
	    (ret = code(j, rep, o)))
		return ret;
	sonde_json_obj_end(j);
	sonde_json_raw(j, close, sizeof(close) - 1);
	sonde_json_raw(j, sonde_html_tail, sonde_html_tail_len);
	return sonde_json_error(j) ? sonde_json_error(j) : ferror(f) ? -EIO : 0;
}
