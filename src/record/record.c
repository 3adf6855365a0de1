// SPDX-License-Identifier: MIT
/*
 * Sampling setup and ring draining.
 *
 * Slots are (task, CPU) pairs: every target task on every CPU (so inherit
 * works and the rings are per CPU, as perf does for workloads), or every
 * CPU with pid -1 system wide.  The first fd opened on a CPU owns that
 * CPU's ring; every other fd on the CPU is redirected into it, so one
 * poll set and one drain pass cover everything.  The first event carries
 * the side-band (mmap, comm, task) records, except system wide, where a
 * dummy event of its own does (perf's layout), enabled before /proc is
 * read; every event sets sample_id_all so those records carry time and
 * can be merged in order.
 */
#include <sonde/record.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <sonde/evprobe.h>
#include <sonde/fileio.h>

/* User registers sampled for DWARF unwinding (perf's PERF_REGS_MASK). */
#if defined(__x86_64__)
#define USER_REGS_MASK 0xff0fffull
#elif defined(__aarch64__)
#define USER_REGS_MASK ((1ull << 33) - 1)
#elif defined(__arm__)
#define USER_REGS_MASK 0xffffull
#else
#define USER_REGS_MASK 0ull
#endif

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4) /* uapi headers before 6.0 */
#endif

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/*
 * The side-band carrier of system-wide captures, as perf adds it
 * (evlist__add_dummy, "dummy:HG"): a software event that never samples,
 * enabled before /proc is read while the sampling events wait until
 * after, so a process forked meanwhile has its FORK/COMM/MMAP records and
 * a process that dies meanwhile has no samples to explain.
 */
static const struct sonde_event dummy_event = {
    .name = (char *)"dummy:HG",
    .kind = SONDE_EV_SOFTWARE,
    .attr = {.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY},
};

static const struct sonde_event *event_at(const struct sonde_record *r, size_t i)
{
	return i < r->o.events->n ? &r->o.events->events[i] : &dummy_event;
}

const char *sonde_record_event_name(const struct sonde_record *r, size_t i)
{
	return event_at(r, i)->name;
}

/*
 * Event @i's group leader (a {a,b} spec) when @i is a member, else -1.
 * Members are opened on their leader's fd of the same slot, so the kernel
 * puts them on and off the PMU together, as perf record does.
 */
static int group_leader(const struct sonde_record *r, size_t i)
{
	const struct sonde_event *ev = event_at(r, i);

	return i < r->o.events->n && ev->leader != (int)i ? ev->leader : -1;
}

