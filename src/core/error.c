// SPDX-License-Identifier: MIT
/*
 * Error texts: sonde_strerror() for both kinds of codes the library
 * returns.  sonde's own codes index a table generated from the X-macro in
 * include/sonde/error.h (the same one that numbers them, so a code never
 * lacks a text); anything else is a negative errno and goes to strerror().
 * sonde_errmsg_set() keeps a formatted message with its context (the
 * spec, the file and offset) beside the code it returns, so a caller can
 * fail with one statement.
 */
#include <sonde/error.h>

#include <stdio.h>
#include <string.h>

static const char *const texts[] = {
#define SONDE_X_TEXT(name, text) [name - SONDE_E_FIRST_ - 1] = text,
    SONDE_ERRORS(SONDE_X_TEXT)
#undef SONDE_X_TEXT
};

const char *sonde_strerror(int err)
{
	if (err > SONDE_E_FIRST_ && err < SONDE_E_LAST_)
		return texts[err - SONDE_E_FIRST_ - 1];
	if (err < 0 && err >= -SONDE_ERRNO_MAX)
		return strerror(-err);
	return "unknown error";
}

int sonde_errmsg_set(struct sonde_errmsg *m, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->text, sizeof(m->text), fmt, ap);
	va_end(ap);
	return err;
}
