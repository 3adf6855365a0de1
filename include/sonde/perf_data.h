/* SPDX-License-Identifier: MIT */
/*
 * perf.data (PERFILE2): sonde's capture format, written by `sonde record`
 * and the agent, read by `sonde report`, and compatible with Linux perf.
 *
 * File layout (all little-endian on the hosts sonde supports):
 *
 *   [file header, 104 bytes]  magic, section pointers, 256-bit feature map
 *   [ids][attrs]              perf_event_attr + ids of every event
 *   [data]                    raw perf records, as the kernel rings made them
 *   [feature table]           one {offset,size} per set feature bit, in bit
 *                             order, located right at data.offset+data.size
 *   [feature bodies]          hostname, build ids, event names, ...
 *
 * Writer: the header and attrs go to disk before the first record with the
 * data size kept current at every buffer flush, so a recorder that dies
 * still leaves a file perf reads up to the last flush; sonde_pd_writer_close()
 * appends the feature sections and rewrites the header.  Errors are sticky:
 * callers write many times and check once (every call returns the first
 * error).
 *
 * Reader: maps the file, validates the header and every length, and hands
 * out records with borrowed pointers (no allocation per record).  Sample
 * fields are decoded with the attr's sample_type into a struct of
 * borrowed pointers.
 *
 * Byte order: sonde writes and reads little-endian files on little-endian
 * hosts; a byte-swapped (big-endian) file is detected and refused.
 */
#ifndef SONDE_PERF_DATA_H
#define SONDE_PERF_DATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/error.h>

/* ---- on-disk structures ---------------------------------------------- */

#define SONDE_PD_MAGIC 0x32454c4946524550ULL /* "PERFILE2" read as LE u64 */
#define SONDE_PD_FEAT_BITS 256
#define SONDE_PD_NAME_ALIGN 64 /* perf pads header strings to this */

struct sonde_pd_section {
	uint64_t offset;
	uint64_t size;
};
_Static_assert(sizeof(struct sonde_pd_section) == 16, "on-disk layout");

struct sonde_pd_file_header {
	uint64_t magic;
	uint64_t size;	    /* sizeof(this), or 16 in pipe mode */
	uint64_t attr_size; /* stride of the attrs section: attr + ids section */
	struct sonde_pd_section attrs;
	struct sonde_pd_section data;
	struct sonde_pd_section event_types; /* unused, zero */
	uint64_t features[SONDE_PD_FEAT_BITS / 64];
};
_Static_assert(sizeof(struct sonde_pd_file_header) == 104, "on-disk layout");

/* The attr size sonde writes: the one perf 6.1 reads (it refuses bigger). */
#define SONDE_PD_ATTR_SIZE 128u
_Static_assert(sizeof(struct perf_event_attr) >= SONDE_PD_ATTR_SIZE, "uapi header too old");

