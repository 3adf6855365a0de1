// SPDX-License-Identifier: MIT
/*
 * The text report, in perf report --stdio's layout: the lost-samples
 * line, then one section per event with samples ("# Samples: N of event
 * 'X'", its own rows and column widths), or with --group one section with
 * an overhead column per event side by side (see report_sections.c).  A
 * row is one entry with the sort-key columns sized to their widest value,
 * optionally followed by its call graph drawn with perf's "|--NN.NN%--"
 * branches, for the section's first event.
 */
#include <sonde/report_print.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define COLS SONDE_SORT_MAX

struct view {
	FILE *out;
	const struct sonde_report *rep;
	const struct sonde_print_opts *o;
	const struct sonde_profile *p;
	const struct sonde_profile_opts *po;
	bool children;
	const size_t *evs; /* the section's events: evs[0] orders rows and draws graphs */
	size_t nev;
	size_t width[COLS]; /* per sort key position */
};

const char *sonde_report_dso_name(const struct sonde_dso *d)
{
	return d ? sonde_dso_short_name(d) : "[unknown]";
}

const char *sonde_report_srcline_unknown(const struct sonde_entry_key *k, char *buf, size_t len)
{
	if (k->sym && k->addr >= k->sym->start)
		snprintf(buf, len, "%s+%" PRIu64, k->sym->name, k->addr - k->sym->start);
	else
		snprintf(buf, len, "%s[%" PRIx64 "]", sonde_report_dso_name(k->dso), k->addr);
	return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static const char *key_text(struct view *v, enum sonde_sort_key key, size_t i, char *b, size_t len)
{
	const struct sonde_entry_key *k = sonde_profile_entry_key(v->p, i);
	char tmp[64];

	switch (key) {
	case SONDE_SORT_COMM:
		snprintf(b, len, "%s", sonde_machine_str(v->rep->ses->machine, k->comm));
		break;
	case SONDE_SORT_PID: { /* perf's "%7d:%s": the thread and its latest comm */
		const struct sonde_thread *t =
		    sonde_machine_find_thread(v->rep->ses->machine, k->pid);

		snprintf(b, len, "%7d:%s", (int)k->pid,
			 t ? sonde_machine_str(v->rep->ses->machine, t->comm) : "");
		break;
	}
	case SONDE_SORT_DSO:
		snprintf(b, len, "%s", sonde_report_dso_name(k->dso));
		break;
	case SONDE_SORT_SYM:
		snprintf(b, len, "[%c] %s", k->kernel ? 'k' : '.',
			 sonde_report_sym_name(k, NULL, tmp, sizeof(tmp)));
		break;
	case SONDE_SORT_SRCLINE:
		if (k->src.file) /* perf shows the file's base name (no --full-source-path) */
			snprintf(b, len, "%s:%u", base_name(k->src.file), k->src.line);
		else
			sonde_report_srcline_unknown(k, b, len);
		break;
	}
	return b;
}

static const char *const headers[COLS] = {"Command", "Pid:Command", "Shared Object", "Symbol",
					  "Source:Line"};

static struct sonde_counts row_counts(struct view *v, size_t i, size_t e)
{
	return sonde_report_row_counts(v->rep, i, e);
}

static bool row_shown(struct view *v, size_t i)
{
	return sonde_report_row_shown(v->rep, v->o, v->evs, v->nev, i);
}

static void print_header(struct view *v)
{
	const struct sonde_report *rep = v->rep;
	struct sonde_counts sum = {0, 0};
	FILE *f = v->out;

	for (size_t k = 0; k < v->nev; k++) {
		struct sonde_counts t = sonde_profile_total(v->p, v->evs[k]);

		sum.samples += t.samples;
		sum.period += t.period;
	}
	/* perf prints the sample count in units (2K); sonde keeps it exact. */
	fprintf(f, "# Samples: %" PRIu64 "  of event%s '", sum.samples, v->nev > 1 ? "s" : "");
	for (size_t k = 0; k < v->nev; k++)
		fprintf(f, "%s%s", k ? ", " : "", rep->ses->event_names[v->evs[k]]);
	fprintf(f, "'\n# Event count (approx.): %" PRIu64 "\n#\n#", sum.period);
	for (size_t k = 0; k < v->nev; k++) {
		/* The first column is one narrower: the "#" takes its place. */
		if (v->children)
			fprintf(f, k ? "  %9s" : " %8s", "Children");
		fprintf(f, k || v->children ? "  %9s" : " %8s", v->children ? "Self" : "Overhead");
		if (v->o->show_samples)
			fprintf(f, "  %9s", "Samples");
	}
	for (size_t c = 0; c < v->po->nkeys; c++)
		fprintf(f, "  %-*s", (int)v->width[c], headers[v->po->keys[c]]);
	fprintf(f, "\n#");
	for (size_t k = 0; k < v->nev; k++)
		fprintf(f, "%s%s%s", v->children ? (k ? "  ........." : " ........") : "",
			k || v->children ? "  ........." : " ........",
			v->o->show_samples ? "  ........." : "");
	for (size_t c = 0; c < v->po->nkeys; c++) {
		fputs("  ", f);
		for (size_t k = 0; k < v->width[c]; k++)
			fputc('.', f);
	}
	fprintf(f, "\n#\n");
}

/* ---- call graphs ------------------------------------------------------ */

struct kid {
	size_t node;
	uint64_t period;
};

static int by_kid_period(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static const char *frame_name(const struct sonde_frame *f, char *b, size_t len)
{
	if (sonde_frame_inline_name(f)) {
		snprintf(b, len, "%s (inlined)", sonde_frame_inline_name(f));
		return b;
	}
	return sonde_report_sym_name(NULL, f, b, len);
}

/*
 * Prints the subtree under @node: one child continues the line straight
 * down; several get "|--NN.NN%--" branches.  @indent is the prefix of
 * the lines below.
 */
static void print_graph(struct view *v, size_t node, const char *indent, uint64_t total, bool top)
{
	const struct sonde_profile *p = v->p;
	size_t ev = v->evs[0], n = 0, cap = 8;
	struct kid *kids = malloc(cap * sizeof(*kids));
	char name[256];

	if (!kids)
		return;
	for (size_t c = sonde_profile_node_first_child(p, node); c != SIZE_MAX;
	     c = sonde_profile_node_next_sibling(p, c)) {
		uint64_t per = sonde_profile_node_counts(p, c, ev).period;

		if (!per || pct(per, total) < v->o->callchain_limit)
			continue;
		if (n == cap) {
			struct kid *k = realloc(kids, (cap *= 2) * sizeof(*kids));

			if (!k)
				break;
			kids = k;
		}
		kids[n++] = (struct kid){c, per};
	}
	qsort(kids, n, sizeof(*kids), by_kid_period);
	if (n == 1 && kids[0].period == sonde_profile_node_counts(p, node, ev).period) {
		/* A straight line: names one under the other. */
		size_t c = kids[0].node;
		char straight[1024];

		/* perf starts the graph's first straight run with "---". */
		if (top) {
			fprintf(v->out, "%s---", indent);
			snprintf(straight, sizeof(straight), "%s   ", indent);
			indent = straight;
		}
		for (;;) {
			size_t only = SIZE_MAX, count = 0;
			uint64_t per = sonde_profile_node_counts(p, c, ev).period;

			fprintf(v->out, "%s%s\n", top ? "" : indent,
				frame_name(sonde_profile_node_frame(p, c), name, sizeof(name)));
			top = false;
			for (size_t g = sonde_profile_node_first_child(p, c); g != SIZE_MAX;
			     g = sonde_profile_node_next_sibling(p, g))
				if (sonde_profile_node_counts(p, g, ev).period &&
				    pct(sonde_profile_node_counts(p, g, ev).period, total) >=
					v->o->callchain_limit) {
					only = g;
					count++;
				}
			if (count == 1 && sonde_profile_node_counts(p, only, ev).period == per) {
				c = only;
				continue;
			}
			if (count)
				print_graph(v, c, indent, total, false);
			break;
		}
		free(kids);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char sub[1024];
		bool last = i + 1 == n;

		if (i || !top) /* the entry already drew the first "|" */
			fprintf(v->out, "%s|\n", indent);
		fprintf(v->out, "%s%s--%.2f%%--%s\n", indent, last ? " " : "|",
			pct(kids[i].period, total),
			frame_name(sonde_profile_node_frame(p, kids[i].node), name, sizeof(name)));
		snprintf(sub, sizeof(sub), "%s%s          ", indent, last ? " " : "|");
		if (sonde_profile_node_first_child(p, kids[i].node) != SIZE_MAX)
			print_graph(v, kids[i].node, sub, total, false);
	}
	free(kids);
}

static void print_entry_graph(struct view *v, size_t i)
{
	size_t root = sonde_profile_trie_root(v->p, i);
	uint64_t total = sonde_profile_total(v->p, v->evs[0]).period;

	/* Side by side, a row the first event has no share of has no graph to draw. */
	if (root == SIZE_MAX || sonde_profile_node_first_child(v->p, root) == SIZE_MAX ||
	    !sonde_profile_node_counts(v->p, root, v->evs[0]).period)
		return;
	fprintf(v->out, "            |\n");
	print_graph(v, root, "            ", total, true);
	fprintf(v->out, "\n");
}

/* ---- the table -------------------------------------------------------- */

static void print_row(struct view *v, size_t i)
{
	char b[1024];

	for (size_t k = 0; k < v->nev; k++) {
		size_t e = v->evs[k];
		struct sonde_counts t = sonde_profile_total(v->p, e);
		struct sonde_counts self = sonde_profile_entry_self(v->p, i, e);

		/* perf's layout: "    56.55%", the columns two spaces apart. */
		if (v->children)
			fprintf(v->out, k ? "  %8.2f%%" : "%9.2f%%",
				pct(sonde_profile_entry_total(v->p, i, e).period, t.period));
		fprintf(v->out, k || v->children ? "  %8.2f%%" : "%9.2f%%",
			pct(self.period, t.period));
		if (v->o->show_samples)
			fprintf(v->out, "  %9" PRIu64, row_counts(v, i, e).samples);
	}
	for (size_t c = 0; c < v->po->nkeys; c++) {
		bool last = c + 1 == v->po->nkeys;

		key_text(v, v->po->keys[c], i, b, sizeof(b));
		if (last)
			fprintf(v->out, "  %s", b);
		else
			fprintf(v->out, "  %-*s", (int)v->width[c], b);
	}
	fputc('\n', v->out);
}

/* One section: its rows in the order of its events, columns sized to them. */
static void print_section(struct view *v, size_t *idx)
{
	size_t n = sonde_profile_nr_entries(v->p);
	char b[1024];

	sonde_profile_sort_events(v->p, v->evs, v->nev, v->children, idx);
	for (size_t c = 0; c < v->po->nkeys; c++)
		v->width[c] = strlen(headers[v->po->keys[c]]);
	for (size_t r = 0; r < n; r++) {
		if (!row_shown(v, idx[r]))
			continue;
		for (size_t c = 0; c < v->po->nkeys; c++) {
			size_t w = strlen(key_text(v, v->po->keys[c], idx[r], b, sizeof(b)));

			if (w > v->width[c])
				v->width[c] = w;
		}
	}
	if (v->o->header)
		print_header(v);
	for (size_t r = 0; r < n; r++) {
		if (!row_shown(v, idx[r]))
			continue;
		print_row(v, idx[r]);
		if (v->o->callchains)
			print_entry_graph(v, idx[r]);
	}
	if (v->o->header)
		fprintf(v->out, "\n\n");
}

int sonde_report_print_stdio(FILE *out, const struct sonde_report *rep,
			     const struct sonde_print_opts *o)
{
	struct view v = {.out = out, .rep = rep, .o = o, .p = rep->profile};
	size_t n = sonde_profile_nr_entries(rep->profile);
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	size_t *evs = malloc((rep->ses->nevents ? rep->ses->nevents : 1) * sizeof(*evs));

	if (!idx || !evs) {
		free(idx);
		free(evs);
		return -ENOMEM;
	}
	v.po = sonde_profile_opts(rep->profile);
	v.children = v.po->children;
	v.evs = evs;
	/* perf counts only LOST_SAMPLES here; LOST records are the same samples again. */
	if (o->header)
		fprintf(out, "#\n# Total Lost Samples: %" PRIu64 "\n#\n", rep->ses->lost_samples);
	for (size_t s = 0; (v.nev = sonde_report_section(rep, o, s, evs)); s++)
		print_section(&v, idx);
	free(idx);
	free(evs);
	return ferror(out) ? -EIO : 0;
}
