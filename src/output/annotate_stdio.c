// SPDX-License-Identifier: MIT
/*
 * The text view of an annotation, in perf annotate's shape: a percent
 * column per event (the row's share of the function's period; blank for
 * none), a '*' on hot rows, then source lines interleaved with their
 * instructions (or only one of the two), or with --sort hot the rows
 * with samples by heat.  A source file that was not found leaves its
 * lines as "file:line" and the header says where it was looked for.
 */
#include <sonde/annotate_print.h>
#include <sonde/report_print.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void pcts(FILE *f, const struct sonde_annotation *a, const struct sonde_counts *c)
{
	for (size_t e = 0; e < a->nevents; e++) {
		if (c && c[e].samples)
			fprintf(f, "%8.2f", sonde_annotate_percent(a, c, e));
		else
			fprintf(f, "%8s", "");
	}
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "??";
}

/* "  18    text" or "  18    file.c:18" without the source; then the inline name. */
static void source_text(FILE *f, const struct sonde_annotation *a, const struct sonde_srcline *src,
			size_t source, const char *inlined)
{
	const char *t = NULL;
	size_t len = 0;

	if (source < a->nsources)
		t = sonde_annotate_source_line(&a->sources[source], src->line, &len);
	if (t)
		fprintf(f, "%6u  %.*s", src->line, (int)len, t);
	else
		fprintf(f, "%6u  %s:%u", src->line, base(src->file), src->line);
	if (inlined)
		fprintf(f, "  [inlined: %s]", inlined);
	fputc('\n', f);
}

static void line_row(FILE *f, const struct sonde_annotation *a, const struct sonde_annotate_line *l)
{
	pcts(f, a, l->counts);
	fprintf(f, " %c : ", l->hot ? '*' : ' ');
	source_text(f, a, &l->src, l->source, l->inlined);
}

/* A source line without code of its own: context between sampled lines. */
static void context_row(FILE *f, const struct sonde_annotation *a, size_t source, uint32_t line)
{
	const char *t;
	size_t len;

	if (!(t = sonde_annotate_source_line(&a->sources[source], line, &len)))
		return;
	pcts(f, a, NULL);
	fprintf(f, "   : %6u  %.*s\n", line, (int)len, t);
}

static void insn_row(FILE *f, const struct sonde_annotation *a,
		     const struct sonde_annotate_insn *in, bool indent)
{
	pcts(f, a, in->counts);
	fprintf(f, " %c : %s%" PRIx64 ":  %s\n", in->hot ? '*' : ' ', indent ? "      " : "",
		in->addr, in->size ? in->text : "(no code read at this address)");
}

static void file_row(FILE *f, const struct sonde_annotation *a, size_t source)
{
	pcts(f, a, NULL);
	fprintf(f, "   : %s\n", a->sources[source].file);
}

static void header(FILE *f, const struct sonde_annotation *a,
		   const struct sonde_annotate_print_opts *o)
{
	const struct sonde_symbol *s = a->sym;

	fprintf(f, "# %s in %s (symbol id %u), 0x%" PRIx64 "-0x%" PRIx64 "\n", s->name,
		sonde_report_dso_name(s->dso), s->id, s->start, s->start + s->size);
	for (size_t e = 0; e < a->nevents; e++)
		fprintf(f, "# column %zu: %s, %" PRIu64 " samples (period %" PRIu64 ")\n", e + 1,
			o->event_names ? o->event_names[e] : "?", a->total[e].samples,
			a->total[e].period);
	fprintf(f, "# percent of the function's period; * marks hot rows\n");
	for (size_t i = 0; i < a->nsources; i++) {
		const struct sonde_annotate_source *src = &a->sources[i];

		if (src->path)
			fprintf(f, "# source %s\n", src->path);
		else if (src->looked_for && *src->looked_for)
			fprintf(f, "# source %s: not found (looked for %s)\n", src->file,
				src->looked_for);
		else
			fprintf(f, "# source %s: not read\n", src->file);
	}
	if (a->disasm_err == -ENOENT)
		fprintf(f,
			"# no code: %s holds no bytes of %s (for code: -k vmlinux, --modules-dir, "
			"--image, or the unstripped object)\n",
			sonde_dso_symbol_file(s->dso) ? sonde_dso_symbol_file(s->dso)
						      : sonde_report_dso_name(s->dso),
			s->name);
	else if (a->disasm_err)
		fprintf(f, "# no disassembly: %s\n", sonde_strerror(a->disasm_err));
	fprintf(f, "#\n");
	for (size_t e = 0; e < a->nevents; e++)
		fprintf(f, "%8s", "Percent");
	fprintf(f, "   : %s\n",
		o->sort_hot ? (o->view == SONDE_ANNOTATE_ASM ? "Instructions by heat"
							     : "Source lines by heat")
		: o->view == SONDE_ANNOTATE_SOURCE ? "Source"
		: o->view == SONDE_ANNOTATE_ASM	   ? "Disassembly"
						   : "Source and disassembly");
}