/* Feature bits perf knows (tools/perf/util/header.h). */
enum sonde_pd_feature {
	SONDE_PD_FEAT_TRACING_DATA = 1,
	SONDE_PD_FEAT_BUILD_ID = 2,
	SONDE_PD_FEAT_HOSTNAME = 3,
	SONDE_PD_FEAT_OSRELEASE = 4,
	SONDE_PD_FEAT_VERSION = 5,
	SONDE_PD_FEAT_ARCH = 6,
	SONDE_PD_FEAT_NRCPUS = 7,
	SONDE_PD_FEAT_CPUDESC = 8,
	SONDE_PD_FEAT_CPUID = 9,
	SONDE_PD_FEAT_TOTAL_MEM = 10,
	SONDE_PD_FEAT_CMDLINE = 11,
	SONDE_PD_FEAT_EVENT_DESC = 12,
	SONDE_PD_FEAT_CPU_TOPOLOGY = 13,
	SONDE_PD_FEAT_NUMA_TOPOLOGY = 14,
	SONDE_PD_FEAT_BRANCH_STACK = 15,
	SONDE_PD_FEAT_PMU_MAPPINGS = 16,
	SONDE_PD_FEAT_GROUP_DESC = 17,
	SONDE_PD_FEAT_AUXTRACE = 18,
	SONDE_PD_FEAT_STAT = 19,
	SONDE_PD_FEAT_CACHE = 20,
	SONDE_PD_FEAT_SAMPLE_TIME = 21,
	SONDE_PD_FEAT_MEM_TOPOLOGY = 22,
	SONDE_PD_FEAT_CLOCKID = 23,
	SONDE_PD_FEAT_DIR_FORMAT = 24,
	SONDE_PD_FEAT_BPF_PROG_INFO = 25,
	SONDE_PD_FEAT_BPF_BTF = 26,
	SONDE_PD_FEAT_COMPRESSED = 27,
	SONDE_PD_FEAT_CPU_PMU_CAPS = 28,
	SONDE_PD_FEAT_CLOCK_DATA = 29,
	SONDE_PD_FEAT_HYBRID_TOPOLOGY = 30,
	SONDE_PD_FEAT_PMU_CAPS = 31,
	SONDE_PD_FEAT_LAST_PERF = 32, /* perf 6.1's HEADER_LAST_FEATURE */
};

/*
 * sonde's own sections (kallsyms, module sections), reached as features
 * SONDE_PD_FEAT_SONDE_BASE + n.  They are written in a trailer after
 * everything the header points to (src/format/pd_trailer.c), never as set
 * bits: perf's reader skips unknown bits, but perf inject follows every set
 * bit into its 32-entry table of feature writers and crashes.  Files from
 * earlier sonde versions with bits 224 and up are still read.
 */
#define SONDE_PD_FEAT_SONDE_BASE 224u
#define SONDE_PD_FEAT_SONDE_MAX 32u
enum sonde_pd_sonde_feature {
	SONDE_PD_SFEAT_KALLSYMS = 0, /* /proc/kallsyms text at capture time */
	SONDE_PD_SFEAT_MODULES = 1,  /* module section addresses */
};

/* Record types perf itself synthesizes (>= 64), as of perf 6.1. */
enum sonde_pd_user_record {
	SONDE_PD_RECORD_HEADER_ATTR = 64,
	SONDE_PD_RECORD_HEADER_EVENT_TYPE = 65,
	SONDE_PD_RECORD_HEADER_TRACING_DATA = 66, /* followed by the blob, padded to 8 */
	SONDE_PD_RECORD_HEADER_BUILD_ID = 67,
	SONDE_PD_RECORD_FINISHED_ROUND = 68,
	SONDE_PD_RECORD_ID_INDEX = 69,
	SONDE_PD_RECORD_AUXTRACE_INFO = 70,
	SONDE_PD_RECORD_AUXTRACE = 71, /* followed by u64 size bytes of AUX data */
	SONDE_PD_RECORD_AUXTRACE_ERROR = 72,
	SONDE_PD_RECORD_THREAD_MAP = 73,
	SONDE_PD_RECORD_CPU_MAP = 74,
	SONDE_PD_RECORD_STAT_CONFIG = 75,
	SONDE_PD_RECORD_STAT = 76,
	SONDE_PD_RECORD_STAT_ROUND = 77,
	SONDE_PD_RECORD_EVENT_UPDATE = 78,
	SONDE_PD_RECORD_TIME_CONV = 79,
	SONDE_PD_RECORD_HEADER_FEATURE = 80,
	SONDE_PD_RECORD_COMPRESSED = 81, /* zstd frames of records: see reader */
	SONDE_PD_RECORD_FINISHED_INIT = 82,
	SONDE_PD_RECORD_HEADER_MAX = 83, /* perf 6.1 stops with EINVAL at or above */
};

/* In a build id entry's misc: the id's size is in the byte after its 20 bytes. */
#define SONDE_PD_MISC_BUILD_ID_SIZE (1u << 15)

