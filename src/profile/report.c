// SPDX-License-Identifier: MIT
/*
 * The report: a session pass with the profile tool (and the timeline
 * tool for the HTML view) after the caller's own tools, so every profile
 * view, annotate included, is built by one read of the capture.
 */
#include <sonde/report.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOOLS 8

int sonde_report_build(struct sonde_report **out, struct sonde_pd_reader *r,
		       const struct sonde_report_opts *o, struct sonde_errmsg *err)
{
	struct sonde_report *rep = calloc(1, sizeof(*rep));
	struct sonde_profile_tool pt = {.opts = {.nkeys = o->nkeys,
						 .children = o->children,
						 .callchains = o->callchains,
						 .caller_order = o->caller_order}};
	struct sonde_tool_slot slots[MAX_TOOLS];
	struct sonde_session_opts so = o->ses;
	size_t n = 0;
	int ret;

	if (!rep)
		return -ENOMEM;
	if (o->ntools > MAX_TOOLS - 2) {
		free(rep);
		return -EINVAL;
	}
	memcpy(pt.opts.keys, o->keys, sizeof(pt.opts.keys));
	so.callchains = o->callchains;
	for (size_t i = 0; i < o->nkeys; i++)
		so.srcline |= o->keys[i] == SONDE_SORT_SRCLINE;
	for (size_t i = 0; i < o->ntools; i++)
		slots[n++] = o->tools[i];
	if (o->timeline)
		slots[n++] = (struct sonde_tool_slot){&sonde_timeline_tool, &rep->timeline};
	slots[n++] = (struct sonde_tool_slot){&sonde_profile_tool, &pt};
	ret = sonde_session_run(&rep->ses, r, &so, slots, n, err);
	rep->profile = pt.profile;
	if (ret) {
		sonde_report_free(rep);
		return ret;
	}
	*out = rep;
	return 0;
}

void sonde_report_free(struct sonde_report *rep)
{
	if (!rep)
		return;
	sonde_profile_free(rep->profile);
	sonde_timeline_free(rep->timeline);
	sonde_session_free(rep->ses);
	free(rep);
}

const char *sonde_report_sym_name(const struct sonde_entry_key *k, const struct sonde_frame *f,
				  char *buf, size_t len)
{
	const struct sonde_symbol *sym = k ? k->sym : f->sym;
	uint64_t addr = k ? k->addr : f->addr;

	if (sym)
		return sym->name;
	snprintf(buf, len, "0x%016" PRIx64, addr);
	return buf;
}
