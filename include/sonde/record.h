/* SPDX-License-Identifier: MIT */
/*
 * The sampling capture engine, shared by `sonde record` and the target
 * agent: opens every event on every (task, CPU) slot, one mmap ring per
 * CPU that all the CPU's fds redirect into (PERF_EVENT_IOC_SET_OUTPUT), and
 * drains the rings into a sink.  It never symbolizes and depends on libc.
 */
#ifndef SONDE_RECORD_H
#define SONDE_RECORD_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include <sonde/counters.h>
#include <sonde/error.h>
#include <sonde/evspec.h>
#include <sonde/ring.h>

enum sonde_callgraph { SONDE_CG_NONE, SONDE_CG_FP, SONDE_CG_DWARF };

#define SONDE_RECORD_DEFAULT_FREQ 4000
#define SONDE_RECORD_DEFAULT_PAGES 128 /* 512 KiB per CPU, as perf for root */
#define SONDE_RECORD_DEFAULT_DWARF 8192
#define SONDE_RECORD_MAX_DWARF 65528

struct sonde_record_opts {
	const struct sonde_evlist *events; /* borrowed */
	struct sonde_target target;	   /* borrowed arrays; cpus must be set (all CPUs
					      for task targets too: rings are per CPU) */
	uint64_t freq;			   /* -F; ignored when period is set */
	uint64_t period;		   /* -c */
	enum sonde_callgraph callgraph;
	uint32_t dwarf_size;	    /* user stack bytes per sample */
	unsigned int pages;	    /* data pages per ring, a power of two */
	const char *const *filters; /* per event: kernel filter or NULL; may be NULL */
	bool system_wide;	    /* -a/-C: sample CPU numbers */
	/* perf record's optional sample contents and side-band records. */
	bool sample_addr;   /* -d: data addresses (PERF_SAMPLE_ADDR) and data mmaps */
	bool switch_events; /* --switch-events: SWITCH records (SWITCH_CPU_WIDE with -a) */
	bool namespaces;    /* --namespaces: NAMESPACES records */
	uint64_t user_regs; /* --user-regs: registers at the sample in user space */
	uint64_t intr_regs; /* --intr-regs: registers at the interrupt */
	bool delayed;	    /* enabled by the caller later, never at exec (--delay) */
};

/* Per-CPU bookkeeping of what the rings delivered. */
struct sonde_ring_stats {
	int cpu;
	uint64_t samples, lost, lost_records, throttles, bytes;
	uint64_t first_time, last_time; /* of samples; first_time 0 until one came */
};

struct sonde_record {
	struct sonde_record_opts o;
	struct perf_event_attr *attrs; /* owned: the attr each event was opened with */
	int *fds;		       /* owned: [event * nslots + slot], -1 where not opened */
	uint64_t *ids;		       /* owned: kernel ids, same layout */
	size_t nevents, nslots;	  /* nevents: the list's, plus the dummy (system wide, --delay) */
	size_t track;		  /* the event carrying the side-band records */
	struct sonde_ring *rings; /* owned: one per CPU */
	struct sonde_ring_stats *stats; /* owned: one per ring */
	size_t nrings;
	bool build_ids;	       /* the kernel puts build ids in MMAP2 */
	bool lost_format;      /* events count their lost samples (PERF_FORMAT_LOST) */
	uint64_t lost_samples; /* their sum, once sonde_record_write_lost() ran */
	size_t time_off;       /* offset of a sample's time (the same for every event) */
	uint64_t max_freq;     /* kernel.perf_event_max_sample_rate */
	uint64_t freq_asked;   /* when capped: what the user asked for */
	struct sonde_errmsg err;
	const struct sonde_event *failed; /* the event that could not open, or NULL */
	int failed_err;
};

/**
 * sonde_record_open() - open events and rings, disabled (a workload's start at exec)
 * Return: 0 with *out new (sonde_record_close()), or a negative code with
 * @err describing it; *out is then still set when the failure has an event
 * to explain (out->failed) and must be closed.
 */
int sonde_record_open(struct sonde_record **out, const struct sonde_record_opts *o);
void sonde_record_close(struct sonde_record *r);
/**
 * sonde_record_enable() - start the events sampling (a gated workload's start at its exec anyway)
 * @r: the recording
 * Return: 0, or -errno of the first ioctl that failed (message in r->err).
 */
int sonde_record_enable(struct sonde_record *r);
/*
 * Enables the side-band event alone, when it is one of its own (system
 * wide: a dummy after the list's events), so FORK/COMM/MMAP records flow
 * while /proc is read and samples start only after.  Return: 0 or -errno.
 */
int sonde_record_enable_sideband(struct sonde_record *r);
/* Borrowed: the name of event @i (the list's, or the side-band dummy). */
const char *sonde_record_event_name(const struct sonde_record *r, size_t i);
/**
 * sonde_record_disable() - stop the events sampling; what the rings hold can still be drained
 * @r: the recording
 * Return: 0, or -errno of the first ioctl that failed (message in r->err).
 */
