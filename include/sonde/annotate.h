/* SPDX-License-Identifier: MIT */
/*
 * Annotate: which instructions and source lines of a function the samples
 * hit, per event, side by side (sonde annotate; perf annotate's job).
 *
 * Two steps.  During the report pass (sonde_report_build() with
 * sonde_annotate_tool among its tools), every kept
 * sample's leaf frame is counted per (symbol, object address) for the
 * symbols asked for, by name or by id, or for every symbol when none was
 * asked (the hottest are picked afterwards).  Then, per chosen symbol,
 * sonde_annotation_build() makes the model the views print: the
 * function's instructions (its bytes from the object's own file,
 * disassembled), each with its counts, source line and innermost inlined
 * function; the source lines with the counts of their instructions; and
 * the source files, found through the DWARF path, --prefix-map and
 * --source-dir, or the list of paths tried.
 *
 * Symbols and strings are borrowed from the report's symbol world, which
 * must outlive the accumulator and every annotation.
 */
#ifndef SONDE_ANNOTATE_H
#define SONDE_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/profile.h>
#include <sonde/report.h>
#include <sonde/symbols.h>

/* Which symbols to histogram; both lists empty: all of them. */
struct sonde_annotate_opts {
	const char *const *names; /* symbol names as the report prints them */
	size_t nnames;
	const uint32_t *ids; /* symbol ids of sonde report --json ("symbol_id") */
	size_t nids;
};

struct sonde_annotate;

/**
 * sonde_annotate_new() - an accumulator for a capture of @nevents events
 * Return: 0 with *out new (free with sonde_annotate_free()), or -ENOMEM.
 */
int sonde_annotate_new(struct sonde_annotate **out, size_t nevents,
		       const struct sonde_annotate_opts *o);
void sonde_annotate_free(struct sonde_annotate *an);

struct sonde_tool;
/* The accumulator as a tool of the report pass: ctx is the struct sonde_annotate. */
extern const struct sonde_tool sonde_annotate_tool;

/**
 * sonde_annotate_hottest() - the symbols with samples, hottest first
 * @ev: the event whose period orders them (ties: lower symbol id first)
 * Fills at most @max.  Return: the number of symbols with samples.
 */
size_t sonde_annotate_hottest(const struct sonde_annotate *an, size_t ev,
			      const struct sonde_symbol **out, size_t max);

/* Where source files are looked for; every field may be zero. */
struct sonde_annotate_build_opts {
	const char *arch;		/* the capture's uname -m (NULL: this machine's) */
	const char *const *source_dirs; /* --source-dir */
	size_t nsource_dirs;
	const char *const *prefix_maps; /* --prefix-map OLD=NEW */
	size_t nprefix_maps;
	bool no_source; /* do not read source files */
};

struct sonde_annotate_insn {
	uint64_t addr;			   /* object address */
	uint32_t size;			   /* 0: no code was read here (a sampled address only) */
	const char *text;		   /* "idiv %ecx"; "" without code */
	struct sonde_srcline src;	   /* file NULL when the DWARF has no line */
	const char *inlined;		   /* innermost inlined function here, or NULL */
	size_t line;			   /* index into lines, or SIZE_MAX */
	const struct sonde_counts *counts; /* [nevents] */
	bool hot;
};

struct sonde_annotate_line {
	struct sonde_srcline src;
	const char *inlined; /* the inlined function the line's code belongs to, or NULL */
	size_t source;	     /* index into sources */
	const struct sonde_counts *counts;
	bool hot;
};

struct sonde_annotate_source {
	const char *file;	/* as the DWARF names it */
	const char *comp_dir;	/* what a relative @file is relative to, or NULL */
	const char *path;	/* where it was found, or NULL */
	const char *looked_for; /* the paths tried, ", "-separated */
	size_t nlines;		/* lines of text read (0 when not found) */
	char *text;		/* private */
	size_t *starts;		/* private */
};

struct sonde_annotation {
	const struct sonde_symbol *sym;
	size_t nevents;
	const struct sonde_counts *total;  /* [nevents]: the function's samples */
	struct sonde_annotate_insn *insns; /* address order */
	size_t ninsns;
	struct sonde_annotate_line *lines; /* by source (main file first), then line */
	size_t nlines;
	struct sonde_annotate_source *sources;
	size_t nsources;
	int disasm_err; /* 0, or why instructions have no text (-ENOENT: no code in the file) */
	void *priv;
};

/**
 * sonde_annotation_build() - the annotation of @sym from what @an counted
 * Return: 0 with *out new (free with sonde_annotation_free()), or
 * -ENOMEM.  Missing code or sources are not errors: see disasm_err and
 * the sources' path.
 */
int sonde_annotation_build(struct sonde_annotation **out, const struct sonde_annotate *an,
			   const struct sonde_symbol *sym,
			   const struct sonde_annotate_build_opts *o);
void sonde_annotation_free(struct sonde_annotation *a);

/* Borrowed: line @line (1-based) of @s without its newline, *len its length; NULL past the end. */
const char *sonde_annotate_source_line(const struct sonde_annotate_source *s, uint32_t line,
				       size_t *len);

/* Percent of the function's period for event @ev. */
double sonde_annotate_percent(const struct sonde_annotation *a, const struct sonde_counts *c,
			      size_t ev);

#endif
