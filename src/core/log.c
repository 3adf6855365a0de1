// SPDX-License-Identifier: MIT
/* The library's single logging hook: the only global besides nothing. */
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
