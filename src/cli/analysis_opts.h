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

/*
 * perf's build-id cache folder: @opt (--buildid-dir), else $HOME/.debug, as
 * perf 6.1 chooses it (it sets PERF_BUILDID_DIR for the scripts it runs but
 * never reads it).  Return: borrowed (@opt or a static buffer), or NULL.
 */
const char *cli_buildid_dir(const char *opt);
/*
 * Where the library caches this boot's /proc/kallsyms: $XDG_CACHE_HOME/sonde,
 * else $HOME/.cache/sonde; NULL (no cache) with SONDE_NO_CACHE set or
 * neither variable.  Return: borrowed (a static buffer), or NULL.
 */
const char *cli_kallsyms_cache_dir(void);
/*
 * The session options report and annotate fill alike: the --comm, --pid
 * and --dso filters, the debug folders and images, and the caches' folders
 * (the build-id cache as given or perf's default, the kallsyms cache).
 * The lists are borrowed for the pass.
 */
void cli_session_opts(struct sonde_session_opts *so, const struct sonde_strlist *comms,
		      const uint32_t *pids, size_t npids, const struct sonde_strlist *dsos,
		      const struct sonde_strlist *debug_dirs, const struct sonde_strlist *images);
/* One warning line per object whose samples stay unresolved for a reason the
 * user must know (a file rebuilt since the capture). */
void cli_warn_objects(const struct sonde_session *ses);

#endif
