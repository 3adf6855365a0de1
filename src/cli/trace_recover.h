/* SPDX-License-Identifier: MIT */
/*
 * What `sonde trace` says about killed recordings, and `sonde trace
 * recover`, which turns their page files into the trace.dat they would
 * have become (the library side is sonde/trace_out.h).
 */
#ifndef SONDE_TRACE_RECOVER_H
#define SONDE_TRACE_RECOVER_H

struct cli;

/* Says what killed sondes left (removing leftovers with no data).  For every trace run. */
void trace_check_leftovers(void);

/* sonde trace recover [FILE] */
int trace_recover(int argc, char **argv, struct cli *cli);

#endif
