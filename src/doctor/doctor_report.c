// SPDX-License-Identifier: MIT
/*
 * sonde doctor's report: a growable array of checks, each with an id, a
 * title, a status, what was measured and how to fix it.  The check groups
 * (doctor_*.c) add to it through sonde_doctor_add(); sonde_doctor_run()
 * (doctor.c) calls the groups.  Kept apart from the run so the groups
 * depend on the report and the run on the groups, never in a circle.
 */
#include <sonde/doctor.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"

void sonde_doctor_report_init(struct sonde_doctor_report *rep)
{
	memset(rep, 0, sizeof(*rep));
}

static void check_fini(struct sonde_doctor_check *c)
{
	free(c->id);
	free(c->title);
	free(c->detail);
	free(c->fix);
}

void sonde_doctor_report_fini(struct sonde_doctor_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		check_fini(&rep->v[i]);
	free(rep->v);
	memset(rep, 0, sizeof(*rep));
}

struct sonde_doctor_check *sonde_doctor_report_add(struct sonde_doctor_report *rep, const char *id,
						   const char *title,
						   enum sonde_doctor_status status,
						   const char *detail, const char *fix)
{
	struct sonde_doctor_check *c;

	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 32;
		struct sonde_doctor_check *v = realloc(rep->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		rep->v = v;
		rep->cap = cap;
	}
	c = &rep->v[rep->n];
	/* Heap copies: a fixed field once cut an explanation mid-sentence. */
	c->id = strdup(id);
	c->title = strdup(title);
	c->status = status;
	c->detail = strdup(detail ? detail : "");
	c->fix = strdup(fix ? fix : "");
	if (!c->id || !c->title || !c->detail || !c->fix) {
		check_fini(c);
		return NULL;
	}
	rep->n++;
	return c;
}

const struct sonde_doctor_check *sonde_doctor_find(const struct sonde_doctor_report *rep,
						   const char *id)
{
	for (size_t i = 0; i < rep->n; i++)
		if (!strcmp(rep->v[i].id, id))
			return &rep->v[i];
	return NULL;
}

const char *sonde_doctor_status_name(enum sonde_doctor_status s)
{
	switch (s) {
	case SONDE_DOCTOR_OK:
		return "ok";
	case SONDE_DOCTOR_WARN:
		return "warn";
	case SONDE_DOCTOR_UNAVAILABLE:
		return "unavailable";
	case SONDE_DOCTOR_FAIL:
		return "fail";
	}
	return "?";
}

int sonde_doctor_add(struct sonde_doctor_report *rep, const char *id, const char *title,
		     enum sonde_doctor_status status, const char *fix, const char *fmt, ...)
{
	char *detail;
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vasprintf(&detail, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	r = sonde_doctor_report_add(rep, id, title, status, detail, fix) ? 0 : -ENOMEM;
	free(detail);
	return r;
}