int sonde_record_disable(struct sonde_record *r);

/* Kernel ids of event @ev on every slot where it opened. Return: count. */
size_t sonde_record_event_ids(const struct sonde_record *r, size_t ev, uint64_t *ids, size_t max);

/* Fills @pfd with one entry per ring (POLLIN when its watermark is reached). */
size_t sonde_record_pollfds(const struct sonde_record *r, struct pollfd *pfd, size_t max);

/**
 * sonde_record_drain() - empty every ring into @sink, counting what passes
 * Return: bytes drained, or the sink's negative error.
 */
long sonde_record_drain(struct sonde_record *r, sonde_ring_sink sink, void *ctx);

/**
 * sonde_record_write_lost() - after the capture (before closing), one
 * PERF_RECORD_LOST_SAMPLES record into @sink for every event fd whose
 * samples were dropped, as perf record writes them (its
 * record__read_lost_samples): perf report's "Total Lost Samples" is their sum
 * Return: 0, or the sink's negative error.
 */
int sonde_record_write_lost(struct sonde_record *r, sonde_ring_sink sink, void *ctx);

/* Bytes of the sample_id_all trailer of non-sample records (same for all events). */
size_t sonde_record_id_hdr_size(const struct sonde_record *r);

struct sonde_pd_writer;
struct sonde_pd_host;

/**
 * sonde_record_host_fill() - the host facts of the perf.data header
 * @h: filled from uname, sysconf, PROCFS/cpuinfo, PROCFS/meminfo and
 *	arm64's SYSFS/devices/system/cpu/cpu0/regs/identification/midr_el1
 * @roots: sysfs and procfs roots; NULL (or a NULL root): "/sys", "/proc"
 *
 * Libc only; what cannot be read stays empty or 0.
 * Return: 0, or -errno when uname fails.
 */
int sonde_record_host_fill(struct sonde_pd_host *h, const struct sonde_roots *roots);

/**
 * sonde_record_header_features() - the features known before the capture:
 * host facts (hostname, os release, arch, CPUs, CPU description, memory)
 * and the command line @argv that made the capture
 */
int sonde_record_header_features(struct sonde_pd_writer *w, int argc, const char *const *argv);

/*
 * CPU_TOPOLOGY, NUMA_TOPOLOGY, PMU_MAPPINGS and CACHE from @sysfs, as perf
 * record writes them (@nr_cpus: NRCPUS' available count).  Features whose
 * files can't be read are left out.  Return: 0 or the first error.
 */
int sonde_record_topology_features(struct sonde_pd_writer *w, const char *sysfs, uint32_t nr_cpus);

/*
 * The tracing data feature: the format files of @r's tracepoints, from
 * @tracefs (nothing without tracepoints).  A stream output needs it before
 * the first record; otherwise sonde_record_end_features() sets it.
 */
int sonde_record_tracing_data(struct sonde_pd_writer *w, const struct sonde_record *r,
			      const char *tracefs);

/**
 * sonde_record_end_features() - the features known after it: tracing data
 * (unless already set; from @tracefs), the time
 * of the first and last sample, module section addresses, and with
 * @kallsyms a kallsyms snapshot
 * Return: 0 or the first error (the others are still written).
 */
int sonde_record_end_features(struct sonde_pd_writer *w, const struct sonde_record *r,
			      const char *tracefs, bool kallsyms);

/* What the build-id pass tells its caller: the [vdso]'s build id when
 * samples fell in it (0 bytes otherwise), the image to keep in the
 * build-id cache. */
struct sonde_record_bids {
	uint8_t vdso[20];
	uint8_t vdso_len;
};

/**
 * sonde_record_build_ids() - HEADER_BUILD_ID entries for every object that
 * got samples in the records written so far to @path (flushed first)
 * @found: filled in (may be NULL)
 * Return: 0 or a negative code.
 */
int sonde_record_build_ids(struct sonde_pd_writer *w, const char *path, const char *sysfs,
			   struct sonde_record_bids *found);

enum sonde_bid_kind { SONDE_BID_KERNEL, SONDE_BID_MODULE, SONDE_BID_FILE, SONDE_BID_VDSO };

/* Where build ids come from: this machine's files, or a remote target's. */
struct sonde_buildid_source {
	/* The build id of the kernel, module @name, or file @name as process
	 * @pid (0: unknown) sees it.  Return: its length (> 0) or -errno. */
	int (*lookup)(void *ctx, enum sonde_bid_kind kind, const char *name, uint32_t pid,
		      uint8_t id[20]);
	void *ctx;
};

/* sonde_record_build_ids() with build ids from @src (a remote capture's). */
int sonde_record_build_ids_from(struct sonde_pd_writer *w, const char *path,
				const struct sonde_buildid_source *src,
				struct sonde_record_bids *found);

#endif
