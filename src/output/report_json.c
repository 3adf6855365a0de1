// SPDX-License-Identifier: MIT
/*
 * The JSON report: one object with the capture's events and totals, the
 * entries of every section (an entry any shown event counted, ordered by
 * the sort event, then the others), each with its keys, per-event self
 * and inclusive counts, and (with call graphs) its call-path tree pruned
 * at the call-graph threshold; and the sections the text view prints
 * (report_sections.c), each naming its events and its rows' ids in order.
 * Numbers are exact counts; percentages are given too so consumers need
 * not recompute them.
 */
#include <sonde/json.h>
#include <sonde/report_print.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void counts(struct sonde_json *j, const struct sonde_profile *p, size_t nev,
		   struct sonde_counts (*get)(const struct sonde_profile *, size_t, size_t),
		   size_t i)
{
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < nev; e++) {
		struct sonde_counts c = get(p, i, e);

		sonde_json_obj_begin(j);
		sonde_json_ku64(j, "samples", c.samples);
		sonde_json_ku64(j, "period", c.period);
		sonde_json_key(j, "percent");
		sonde_json_double(j, pct(c.period, sonde_profile_total(p, e).period), 4);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
}

/* The symbol table's spelling beside the shown one (C++/Rust demangled). */
static void mangled(struct sonde_json *j, const struct sonde_symbol *sym)
{
	if (sym)
		sonde_json_kstr(j, "symbol_mangled", sym->mangled ? sym->mangled : sym->name);
}

static void frame(struct sonde_json *j, const struct sonde_frame *fr)
{
	char b[64];

	sonde_json_kstr(j, "symbol", sonde_report_sym_name(NULL, fr, b, sizeof(b)));
	mangled(j, fr->sym);
	sonde_json_kstr(j, "dso", sonde_report_dso_name(fr->dso));
	sonde_json_kbool(j, "kernel", fr->kernel);
	if (fr->inlined)
		sonde_json_kstr(j, "inlined", fr->inlined);
}

/* A node is kept when one event's share of it reaches the limit. */
static bool node_shown(const struct sonde_profile *p, size_t node, size_t nev, double limit)
{
	for (size_t e = 0; e < nev; e++) {
		uint64_t per = sonde_profile_node_counts(p, node, e).period;

		if (per && pct(per, sonde_profile_total(p, e).period) >= limit)
			return true;
	}
	return false;
}

