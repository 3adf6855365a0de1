// SPDX-License-Identifier: MIT
/* Error texts, generated from the same table as the codes. */
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
