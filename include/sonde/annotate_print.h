/* SPDX-License-Identifier: MIT */
/*
 * Text and JSON views of annotations (sonde annotate --stdio / --json).
 * They read finished annotations only.
 */
#ifndef SONDE_ANNOTATE_PRINT_H
#define SONDE_ANNOTATE_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include <sonde/annotate.h>

enum sonde_annotate_view {
	SONDE_ANNOTATE_MIXED = 0, /* source lines interleaved with their instructions */
	SONDE_ANNOTATE_SOURCE,	  /* --source-only */
	SONDE_ANNOTATE_ASM,	  /* --asm-only */
};

struct sonde_annotate_print_opts {
	const char *const *event_names; /* [nevents] */
	enum sonde_annotate_view view;
	bool sort_hot;	   /* rows with samples by heat instead of in code order */
	size_t sort_event; /* the event --sort hot orders by */
	const char *file;  /* the capture, shown in the JSON */
};

/* Return: 0, or -EIO when writing failed. */
int sonde_annotate_print_stdio(FILE *out, const struct sonde_annotation *a,
			       const struct sonde_annotate_print_opts *o);
/**
 * sonde_annotate_print_json() - annotations as one JSON document (--json)
 * @out: the stream
 * @as: the @n annotations, in the order shown
 * @n: how many
 * @o: what to show
 * Return: 0, or -EIO when writing failed.
 */
int sonde_annotate_print_json(FILE *out, const struct sonde_annotation *const *as, size_t n,
			      const struct sonde_annotate_print_opts *o);

#endif
