/* SPDX-License-Identifier: MIT */
/* Helpers of the commands that read a capture (report, annotate, script). */
#ifndef SONDE_CLI_ANALYSIS_OPTS_H
#define SONDE_CLI_ANALYSIS_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include <sonde/report.h>
#include <sonde/strlist.h>

/* Adds the comma-separated items of @arg to @l. Return: 0 or -ENOMEM. */
int cli_add_list(struct sonde_strlist *l, const char *arg);
/* A report pass's progress hook; @ctx is the command's name. */
void cli_progress(void *ctx, uint64_t off, uint64_t size);
/* The event --sort-event @spec names (index or name), 0 without one.
 * Return: 0, or EXIT_USAGE after the message. */
int cli_pick_event(const char *cmd, const char *spec, const struct sonde_report *rep, size_t *ev);

#endif
