/* SPDX-License-Identifier: MIT */
/*
 * The one logging hook of the library.  The library never prints; it hands
 * warnings and debug notes to a callback the program installs (the CLI
 * prints them to stderr).  With no callback installed, nothing is said.
 */
#ifndef SONDE_LOG_H
#define SONDE_LOG_H

enum sonde_log_level { SONDE_LOG_ERROR, SONDE_LOG_WARN, SONDE_LOG_INFO, SONDE_LOG_DEBUG };

typedef void (*sonde_log_fn)(enum sonde_log_level level, const char *msg, void *data);

/* Installs @fn (NULL to silence) with its @data. */
void sonde_log_set(sonde_log_fn fn, void *data);

/**
 * sonde_log() - hand a message to the installed log hook
 * @level: how much it matters (the CLI shows debug notes only when asked)
 * @fmt: printf format; the text is cut at 1023 bytes
 * Nothing happens when no hook is installed (sonde_log_set()).  Use the
 * sonde_warn() and sonde_debug() shorthands.
 */
void sonde_log(enum sonde_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define sonde_warn(...) sonde_log(SONDE_LOG_WARN, __VA_ARGS__)
#define sonde_debug(...) sonde_log(SONDE_LOG_DEBUG, __VA_ARGS__)

#endif
