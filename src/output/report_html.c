// SPDX-License-Identifier: MIT
/*
 * The HTML report: the page embedded from web/ at build time (see
 * web/embed.py and the generated report_html_page.c), with the report
 * model written into it as one JSON block:
 *
 *   header, events    what was captured (the capture's header features)
 *   funcs, dsos       the functions of every stack, columnar
 *   nodes             the global call-path trie (parent, func), root 0
 *   functions         the profile's entries (the text report's numbers),
 *                     self and total per event, for the whole capture
 *   timeline          samples folded into time bins by (bin, leaf node,
 *                     thread, cpu, event) plus tracepoint marks: the page
 *                     rebuilds any time range's trie and totals from these
 *   code              per-line and per-instruction heat of the hottest
 *                     functions: a separate block with its own "provider"
 *                     so `sonde annotate`'s library can fill it later
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

/* ---- code: per-line heat from sonde_dso_srcline ------------------------- */

struct hot {
	uint32_t func;
	uint64_t samples; /* of the sort event, at leaf addresses of the function */
};

static int hot_cmp(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	return x->samples != y->samples ? (x->samples > y->samples ? -1 : 1)
					: (x->func > y->func) - (x->func < y->func);
}

struct line_heat {
	uint32_t line;
	uint64_t *samples; /* [nevents] */
};

/*
 * Opens a source file named by a line table.  A relative name is relative
 * to the compilation directory, which the symbol layer does not hand out:
 * try it from the directories holding the object, walking up (a build tree
 * keeps its objects below the directory it compiled in).
 */
static FILE *open_source(const char *path, const char *object)
{
	char dir[4096], buf[8192];
	FILE *src;

	if (!path || !*path)
		return NULL;
	if (path[0] == '/' || !object || object[0] != '/')
		return fopen(path, "r");
	snprintf(dir, sizeof(dir), "%s", object);
	for (int up = 0; up < 6; up++) {
		char *slash = strrchr(dir, '/');

		if (!slash || slash == dir)
			break;
		*slash = 0;
		snprintf(buf, sizeof(buf), "%s/%s", dir, path);
		if ((src = fopen(buf, "r")))
			return src;
	}
	return NULL;
}

/* Source lines [from, to] of @path as a JSON array of strings; [] when unreadable. */
static void source_text(FILE *f, const char *path, const char *object, uint32_t from, uint32_t to)
{
	FILE *src = open_source(path, object);
	char *line = NULL;
	size_t cap = 0, shown = 0;
	uint32_t no = 0;

	fputc('[', f);
	while (src && getline(&line, &cap, src) > 0 && ++no <= to) {
		if (no < from)
			continue;
		line[strcspn(line, "\n")] = 0;
		fprintf(f, "%s", shown++ ? "," : "");
		json_str(f, line);
	}
	fputc(']', f);
	free(line);
	if (src)
		fclose(src);
}

/*
 * One function of the Code view: its leaf addresses with their line, and
 * the lines of the file most of its samples fall in, with the text.
 */
