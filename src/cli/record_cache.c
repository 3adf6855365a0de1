// SPDX-License-Identifier: MIT
/*
 * The end of `sonde record` (local or --target): the [vdso] image goes into
 * perf's build-id cache, as `perf record` puts it there, so a report of
 * the capture on another machine, or after a kernel update, still names
 * the vDSO's functions (sonde's and perf's reports both look there).
 */
#include <sonde/buildid.h>
#include <sonde/error.h>
#include <sonde/record.h>

#include "cli.h"

void cli_cache_vdso(const char *dir, const struct sonde_record_bids *found, int fd)
{
	int r;

	if (!dir || !found->vdso_len)
		return;
	r = fd < 0 ? fd : sonde_buildid_cache_add(dir, "[vdso]", found->vdso, found->vdso_len, fd);
	if (r < 0)
		cli_warn("the [vdso] image was not kept in the build-id cache %s: %s", dir,
			 sonde_strerror(r));
}