/* Kernel record types up to this are known (PERF_RECORD_AUX_OUTPUT_HW_ID + 1). */
#define SONDE_PD_KERNEL_RECORD_MAX 22u

/**
 * sonde_pd_record_name() - a record type's name ("SAMPLE", "MMAP2", ...)
 * Return: borrowed: a static string, "UNKNOWN" for unknown types.
 */
const char *sonde_pd_record_name(uint32_t type);

/* ---- host facts ------------------------------------------------------- */

/* The machine description perf keeps in header features. */
struct sonde_pd_host {
	char hostname[65];
	char osrelease[65];
	char version[64];
	char arch[65];
	uint32_t nr_cpus_avail;
	uint32_t nr_cpus_online;
	char cpudesc[256];
	char cpuid[128];
	uint64_t total_mem_kb;
};

/* ---- writer ---------------------------------------------------------- */

struct sonde_pd_writer;

/**
 * sonde_pd_writer_open() - create (truncate) a perf.data file at @path
 * @err: optional, receives the message when opening fails
 * Return: 0 with *out new (finish with sonde_pd_writer_close()), or -errno.
 */
int sonde_pd_writer_open(struct sonde_pd_writer **out, const char *path, struct sonde_errmsg *err);

/* Same on an open seekable fd (not closed by the writer; written from offset 0).
 * @fd -1 makes a feature collector with no file (the agent's): features are
 * set and read back with sonde_pd_writer_feature(); records fail with -EBADF. */
int sonde_pd_writer_open_fd(struct sonde_pd_writer **out, int fd, struct sonde_errmsg *err);

/*
 * Same in pipe mode (perf record -o -), for a stream that can't seek (a
 * pipe, a FIFO, a terminal): a 16-byte header, then HEADER_ATTR,
 * HEADER_FEATURE and HEADER_TRACING_DATA records before the first record,
 * so features and tracing data must be set before the first write (later
 * ones follow the records as HEADER_FEATURE records; sonde's own features,
 * which perf would warn about in a pipe, are left out).  @fd is not closed.
 */
int sonde_pd_writer_open_stream(struct sonde_pd_writer **out, int fd, struct sonde_errmsg *err);

/**
 * sonde_pd_writer_add_attr() - declare an event
 * @attr: copied; its size is normalized to SONDE_PD_ATTR_SIZE
 * @name: event name for HEADER_EVENT_DESC ("cpu-clock"), copied; may be NULL
 * @ids, @nr_ids: the kernel ids of the event's fds (PERF_EVENT_IOC_ID), copied
 *
 * Events should be added before the first record; ones added later are
 * written at close (and a crash before close loses them).
 * Return: the event's index (>= 0), or the sticky error.
 */
int sonde_pd_writer_add_attr(struct sonde_pd_writer *w, const struct perf_event_attr *attr,
			     const char *name, const uint64_t *ids, size_t nr_ids);
/* Appends ids to event @idx (opened on more CPUs).  Return: 0 or error. */
int sonde_pd_writer_add_ids(struct sonde_pd_writer *w, int idx, const uint64_t *ids, size_t nr);

/* Header features.  Each copies its input; setting twice replaces. */
/* @feat: HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC or CPUID. */
int sonde_pd_writer_set_string(struct sonde_pd_writer *w, unsigned feat, const char *s);
/* Sets the string features, NRCPUS and TOTAL_MEM from @h (empty ones skipped). */
int sonde_pd_writer_set_host(struct sonde_pd_writer *w, const struct sonde_pd_host *h);
/**
 * sonde_pd_writer_set_nrcpus() - the NRCPUS feature
 * @w: the writer
 * @avail: CPUs present (perf writes this first)
 * @online: CPUs online
 * Return: 0, or the writer's sticky error.
 */
int sonde_pd_writer_set_nrcpus(struct sonde_pd_writer *w, uint32_t avail, uint32_t online);
/**
 * sonde_pd_writer_set_total_mem() - the TOTAL_MEM feature
 * @w: the writer
 * @kb: the machine's memory in KiB (MemTotal)
 * Return: 0, or the writer's sticky error.
 */
