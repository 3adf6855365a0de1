/* SPDX-License-Identifier: MIT */
/*
 * What the subcommands share: the dispatcher's context (where the kernel's
 * trees are), error printing, and the exit codes.  Only src/cli prints.
 */
#ifndef SONDE_CLI_H
#define SONDE_CLI_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/evspec.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct cli {
	char tracefs[PATH_MAX]; /* empty until cli_roots() found it */
	struct sonde_roots roots;
	bool roots_ready;
	int debug; /* the library's debug messages on stderr: SONDE_DEBUG, report -v */
};

/* Fills cli->roots, mounting tracefs if nothing is mounted (we may be root).
 * Return: borrowed: the roots, with tracefs NULL when there is none. */
const struct sonde_roots *cli_roots(struct cli *cli);

/*
 * Stop signals (src/cli/signals.c): cli_catch_stop_signals() installs
 * handlers that set cli_stop_signal (SIGINT, SIGTERM, and SIGHUP when @hup)
 * and cli_child_exited (SIGCHLD); the wait loops read and clear them.
 */
extern volatile sig_atomic_t cli_stop_signal, cli_child_exited;
void cli_catch_stop_signals(bool hup);

/* A workload's wait status as sonde's exit code: its own, or 128 + the signal
 * that killed it (as the shell does); EXIT_OK when there was none (< 0). */
int cli_workload_exit_code(int status);

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Warnings on stderr, unless a command's -q set cli_quiet. */
extern bool cli_quiet;
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Checks a command's target options (a workload, -p, -t, -a/-C): one kind
 * at most and at least one.  Return: 0, or EXIT_USAGE after the message.
 */
int cli_check_target(const char *cmd, bool workload, size_t npids, size_t ntids, bool all_cpus);

/* Prints a usage error and the hint to run --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct sonde_idkind;
/*
 * Appends the ids of @arg (option @opt of @cmd) with the one id-list parser
 * (sonde/idlist.h).  Return: 0, -ENOMEM, or EXIT_USAGE after the message.
 */
int cli_ids(const char *cmd, const char *opt, const char *arg, const struct sonde_idkind *kind,
	    int **v, size_t *n);
int cli_ids_u32(const char *cmd, const char *opt, const char *arg, const struct sonde_idkind *kind,
		uint32_t **v, size_t *n);

struct sonde_evlist;
/*
 * After perf's fallback to user space (sonde_event_fallback_user): renames
 * the events of @l that fell back (@user_only[i]) as perf does (":u") and
 * says once why the kernel is not counted.
 */
void cli_user_only(struct sonde_evlist *l, const bool *user_only);

struct sonde_agent_record_req;
/* How a host authenticates to an agent: --token, --token-file (either may
 * be NULL; then $SONDE_AGENT_TOKEN, then a local agent's default file). */
struct cli_agent_auth {
	const char *token, *token_file;
};
/* record_remote.c: --target for record and list; @cache_dir: the build-id
 * cache for the target's [vdso] (NULL: --no-buildid-cache). */
int record_remote(const char *target, const struct cli_agent_auth *auth,
		  struct sonde_agent_record_req *req, const char *output, int zlevel,
		  const char *cache_dir);

struct sonde_record_bids;
/* record_cache.c: keeps the [vdso] image in @fd (a negative fd: the error
 * that kept it from being read) in perf's build-id cache @dir when the
 * capture's samples fell in it (@found); NULL @dir: nothing.  Warns on failure. */
void cli_cache_vdso(const char *dir, const struct sonde_record_bids *found, int fd);
int list_remote(const char *target, const struct cli_agent_auth *auth, const char *glob);

int cmd_stat(int argc, char **argv, struct cli *cli);
int cmd_record(int argc, char **argv, struct cli *cli);
int cmd_report(int argc, char **argv, struct cli *cli);
int cmd_annotate(int argc, char **argv, struct cli *cli);
int cmd_list(int argc, char **argv, struct cli *cli);
int cmd_doctor(int argc, char **argv, struct cli *cli);
int cmd_trace(int argc, char **argv, struct cli *cli);
int cmd_script(int argc, char **argv, struct cli *cli);
int cmd_sched(int argc, char **argv, struct cli *cli);
int cmd_evlist(int argc, char **argv, struct cli *cli);
int cmd_version(int argc, char **argv, struct cli *cli);
int cmd_buildid_list(int argc, char **argv, struct cli *cli);

#endif
