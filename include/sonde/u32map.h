/* SPDX-License-Identifier: MIT */
/* An open-addressing hash map from u32 keys to u32 values (pids to indexes). */
#ifndef SONDE_U32MAP_H
#define SONDE_U32MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sonde_u32map {
	uint32_t *keys; /* owned */
	uint32_t *vals; /* owned */
	uint8_t *used;	/* owned */
	size_t cap, n;	/* cap is a power of two */
};

/**
 * sonde_u32map_init() - start an empty map (allocates nothing until the first put)
 * @m: caller's storage
 */
void sonde_u32map_init(struct sonde_u32map *m);
/**
 * sonde_u32map_fini() - free the map's arrays
 * @m: the map; empty again afterwards
 */
void sonde_u32map_fini(struct sonde_u32map *m);
/* Inserts or replaces.  Return: 0 or -ENOMEM. */
int sonde_u32map_put(struct sonde_u32map *m, uint32_t key, uint32_t val);
/* Return: true with *val set when @key is present. */
bool sonde_u32map_get(const struct sonde_u32map *m, uint32_t key, uint32_t *val);

#endif