int sonde_pd_writer_set_total_mem(struct sonde_pd_writer *w, uint64_t kb);
/**
 * sonde_pd_writer_set_cmdline() - the CMDLINE feature: the command that made the capture
 * @w: the writer
 * @argc: number of strings in @argv (negative: -EINVAL)
 * @argv: the strings, copied
 * Return: 0, or the writer's sticky error.
 */
int sonde_pd_writer_set_cmdline(struct sonde_pd_writer *w, int argc, const char *const *argv);

/* An event group ({a,b}) of the GROUP_DESC feature. */
struct sonde_pd_group {
	const char *name; /* NULL: unnamed (perf's "{anon_group}") */
	uint32_t leader;  /* index of the leader among the file's events */
	uint32_t nr;	  /* events in the group, the leader's followers included */
};
/**
 * sonde_pd_writer_set_groups() - the GROUP_DESC feature
 * @w: the writer
 * @g: the groups (perf writes only those of two events or more)
 * @n: their number; 0 writes nothing
 * Return: 0 or the writer's error.
 */
int sonde_pd_writer_set_groups(struct sonde_pd_writer *w, const struct sonde_pd_group *g, size_t n);
/* Opaque tracing data (the trace-cmd style blob with event formats). */
int sonde_pd_writer_set_tracing_data(struct sonde_pd_writer *w, const void *blob, size_t len);
/*
 * One HEADER_BUILD_ID entry.  @pid is -1 for the kernel; @misc is
 * PERF_RECORD_MISC_KERNEL or PERF_RECORD_MISC_USER; @id_len at most 20.
 */
int sonde_pd_writer_add_build_id(struct sonde_pd_writer *w, int32_t pid, uint16_t misc,
				 const uint8_t *id, size_t id_len, const char *filename);
/**
 * sonde_pd_writer_set_sample_time() - the SAMPLE_TIME feature
 * @w: the writer
 * @first: time of the first sample (ns, the events' clock)
 * @last: time of the last sample
 * Return: 0, or the writer's sticky error.
 */
int sonde_pd_writer_set_sample_time(struct sonde_pd_writer *w, uint64_t first, uint64_t last);
/**
 * sonde_pd_writer_set_clockid_res() - the CLOCKID feature
 * @w: the writer
 * @res_ns: resolution of the events' clock in ns
 * Return: 0, or the writer's sticky error.
 */
int sonde_pd_writer_set_clockid_res(struct sonde_pd_writer *w, uint64_t res_ns);
/*
 * CPU topology in perf's layout.  @core_sibs, @thread_sibs, @die_sibs are
 * cpu list strings ("0-3"); @core_id, @socket_id, @die_id have @nr_cpus
 * entries each (@nr_cpus must equal NRCPUS' avail count for perf).
 */
struct sonde_pd_topology {
	uint32_t nr_core_sibs;
	const char *const *core_sibs;
	uint32_t nr_thread_sibs;
	const char *const *thread_sibs;
	uint32_t nr_die_sibs;
	const char *const *die_sibs;
	uint32_t nr_cpus;
	const uint32_t *core_id;
	const uint32_t *socket_id;
	const uint32_t *die_id;
};
/**
 * sonde_pd_writer_set_topology() - the CPU_TOPOLOGY feature
 * @w: the writer
 * @t: the topology, copied (see struct sonde_pd_topology)
 * Return: 0, or the writer's sticky error.
 */
int sonde_pd_writer_set_topology(struct sonde_pd_writer *w, const struct sonde_pd_topology *t);
/* Any feature section as an opaque blob (perf's or sonde's bit). */
int sonde_pd_writer_set_feature(struct sonde_pd_writer *w, unsigned bit, const void *blob,
				size_t len);
/* The serialized bytes of feature @bit.  Return: 1 with borrowed *data (valid
 * until the feature is set again or the writer closes), or 0 when not set. */
