// SPDX-License-Identifier: MIT
/*
 * One capture, start to end: the loop `sonde record` and `sonde-agent`
 * share.  The loop waits with the one workload wait (sonde_wait_until():
 * ppoll() on the rings, the caller's descriptors and the workload's pidfd,
 * with the caller's signals unblocked only inside ppoll, so a signal is
 * never lost between the check and the wait), drains
 * every ring after each wake-up and marks the end of each pass with
 * FINISHED_ROUND so readers can merge CPUs in time order.
 */
#include <sonde/capture.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sonde/perf_data.h>
#include <sonde/wait.h>

#define MAX_POLL 1024

int sonde_capture_open(struct sonde_capture *c, const struct sonde_capture_opts *o)
{
	struct sonde_record_opts ro = o->rec;
	int r;

	memset(c, 0, sizeof(*c));
	c->o = *o;
	c->status = -1;
	c->wl = (struct sonde_workload){.pid = -1, .go_fd = -1, .err_fd = -1};
	if (o->argv) {
		r = sonde_workload_prepare(&c->wl, o->argv);
		if (r < 0)
			return sonde_errmsg_set(&c->err, r, "can't start '%s': %s", o->argv[0],
						sonde_strerror(r));
	}
	ro.target.workload = c->wl.pid;
	ro.delayed = o->delay_ms > 0;
	r = sonde_record_open(&c->rec, &ro);
	if (r < 0) {
		if (c->rec)
			c->err = c->rec->err;
		else
			sonde_errmsg_set(&c->err, r, "can't open the events: %s",
					 sonde_strerror(r));
		sonde_workload_abort(&c->wl);
	}
	return r;
}

int sonde_capture_synthesize(struct sonde_capture *c, sonde_emit_fn emit, void *ctx)
{
	const struct sonde_record_opts *ro = &c->o.rec;
	struct sonde_synth s = {
	    .procfs = ro->target.procfs ? ro->target.procfs : "/proc",
	    .sysfs = "/sys",
	    .id_hdr_size = sonde_record_id_hdr_size(c->rec),
	    .emit = emit,
	    .ctx = ctx,
	    .mmap_data = ro->callgraph == SONDE_CG_DWARF || ro->sample_addr,
	    .namespaces = ro->namespaces,
	};
	int r;

	/*
	 * System wide, the side-band runs before /proc is read, as perf enables
	 * its tracking event before synthesizing: a process forked meanwhile is
	 * then in the listing or has its own FORK/COMM/MMAP records, never
	 * neither (enabled after, nearly every run with a process spawner lost
	 * a child's COMM and maps).  Samples start after, so a process that
	 * dies while /proc is read has none.  A process both listed and
	 * recorded gets its COMM/MMAP twice, which replays harmlessly
	 * (synthesized records carry time 0 and come first).
	 */
	r = sonde_record_enable_sideband(c->rec);
	if (r == 0)
		r = sonde_synth_kernel_mmap(&s);

	/* Hidden kernel addresses (kptr_restrict) cost kernel symbols, not the capture. */
	if (r == -EACCES || r == -ENOENT) {
		c->kernel_map_hidden = true;
		r = 0;
	}
	if (r == 0)
		r = sonde_synth_modules(&s);
	if (r == 0 && ro->system_wide)
		r = sonde_synth_all_processes(&s);
	for (size_t i = 0; r == 0 && i < ro->target.npids; i++)
		r = sonde_synth_process(&s, ro->target.pids[i]);
	/* A thread's process is synthesized whole: perf does the same. */
	for (size_t i = 0; r == 0 && i < ro->target.ntids; i++)
		r = sonde_synth_process(&s, ro->target.tids[i]);
	/* The workload, held at its gate, is known from its exec on; perf
	 * gives it its namespaces from the start too. */
	if (r == 0 && ro->namespaces && c->wl.pid > 0 && !ro->system_wide)
		r = sonde_synth_namespaces(&s, c->wl.pid, c->wl.pid);
	return r;
}

static int finished_round(struct sonde_capture *c)
{
	struct perf_event_header h = {.type = SONDE_PD_RECORD_FINISHED_ROUND, .size = sizeof(h)};

	return c->o.sink(c->o.sink_ctx, &h, sizeof(h));
}

