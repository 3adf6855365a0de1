/* SPDX-License-Identifier: MIT */
/*
 * Capture loops block their stop signals and unblock them only inside
 * ppoll(), so no signal slips between a check and the wait.  But ppoll()
 * delivers a signal only when no descriptor is ready: under a flood of
 * events a ring or trace_pipe always is, and a Ctrl-C would stay pending
 * for as long as the flood lasts.  After each ppoll() that found work, the
 * loops call this to let pending signals through to their handlers.
 */
#ifndef SONDE_SIGNALS_H
#define SONDE_SIGNALS_H

#include <signal.h>

/**
 * sonde_signals_deliver() - run the handlers of signals pending and unblocked by @waitmask
 * @waitmask: the mask the loop's ppoll() uses (NULL: do nothing)
 *
 * Return: 1 when a signal was delivered, 0 otherwise.
 */
int sonde_signals_deliver(const sigset_t *waitmask);

#endif
