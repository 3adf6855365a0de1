/* SPDX-License-Identifier: MIT */
/*
 * Output files that appear only when they are complete.
 *
 * A command that writes a capture (record -o, trace -o) must not destroy
 * the previous file when it fails before it has anything to keep (a bad
 * pid, a command that does not exist, a filter the kernel refuses).  So
 * the file is written under a temporary name in the same folder (the
 * rename then stays within one file system) and renamed over the target
 * only by sonde_outfile_commit(), which is also where the old file becomes
 * PATH.old when asked.  sonde_outfile_abort() removes the temporary file
 * and leaves the target as it was.
 *
 * Targets that are not regular files are written in place, never renamed
 * over: "-" (standard output, when the caller allows it), a FIFO, a
 * character device.  Those are streams: `stream` tells the caller to
 * write a format that needs no seeking (perf's pipe mode).
 */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stdbool.h>
#include <sys/types.h>

#include <sonde/error.h>

enum {
	SONDE_OUTFILE_KEEP_OLD = 1 << 0, /* commit renames an existing PATH to PATH.old */
	SONDE_OUTFILE_STDOUT = 1 << 1,	 /* "-" means standard output */
};

struct sonde_outfile {
	int fd;		/* write here; owned (except standard output) */
	bool stream;	/* not seekable: stdout, a FIFO, a character device */
	bool is_stdout; /* the path was "-" */
	char *path;	/* owned: the target, symlinks resolved */
	char *tmp;	/* owned: the temporary name, NULL for streams */
	unsigned flags; /* as opened */
};

/**
 * sonde_outfile_open() - create the file that will become @path
 * @mode: permissions for a new file (the umask applies), as open(2)
 * @flags: SONDE_OUTFILE_*
 * @err: optional, receives "PATH: reason" on failure
 *
 * Return: 0 with @of ready (finish with _commit or _abort), or -errno.
 */
int sonde_outfile_open(struct sonde_outfile *of, const char *path, mode_t mode, unsigned flags,
		       struct sonde_errmsg *err);

/**
 * sonde_outfile_commit() - close the file and give it its name
 *
 * With SONDE_OUTFILE_KEEP_OLD a non-empty regular file at the target
 * becomes PATH.old first (as perf does).  The close error of the file is
 * reported too (NFS and full disks report there).  @of is finished either
 * way; on failure the temporary file is removed.
 * Return: 0, or -errno with @err set.
 */
int sonde_outfile_commit(struct sonde_outfile *of, struct sonde_errmsg *err);

/* Closes and removes the temporary file: the target stays as it was. */
void sonde_outfile_abort(struct sonde_outfile *of);

#endif