/* Drains every ring; a pass that moved records ends with FINISHED_ROUND. */
static int drain(struct sonde_capture *c)
{
	long got = sonde_record_drain(c->rec, c->o.sink, c->o.sink_ctx);
	int r = got < 0 ? (int)got : 0;

	if (got > 0)
		r = finished_round(c);
	if (r < 0) {
		c->sink_err = r;
		c->end = SONDE_CAPTURE_SINK_ERROR;
	}
	return r;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * --delay: the events start late.  Return: the milliseconds left before
 * they do (the wait's timeout), or -1 once they run.
 */
static int delayed_start(struct sonde_capture *c)
{
	uint64_t now;

	if (!c->enable_at)
		return -1;
	now = now_ms();
	if (now < c->enable_at)
		return (int)(c->enable_at - now);
	c->enable_at = 0;
	sonde_record_enable(c->rec);
	return -1;
}

static void loop(struct sonde_capture *c)
{
	struct pollfd pfd[MAX_POLL + SONDE_CAPTURE_MAX_EXTRA];
	size_t nrings = sonde_record_pollfds(c->rec, pfd, MAX_POLL), n = nrings, extra_at;
	bool workload = c->wl.pid > 0;
	struct sonde_wait w;

	if (sonde_wait_init(&w, &(struct sonde_wait_opts){.wl = workload ? &c->wl : NULL,
							  .waitmask = c->o.waitmask,
							  .stop_signal = c->o.stop_signal,
							  .child_exited = c->o.child_exited}) < 0) {
		c->end = SONDE_CAPTURE_POLL_ERROR;
		sonde_wait_fini(&w);
		return;
	}
	extra_at = n;
	for (size_t i = 0; i < c->o.nextra && i < SONDE_CAPTURE_MAX_EXTRA; i++)
		pfd[n++] = c->o.extra[i];
	for (;;) {
		int64_t timeout = -1;
		bool extra_ready = false;
		int ev, delay = delayed_start(c);

		if (c->o.poll_timeout_ms > 0)
			timeout = (int64_t)c->o.poll_timeout_ms * 1000000;
		if (delay >= 0 && (timeout < 0 || (int64_t)delay * 1000000 < timeout))
			timeout = (int64_t)delay * 1000000;
		ev = sonde_wait_until(&w, pfd, n, timeout);
		if (ev < 0) {
			c->end = SONDE_CAPTURE_POLL_ERROR;
			break;
		}
		if (ev & SONDE_WAIT_EXITED)
			c->status = w.status; /* reaped: kept whatever ends the loop */
		if (ev & SONDE_WAIT_SIGNAL) {
			c->end = SONDE_CAPTURE_SIGNALED;
			if (!workload)
				break;
			if (c->wl.pid > 0)
				kill(c->wl.pid, w.signal);
		}
		if (drain(c) < 0)
			break;
		if (c->o.on_pass && c->o.on_pass(c->o.ctx)) {
			c->end = SONDE_CAPTURE_STOPPED;
			break;
		}
		for (size_t i = extra_at; i < n; i++)
			extra_ready |= pfd[i].revents != 0;
		if (extra_ready && c->o.on_extra) {
			for (size_t i = 0; i < c->o.nextra; i++)
				c->o.extra[i].revents = pfd[extra_at + i].revents;
			if (c->o.on_extra(c->o.ctx, c->o.extra, c->o.nextra)) {
				c->end = SONDE_CAPTURE_STOPPED;
				break;
			}
		}
		/* Attached targets gone: every ring hung up. */
		if (!workload && !c->o.rec.system_wide && (ev & SONDE_WAIT_READY)) {
			size_t hup = 0;

			for (size_t k = 0; k < nrings; k++)
				hup += !!(pfd[k].revents & POLLHUP);
			if (hup == nrings) {
				c->end = SONDE_CAPTURE_TARGETS_GONE;
				break;
			}
		}
		/* After the pass that woke with it, as the records it left are drained. */
		if (ev & SONDE_WAIT_EXITED) {
			if (c->end != SONDE_CAPTURE_SIGNALED)
				c->end = SONDE_CAPTURE_WORKLOAD_EXITED;
			break;
		}
	}
	sonde_wait_fini(&w);
}

int sonde_capture_run(struct sonde_capture *c)
{
	int r;

	/* System wide, the counters run before the workload execs, so its exec
	 * COMM is recorded; a workload's own counters start at its exec. */
	if (!c->o.delay_ms && (c->wl.pid <= 0 || c->o.rec.system_wide))
		sonde_record_enable(c->rec);
	if (c->wl.pid > 0) {
		r = sonde_workload_start(&c->wl);
		if (r < 0) {
			c->wl.pid = -1;
			sonde_record_disable(c->rec);
			return sonde_errmsg_set(&c->err, r, "can't run '%s': %s", c->o.argv[0],
						sonde_strerror(r));
		}
		c->started = true;
	}
	/* --delay counts from the exec, as perf's does. */
	if (c->o.delay_ms)
		c->enable_at = now_ms() + c->o.delay_ms;
	loop(c);
	sonde_record_disable(c->rec);
	if (c->wl.pid > 0 && c->status < 0) {
		/* Stopped early: a signal went to the workload, or the caller stopped
		 * us and it is still running. */
		int status;

		if (c->end == SONDE_CAPTURE_STOPPED || c->end == SONDE_CAPTURE_SINK_ERROR ||
		    c->end == SONDE_CAPTURE_POLL_ERROR)
			kill(c->wl.pid, SIGKILL);
		if (waitpid(c->wl.pid, &status, 0) == c->wl.pid)
			c->status = status;
	}
	if (c->wl.pid > 0 && c->status >= 0)
		c->wl.pid = -1; /* reaped */
	if (c->end != SONDE_CAPTURE_SINK_ERROR && drain(c) == 0) {
		/* What each event lost, read from its counters, after the last
		 * records: perf record's LOST_SAMPLES at the end of the file. */
		int r2 = sonde_record_write_lost(c->rec, c->o.sink, c->o.sink_ctx);

		if (r2 < 0) {
			c->sink_err = r2;
			c->end = SONDE_CAPTURE_SINK_ERROR;
		}
	}
	return 0;
}

void sonde_capture_close(struct sonde_capture *c)
{
	if (c->wl.pid > 0 || c->wl.go_fd > 0 || c->wl.err_fd > 0)
		sonde_workload_abort(&c->wl);
	sonde_record_close(c->rec);
	c->rec = NULL;
}