static void setup_attr(const struct sonde_record *r, size_t i, struct perf_event_attr *a)
{
	const struct sonde_event *ev = event_at(r, i);
	const struct sonde_record_opts *o = &r->o;

	*a = ev->attr;
	a->size = sizeof(*a);
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (r->nevents > 1)
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (o->system_wide || ev->kind == SONDE_EV_TRACEPOINT)
		a->sample_type |= PERF_SAMPLE_CPU;
	if (ev->kind == SONDE_EV_TRACEPOINT)
		a->sample_type |= PERF_SAMPLE_RAW;
	if (o->callgraph != SONDE_CG_NONE)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (o->callgraph == SONDE_CG_DWARF) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = USER_REGS_MASK;
		a->sample_stack_user = o->dwarf_size;
		a->exclude_callchain_user = 1;
	}
	if (o->sample_addr)
		a->sample_type |= PERF_SAMPLE_ADDR;
	if (o->user_regs) {
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user |= o->user_regs;
	}
	if (o->intr_regs) {
		a->sample_type |= PERF_SAMPLE_REGS_INTR;
		a->sample_regs_intr = o->intr_regs;
	}
	/* Sampling rate: the event's own term, then -c, then -F; tracepoints
	 * and breakpoints default to every event. */
	if (!(ev->flags & (SONDE_EVF_PERIOD | SONDE_EVF_FREQ))) {
		if (ev->kind == SONDE_EV_TRACEPOINT || ev->kind == SONDE_EV_BREAKPOINT) {
			a->freq = 0;
			a->sample_period = o->period ? o->period : 1;
		} else if (o->period) {
			a->freq = 0;
			a->sample_period = o->period;
		} else {
			a->freq = 1;
			a->sample_freq = o->freq;
		}
	}
	if (a->freq && a->sample_freq > r->max_freq && r->max_freq)
		a->sample_freq = r->max_freq;
	a->sample_id_all = 1;
	/* The samples each event dropped, for the LOST_SAMPLES records written at
	 * the end (record_lost.c); kernels before 6.0 refuse it: see open_one(). */
	if (r->lost_format)
		a->read_format |= PERF_FORMAT_LOST;
	a->disabled = 1;
	a->inherit = !o->system_wide;
	a->enable_on_exec = o->target.workload > 0 && !o->system_wide && !o->delayed;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((o->pages * (uint64_t)sysconf(_SC_PAGESIZE)) / 4);
	/* A group member runs whenever its leader does: the leader alone is
	 * disabled until the start (perf's attrs, as perf evlist -v shows). */
	if (group_leader(r, i) >= 0) {
		a->disabled = 0;
		a->enable_on_exec = 0;
	}
	if (ev == &dummy_event) {
		a->enable_on_exec = o->target.workload > 0 && !o->system_wide;
		a->freq = 0;
		a->sample_period = 1; /* as perf's: a dummy never overflows */
	}
	if (i == r->track) {
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = r->build_ids;
		/* An offline DWARF unwinder reads .eh_frame from the object's
		 * read-only segment, which is not an executable mapping: without
		 * mmap_data perf cannot unwind past the first frame. */
		a->mmap_data = o->callgraph == SONDE_CG_DWARF || o->sample_addr;
		a->context_switch = o->switch_events;
		a->namespaces = o->namespaces;
	}
}

size_t sonde_record_id_hdr_size(const struct sonde_record *r)
{
	uint64_t t = r->nevents ? r->attrs[0].sample_type : 0;
	size_t n = 0;

	/* sample_id trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER (8 bytes each). */
	n += !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
	     !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
	     !!(t & PERF_SAMPLE_IDENTIFIER);
	return n * 8;
}

