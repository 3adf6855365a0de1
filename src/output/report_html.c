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

/* A string for a JSON block inside <script>: "</" must not appear. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void key_str(FILE *f, const char *key, const char *val)
{
	fprintf(f, "\"%s\":", key);
	json_str(f, val ? val : "");
}

static void header(FILE *f, const struct sonde_report *rep, const struct sonde_print_opts *o)
{
	const struct sonde_pd_features *ft = sonde_pd_reader_features(rep->reader);

	fprintf(f, ",\"header\":{");
	key_str(f, "file", o->file);
	fprintf(f, ",\"cmdline\":[");
	for (uint32_t i = 0; i < ft->cmdline_argc; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_str(f, ft->cmdline_argv[i]);
	}
	fputc(']', f);
	fputc(',', f);
	key_str(f, "hostname", ft->hostname);
	fputc(',', f);
	key_str(f, "osrelease", ft->osrelease);
	fputc(',', f);
	key_str(f, "arch", ft->arch);
	fputc(',', f);
	key_str(f, "cpudesc", ft->cpudesc);
	fputc(',', f);
	key_str(f, "perf_version", ft->version);
	fprintf(f, ",\"nr_cpus\":%u}", ft->has_nrcpus ? ft->nr_cpus_online : 0);
}

static void events(FILE *f, const struct sonde_report *rep)
{
	const struct sonde_profile *p = rep->profile;

	fprintf(f, ",\"events\":[");
	for (size_t e = 0; e < rep->nevents; e++) {
		const struct perf_event_attr *a = &rep->events[e]->attr;
		struct sonde_counts t = sonde_profile_total(p, e);

		fprintf(f, "%s{", e ? "," : "");
		key_str(f, "name", rep->event_names[e]);
		fprintf(f,
			",\"type\":%u,\"config\":%" PRIu64 ",\"freq\":%s,\"%s\":%" PRIu64
			",\"tracepoint\":%s,\"samples\":%" PRIu64 ",\"period\":%" PRIu64 "}",
			a->type, (uint64_t)a->config, a->freq ? "true" : "false",
			a->freq ? "sample_freq" : "sample_period", (uint64_t)a->sample_period,
			a->type == PERF_TYPE_TRACEPOINT ? "true" : "false", t.samples, t.period);
	}
	fputc(']', f);
}

/* Dense indexes of the objects the page names (-1: none). */
static int32_t *dso_index(FILE *f, const struct sonde_report *rep)
{
	const struct sonde_timeline *tl = rep->timeline;
	size_t nd = sonde_symtab_nr_dsos(rep->symtab), shown = 0;
	int32_t *ix = malloc((nd + 1) * sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i <= nd; i++)
		ix[i] = -1;
	fprintf(f, ",\"dsos\":[");
	for (size_t i = 0; i < sonde_timeline_nr_funcs(tl); i++) {
		const struct sonde_dso *d = sonde_timeline_func(tl, i)->dso;

		if (!d || ix[sonde_dso_id(d)] >= 0)
			continue;
		ix[sonde_dso_id(d)] = (int32_t)shown;
		fprintf(f, "%s", shown++ ? "," : "");
		json_str(f, sonde_report_dso_name(d));
	}
	fputc(']', f);
	return ix;
}

static void funcs(FILE *f, const struct sonde_report *rep, const int32_t *dix)
{
	const struct sonde_timeline *tl = rep->timeline;
	size_t n = sonde_timeline_nr_funcs(tl);
	char b[64];

	fprintf(f, ",\"funcs\":{\"name\":[");
	for (size_t i = 0; i < n; i++) {
		const struct sonde_tl_func *fn = sonde_timeline_func(tl, i);
		struct sonde_frame fr = {.sym = fn->sym, .addr = fn->addr};

		fprintf(f, "%s", i ? "," : "");
		json_str(f, fn->inlined ? fn->inlined
					: sonde_report_sym_name(NULL, &fr, b, sizeof(b)));
	}
	/* Inlined bodies show in trees and flame graphs, never as rows. */
	fprintf(f, "],\"inlined\":[");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", sonde_timeline_func(tl, i)->inlined != NULL);
	fprintf(f, "],\"dso\":[");
	for (size_t i = 0; i < n; i++) {
		const struct sonde_dso *d = sonde_timeline_func(tl, i)->dso;

		fprintf(f, "%s%d", i ? "," : "", d ? dix[sonde_dso_id(d)] : -1);
	}
	fprintf(f, "],\"kernel\":[");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", sonde_timeline_func(tl, i)->kernel);
	fprintf(f, "]}");
}

