// SPDX-License-Identifier: MIT
/* What the commands reading a capture (report, annotate, script) share. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/symbols.h>

#include "analysis_opts.h"
#include "cli.h"

int cli_add_list(struct sonde_strlist *l, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t && !r; t = strtok_r(NULL, ",", &save))
		r = sonde_strlist_add(l, t);
	free(copy);
	return r;
}

void cli_progress(void *ctx, uint64_t off, uint64_t size)
{
	if (size)
		fprintf(stderr, "\rsonde %s: reading %3.0f%%", (const char *)ctx,
			100.0 * (double)off / (double)size);
}

int cli_pick_event(const char *cmd, const char *spec, const struct sonde_report *rep, size_t *ev)
{
	char *end;
	unsigned long n;

	*ev = 0;
	if (!spec)
		return 0;
	n = strtoul(spec, &end, 10);
	if (!*end && n < rep->ses->nevents) {
		*ev = n;
		return 0;
	}
	for (size_t i = 0; i < rep->ses->nevents; i++)
		if (!strcmp(rep->ses->event_names[i], spec)) {
			*ev = i;
			return 0;
		}
	return cli_usage_error(cmd, "--sort-event: the capture has no event '%s'", spec);
}

const char *cli_buildid_dir(const char *opt)
{
	static char buf[4096];
	const char *home = getenv("HOME");

	if (opt)
		return opt;
	if (!home || !*home || (size_t)snprintf(buf, sizeof(buf), "%s/.debug", home) >= sizeof(buf))
		return NULL;
	return buf;
}

const char *cli_kallsyms_cache_dir(void)
{
	static char buf[4096];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (getenv("SONDE_NO_CACHE"))
		return NULL;
	if (xdg && *xdg)
		n = snprintf(buf, sizeof(buf), "%s/sonde", xdg);
	else if (home && *home)
		n = snprintf(buf, sizeof(buf), "%s/.cache/sonde", home);
	else
		return NULL;
	return n > 0 && (size_t)n < sizeof(buf) ? buf : NULL;
}

void cli_warn_objects(const struct sonde_session *ses)
{
	char line[1024];

	for (size_t i = 0; i < sonde_symtab_nr_dsos(ses->symtab); i++) {
		const char *w = sonde_dso_warning(sonde_symtab_dso(ses->symtab, (uint32_t)i), line,
						  sizeof(line));

		if (w)
			cli_warn("%s", w);
	}
}

void cli_session_opts(struct sonde_session_opts *so, const struct sonde_strlist *comms,
		      const uint32_t *pids, size_t npids, const struct sonde_strlist *dsos,
		      const struct sonde_strlist *debug_dirs, const struct sonde_strlist *images)
{
	so->filter.comms = (const char *const *)comms->v;
	so->filter.ncomms = comms->n;
	so->filter.pids = pids;
	so->filter.npids = npids;
	so->filter.dsos = (const char *const *)dsos->v;
	so->filter.ndsos = dsos->n;
	so->sym.debug_dirs = (const char *const *)debug_dirs->v;
	so->sym.nr_debug_dirs = debug_dirs->n;
	so->sym.buildid_dir = cli_buildid_dir(so->sym.buildid_dir);
	so->sym.kallsyms_cache_dir = cli_kallsyms_cache_dir();
	so->sym.images = (const char *const *)images->v;
	so->sym.nr_images = images->n;
}