/* Opens event @i on slot (pid, cpu) in group @group_fd (-1: alone). */
static int open_one(struct sonde_record *r, size_t i, pid_t pid, int cpu, int group_fd)
{
	struct perf_event_attr a = r->attrs[i];
	int fd = sonde_perf_event_open(&a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	/* Kernels before 6.0 don't know PERF_FORMAT_LOST: retry without (every
	 * event: the attrs written to the file say what was opened). */
	if (fd < 0 && errno == EINVAL && (a.read_format & PERF_FORMAT_LOST)) {
		r->lost_format = false;
		for (size_t k = 0; k < r->nevents; k++)
			r->attrs[k].read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		a.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		fd = sonde_perf_event_open(&a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	}
	/* Kernels before 5.12 don't know build_id: retry without. */
	if (fd < 0 && errno == EINVAL && a.build_id) {
		r->build_ids = false;
		r->attrs[i].build_id = 0;
		a.build_id = 0;
		fd = sonde_perf_event_open(&a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	}
	/* perf's fallback: user space only when the kernel is off limits; the
	 * event's attr changes for every slot (and for the file's header). */
	if (fd < 0 && sonde_event_fallback_user(&a, -errno)) {
		r->attrs[i].exclude_kernel = a.exclude_kernel;
		r->attrs[i].exclude_hv = a.exclude_hv;
		fd = sonde_perf_event_open(&a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

static int cpu_ring(struct sonde_record *r, int cpu)
{
	for (size_t k = 0; k < r->nrings; k++)
		if (r->rings[k].cpu == cpu)
			return (int)k;
	return -1;
}

int sonde_record_open(struct sonde_record **out, const struct sonde_record_opts *o)
{
	struct sonde_record *r = calloc(1, sizeof(*r));
	const struct sonde_cpulist *cpus = o->target.cpus;
	pid_t *tasks = NULL, syswide = -1;
	size_t ntasks = 0;
	int ret;

	*out = r;
	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->nevents = o->events->n;
	/* System wide, the side-band gets its own event (see dummy_event). */
	/* With --delay the side-band can't wait for the events: it gets the
	 * dummy too (perf adds one for initial_delay), running from the exec. */
	r->track = o->system_wide || o->delayed ? r->nevents++ : 0;
	r->build_ids = true;
	r->lost_format = true;
	if (sonde_read_u64("/proc/sys/kernel/perf_event_max_sample_rate", &r->max_freq) < 0)
		r->max_freq = 0;
	if (!o->period && r->max_freq && o->freq > r->max_freq)
		r->freq_asked = o->freq;
	if (!cpus || !cpus->n)
		return sonde_errmsg_set(&r->err, -EINVAL, "no CPUs to record on");
	if (!o->system_wide) {
		ret = sonde_target_tasks(&o->target, &tasks, &ntasks, &r->err);
		if (ret < 0)
			return ret;
	} else {
		tasks = &syswide;
		ntasks = 1;
	}
	r->nslots = ntasks * cpus->n;
	r->attrs = calloc(r->nevents, sizeof(*r->attrs));
	r->fds = malloc(r->nevents * r->nslots * sizeof(*r->fds));
	r->ids = calloc(r->nevents * r->nslots, sizeof(*r->ids));
	r->rings = calloc(cpus->n, sizeof(*r->rings));
	r->stats = calloc(cpus->n, sizeof(*r->stats));
	if (!r->attrs || !r->fds || !r->ids || !r->rings || !r->stats) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < r->nevents * r->nslots; k++)
		r->fds[k] = -1;
	for (size_t i = 0; i < r->nevents; i++)
		setup_attr(r, i, &r->attrs[i]);
	/* Samples start with [IDENTIFIER] IP TID TIME: the same for every event. */
	r->time_off = sizeof(struct perf_event_header) + 16 +
		      ((r->attrs[0].sample_type & PERF_SAMPLE_IDENTIFIER) ? 8 : 0);

	for (size_t i = 0; i < r->nevents; i++) {
		const struct sonde_event *ev = event_at(r, i);
		const char *filter = o->filters && i < o->events->n ? o->filters[i] : NULL;
		size_t opened = 0;

		for (size_t t = 0; t < ntasks; t++) {
			for (size_t c = 0; c < cpus->n; c++) {
				size_t slot = t * cpus->n + c;
				int leader = group_leader(r, i), cpu = cpus->cpus[c], fd, k;
				int group_fd =
				    leader < 0 ? -1 : r->fds[(size_t)leader * r->nslots + slot];

				if (leader >= 0 && group_fd < 0)
					continue; /* the leader's task exited meanwhile */
				fd = open_one(r, i, tasks[t], cpu, group_fd);

				if (fd == -ESRCH && !o->system_wide && o->target.workload <= 0)
					continue; /* an attached thread exited meanwhile */
				if (fd < 0) {
					r->failed = ev;
					r->failed_err = fd;
					ret = sonde_errmsg_set(
					    &r->err, fd, "can't open event '%s' on CPU %d: %s",
					    ev->name, cpu, sonde_strerror(fd));
					goto out;
				}
				r->fds[i * r->nslots + slot] = fd;
				opened++;
				if (ioctl(fd, PERF_EVENT_IOC_ID, &r->ids[i * r->nslots + slot]) <
				    0) {
					ret = sonde_errmsg_set(&r->err, -errno,
							       "PERF_EVENT_IOC_ID: %s",
							       strerror(errno));
					goto out;
				}
				if (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
					ret = sonde_errmsg_set(
					    &r->err, -errno,
					    "the kernel refused filter '%s' on %s: %s", filter,
					    ev->name, strerror(errno));
					goto out;
				}
				k = cpu_ring(r, cpu);
				if (k < 0) {
					k = (int)r->nrings;
					ret = sonde_ring_open(&r->rings[k], fd, cpu, o->pages);
					if (ret < 0) {
						sonde_errmsg_set(
						    &r->err, ret,
						    "can't map a %u-page ring on CPU %d: %s (try a smaller -m, or raise kernel.perf_event_mlock_kb)",
						    o->pages, cpu, sonde_strerror(ret));
						goto out;
					}
					r->stats[k].cpu = cpu;
					r->nrings++;
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings[k].fd) <
					   0) {
					ret = sonde_errmsg_set(
					    &r->err, -errno,
					    "PERF_EVENT_IOC_SET_OUTPUT on CPU %d: %s", cpu,
					    strerror(errno));
					goto out;
				}
			}
		}
		if (!opened) {
			ret = sonde_errmsg_set(&r->err, -ESRCH, "every target task exited");
			goto out;
		}
	}
	ret = 0;
out:
	if (tasks != &syswide)
		free(tasks);
	return ret;
}

void sonde_record_close(struct sonde_record *r)
{
	if (!r)
		return;
	for (size_t k = 0; k < r->nrings; k++)
		sonde_ring_close(&r->rings[k]);
	if (r->fds)
		for (size_t k = 0; k < r->nevents * r->nslots; k++)
			if (r->fds[k] >= 0)
				close(r->fds[k]);
	free(r->attrs);
	free(r->fds);
	free(r->ids);
	free(r->rings);
	free(r->stats);
	free(r);
}

/* @req on every fd of events [@first, @end). */
static int ioctl_events(struct sonde_record *r, unsigned long req, size_t first, size_t end)
{
	for (size_t k = first * r->nslots; k < end * r->nslots; k++)
		if (r->fds[k] >= 0 && ioctl(r->fds[k], req, 0) < 0)
			return sonde_errmsg_set(&r->err, -errno, "ioctl: %s", strerror(errno));
	return 0;
}

int sonde_record_enable(struct sonde_record *r)
{
	return ioctl_events(r, PERF_EVENT_IOC_ENABLE, 0, r->nevents);
}

int sonde_record_enable_sideband(struct sonde_record *r)
{
	/* Only a side-band event of its own: event 0 would sample as well. */
	if (r->track < r->o.events->n)
		return 0;
	return ioctl_events(r, PERF_EVENT_IOC_ENABLE, r->track, r->track + 1);
}

int sonde_record_disable(struct sonde_record *r)
{
	return ioctl_events(r, PERF_EVENT_IOC_DISABLE, 0, r->nevents);
}

size_t sonde_record_event_ids(const struct sonde_record *r, size_t ev, uint64_t *ids, size_t max)
{
	size_t n = 0;

	for (size_t s = 0; s < r->nslots && n < max; s++)
		if (r->fds[ev * r->nslots + s] >= 0)
			ids[n++] = r->ids[ev * r->nslots + s];
	return n;
}

size_t sonde_record_pollfds(const struct sonde_record *r, struct pollfd *pfd, size_t max)
{
	size_t n = 0;

	for (size_t k = 0; k < r->nrings && n < max; k++) {
		pfd[n].fd = r->rings[k].fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

struct counting_sink {
	struct sonde_ring_stats *st;
	size_t time_off;
	sonde_ring_sink sink;
	void *ctx;
};

/* Counts samples, losses and throttling on the way to the real sink. */
static int count_records(void *ctx, const void *buf, size_t len)
{
	struct counting_sink *cs = ctx;
	const unsigned char *p = buf;

	for (size_t off = 0; off + sizeof(struct perf_event_header) <= len;) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE && off + cs->time_off + 8 <= len) {
			uint64_t t;

			memcpy(&t, p + off + cs->time_off, sizeof(t));
			if (!cs->st->first_time)
				cs->st->first_time = t;
			cs->st->last_time = t;
			cs->st->samples++;
		} else if (h.type == PERF_RECORD_LOST && h.size >= 24) {
			uint64_t lost;

			memcpy(&lost, p + off + 16, sizeof(lost));
			cs->st->lost += lost;
			cs->st->lost_records++;
		} else if (h.type == PERF_RECORD_THROTTLE)
			cs->st->throttles++;
		off += h.size;
	}
	cs->st->bytes += len;
	return cs->sink(cs->ctx, buf, len);
}

long sonde_record_drain(struct sonde_record *r, sonde_ring_sink sink, void *ctx)
{
	long total = 0;

	for (size_t k = 0; k < r->nrings; k++) {
		struct counting_sink cs = {&r->stats[k], r->time_off, sink, ctx};
		long n = sonde_ring_drain(&r->rings[k], count_records, &cs);

		if (n < 0)
			return n;
		total += n;
	}
	return total;
}