static void tree(struct sonde_json *j, const struct sonde_profile *p, size_t node, size_t nev,
		 double limit, int depth)
{
	sonde_json_arr_begin(j);
	for (size_t c = sonde_profile_node_first_child(p, node); c != SIZE_MAX;
	     c = sonde_profile_node_next_sibling(p, c)) {
		if (!node_shown(p, c, nev, limit) || depth > 256)
			continue;
		sonde_json_obj_begin(j);
		frame(j, sonde_profile_node_frame(p, c));
		sonde_json_key(j, "counts");
		counts(j, p, nev, sonde_profile_node_counts, c);
		sonde_json_key(j, "callers");
		tree(j, p, c, nev, limit, depth + 1);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
}

/* The sections: their events, totals and rows (entry ids) in order. */
static void sections(struct sonde_json *j, const struct sonde_report *rep,
		     const struct sonde_print_opts *o, size_t *evs, size_t *idx)
{
	const struct sonde_profile *p = rep->profile;
	size_t n = sonde_profile_nr_entries(p), nev;

	sonde_json_key(j, "sections");
	sonde_json_arr_begin(j);
	for (size_t s = 0; (nev = sonde_report_section(rep, o, s, evs)); s++) {
		sonde_json_obj_begin(j);
		sonde_json_key(j, "events");
		sonde_json_arr_begin(j);
		for (size_t k = 0; k < nev; k++)
			sonde_json_u64(j, evs[k]);
		sonde_json_arr_end(j);
		sonde_json_key(j, "rows");
		sonde_json_arr_begin(j);
		sonde_profile_sort_events(p, evs, nev, sonde_profile_opts(p)->children, idx);
		for (size_t r = 0; r < n; r++)
			if (sonde_report_row_shown(rep, o, evs, nev, idx[r]))
				sonde_json_u64(j, idx[r]);
		sonde_json_arr_end(j);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
}

/* An entry is listed when a section shows it. */
static bool in_a_section(const struct sonde_report *rep, const struct sonde_print_opts *o,
			 size_t *evs, size_t i)
{
	size_t nev;

	for (size_t s = 0; (nev = sonde_report_section(rep, o, s, evs)); s++)
		if (sonde_report_row_shown(rep, o, evs, nev, i))
			return true;
	return false;
}

static void entry(struct sonde_json *j, const struct sonde_report *rep,
		  const struct sonde_print_opts *o, size_t i)
{
	const struct sonde_profile *p = rep->profile;
	const struct sonde_profile_opts *po = sonde_profile_opts(p);
	const struct sonde_entry_key *k = sonde_profile_entry_key(p, i);
	size_t nev = rep->ses->nevents;
	char b[64];

	sonde_json_obj_begin(j);
	sonde_json_ku64(j, "id", i);
	for (size_t kk = 0; kk < po->nkeys; kk++) {
		switch (po->keys[kk]) {
		case SONDE_SORT_COMM:
			sonde_json_kstr(j, "comm", sonde_machine_str(rep->ses->machine, k->comm));
			break;
		case SONDE_SORT_PID: { /* the key is the thread (perf's "pid" sort) */
			const struct sonde_thread *t =
			    sonde_machine_find_thread(rep->ses->machine, k->pid);

			sonde_json_ku64(j, "pid", t ? t->pid : k->pid);
			sonde_json_ku64(j, "tid", k->pid);
			break;
		}
		case SONDE_SORT_DSO:
			sonde_json_kstr(j, "dso", sonde_report_dso_name(k->dso));
			break;
		case SONDE_SORT_SYM:
			sonde_json_kstr(j, "symbol", sonde_report_sym_name(k, NULL, b, sizeof(b)));
			mangled(j, k->sym);
			if (k->sym)
				sonde_json_ku64(j, "symbol_id", k->sym->id);
			sonde_json_kbool(j, "kernel", k->kernel);
			break;
		case SONDE_SORT_SRCLINE:
			sonde_json_kstr(j, "srcline", k->src.file);
			if (k->src.file)
				sonde_json_ku64(j, "line", k->src.line);
			break;
		}
	}
	sonde_json_key(j, "self");
	counts(j, p, nev, sonde_profile_entry_self, i);
	sonde_json_key(j, "total");
	counts(j, p, nev, sonde_profile_entry_total, i);
	if (o->callchains && sonde_profile_trie_root(p, i) != SIZE_MAX) {
		sonde_json_key(j, "callchain");
		tree(j, p, sonde_profile_trie_root(p, i), nev, o->callchain_limit, 0);
	}
	sonde_json_obj_end(j);
}

int sonde_report_print_json(FILE *f, const struct sonde_report *rep,
			    const struct sonde_print_opts *o)
{
	const struct sonde_profile *p = rep->profile;
	const struct sonde_profile_opts *po = sonde_profile_opts(p);
	size_t n = sonde_profile_nr_entries(p), nev = rep->ses->nevents;
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	size_t *evs = malloc((nev ? nev : 1) * sizeof(*evs));
	struct sonde_print_opts all = *o;
	struct sonde_json js, *j = &js;

	if (!idx || !evs) {
		free(idx);
		free(evs);
		return -ENOMEM;
	}
	sonde_json_init_file(j, f, 0);
	sonde_json_obj_begin(j);
	sonde_json_kstr(j, "file", o->file ? o->file : "");
	sonde_json_key(j, "sort");
	sonde_json_arr_begin(j);
	for (size_t k = 0; k < po->nkeys; k++)
		sonde_json_str(j, sonde_sort_key_name(po->keys[k]));
	sonde_json_arr_end(j);
	sonde_json_kbool(j, "children", po->children);
	sonde_json_kbool(j, "group", o->group);
	sonde_json_key(j, "events");
	sonde_json_arr_begin(j);
	for (size_t e = 0; e < nev; e++) {
		struct sonde_counts t = sonde_profile_total(p, e);

		sonde_json_obj_begin(j);
		sonde_json_kstr(j, "name", rep->ses->event_names[e]);
		sonde_json_ku64(j, "samples", t.samples);
		sonde_json_ku64(j, "period", t.period);
		sonde_json_obj_end(j);
	}
	sonde_json_arr_end(j);
	sonde_json_ku64(j, "lost", rep->ses->lost);
	sonde_json_ku64(j, "lost_chunks", rep->ses->lost_chunks);
	sonde_json_ku64(j, "lost_samples", rep->ses->lost_samples);
	sonde_json_ku64(j, "throttled", rep->ses->throttled);
	sonde_json_ku64(j, "filtered_out", rep->ses->filtered_out);
	sections(j, rep, o, evs, idx);
	/* Entries in the order of every event side by side, led by the sort event. */
	all.group = true;
	nev = sonde_report_section(rep, &all, 0, evs);
	sonde_profile_sort_events(p, evs, nev, po->children, idx);
	sonde_json_key(j, "entries");
	sonde_json_arr_begin(j);
	for (size_t r = 0; r < n; r++)
		if (in_a_section(rep, o, evs, idx[r]))
			entry(j, rep, o, idx[r]);
	sonde_json_arr_end(j);
	sonde_json_obj_end(j);
	sonde_json_line_end(j);
	free(idx);
	free(evs);
	return sonde_json_error(j) ? sonde_json_error(j) : ferror(f) ? -EIO : 0;
}
