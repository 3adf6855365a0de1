// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the perf.data reader on a real pipe (sonde report
 * -i -): the input is written into a pipe and read back as a stream, so
 * the pipe-mode read-ahead of the header records (src/format/pd_pipe.c),
 * their replay and the stream reader's short reads are what runs, not the
 * mapped-file path fuzz_perf_data covers.  Seeds in
 * tests/fuzz/corpus/perf_data_pipe: pipe streams from perf record -o -,
 * sonde record -o - and tests/unit/perf_data_gen --pipe.
 */
#include <fcntl.h>
#include <unistd.h>

#include "pd_walk.h"

/* The pipe must hold the whole input: the target writes, then reads. */
#define PIPE_CAP (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sonde_pd_reader *r;
	int fds[2];

	if (size > PIPE_CAP || pipe2(fds, O_CLOEXEC) < 0)
		return 0;
	if (fcntl(fds[1], F_SETPIPE_SZ, PIPE_CAP) < (int)size ||
	    write(fds[1], data, size) != (ssize_t)size) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	close(fds[1]);
	if (sonde_pd_reader_open_fd(&r, fds[0], NULL) == 0) {
		fuzz_pd_walk(r);
		sonde_pd_reader_close(r);
	}
	close(fds[0]);
	return 0;
}
