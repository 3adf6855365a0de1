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
#include <sonde/report_print.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void counts(FILE *f, const struct sonde_profile *p, size_t nev,
		   struct sonde_counts (*get)(const struct sonde_profile *, size_t, size_t),
		   size_t i)
{
	fputc('[', f);
	for (size_t e = 0; e < nev; e++) {
		struct sonde_counts c = get(p, i, e);

		fprintf(f, "%s{\"samples\":%" PRIu64 ",\"period\":%" PRIu64 ",\"percent\":%.4f}",
			e ? "," : "", c.samples, c.period,
			pct(c.period, sonde_profile_total(p, e).period));
	}
	fputc(']', f);
}

/* The symbol table's spelling beside the shown one (C++/Rust demangled). */
static void mangled(FILE *f, const struct sonde_symbol *sym)
{
	if (!sym)
		return;
	fprintf(f, ",\"symbol_mangled\":");
	json_str(f, sym->mangled ? sym->mangled : sym->name);
}

static void frame(FILE *f, const struct sonde_frame *fr)
{
	char b[64];

	fprintf(f, "\"symbol\":");
	json_str(f, sonde_report_sym_name(NULL, fr, b, sizeof(b)));
	mangled(f, fr->sym);
	fprintf(f, ",\"dso\":");
	json_str(f, sonde_report_dso_name(fr->dso));
	fprintf(f, ",\"kernel\":%s", fr->kernel ? "true" : "false");
	if (fr->inlined) {
		fprintf(f, ",\"inlined\":");
		json_str(f, fr->inlined);
	}
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

static void tree(FILE *f, const struct sonde_profile *p, size_t node, size_t nev, double limit,
		 int depth)
{
	bool first = true;

	fputc('[', f);
	for (size_t c = sonde_profile_node_first_child(p, node); c != SIZE_MAX;
	     c = sonde_profile_node_next_sibling(p, c)) {
		if (!node_shown(p, c, nev, limit) || depth > 256)
			continue;
		fprintf(f, "%s{", first ? "" : ",");
		first = false;
		frame(f, sonde_profile_node_frame(p, c));
		fprintf(f, ",\"counts\":");
		counts(f, p, nev, sonde_profile_node_counts, c);
		fprintf(f, ",\"callers\":");
		tree(f, p, c, nev, limit, depth + 1);
		fputc('}', f);
	}
	fputc(']', f);
}

/* The sections: their events, totals and rows (entry ids) in order. */
static void sections(FILE *f, const struct sonde_report *rep, const struct sonde_print_opts *o,
		     size_t *evs, size_t *idx)
{
	const struct sonde_profile *p = rep->profile;
	size_t n = sonde_profile_nr_entries(p), nev;

	fprintf(f, ",\"sections\":[");
	for (size_t s = 0; (nev = sonde_report_section(rep, o, s, evs)); s++) {
		size_t shown = 0;

		fprintf(f, "%s{\"events\":[", s ? "," : "");
		for (size_t k = 0; k < nev; k++)
			fprintf(f, "%s%zu", k ? "," : "", evs[k]);
		fprintf(f, "],\"rows\":[");
		sonde_profile_sort_events(p, evs, nev, sonde_profile_opts(p)->children, idx);
		for (size_t r = 0; r < n; r++)
			if (sonde_report_row_shown(rep, o, evs, nev, idx[r]))
				fprintf(f, "%s%zu", shown++ ? "," : "", idx[r]);
		fprintf(f, "]}");
	}
	fputc(']', f);
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

static void entry(FILE *f, const struct sonde_report *rep, const struct sonde_print_opts *o,
		  size_t i)
{
	const struct sonde_profile *p = rep->profile;
	const struct sonde_profile_opts *po = sonde_profile_opts(p);
	const struct sonde_entry_key *k = sonde_profile_entry_key(p, i);
	size_t nev = rep->nevents;
	char b[64];

	fprintf(f, "{\"id\":%zu", i);
	for (size_t kk = 0; kk < po->nkeys; kk++) {
		switch (po->keys[kk]) {
		case SONDE_SORT_COMM:
			fprintf(f, ",\"comm\":");
			json_str(f, sonde_machine_str(rep->machine, k->comm));
			break;
		case SONDE_SORT_PID: { /* the key is the thread (perf's "pid" sort) */
			const struct sonde_thread *t = sonde_machine_find_thread(rep->machine, k->pid);

			fprintf(f, ",\"pid\":%u,\"tid\":%u", t ? t->pid : k->pid, k->pid);
			break;
		}
		case SONDE_SORT_DSO:
			fprintf(f, ",\"dso\":");
			json_str(f, sonde_report_dso_name(k->dso));
			break;
		case SONDE_SORT_SYM:
			fprintf(f, ",\"symbol\":");
			json_str(f, sonde_report_sym_name(k, NULL, b, sizeof(b)));
			mangled(f, k->sym);
			if (k->sym)
				fprintf(f, ",\"symbol_id\":%u", k->sym->id);
			fprintf(f, ",\"kernel\":%s", k->kernel ? "true" : "false");
			break;
		case SONDE_SORT_SRCLINE:
			fprintf(f, ",\"srcline\":");
			if (k->src.file) {
				json_str(f, k->src.file);
				fprintf(f, ",\"line\":%u", k->src.line);
			} else {
				fprintf(f, "null");
			}
			break;
		}
	}
	fprintf(f, ",\"self\":");
	counts(f, p, nev, sonde_profile_entry_self, i);
	fprintf(f, ",\"total\":");
	counts(f, p, nev, sonde_profile_entry_total, i);
	if (o->callchains && sonde_profile_trie_root(p, i) != SIZE_MAX) {
		fprintf(f, ",\"callchain\":");
		tree(f, p, sonde_profile_trie_root(p, i), nev, o->callchain_limit, 0);
	}
	fputc('}', f);
}

int sonde_report_print_json(FILE *f, const struct sonde_report *rep,
			    const struct sonde_print_opts *o)
{
	const struct sonde_profile *p = rep->profile;
	const struct sonde_profile_opts *po = sonde_profile_opts(p);
	size_t n = sonde_profile_nr_entries(p), nev = rep->nevents, shown = 0;
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	size_t *evs = malloc((nev ? nev : 1) * sizeof(*evs));
	struct sonde_print_opts all = *o;

	if (!idx || !evs) {
		free(idx);
		free(evs);
		return -ENOMEM;
	}
	fprintf(f, "{\"file\":");
	json_str(f, o->file ? o->file : "");
	fprintf(f, ",\"sort\":[");
	for (size_t k = 0; k < po->nkeys; k++) {
		fprintf(f, "%s", k ? "," : "");
		json_str(f, sonde_sort_key_name(po->keys[k]));
	}
	fprintf(f, "],\"children\":%s,\"group\":%s,\"events\":[",
		po->children ? "true" : "false", o->group ? "true" : "false");
	for (size_t e = 0; e < nev; e++) {
		struct sonde_counts t = sonde_profile_total(p, e);

		fprintf(f, "%s{\"name\":", e ? "," : "");
		json_str(f, rep->event_names[e]);
		fprintf(f, ",\"samples\":%" PRIu64 ",\"period\":%" PRIu64 "}", t.samples, t.period);
	}
	fprintf(f,
		"],\"lost\":%" PRIu64 ",\"lost_chunks\":%" PRIu64 ",\"lost_samples\":%" PRIu64
		",\"throttled\":%" PRIu64 ",\"filtered_out\":%" PRIu64,
		rep->lost, rep->lost_chunks, rep->lost_samples, rep->throttled, rep->filtered_out);
	sections(f, rep, o, evs, idx);
	/* Entries in the order of every event side by side, led by the sort event. */
	all.group = true;
	nev = sonde_report_section(rep, &all, 0, evs);
	sonde_profile_sort_events(p, evs, nev, po->children, idx);
	fprintf(f, ",\"entries\":[");
	for (size_t r = 0; r < n; r++) {
		if (!in_a_section(rep, o, evs, idx[r]))
			continue;
		fprintf(f, "%s", shown++ ? "," : "");
		entry(f, rep, o, idx[r]);
	}
	fprintf(f, "]}\n");
	free(idx);
	free(evs);
	return ferror(f) ? -EIO : 0;
}
