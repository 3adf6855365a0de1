// SPDX-License-Identifier: MIT
/*
 * synth_dump: a test-only window on the synthesizers (include/sonde/synth.h).
 * Runs the ones asked for and prints one line per record, so that
 * tests/integration/test_synth.py can compare them with what perf record
 * writes for the same machine and process:
 *
 *	MMAP misc pid tid start len pgoff filename
 *	MMAP2 misc pid tid start len pgoff maj min ino prot flags filename
 *	COMM misc pid tid comm
 *	FORK misc pid ppid tid ptid
 *
 * (numbers in hex with 0x, pids signed decimal).  Each record is also
 * checked: size a multiple of 8 and as long as its header says, string
 * NUL-terminated and zero-padded, trailer of id_hdr_size zero bytes.
 *
 * usage: synth_dump [-P procfs] [-S sysfs] [-M modules_dir] [-i id_hdr_size] [-d]
 *                   [-k] [-m] [-a] [-p PID]... [-K (kallsyms blob)] [-X (sections blob)]
 * Exit status 1 on a failed call (message on stderr), 2 on a malformed record.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sonde/error.h>
#include <sonde/synth.h>

static size_t id_hdr;
static int bad;

static const char *str_at(const unsigned char *r, size_t len, size_t off)
{
	size_t i, n;

	for (n = off; n < len && r[n]; n++)
		;
	if (n == len) {
		fprintf(stderr, "BAD: string not terminated\n");
		bad = 1;
		return "";
	}
	for (i = n; i < len - id_hdr; i++)
		if (r[i]) {
			fprintf(stderr, "BAD: padding not zero\n");
			bad = 1;
		}
	if (((n + 1 - off + 7) & ~(size_t)7) != len - id_hdr - off) {
		fprintf(stderr, "BAD: padding not to 8 bytes\n");
		bad = 1;
	}
	return (const char *)r + off;
}

static int emit(void *ctx, const void *rec, size_t len)
{
	const unsigned char *r = rec;
	struct perf_event_header h;
	uint32_t u[4];
	uint64_t q[3];
	size_t i;

	memcpy(&h, r, sizeof(h));
	if (len % 8 || h.size != len || len < sizeof(h) + id_hdr) {
		fprintf(stderr, "BAD: record size %zu, header %u\n", len, h.size);
		bad = 1;
		return 0;
	}
	for (i = len - id_hdr; i < len; i++)
		if (r[i]) {
			fprintf(stderr, "BAD: trailer not zero\n");
			bad = 1;
		}
	memcpy(u, r + 8, 8);
	switch (h.type) {
	case PERF_RECORD_MMAP:
		memcpy(q, r + 16, 24);
		printf("MMAP 0x%x %d %d 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " %s\n", h.misc,
		       (int)u[0], (int)u[1], q[0], q[1], q[2], str_at(r, len, 40));
		break;
	case PERF_RECORD_MMAP2: {
		uint32_t mm[2], pf[2];
		uint64_t ino[2];

		memcpy(q, r + 16, 24);
		memcpy(mm, r + 40, 8);
		memcpy(ino, r + 48, 16);
		memcpy(pf, r + 64, 8);
		printf("MMAP2 0x%x %d %d 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64
		       " 0x%x 0x%x %" PRIu64 " 0x%x 0x%x %s\n",
		       h.misc, (int)u[0], (int)u[1], q[0], q[1], q[2], mm[0], mm[1], ino[0], pf[0],
		       pf[1], str_at(r, len, 72));
		break;
	}
	case PERF_RECORD_COMM:
		printf("COMM 0x%x %d %d %s\n", h.misc, (int)u[0], (int)u[1], str_at(r, len, 16));
		break;
	case PERF_RECORD_FORK:
		memcpy(u, r + 8, 16);
		if (len != 32 + id_hdr) {
			fprintf(stderr, "BAD: FORK size %zu\n", len);
			bad = 1;
		}
		printf("FORK 0x%x %d %d %d %d\n", h.misc, (int)u[0], (int)u[1], (int)u[2],
		       (int)u[3]);
		break;
	default:
		fprintf(stderr, "BAD: record type %u\n", h.type);
		bad = 1;
	}
	return 0;
}

static int check(const char *what, int r)
{
	if (r < 0) {
		fprintf(stderr, "synth_dump: %s: %s\n", what, sonde_strerror(r));
		exit(1);
	}
	return r;
}

int main(int argc, char **argv)
{
	struct sonde_synth_stats st = {0};
	struct sonde_synth s = {.procfs = "/proc", .sysfs = "/sys", .emit = emit, .stats = &st};
	int c;

	while ((c = getopt(argc, argv, "P:S:M:i:dkmap:KX")) != -1) {
		char *blob;
		size_t len;

		switch (c) {
		case 'P':
			s.procfs = optarg;
			break;
		case 'S':
			s.sysfs = optarg;
			break;
		case 'M':
			s.modules_dir = optarg;
			break;
		case 'i':
			s.id_hdr_size = id_hdr = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			s.mmap_data = true;
			break;
		case 'k':
			check("kernel", sonde_synth_kernel_mmap(&s));
			break;
		case 'm':
			check("modules", sonde_synth_modules(&s));
			break;
		case 'a':
			check("all", sonde_synth_all_processes(&s));
			break;
		case 'p':
			check(optarg, sonde_synth_process(&s, atoi(optarg)));
			break;
		case 'K':
			check("kallsyms", sonde_kallsyms_snapshot(s.procfs, &blob, &len));
			fwrite(blob, 1, len, stdout);
			free(blob);
			break;
		case 'X':
			check("sections", sonde_synth_module_sections(&s, &blob, &len));
			fwrite(blob, 1, len, stdout);
			free(blob);
			break;
		default:
			fprintf(stderr,
				"usage: synth_dump [-P procfs] [-S sysfs] [-M modules_dir] "
				"[-i id_hdr_size] [-d] [-k] [-m] [-a] [-p PID]... [-K] [-X]\n");
			return 1;
		}
	}
	fprintf(stderr,
		"synth_dump: %lu processes, %lu threads, %lu mmaps, %lu vanished, %lu modules, "
		"%lu hidden\n",
		st.processes, st.threads, st.mmaps, st.vanished, st.modules, st.modules_hidden);
	if (fflush(stdout) != 0)
		return 1;
	return bad ? 2 : 0;
}
