// SPDX-License-Identifier: MIT
/*
 * The JSON view of annotations: one object with the capture's events and
 * one entry per annotated function: its totals, source files (where
 * found, or the paths looked for), source lines and instructions, each
 * with per-event counts and percentages of the function.  Addresses are
 * hex strings (kernel addresses do not fit a double).
 */
#include <sonde/annotate_print.h>
#include <sonde/json.h>
#include <sonde/report_print.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static void counts(struct sonde_json *j, const struct sonde_annotation *a,
		   const struct sonde_counts *c)
{
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < a->nevents; e++) {
		sonde_json_obj_begin(j);
		sonde_json_ku64(j, "samples", c[e].samples);
		sonde_json_ku64(j, "period", c[e].period);
		sonde_json_key(j, "percent");
		sonde_json_double(j, sonde_annotate_percent(a, c, e), 4);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
}

static void one(struct sonde_json *j, const struct sonde_annotation *a)
{
	const struct sonde_symbol *s = a->sym;

	sonde_json_obj_begin(j);
	sonde_json_kstr(j, "symbol", s->name);
	sonde_json_kstr(j, "symbol_mangled", s->mangled ? s->mangled : s->name);
	sonde_json_ku64(j, "symbol_id", s->id);
	sonde_json_kstr(j, "dso", sonde_report_dso_name(s->dso));
	sonde_json_kstr(j, "symbol_file", sonde_dso_symbol_file(s->dso));
	sonde_json_key(j, "start");
	sonde_json_hex(j, s->start);
	sonde_json_ku64(j, "size", s->size);
	sonde_json_key(j, "total");
	counts(j, a, a->total);
	sonde_json_kstr(j, "disassembly", a->disasm_err ? sonde_strerror(a->disasm_err) : "ok");
	sonde_json_key(j, "sources");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < a->nsources; i++) {
		const struct sonde_annotate_source *src = &a->sources[i];

		sonde_json_obj_begin(j);
		sonde_json_kstr(j, "file", src->file);
		sonde_json_kstr(j, "comp_dir", src->comp_dir);
		sonde_json_kstr(j, "path", src->path);
		sonde_json_kstr(j, "looked_for",
				src->path	  ? NULL
				: src->looked_for ? src->looked_for
						  : "");
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
	sonde_json_key(j, "lines");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < a->nlines; i++) {
		const struct sonde_annotate_line *l = &a->lines[i];
		size_t len;
		const char *t =
		    sonde_annotate_source_line(&a->sources[l->source], l->src.line, &len);

		sonde_json_obj_begin(j);
		sonde_json_kstr(j, "file", l->src.file);
		sonde_json_ku64(j, "line", l->src.line);
		sonde_json_ku64(j, "source", l->source);
		sonde_json_key(j, "text");
		if (t)
			sonde_json_strn(j, t, len);
		else
			sonde_json_null(j);
		sonde_json_kstr(j, "inlined", l->inlined);
		sonde_json_kbool(j, "hot", l->hot);
		sonde_json_key(j, "counts");
		counts(j, a, l->counts);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
	sonde_json_key(j, "instructions");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < a->ninsns; i++) {
		const struct sonde_annotate_insn *in = &a->insns[i];

		sonde_json_obj_begin(j);
		sonde_json_key(j, "addr");
		sonde_json_hex(j, in->addr);
		sonde_json_ku64(j, "size", in->size);
		sonde_json_kstr(j, "text", in->text);
		sonde_json_kstr(j, "file", in->src.file);
		sonde_json_ku64(j, "line", in->src.line);
		sonde_json_kstr(j, "inlined", in->inlined);
		sonde_json_kbool(j, "hot", in->hot);
		sonde_json_key(j, "counts");
		counts(j, a, in->counts);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
	sonde_json_obj_end(j);
}

int sonde_annotate_print_json(FILE *f, const struct sonde_annotation *const *as, size_t n,
			      const struct sonde_annotate_print_opts *o)
{
	size_t nev = n ? as[0]->nevents : 0;
	struct sonde_json js, *j = &js;

	sonde_json_init_file(j, f, 0);
	sonde_json_obj_begin(j);
	sonde_json_kstr(j, "file", o->file ? o->file : "");
	sonde_json_key(j, "events");
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < nev; e++)
		sonde_json_str(j, o->event_names ? o->event_names[e] : "?");
	sonde_json_arr_end(j);
	sonde_json_key(j, "symbols");
	sonde_json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		one(j, as[i]);
	sonde_json_arr_end(j);
	sonde_json_obj_end(j);
	sonde_json_line_end(j);
	return sonde_json_error(j) ? sonde_json_error(j) : ferror(f) ? -EIO : 0;
}
