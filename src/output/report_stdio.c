// SPDX-License-Identifier: MIT
/*
 * The text report, in perf report --stdio's layout: "#" header lines per
 * event, then one row per entry with an overhead column per event (and a
 * samples column when asked or when several events sit side by side),
 * the sort-key columns sized to their widest value, and optionally the
 * call graph of each row drawn with perf's "|--NN.NN%--" branches.
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
	size_t width[COLS]; /* per sort key position */
};

const char *sonde_report_dso_name(const struct sonde_dso *d)
{
	return d ? sonde_dso_short_name(d) : "[unknown]";
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
		snprintf(b, len, "%s", sonde_machine_str(v->rep->machine, k->comm));
		break;
	case SONDE_SORT_PID: { /* perf's "%7d:%s": the thread and its latest comm */
		const struct sonde_thread *t = sonde_machine_find_thread(v->rep->machine, k->pid);

		snprintf(b, len, "%7d:%s", (int)k->pid,
			 t ? sonde_machine_str(v->rep->machine, t->comm) : "");
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
			snprintf(b, len, "%s+0x%" PRIx64, sonde_report_dso_name(k->dso), k->addr);
		break;
	}
	return b;
}

static const char *const headers[COLS] = {"Command", "Pid:Command", "Shared Object", "Symbol",
					  "Source:Line"};

static bool row_shown(struct view *v, size_t i)
{
	struct sonde_counts c = v->children ? sonde_profile_entry_total(v->p, i, v->o->sort_event)
					    : sonde_profile_entry_self(v->p, i, v->o->sort_event);
	struct sonde_counts t = sonde_profile_total(v->p, v->o->sort_event);

	return c.period && pct(c.period, t.period) >= v->o->percent_limit;
}

static void print_header(struct view *v)
{
	const struct sonde_report *rep = v->rep;
	FILE *f = v->out;

	fprintf(f, "#\n# Total Lost Samples: %" PRIu64 "\n#\n", rep->lost_samples + rep->lost);
	for (size_t e = 0; e < rep->nevents; e++) {
		struct sonde_counts t = sonde_profile_total(v->p, e);

		fprintf(f, "# Samples: %" PRIu64 " of event '%s'\n", t.samples,
			rep->event_names[e]);
		fprintf(f, "# Event count (approx.): %" PRIu64 "\n", t.period);
	}
	fprintf(f, "#\n#");
	for (size_t e = 0; e < rep->nevents; e++) {
		/* The first column is one narrower: the "#" takes its place. */
		if (v->children)
			fprintf(f, e ? "  %9s" : " %8s", "Children");
		fprintf(f, e || v->children ? "  %9s" : " %8s", v->children ? "Self" : "Overhead");
		if (v->o->show_samples)
			fprintf(f, "  %9s", "Samples");
	}
	for (size_t c = 0; c < v->po->nkeys; c++)
		fprintf(f, "  %-*s", (int)v->width[c], headers[v->po->keys[c]]);
	fprintf(f, "\n#");
	for (size_t e = 0; e < rep->nevents; e++)
		fprintf(f, "%s%s%s", v->children ? (e ? "  ........." : " ........") : "",
			e || v->children ? "  ........." : " ........",
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
	if (f->inlined) {
		snprintf(b, len, "%s (inlined)", f->inlined);
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
	size_t ev = v->o->sort_event, n = 0, cap = 8;
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
	uint64_t total = sonde_profile_total(v->p, v->o->sort_event).period;

	if (root == SIZE_MAX || sonde_profile_node_first_child(v->p, root) == SIZE_MAX)
		return;
	fprintf(v->out, "            |\n");
	print_graph(v, root, "            ", total, true);
	fprintf(v->out, "\n");
}

/* ---- the table -------------------------------------------------------- */

static void print_row(struct view *v, size_t i)
{
	char b[1024];

	for (size_t e = 0; e < v->rep->nevents; e++) {
		struct sonde_counts t = sonde_profile_total(v->p, e);
		struct sonde_counts self = sonde_profile_entry_self(v->p, i, e);

		/* perf's layout: "    56.55%", the columns two spaces apart. */
		if (v->children)
			fprintf(v->out, e ? "  %8.2f%%" : "%9.2f%%",
				pct(sonde_profile_entry_total(v->p, i, e).period, t.period));
		fprintf(v->out, e || v->children ? "  %8.2f%%" : "%9.2f%%",
			pct(self.period, t.period));
		if (v->o->show_samples)
			fprintf(v->out, "  %9" PRIu64,
				v->children ? sonde_profile_entry_total(v->p, i, e).samples
					    : self.samples);
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

int sonde_report_print_stdio(FILE *out, const struct sonde_report *rep,
			     const struct sonde_print_opts *o)
{
	struct view v = {.out = out, .rep = rep, .o = o, .p = rep->profile};
	size_t n = sonde_profile_nr_entries(rep->profile);
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	char b[1024];

	if (!idx)
		return -ENOMEM;
	v.po = sonde_profile_opts(rep->profile);
	v.children = v.po->children;
	sonde_profile_sort(rep->profile, o->sort_event, v.children, idx);
	for (size_t c = 0; c < v.po->nkeys; c++)
		v.width[c] = strlen(headers[v.po->keys[c]]);
	for (size_t r = 0; r < n; r++) {
		if (!row_shown(&v, idx[r]))
			continue;
		for (size_t c = 0; c < v.po->nkeys; c++) {
			size_t w = strlen(key_text(&v, v.po->keys[c], idx[r], b, sizeof(b)));

			if (w > v.width[c])
				v.width[c] = w;
		}
	}
	if (o->header)
		print_header(&v);
	for (size_t r = 0; r < n; r++) {
		if (!row_shown(&v, idx[r]))
			continue;
		print_row(&v, idx[r]);
		if (o->callchains)
			print_entry_graph(&v, idx[r]);
	}
	free(idx);
	if (o->header)
		fprintf(out, "\n");
	return ferror(out) ? -EIO : 0;
}