static void mixed(FILE *f, const struct sonde_annotation *a)
{
	size_t prev_line = SIZE_MAX, prev_src = SIZE_MAX;

	for (size_t i = 0; i < a->ninsns; i++) {
		const struct sonde_annotate_insn *in = &a->insns[i];

		if (in->line != prev_line && in->line != SIZE_MAX) {
			const struct sonde_annotate_line *l = &a->lines[in->line];

			if (l->source != prev_src)
				file_row(f, a, l->source);
			prev_src = l->source;
			line_row(f, a, l);
		}
		prev_line = in->line;
		insn_row(f, a, in, true);
	}
}

/* Lines of each file in order; gaps inside the main file filled with its text. */
static void source_only(FILE *f, const struct sonde_annotation *a)
{
	for (size_t i = 0; i < a->nlines; i++) {
		const struct sonde_annotate_line *l = &a->lines[i];
		bool first = i == 0 || a->lines[i - 1].source != l->source;

		if (first) {
			file_row(f, a, l->source);
		} else {
			uint32_t from = a->lines[i - 1].src.line + 1, to = l->src.line;

			if (l->source == 0 || to - from <= 3)
				for (uint32_t n = from; n < to; n++)
					context_row(f, a, l->source, n);
			else
				fprintf(f, "%*s   :    ...\n", (int)(8 * a->nevents), "");
		}
		line_row(f, a, l);
	}
}

struct heat {
	size_t i;
	uint64_t period;
};

static int by_heat(const void *x, const void *y)
{
	const struct heat *a = x, *b = y;

	if (a->period != b->period)
		return a->period < b->period ? 1 : -1;
	return (a->i > b->i) - (a->i < b->i);
}

static int sorted(FILE *f, const struct sonde_annotation *a,
		  const struct sonde_annotate_print_opts *o)
{
	bool asm_rows = o->view == SONDE_ANNOTATE_ASM;
	size_t n = asm_rows ? a->ninsns : a->nlines, m = 0, ev = o->sort_event;
	struct heat *h = malloc((n ? n : 1) * sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sonde_counts *c = asm_rows ? a->insns[i].counts : a->lines[i].counts;
		bool any = false;

		for (size_t e = 0; e < a->nevents; e++)
			any |= c[e].samples > 0;
		if (any)
			h[m++] = (struct heat){i, c[ev].period};
	}
	qsort(h, m, sizeof(*h), by_heat);
	for (size_t k = 0; k < m; k++) {
		if (asm_rows) {
			const struct sonde_annotate_insn *in = &a->insns[h[k].i];

			insn_row(f, a, in, false);
			continue;
		}
		const struct sonde_annotate_line *l = &a->lines[h[k].i];
		size_t len = 0;
		const char *t =
		    sonde_annotate_source_line(&a->sources[l->source], l->src.line, &len);

		pcts(f, a, l->counts);
		fprintf(f, " %c : %s:%u", l->hot ? '*' : ' ', base(l->src.file), l->src.line);
		if (t)
			fprintf(f, "  %.*s", (int)len, t);
		if (l->inlined)
			fprintf(f, "  [inlined: %s]", l->inlined);
		fputc('\n', f);
	}
	free(h);
	return 0;
}

int sonde_annotate_print_stdio(FILE *f, const struct sonde_annotation *a,
			       const struct sonde_annotate_print_opts *o)
{
	header(f, a, o);
	if (o->sort_hot) {
		if (sorted(f, a, o))
			return -ENOMEM;
	} else if (o->view == SONDE_ANNOTATE_SOURCE) {
		source_only(f, a);
	} else if (o->view == SONDE_ANNOTATE_ASM) {
		for (size_t i = 0; i < a->ninsns; i++)
			insn_row(f, a, &a->insns[i], false);
	} else {
		mixed(f, a);
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
