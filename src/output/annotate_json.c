// SPDX-License-Identifier: MIT
/*
 * The JSON view of annotations: one object with the capture's events and
 * one entry per annotated function: its totals, source files (where
 * found, or the paths looked for), source lines and instructions, each
 * with per-event counts and percentages of the function.  Addresses are
 * hex strings (kernel addresses do not fit a double).
 */
#include <sonde/annotate_print.h>
#include <sonde/report_print.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* A source line's text as a JSON string (length-limited, not NUL-terminated). */
static void json_strn(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void counts(FILE *f, const struct sonde_annotation *a, const struct sonde_counts *c)
{
	fputc('[', f);
	for (size_t e = 0; e < a->nevents; e++)
		fprintf(f, "%s{\"samples\":%" PRIu64 ",\"period\":%" PRIu64 ",\"percent\":%.4f}",
			e ? "," : "", c[e].samples, c[e].period, sonde_annotate_percent(a, c, e));
	fputc(']', f);
}

static void one(FILE *f, const struct sonde_annotation *a)
{
	const struct sonde_symbol *s = a->sym;

	fprintf(f, "{\"symbol\":");
	json_str(f, s->name);
	fprintf(f, ",\"symbol_mangled\":");
	json_str(f, s->mangled ? s->mangled : s->name);
	fprintf(f, ",\"symbol_id\":%u,\"dso\":", s->id);
	json_str(f, sonde_report_dso_name(s->dso));
	fprintf(f, ",\"symbol_file\":");
	json_str(f, sonde_dso_symbol_file(s->dso));
	fprintf(f, ",\"start\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"total\":", s->start,
		s->size);
	counts(f, a, a->total);
	fprintf(f, ",\"disassembly\":");
	json_str(f, a->disasm_err ? sonde_strerror(a->disasm_err) : "ok");
	fprintf(f, ",\"sources\":[");
	for (size_t i = 0; i < a->nsources; i++) {
		const struct sonde_annotate_source *src = &a->sources[i];

		fprintf(f, "%s{\"file\":", i ? "," : "");
		json_str(f, src->file);
		fprintf(f, ",\"comp_dir\":");
		json_str(f, src->comp_dir);
		fprintf(f, ",\"path\":");
		json_str(f, src->path);
		fprintf(f, ",\"looked_for\":");
		json_str(f, src->path ? NULL : src->looked_for ? src->looked_for : "");
		fputc('}', f);
	}
	fprintf(f, "],\"lines\":[");
	for (size_t i = 0; i < a->nlines; i++) {
		const struct sonde_annotate_line *l = &a->lines[i];
		size_t len;
		const char *t =
		    sonde_annotate_source_line(&a->sources[l->source], l->src.line, &len);

		fprintf(f, "%s{\"file\":", i ? "," : "");
		json_str(f, l->src.file);
		fprintf(f, ",\"line\":%u,\"source\":%zu,\"text\":", l->src.line, l->source);
		if (t)
			json_strn(f, t, len);
		else
			fputs("null", f);
		fprintf(f, ",\"inlined\":");
		json_str(f, l->inlined);
		fprintf(f, ",\"hot\":%s,\"counts\":", l->hot ? "true" : "false");
		counts(f, a, l->counts);
		fputc('}', f);
	}
	fprintf(f, "],\"instructions\":[");
	for (size_t i = 0; i < a->ninsns; i++) {
		const struct sonde_annotate_insn *in = &a->insns[i];

		fprintf(f, "%s{\"addr\":\"0x%" PRIx64 "\",\"size\":%u,\"text\":", i ? "," : "",
			in->addr, in->size);
		json_str(f, in->text);
		fprintf(f, ",\"file\":");
		json_str(f, in->src.file);
		fprintf(f, ",\"line\":%u,\"inlined\":", in->src.line);
		json_str(f, in->inlined);
		fprintf(f, ",\"hot\":%s,\"counts\":", in->hot ? "true" : "false");
		counts(f, a, in->counts);
		fputc('}', f);
	}
	fprintf(f, "]}");
}

int sonde_annotate_print_json(FILE *f, const struct sonde_annotation *const *as, size_t n,
			      const struct sonde_annotate_print_opts *o)
{
	size_t nev = n ? as[0]->nevents : 0;

	fprintf(f, "{\"file\":");
	json_str(f, o->file ? o->file : "");
	fprintf(f, ",\"events\":[");
	for (size_t e = 0; e < nev; e++) {
		fprintf(f, "%s", e ? "," : "");
		json_str(f, o->event_names ? o->event_names[e] : "?");
	}
	fprintf(f, "],\"symbols\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		one(f, as[i]);
	}
	fprintf(f, "]}\n");
	return ferror(f) ? -EIO : 0;
}