static void code_func(FILE *f, const struct sonde_report *rep, uint32_t func, bool first)
{
	const struct sonde_timeline *tl = rep->timeline;
	const struct sonde_tl_func *fn = sonde_timeline_func(tl, func);
	size_t na = sonde_timeline_nr_addrs(tl), ne = rep->nevents, nl = 0, shown = 0;
	struct line_heat *lines = NULL;
	const char *file = NULL;
	struct sonde_srcline decl = {0};
	uint32_t lo = UINT32_MAX, hi = 0;

	/* The declaration's file and line: where the function starts. */
	if (fn->sym && fn->dso && sonde_dso_srcline(fn->dso, fn->sym->start, &decl) == 0)
		file = decl.file;
	fprintf(f, "%s{\"func\":%u,\"insns\":[", first ? "" : ",", func);
	for (size_t i = 0; i < na; i++) {
		struct sonde_tl_addr a = sonde_timeline_addr(tl, i);
		struct sonde_srcline sl = {0};

		if (a.func != func)
			continue;
		if (fn->dso && sonde_dso_srcline(fn->dso, a.addr, &sl) == 0 && !file)
			file = sl.file;
		fprintf(f, "%s[\"0x%" PRIx64 "\",%u,[", shown++ ? "," : "", a.addr,
			sl.file && sl.file == file ? sl.line : 0);
		for (size_t e = 0; e < ne; e++)
			fprintf(f, "%s%" PRIu64, e ? "," : "", a.samples[e]);
		fprintf(f, "]]");
		if (!sl.file || sl.file != file || !sl.line)
			continue;
		size_t l;
		for (l = 0; l < nl && lines[l].line != sl.line; l++)
			;
		if (l == nl) {
			struct line_heat *v = realloc(lines, (nl + 1) * sizeof(*v));

			if (!v || !(v[nl].samples = calloc(ne, sizeof(uint64_t)))) {
				lines = v ? v : lines;
				break;
			}
			lines = v;
			lines[nl++].line = sl.line;
		}
		for (size_t e = 0; e < ne; e++)
			lines[l].samples[e] += a.samples[e];
		lo = sl.line < lo ? sl.line : lo;
		hi = sl.line > hi ? sl.line : hi;
	}
	fprintf(f, "],\"file\":");
	json_str(f, file ? file : "");
	fprintf(f, ",\"lines\":[");
	for (size_t l = 0; l < nl; l++) {
		fprintf(f, "%s[%u,[", l ? "," : "", lines[l].line);
		for (size_t e = 0; e < ne; e++)
			fprintf(f, "%s%" PRIu64, e ? "," : "", lines[l].samples[e]);
		fprintf(f, "]]");
		free(lines[l].samples);
	}
	free(lines);
	if (decl.file == file && decl.line && decl.line < lo)
		lo = decl.line;
	if (lo == UINT32_MAX)
		lo = hi = 0;
	lo = lo > 3 ? lo - 3 : 1;
	hi = hi + 3 < lo + CODE_LINES ? hi + 3 : lo + CODE_LINES;
	fprintf(f, "],\"first_line\":%u,\"text\":", lo);
	if (file && nl)
		source_text(f, file, sonde_dso_long_name(fn->dso), lo, hi);
	else
		fprintf(f, "[]");
	/* Filled by the annotate library: disassembly per instruction. */
	fprintf(f, ",\"asm\":null}");
}

static int code(FILE *f, const struct sonde_report *rep, size_t sort_event)
{
	const struct sonde_timeline *tl = rep->timeline;
	size_t nf = sonde_timeline_nr_funcs(tl), na = sonde_timeline_nr_addrs(tl), nh = 0;
	struct hot *h = calloc(nf + 1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++)
		h[i].func = (uint32_t)i;
	for (size_t i = 0; i < na; i++) {
		struct sonde_tl_addr a = sonde_timeline_addr(tl, i);

		h[a.func].samples += a.samples[sort_event];
	}
	qsort(h, nf, sizeof(*h), hot_cmp);
	/* "provider" says who filled the block: srcline now, annotate later. */
	fprintf(f, ",\"code\":{\"provider\":\"srcline\",\"functions\":[");
	for (size_t i = 0; i < nf && nh < CODE_FUNCS && h[i].samples; i++) {
		const struct sonde_tl_func *fn = sonde_timeline_func(tl, h[i].func);

		if (!fn->sym || !fn->dso || fn->inlined)
			continue;
		code_func(f, rep, h[i].func, nh++ == 0);
	}
	fprintf(f, "]}");
	free(h);
	return 0;
}

int sonde_report_print_html(FILE *f, const struct sonde_report *rep,
			    const struct sonde_print_opts *o)
{
	int32_t *dix;
	int ret;

	if (!rep->timeline)
		return -EINVAL;
	fwrite(sonde_html_head, 1, sonde_html_head_len, f);
	fprintf(f, "<script type=\"application/json\" id=\"sonde-data\">{\"version\":1");
	fprintf(f, ",\"sort_event\":%zu", o->sort_event);
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
	    (ret = code(f, rep, o->sort_event)))
		return ret;
	fprintf(f, "}</script>\n");
	fwrite(sonde_html_tail, 1, sonde_html_tail_len, f);
	return ferror(f) ? -EIO : 0;
}