int sonde_pd_writer_feature(const struct sonde_pd_writer *w, unsigned bit, const void **data,
			    size_t *len);
/* sonde feature @n (< SONDE_PD_FEAT_SONDE_MAX): opaque blob in the trailer. */
/**
 * sonde_pd_writer_set_sonde_feature() - set sonde feature @n: an opaque blob in the trailer
 * @w: the writer
 * @n: sonde's feature number, below SONDE_PD_FEAT_SONDE_MAX (else -EINVAL)
 * @blob: the bytes, copied
 * @len: their size
 * Return: 0, or the writer's sticky error.
 */
int sonde_pd_writer_set_sonde_feature(struct sonde_pd_writer *w, unsigned n, const void *blob,
				      size_t len);

/**
 * sonde_pd_writer_write() - append whole records to the data section
 * @buf: one or more records (struct perf_event_header + payload), as read
 *       from a ring; each size is checked, none is changed
 *
 * The first call writes the header and attrs.  Records are buffered; the
 * header's data size on disk follows every flush.
 * Return: 0 or the sticky error.
 */
int sonde_pd_writer_write(struct sonde_pd_writer *w, const void *buf, size_t len);

/**
 * sonde_pd_writer_set_compression() - compress records as perf -z does
 * @level: zstd level, 1 (perf's default) to 22
 *
 * Must come before the first record.  Records are then staged and written
 * as PERF_RECORD_COMPRESSED, and close adds HEADER_COMPRESSED.
 * Return: 0, or -ENOTSUP (built without zstd) / -EINVAL, with a message.
 */
int sonde_pd_writer_set_compression(struct sonde_pd_writer *w, int level);
/* Whether this build has zstd. */
bool sonde_pd_writer_can_compress(void);

/* Flushes buffered records and rewrites the header's data size on disk. */
int sonde_pd_writer_sync(struct sonde_pd_writer *w);

/* The sticky error (0 if none) and its message. */
int sonde_pd_writer_error(const struct sonde_pd_writer *w);
/**
 * sonde_pd_writer_errmsg() - the sticky error's message
 * @w: the writer
 * Return: borrowed text with context (valid while @w is), "" when there is no error.
 */
const char *sonde_pd_writer_errmsg(const struct sonde_pd_writer *w);
/* Bytes of records accepted so far (before compression). */
uint64_t sonde_pd_writer_data_size(const struct sonde_pd_writer *w);
/* Bytes of the data section so far (after compression). */
uint64_t sonde_pd_writer_file_data_size(const struct sonde_pd_writer *w);

/**
 * sonde_pd_writer_close() - finish the file and free @w
 * @err: optional, receives the message of a failure
 *
 * Writes the remaining records, the feature sections and the final header.
 * After an earlier failure (a full disk) the file is cut after the last
 * whole record on disk and the header rewritten without features, so it
 * still opens in perf and sonde.
 * Return: 0, or the first error of the writer's life.
 */
int sonde_pd_writer_close(struct sonde_pd_writer *w, struct sonde_errmsg *err);

/* ---- reader ---------------------------------------------------------- */

/* An event of the file. */
struct sonde_pd_attr {
	struct perf_event_attr attr; /* zero-extended or cut to this build's size */
	uint32_t file_size;	     /* attr.size as found in the file */
	const char *name;	     /* borrowed from the reader, NULL when unnamed */
	const uint64_t *ids;	     /* borrowed from the reader */
	size_t nr_ids;
};

struct sonde_pd_build_id {
	int32_t pid;
	uint16_t misc;
	uint8_t size; /* bytes of id used */
	uint8_t id[20];
	const char *filename; /* borrowed */
};

