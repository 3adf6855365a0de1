/* SPDX-License-Identifier: MIT */
/*
 * Lists of ids as users and sysfs write them: "1234,1240", "0-3,8".
 *
 * Every command's -p, -t, -P, --pid, --tid and -C goes through this one
 * parser, so every one applies the same rules: decimal digits only, each id
 * inside the kind's range (checked before it can wrap: "4294967297" is an
 * error, never pid 1), ranges only where the kind allows them.
 */
#ifndef SONDE_IDLIST_H
#define SONDE_IDLIST_H

#include <stddef.h>
#include <stdint.h>

#include <sonde/error.h>

/* What a list holds: its name for messages and the ids it may contain. */
struct sonde_idkind {
	const char *what; /* "process id", "CPU", ... */
	int64_t min, max; /* inclusive */
	int ranges;	  /* "a-b" allowed (expands to a..b) */
};

/* PID_MAX_LIMIT (include/linux/threads.h): no pid or tid is larger. */
#define SONDE_PID_MAX (4 * 1024 * 1024)
/* Above the kernel's NR_CPUS limit (CONFIG_NR_CPUS_RANGE_END). */
#define SONDE_CPU_MAX 8191

extern const struct sonde_idkind sonde_idkind_pid; /* 1..SONDE_PID_MAX */
extern const struct sonde_idkind sonde_idkind_tid; /* 1..SONDE_PID_MAX */
/* Filters over a capture's samples: pid 0 is the idle task there. */
extern const struct sonde_idkind sonde_idkind_sample_pid; /* 0..SONDE_PID_MAX */
extern const struct sonde_idkind sonde_idkind_sample_tid; /* 0..SONDE_PID_MAX */
extern const struct sonde_idkind sonde_idkind_cpu;	  /* 0..SONDE_CPU_MAX, ranges */
extern const struct sonde_idkind sonde_idkind_index;	  /* 0..UINT32_MAX: table indexes */

/**
 * sonde_idlist_add() - append the ids of a list to an int array
 * @text: the list; one trailing newline is allowed (sysfs files end in one)
 * @kind: the rules
 * @v, @n: the array (NULL and 0, or made by these functions: they keep
 *   room in powers of two; the caller frees *v) and its length
 * @err: says which token is wrong and why
 *
 * Return: 0, -EINVAL (syntax), -ERANGE (an id outside the kind's range) or
 * -ENOMEM.  On error *v and *n hold the ids before the bad token.
 */
int sonde_idlist_add(const char *text, const struct sonde_idkind *kind, int **v, size_t *n,
		     struct sonde_errmsg *err);
/* The same into a uint32_t array (ids as perf.data records hold them). */
int sonde_idlist_add_u32(const char *text, const struct sonde_idkind *kind, uint32_t **v, size_t *n,
			 struct sonde_errmsg *err);

#endif
