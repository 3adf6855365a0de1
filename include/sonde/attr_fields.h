/* SPDX-License-Identifier: MIT */
#ifndef SONDE_ATTR_FIELDS_H
#define SONDE_ATTR_FIELDS_H

#include <linux/perf_event.h>
#include <stddef.h>

/* One field of an event's attributes, as text (sonde_attr_fields()). */
typedef void (*sonde_attr_field_fn)(void *ctx, const char *name, const char *value);

/**
 * sonde_attr_fields() - the set fields of @attr as (name, value) text pairs
 * @attr: the event's attributes
 * @fn: called once per field that is not zero, in perf's order
 * @ctx: passed to @fn
 *
 * Names and value shapes are perf's (perf evlist -v, the "# event :" lines
 * of perf report --header, perf record -vv): numbers in decimal, config and
 * register masks in hex, sample_type, read_format and branch_sample_type as
 * '|'-joined flag names, union members under perf's "{ a, b }" names.
 * Return: the number of fields passed to @fn.
 */
size_t sonde_attr_fields(const struct perf_event_attr *attr, sonde_attr_field_fn fn, void *ctx);

#endif