/* Parsed header features; strings and arrays borrowed from the reader. */
struct sonde_pd_features {
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	bool has_nrcpus;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	uint32_t cmdline_argc;
	const char *const *cmdline_argv;
	const void *tracing_data;
	uint64_t tracing_data_size;
	size_t nr_build_ids;
	const struct sonde_pd_build_id *build_ids;
	bool has_sample_time;
	uint64_t first_sample_time, last_sample_time;
	bool has_clockid;
	uint64_t clockid_res_ns;
	/* CPU_TOPOLOGY, when present and parsed */
	bool has_topology;
	uint32_t topo_nr_core_sibs, topo_nr_thread_sibs, topo_nr_cpus;
	const char *const *topo_core_sibs;
	const char *const *topo_thread_sibs;
	/* COMPRESSED: zstd parameters (records need a decompressor, see below) */
	bool has_compressed;
	uint32_t comp_version, comp_type, comp_level, comp_ratio, comp_mmap_len;
	/* Some feature sections lay past the end of a cut file and were dropped. */
	bool truncated;
};

/* One record of the data section. */
struct sonde_pd_record {
	uint64_t offset; /* in the file (stream offset in pipe mode) */
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const void *data;  /* borrowed: the whole record, header included,
			    * 8-byte aligned, valid until the next call */
	const void *extra; /* bytes following the record outside its size
			    * (AUXTRACE data, pipe-mode tracing data), or NULL */
	uint64_t extra_size;
	const struct sonde_pd_attr *attr; /* event of a kernel record, NULL if unknown */
	bool stable; /* data (and extra) stay valid until the reader is closed */
};

/* Where a record came from: SAMPLE fields or the sample_id_all trailer. */
struct sonde_pd_sample {
	uint64_t present; /* the sample_type bits decoded */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	/* PERF_SAMPLE_READ */
	uint64_t read_time_enabled, read_time_running;
	uint64_t read_nr;	     /* values (1 without PERF_FORMAT_GROUP) */
	const uint64_t *read_values; /* group: nr entries of read_stride u64s:
				      * value, [id], [lost] */
	uint32_t read_stride;
	uint64_t read_value, read_id, read_lost; /* without PERF_FORMAT_GROUP */
	uint64_t callchain_nr;
	const uint64_t *callchain;
	uint32_t raw_size;
	const uint8_t *raw;
	uint64_t branch_nr;
	uint64_t branch_hw_idx;
	const uint64_t *branch_entries; /* branch_nr entries of 3 u64 (from, to, flags) */
	uint64_t regs_user_abi;
	uint32_t regs_user_nr;
	const uint64_t *regs_user;
	uint64_t stack_user_size;
	const uint8_t *stack_user;
	uint64_t stack_user_dyn_size;
	uint64_t weight;
	uint64_t data_src;
	uint64_t transaction;
	uint64_t regs_intr_abi;
	uint32_t regs_intr_nr;
	const uint64_t *regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const uint8_t *aux;
};

/*
 * The sample_type bits sonde_pd_sample_parse() decodes (all of the uapi
 * header's, PERF_SAMPLE_IP to PERF_SAMPLE_WEIGHT_STRUCT).  A bit added
 * here needs its row in tests/unit/test_sample_parsing.c (the tripwire).
 */
#define SONDE_PD_SAMPLE_TYPES ((1ull << 25) - 1)

/*
 * sonde_pd_sample_parse() - decode a PERF_RECORD_SAMPLE
 * @rec: the whole record (header included), 8-byte aligned, @size bytes
 * Return: 0, SONDE_E_TRUNCATED when a field runs past the record, or
 * SONDE_E_FORMAT (also for sample_type bits outside SONDE_PD_SAMPLE_TYPES,
 * whose fields' places are unknown); @what receives a short description of the failing field.
 */
int sonde_pd_sample_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
			  struct sonde_pd_sample *s, const char **what);
/* Decodes the sample_id_all trailer of a non-sample kernel record. */
int sonde_pd_sample_id_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
			     struct sonde_pd_sample *s);
struct sonde_pd_record;
/*
 * The time of a kernel record without decoding it (the ordering pass's
 * hot path).  Return: 0, -ENOENT when the record has no time, or
 * SONDE_E_TRUNCATED.
 */
