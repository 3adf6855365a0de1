// SPDX-License-Identifier: MIT
/*
 * Letting pending signals through without waiting: ppoll() on no
 * descriptors with a zero timeout checks for a pending signal before it
 * times out (fs/select.c do_poll), and then returns EINTR with the
 * handler run under @waitmask, exactly as a real wait would have.
 */
#include <sonde/signals.h>

#include <errno.h>
#include <poll.h>
#include <stddef.h>

int sonde_signals_deliver(const sigset_t *waitmask)
{
	static const struct timespec zero = {0, 0};

	if (!waitmask)
		return 0;
	return ppoll(NULL, 0, &zero, waitmask) < 0 && errno == EINTR;
}