static void nodes(FILE *f, const struct sonde_timeline *tl)
{
	size_t n = sonde_timeline_nr_nodes(tl);
	uint32_t parent, func;

	fprintf(f, ",\"nodes\":{\"parent\":[");
	for (size_t i = 0; i < n; i++) {
		sonde_timeline_node(tl, i, &parent, &func);
		fprintf(f, "%s%d", i ? "," : "", i ? (int)parent : -1);
	}
	fprintf(f, "],\"func\":[");
	for (size_t i = 0; i < n; i++) {
		sonde_timeline_node(tl, i, &parent, &func);
		fprintf(f, "%s%d", i ? "," : "", i ? (int)func : -1);
	}
	fprintf(f, "]}");
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

/* The profile's entries (sorted by dso,sym for this view) as rows of functions. */
static int functions(FILE *f, const struct sonde_report *rep, size_t sort_event)
{
	const struct sonde_profile *p = rep->profile;
	const struct sonde_timeline *tl = rep->timeline;
	size_t n = sonde_profile_nr_entries(p), nf = sonde_timeline_nr_funcs(tl), nu = 0, shown = 0;
	size_t nsyms = sonde_symtab_nr_symbols(rep->symtab);
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
	fprintf(f, ",\"functions\":[");
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
		fprintf(f, "%s{\"func\":%u,\"self\":[", shown++ ? "," : "", func);
		for (size_t e = 0; e < rep->nevents; e++) {
			struct sonde_counts c = sonde_profile_entry_self(p, idx[r], e);

			fprintf(f, "%s%" PRIu64 ",%" PRIu64, e ? "," : "", c.samples, c.period);
		}
		fprintf(f, "],\"total\":[");
		for (size_t e = 0; e < rep->nevents; e++) {
			struct sonde_counts c = sonde_profile_entry_total(p, idx[r], e);

			fprintf(f, "%s%" PRIu64 ",%" PRIu64, e ? "," : "", c.samples, c.period);
		}
		fprintf(f, "]}");
	}
	fputc(']', f);
out:
	free(by_sym);
	free(u);
	free(idx);
	return ret;
}

