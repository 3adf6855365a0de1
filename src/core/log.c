// SPDX-License-Identifier: MIT
/*
 * The library's single logging hook, and its only global state.  The
 * library never prints: sonde_log() formats a message into a bounded
 * buffer and hands it to the callback the program installed with
 * sonde_log_set() (the CLI prints warnings, and debug notes with
 * SONDE_DEBUG=1 or -v); with no callback the message is dropped unformatted.
 */
#include <sonde/log.h>

#include <stdarg.h>
#include <stdio.h>

static sonde_log_fn log_fn;
static void *log_data;

void sonde_log_set(sonde_log_fn fn, void *data)
{
	log_fn = fn;
	log_data = data;
}

void sonde_log(enum sonde_log_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_fn(level, buf, log_data);
}
