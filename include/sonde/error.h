/* SPDX-License-Identifier: MIT */
/*
 * Error codes of the sonde library.
 *
 * Every function that can fail returns 0 (or a count) on success and a
 * negative code on failure: either -errno from the kernel or libc, or one
 * of sonde's own codes below.  sonde's codes live below -SONDE_ERRNO_MAX so
 * that they never collide with errno values.  One X-macro table generates
 * both the enum and the messages, so a code can't lack its text.
 *
 * A failing object also keeps a message with context (file, offset, event
 * name); sonde_strerror() only names the kind of failure.
 */
#ifndef SONDE_ERROR_H
#define SONDE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define SONDE_ERRNO_MAX 4095

#define SONDE_ERRORS(X)                                                                            \
	X(SONDE_E_PARSE, "syntax error")                                                           \
	X(SONDE_E_UNKNOWN_EVENT, "unknown event")                                                  \
	X(SONDE_E_NOT_SUPPORTED, "not supported on this machine")                                  \
	X(SONDE_E_FORMAT, "malformed data")                                                        \
	X(SONDE_E_TRUNCATED, "truncated data")                                                     \
	X(SONDE_E_NO_TRACEFS, "tracefs is not available")                                          \
	X(SONDE_E_WORKLOAD, "the workload could not be started")                                   \
	X(SONDE_E_LIMIT, "a size limit was exceeded")

/* clang-format would indent SONDE_E_LAST_ as a continuation of the macro. */
// clang-format off
enum sonde_error {
	SONDE_E_FIRST_ = -SONDE_ERRNO_MAX - 1,
#define SONDE_X_ENUM(name, text) name,
	SONDE_ERRORS(SONDE_X_ENUM)
#undef SONDE_X_ENUM
	SONDE_E_LAST_
};
// clang-format on

/**
 * sonde_strerror() - the text of an error code
 * @err: a negative code returned by a sonde function (or -errno)
 *
 * Return: borrowed: a static string.
 */
const char *sonde_strerror(int err);

/*
 * A message with context, kept by the object that failed.  Fixed size so
 * that recording an error can never fail itself.
 */
struct sonde_errmsg {
	char text[512];
};

/* Formats into @m and returns @err, so callers can write
 * "return sonde_errmsg_set(&x->err, -EINVAL, "...", ...);". */
int sonde_errmsg_set(struct sonde_errmsg *m, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
