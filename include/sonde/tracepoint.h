/* SPDX-License-Identifier: MIT */
/* Tracepoints as tracefs lists them: events/SYSTEM/EVENT/{id,format}. */
#ifndef SONDE_TRACEPOINT_H
#define SONDE_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/strlist.h>

/* Event systems (events/ subfolders), sorted. */
int sonde_tracepoint_systems(const char *tracefs, struct sonde_strlist *out);
/* Events of @system, sorted. */
int sonde_tracepoint_events(const char *tracefs, const char *system, struct sonde_strlist *out);
/* The tracepoint's id (attr.config for PERF_TYPE_TRACEPOINT). */
int sonde_tracepoint_id(const char *tracefs, const char *system, const char *event, uint64_t *id);

/**
 * sonde_tp_format_safe() - whether format text @text has the kernel's shape
 * (printable ASCII field list with balanced brackets; every REC->NAME of
 * the print format a field of the event), so libtraceevent may parse it
 */
bool sonde_tp_format_safe(const char *text, size_t len);

#endif
