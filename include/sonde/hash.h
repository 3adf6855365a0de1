/* SPDX-License-Identifier: MIT */
/*
 * The one string and byte hash of sonde: 64-bit FNV-1a.  The open
 * addressing tables (strings, dsos, build ids, threads' names, the
 * agent's objects) index by it, and the kallsyms cache names its files
 * with it, so its values must never change: they are the published FNV-1a
 * ones (offset basis 14695981039346656037, prime 1099511628211).  Inline,
 * libc only: the target side (the agent) uses it too.
 */
#ifndef SONDE_HASH_H
#define SONDE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define SONDE_FNV1A_INIT 0xcbf29ce484222325ull
#define SONDE_FNV1A_PRIME 0x100000001b3ull

/* Continues the hash @h over @n bytes at @p (start with SONDE_FNV1A_INIT). */
static inline uint64_t sonde_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * SONDE_FNV1A_PRIME;
	return h;
}

/* The hash of a NUL-terminated string (the NUL not included). */
static inline uint64_t sonde_fnv1a_str(const char *s)
{
	uint64_t h = SONDE_FNV1A_INIT;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * SONDE_FNV1A_PRIME;
	return h;
}

#endif
