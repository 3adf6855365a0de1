// SPDX-License-Identifier: MIT
/* Placeholder until the libdwfl unwinder lands: no user frames from stacks. */
#include <sonde/unwind.h>

#include <errno.h>
#include <stdlib.h>

struct sonde_unwinder {
	int unused;
};

int sonde_unwinder_new(struct sonde_unwinder **out, sonde_unwind_find_map_fn find, void *ctx)
{
	(void)find, (void)ctx;
	return (*out = calloc(1, sizeof(**out))) ? 0 : -ENOMEM;
}

void sonde_unwinder_free(struct sonde_unwinder *u)
{
	free(u);
}

int sonde_unwind(struct sonde_unwinder *u, const struct sonde_unwind_sample *s, uint64_t *ips,
		 size_t max)
{
	(void)u, (void)s, (void)ips, (void)max;
	return -ENOTSUP;
}

void sonde_unwinder_forget(struct sonde_unwinder *u, uint32_t pid)
{
	(void)u, (void)pid;
}
