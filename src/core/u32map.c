// SPDX-License-Identifier: MIT
/*
 * A u32 -> u32 hash map (event ids to attrs, pids to table slots):
 * open addressing with linear probing and a multiplicative hash, in three
 * parallel arrays (keys, values, used).  It doubles when half full, so a
 * probe is short.  No deletion: its users map ids that only ever gain
 * values.
 */
#include <sonde/u32map.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sonde_u32map_init(struct sonde_u32map *m)
{
	memset(m, 0, sizeof(*m));
}

void sonde_u32map_fini(struct sonde_u32map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static size_t slot_of(uint32_t key, size_t cap)
{
	return (size_t)((key * 2654435761u) & (cap - 1));
}

static int grow(struct sonde_u32map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct sonde_u32map n = {
	    .keys = malloc(cap * sizeof(uint32_t)),
	    .vals = malloc(cap * sizeof(uint32_t)),
	    .used = calloc(cap, 1),
	    .cap = cap,
	};

	if (!n.keys || !n.vals || !n.used) {
		sonde_u32map_fini(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			sonde_u32map_put(&n, m->keys[i], m->vals[i]);
	sonde_u32map_fini(m);
	*m = n;
	return 0;
}

int sonde_u32map_put(struct sonde_u32map *m, uint32_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

bool sonde_u32map_get(const struct sonde_u32map *m, uint32_t key, uint32_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
	}
	return false;
}