static int timeline(FILE *f, const struct sonde_report *rep)
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
	fprintf(f,
		",\"timeline\":{\"first_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64
		",\"nbins\":%zu,\"threads\":[",
		first, span, nbins);
	for (size_t i = 0; i < sonde_timeline_nr_threads(tl); i++) {
		const struct sonde_tl_thread *t = sonde_timeline_thread(tl, i);

		fprintf(f, "%s[%u,%u,", i ? "," : "", t->pid, t->tid);
		json_str(f, sonde_machine_str(rep->machine, t->comm));
		fputc(']', f);
	}
	/* bin, leaf, thread, cpu (-1: none), event, samples, period */
	fprintf(f, "],\"cells\":[");
	for (size_t i = 0; i < ncells; i++) {
		const struct sonde_tl_cell *c = &cells[i];

		fprintf(f, "%s%u,%u,%u,%d,%u,%" PRIu64 ",%" PRIu64, i ? "," : "", c->bin, c->leaf,
			c->thread, c->cpu == UINT32_MAX ? -1 : (int)c->cpu, c->event, c->samples,
			c->period);
	}
	free(cells);
	/* Tracepoint samples as marks: ns from first, cpu, thread, event. */
	fprintf(f, "],\"marks\":[");
	for (size_t e = 0; e < rep->nevents; e++)
		tp |= rep->events[e]->attr.type == PERF_TYPE_TRACEPOINT;
	for (size_t i = 0; tp && i < sonde_timeline_nr_samples(tl); i++) {
		uint64_t t;
		uint32_t cpu, thread, ev;

		sonde_timeline_sample(tl, i, &t, &cpu, &thread, &ev);
		if (rep->events[ev]->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		if (nmarks == MAX_MARKS) {
			dropped++;
			continue;
		}
		fprintf(f, "%s%" PRIu64 ",%d,%u,%u", nmarks++ ? "," : "", t - first,
			cpu == UINT32_MAX ? -1 : (int)cpu, thread, ev);
	}
	fprintf(f, "],\"marks_dropped\":%zu}", dropped);
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

static void samples_array(FILE *f, const struct sonde_counts *c, size_t ne)
{
	fputc('[', f);
	for (size_t e = 0; e < ne; e++)
		fprintf(f, "%s%" PRIu64, e ? "," : "", c ? c[e].samples : 0);
	fputc(']', f);
}

/*
 * One function from an annotation: every instruction with its text and
 * counts, the lines of its main source file with their counts, and that
 * file's text around them.
 */
static void annotated_func(FILE *f, const struct sonde_annotation *a, uint32_t func, bool first)
{
	const struct sonde_annotate_source *src = a->nsources ? &a->sources[0] : NULL;
	size_t ne = a->nevents, shown = 0;
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
	fprintf(f, "%s{\"func\":%u,\"insns\":[", first ? "" : ",", func);
	for (size_t i = 0; keep && i < a->ninsns; i++) {
		const struct sonde_annotate_insn *in = &a->insns[i];
		bool main_file = in->line != SIZE_MAX && a->lines[in->line].source == 0;

		if (!keep[i])
			continue;
		fprintf(f, "%s[\"0x%" PRIx64 "\",%u,", shown++ ? "," : "", in->addr,
			main_file ? in->src.line : 0);
		samples_array(f, in->counts, ne);
		fputc(']', f);
	}
	fprintf(f, "],\"asm\":{");
	shown = 0;
	for (size_t i = 0; keep && i < a->ninsns; i++) {
		if (!keep[i] || !a->insns[i].text || !a->insns[i].text[0])
			continue;
		fprintf(f, "%s\"0x%" PRIx64 "\":", shown++ ? "," : "", a->insns[i].addr);
		json_str(f, a->insns[i].text);
	}
	fprintf(f, "},\"file\":");
	json_str(f, src ? (src->path ? src->path : src->file) : "");
	fprintf(f, ",\"lines\":[");
	shown = 0;
	for (size_t l = 0; l < a->nlines; l++) {
		const struct sonde_annotate_line *ln = &a->lines[l];

		if (ln->source != 0 || !ln->src.line)
			continue;
		fprintf(f, "%s[%u,", shown++ ? "," : "", ln->src.line);
		samples_array(f, ln->counts, ne);
		fputc(']', f);
		lo = ln->src.line < lo ? ln->src.line : lo;
		hi = ln->src.line > hi ? ln->src.line : hi;
	}
	if (lo == UINT32_MAX)
		lo = hi = 0;
	lo = lo > 3 ? lo - 3 : 1;
	hi = hi + 3 < lo + CODE_LINES ? hi + 3 : lo + CODE_LINES;
	fprintf(f, "],\"first_line\":%u,\"text\":[", lo);
	shown = 0;
	for (uint32_t l = lo; src && src->nlines && l <= hi; l++) {
		size_t len;
		const char *t = sonde_annotate_source_line(src, l, &len);
		char *line;

		if (!t || !(line = strndup(t, len)))
			break;
		fprintf(f, "%s", shown++ ? "," : "");
		json_str(f, line);
		free(line);
	}
	fprintf(f, "]}");
	free(keep);
}

static int code(FILE *f, const struct sonde_report *rep, const struct sonde_print_opts *o)
{
	const struct sonde_symbol *syms[CODE_FUNCS];
	size_t n = sonde_annotate_hottest(o->annotate, o->sort_event, syms, CODE_FUNCS), shown = 0;
	struct sonde_annotate_build_opts none = {0};
	int ret = 0;

	if (n > CODE_FUNCS)
		n = CODE_FUNCS;
	fprintf(f, ",\"code\":{\"provider\":\"annotate\",\"functions\":[");
	for (size_t i = 0; i < n && !ret; i++) {
		uint32_t func = func_of_sym(rep->timeline, syms[i]);
		struct sonde_annotation *a;

		if (func == UINT32_MAX)
			continue;
		ret = sonde_annotation_build(&a, o->annotate, syms[i],
					     o->annotate_build ? o->annotate_build : &none);
		if (ret)
			break;
		annotated_func(f, a, func, shown++ == 0);
		sonde_annotation_free(a);
	}
	fprintf(f, "]}");
	return ret;
}

int sonde_report_print_html(FILE *f, const struct sonde_report *rep,
			    const struct sonde_print_opts *o)
{
	int32_t *dix;
	int ret;

	if (!rep->timeline || !o->annotate)
		return -EINVAL;
	fwrite(sonde_html_head, 1, sonde_html_head_len, f);
	fprintf(f, "<script type=\"application/json\" id=\"sonde-data\">{\"version\":1");
	fprintf(f, ",\"sort_event\":%zu,\"group\":%s", o->sort_event, o->group ? "true" : "false");
	header(f, rep, o);
	events(f, rep);
	fprintf(f,
		",\"samples\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"lost_samples\":%" PRIu64
		",\"throttled\":%" PRIu64 ",\"filtered_out\":%" PRIu64,
		sonde_timeline_nr_samples(rep->timeline), rep->lost, rep->lost_samples,
		rep->throttled, rep->filtered_out);
	if (!(dix = dso_index(f, rep)))
		return -ENOMEM;
	funcs(f, rep, dix);
	free(dix);
	nodes(f, rep->timeline);
	if ((ret = functions(f, rep, o->sort_event)) || (ret = timeline(f, rep)) ||
	    (ret = code(f, rep, o)))
		return ret;
	fprintf(f, "}</script>\n");
	fwrite(sonde_html_tail, 1, sonde_html_tail_len, f);
	return ferror(f) ? -EIO : 0;
}