int sonde_pd_record_time(const struct perf_event_attr *attr, const struct sonde_pd_record *rec,
			 uint64_t *time);
/* Bytes of the sample_id_all trailer for @attr (0 without sample_id_all). */
size_t sonde_pd_sample_id_size(const struct perf_event_attr *attr);

/* Typed views of the common kernel records. */
struct sonde_pd_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	/* MMAP2 only */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint8_t build_id_size; /* with PERF_RECORD_MISC_MMAP_BUILD_ID */
	const uint8_t *build_id;
	const char *filename; /* borrowed, NUL-terminated */
};
struct sonde_pd_comm {
	uint32_t pid, tid;
	const char *comm;
};
struct sonde_pd_fork { /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
struct sonde_pd_lost {
	uint64_t id, lost;
};
struct sonde_pd_throttle { /* THROTTLE and UNTHROTTLE */
	uint64_t time, id, stream_id;
};

struct sonde_pd_event {
	uint32_t type;
	union {
		struct sonde_pd_mmap mmap; /* MMAP and MMAP2 */
		struct sonde_pd_comm comm;
		struct sonde_pd_fork fork;
		struct sonde_pd_lost lost;
		struct sonde_pd_throttle throttle;
	};
	struct sonde_pd_sample sample; /* SAMPLE fields, or the id trailer */
};

struct sonde_pd_reader;

/* How the data section ended. */
enum sonde_pd_tail {
	SONDE_PD_TAIL_CLEAN = 0,
	SONDE_PD_TAIL_TRUNCATED,  /* the file ends inside the data section */
	SONDE_PD_TAIL_UNFINISHED, /* data size 0 in the header: read to EOF */
};

/**
 * sonde_pd_reader_open() - open a perf.data file (file or pipe mode)
 * @path: a file, or "-" for standard input (pipe mode stream)
 * @err: optional, receives the message when opening fails
 * Return: 0 with *out new (free with sonde_pd_reader_close()), or an error.
 */
int sonde_pd_reader_open(struct sonde_pd_reader **out, const char *path, struct sonde_errmsg *err);
/* Same over memory the caller keeps valid until close. */
int sonde_pd_reader_open_mem(struct sonde_pd_reader **out, const void *buf, size_t len,
			     struct sonde_errmsg *err);
/* Same over an fd: mapped when it is a regular file, streamed otherwise. */
int sonde_pd_reader_open_fd(struct sonde_pd_reader **out, int fd, struct sonde_errmsg *err);
/**
 * sonde_pd_reader_close() - unmap or stop reading, close the fd the reader opened and free it
 * @r: the reader, or NULL
 */
void sonde_pd_reader_close(struct sonde_pd_reader *r);

/**
 * sonde_pd_reader_is_pipe() - whether the capture is in pipe mode
 * @r: the reader
 * Return: true for a pipe-mode stream (16-byte header, no sections).
 */
bool sonde_pd_reader_is_pipe(const struct sonde_pd_reader *r);
/* Events known so far (in pipe mode: the HEADER_ATTR records before the first
 * kernel record, read at open, and any later ones as the iteration meets them). */
size_t sonde_pd_reader_nr_attrs(const struct sonde_pd_reader *r);
/**
 * sonde_pd_reader_attr() - event @i
 * @r: the reader
 * @i: index, below sonde_pd_reader_nr_attrs()
 * Return: borrowed attr (valid while @r is), or NULL when @i is out of range.
 */
const struct sonde_pd_attr *sonde_pd_reader_attr(const struct sonde_pd_reader *r, size_t i);
/* The event owning kernel id @id, NULL if none. */
const struct sonde_pd_attr *sonde_pd_reader_find_id(const struct sonde_pd_reader *r, uint64_t id);
/* Borrowed: the parsed features (in pipe mode: from the HEADER_FEATURE and
 * HEADER_TRACING_DATA records the stream starts with, read at open). */
const struct sonde_pd_features *sonde_pd_reader_features(const struct sonde_pd_reader *r);
/**
 * sonde_pd_reader_has_feature() - whether a feature section is present
 * @r: the reader
 * @bit: the feature's bit (perf's HEADER_* numbers, or sonde's)
 * Return: true when the file (or stream) carries it.
 */
bool sonde_pd_reader_has_feature(const struct sonde_pd_reader *r, unsigned bit);
/* Borrowed: the raw bytes of any present feature section.  Return: 0 or -ENOENT. */
int sonde_pd_reader_feature(const struct sonde_pd_reader *r, unsigned bit, const void **data,
			    uint64_t *size);
/**
 * sonde_pd_reader_groups() - the groups of the GROUP_DESC feature
 * @r: the reader
 * @out: receives up to @max groups (names borrowed from the reader)
 * @max: room in @out
 *
 * Outside data: the list ends at the first group that does not fit the
 * section or the file's events.
 * Return: the number of groups stored (0 without the feature).
 */
size_t sonde_pd_reader_groups(const struct sonde_pd_reader *r, struct sonde_pd_group *out,
			      size_t max);
/**
 * sonde_pd_reader_header() - the file header as read
 * @r: the reader
 * Return: borrowed, valid while @r is (pipe mode: size is 16).
 */
const struct sonde_pd_file_header *sonde_pd_reader_header(const struct sonde_pd_reader *r);

/* COMPRESSED records the reader unpacked so far (they never reach the caller). */
uint64_t sonde_pd_reader_nr_compressed(const struct sonde_pd_reader *r);

/**
 * sonde_pd_reader_next() - the next record of the data section
 *
 * PERF_RECORD_COMPRESSED records (perf -z) are unpacked in place: their
 * records come out one by one, with the COMPRESSED record's offset.
 * Return: 1 with @rec filled, 0 at the end, or a negative error (message
 * with the offset in sonde_pd_reader_errmsg()).  A truncated tail ends
 * iteration with 0 and sets sonde_pd_reader_tail().
 */
int sonde_pd_reader_next(struct sonde_pd_reader *r, struct sonde_pd_record *rec);
/*
 * A hint that the data before file offset @upto will not be read soon:
 * its pages leave memory (they stay valid: touching them reads the file
 * again).  Keeps a big capture's resident size to what is in flight.
 */
void sonde_pd_reader_forget(struct sonde_pd_reader *r, uint64_t upto);
/* Back to the first record (not in stream mode: -ESPIPE). */
int sonde_pd_reader_rewind(struct sonde_pd_reader *r);
/**
 * sonde_pd_reader_tail() - how the record stream ended
 * @r: the reader
 * Return: SONDE_PD_TAIL_CLEAN, or why iteration stopped early (a truncated
 * file, or a header whose data size was never written).
 */
enum sonde_pd_tail sonde_pd_reader_tail(const struct sonde_pd_reader *r);
/**
 * sonde_pd_reader_errmsg() - the message of the last error
 * @r: the reader
 * Return: borrowed text with the offset, valid until the next call on @r.
 */
const char *sonde_pd_reader_errmsg(const struct sonde_pd_reader *r);

/**
 * sonde_pd_reader_parse() - decode @rec into @ev
 *
 * SAMPLE fills ev->sample; MMAP, MMAP2, COMM, FORK, EXIT, LOST, THROTTLE
 * and UNTHROTTLE fill their view and the sample_id_all trailer; other
 * kernel records only the trailer; user records (>= 64) nothing.
 * Return: 0 or an error with the record's offset in the message.
 */
int sonde_pd_reader_parse(struct sonde_pd_reader *r, const struct sonde_pd_record *rec,
			  struct sonde_pd_event *ev);

/*
 * Compressed records (PERF_RECORD_COMPRESSED) are handed out as they are
 * for now; a decompressor hook will expand them into the iteration.
 */
typedef int (*sonde_pd_decompress_fn)(void *ctx, const void *src, size_t len, void *dst, size_t cap,
				      size_t *out_len);

#endif
