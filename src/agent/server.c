// SPDX-License-Identifier: MIT
/*
 * The agent's session: hello, authentication, then requests one at a time.
 *
 * A RECORD request is parsed against this machine's sysfs and tracefs (the
 * host can't know the target's PMUs and tracepoints), opened as a
 * sonde_capture, and streamed: EVENTS (attrs and ids), the header features
 * known before (a feature-collecting perf.data writer, serialized exactly
 * as in a local file), DATA (records batched per drain pass), the features
 * known after, END.  The connection is polled with the rings: EOF or an
 * error there (the host died) or a STOP ends the capture, and closing the
 * capture kills the workload and closes every event, which is all the
 * kernel state a sampling capture holds (filters live on the fds; no
 * tracefs instance or probe is created).  Caps: record bytes per capture
 * and per second (beyond the rate the agent sleeps, so the kernel drops
 * and counts LOST records instead of the agent buffering without bound).
 *
 * The objects of the MMAP records sent are remembered with their identity
 * (objects.c), and a BUILDID request for a file must name one of them and
 * find the same file there: the agent serves the build-id notes of the
 * objects of its last capture, nothing else.
 */
#include <sonde/agent.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <sonde/buildid.h>
#include <sonde/capture.h>
#include <sonde/cpulist.h>
#include <sonde/doctor.h>
#include <sonde/evprobe.h>
#include <sonde/perf_data.h>
#include <sonde/pmu.h>
#include <sonde/strlist.h>
#include <sonde/synth.h>
#include <sonde/tracefs.h>
#include <sonde/tracepoint.h>
#include <sonde/vdso.h>

#include "objects.h"

#define CHUNK_MAX (256u * 1024)

struct session {
	const struct sonde_agent_config *cfg;
	struct sonde_agent_conn conn;
	struct sonde_wbuf out;	 /* replies */
	struct sonde_wbuf chunk; /* DATA being filled */
	char tracefs[4096];
	bool have_tracefs;
	struct agent_objects objects; /* of the last capture */
	/* during a capture */
	uint64_t sent, window_start_ns, window_bytes;
	bool peer_gone, stop_asked, size_capped;
	int send_err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int send_out(struct session *s)
{
	int r = sonde_agent_send(&s->conn, &s->out);

	if (r < 0)
		s->peer_gone = true;
	return r;
}

static int send_error(struct session *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int send_error(struct session *s, int code, const char *fmt, ...)
{
	char text[SONDE_AGENT_MAX_STRING];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	sonde_agent_put_error(&s->out, code, text);
	return send_out(s);
}

/* Sleeps so that no more than max_rate bytes go out per second. */
static void rate_wait(struct session *s, size_t len)
{
	uint64_t rate = s->cfg->max_rate, t = now_ns();

	if (!rate)
		return;
	if (t - s->window_start_ns >= 1000000000ull) {
		s->window_start_ns = t;
		s->window_bytes = 0;
	}
	s->window_bytes += len;
	if (s->window_bytes > rate) {
		uint64_t wait = 1000000000ull - (t - s->window_start_ns);
		struct timespec ts = {(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};

		nanosleep(&ts, NULL);
		s->window_start_ns = now_ns();
		s->window_bytes = 0;
	}
}

static int flush_chunk(struct session *s)
{
	size_t len = s->chunk.len - SONDE_AGENT_FRAME_SIZE;
	int r;

	if (!len || s->peer_gone)
		return s->peer_gone ? -EPIPE : 0;
	rate_wait(s, len);
	r = sonde_wbuf_end(&s->chunk);
	if (r == 0)
		r = sonde_agent_send(&s->conn, &s->chunk);
	if (r < 0) {
		s->peer_gone = true;
		s->send_err = r;
	}
	s->sent += len;
	sonde_wbuf_begin(&s->chunk, SONDE_AM_DATA);
	return r;
}

/* The capture's sink: whole records into DATA chunks. */
static int data_sink(void *ctx, const void *buf, size_t len)
{
	struct session *s = ctx;
	const uint8_t *p = buf;

	if (s->peer_gone)
		return -EPIPE;
	agent_objects_note(&s->objects, buf, len);
	while (len) {
		/* Cut at record boundaries so every DATA holds whole records. */
		size_t take = 0;

		while (take < len) {
			const struct perf_event_header *h = (const void *)(p + take);

			if (take &&
			    s->chunk.len - SONDE_AGENT_FRAME_SIZE + take + h->size > CHUNK_MAX)
				break;
			take += h->size ? h->size : len - take;
		}
		sonde_wbuf_raw(&s->chunk, p, take);
		if (s->chunk.err)
			return s->chunk.err;
		p += take;
		len -= take;
		if (s->chunk.len - SONDE_AGENT_FRAME_SIZE >= CHUNK_MAX && flush_chunk(s) < 0)
			return -EPIPE;
	}
	return 0;
}

static int emit_sink(void *ctx, const void *rec, size_t len)
{
	return data_sink(ctx, rec, len);
}

static int on_pass(void *ctx)
{
	struct session *s = ctx;

	if (flush_chunk(s) < 0)
		return 1;
	if (s->cfg->max_bytes && s->sent >= s->cfg->max_bytes) {
		s->size_capped = true;
		return 1;
	}
	return 0;
}

/* The connection while a capture runs. */
static int on_extra(void *ctx, struct pollfd *pfd, size_t n)
{
	struct session *s = ctx;
	struct sonde_wmsg m;
	int r;

	(void)n;
	if (!pfd[0].revents)
		return 0;
	r = sonde_agent_recv(&s->conn, SONDE_AGENT_MAX_REQUEST, &m);
	if (r <= 0) {
		s->peer_gone = true;
		return 1;
	}
	if (m.type == SONDE_AM_STOP) {
		s->stop_asked = true;
		return 1;
	}
	return 0; /* anything else during a capture is ignored */
}

/* Every set feature of @w as a FEATURE message. */
static int send_features(struct session *s, struct sonde_pd_writer *w)
{
	for (unsigned bit = 0; bit < SONDE_PD_FEAT_BITS; bit++) {
		const void *data;
		size_t len;

		if (!sonde_pd_writer_feature(w, bit, &data, &len))
			continue;
		sonde_agent_put_feature(&s->out, bit, data, len);
		if (send_out(s) < 0)
			return -EPIPE;
	}
	return 0;
}

static int send_events(struct session *s, struct sonde_capture *c, const struct sonde_evlist *l)
{
	struct sonde_record *rec = c->rec;
	struct sonde_agent_events e = {
	    .n = (uint32_t)rec->nevents, .max_freq = rec->max_freq, .freq_asked = rec->freq_asked};
	uint64_t *ids = calloc(rec->nevents * (rec->nslots ? rec->nslots : 1) + 1, sizeof(*ids));
	int r;

	e.ev = calloc(rec->nevents + 1, sizeof(*e.ev));
	if (!ids || !e.ev) {
		free(ids);
		free(e.ev);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rec->nevents; i++) {
		uint64_t *mine = ids + i * rec->nslots;

		e.ev[i].name = sonde_record_event_name(rec, i);
		e.ev[i].attr = &rec->attrs[i];
		e.ev[i].attr_len = sizeof(rec->attrs[i]);
		e.ev[i].ids = mine;
		e.ev[i].nids = (uint32_t)sonde_record_event_ids(rec, i, mine, rec->nslots);
	}
	sonde_agent_put_events(&s->out, &e);
	r = send_out(s);
	free(ids);
	free(e.ev);
	return r;
}

/* One capture at a time across the agent's sessions: the shared word holds
 * the capturing session's pid. */
static bool capture_take(const struct session *s)
{
	int none = 0;

	return !s->cfg->capture_owner ||
	       __atomic_compare_exchange_n(s->cfg->capture_owner, &none, (int)getpid(), false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static void capture_give(const struct session *s)
{
	int me = (int)getpid();

	if (s->cfg->capture_owner)
		__atomic_compare_exchange_n(s->cfg->capture_owner, &me, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
}

static int parse_events(struct session *s, const struct sonde_agent_record_req *req,
			struct sonde_evlist *l, char ***filters)
{
	struct sonde_roots roots = {.sysfs = "/sys",
				    .tracefs = s->have_tracefs ? s->tracefs : NULL};

	for (uint32_t i = 0; i < req->nspecs; i++) {
		size_t before = l->n;

		if (sonde_evlist_parse(l, req->specs[i], &roots) < 0)
			return send_error(s, SONDE_E_UNKNOWN_EVENT, "on the target: %s",
					  l->err.text),
			       -EINVAL;
		if (!req->filters[i][0])
			continue;
		for (size_t k = before; k < l->n; k++)
			if (l->events[k].kind == SONDE_EV_TRACEPOINT)
				l->events[k].filter = strdup(req->filters[i]);
	}
	if (!l->n &&
	    sonde_evlist_parse(l, sonde_hw_pmu_probe() == 0 ? "cycles" : "cpu-clock", &roots) < 0)
		return send_error(s, SONDE_E_UNKNOWN_EVENT, "%s", l->err.text), -EINVAL;
	*filters = calloc(l->n, sizeof(char *));
	if (!*filters)
		return -ENOMEM;
	for (size_t k = 0; k < l->n; k++)
		(*filters)[k] = l->events[k].filter;
	return 0;
}

static int do_record(struct session *s, const struct sonde_agent_record_req *req)
{
	struct sonde_evlist l;
	struct sonde_cpulist cpus = {0};
	struct sonde_capture c = {0};
	struct sonde_capture_opts co = {0};
	struct sonde_pd_writer *fw = NULL;
	struct sonde_agent_end end = {.status = -1, .message = ""};
	char **filters = NULL;
	pid_t *pids = NULL, *tids = NULL;
	char msg[600] = "";
	bool held = false;
	int r;

	sonde_evlist_init(&l);
	agent_objects_clear(&s->objects);
	s->sent = s->window_bytes = 0;
	s->window_start_ns = now_ns();
	s->stop_asked = s->size_capped = false;
	if (req->argc && !s->cfg->allow_exec) {
		r = send_error(s, -EPERM,
			       "running a command needs sonde-agent --allow-exec on the target");
		goto out;
	}
	if (!(held = capture_take(s))) {
		r = send_error(s, -EBUSY,
			       "sonde-agent is busy: another host's capture is running (one at a "
			       "time)");
		goto out;
	}
	if (req->callgraph > SONDE_CG_DWARF || req->dwarf_size > SONDE_RECORD_MAX_DWARF ||
	    (req->dwarf_size & 7) || !req->pages || (req->pages & (req->pages - 1)) ||
	    req->pages > (1u << 20) || (!req->freq && !req->period)) {
		r = send_error(s, -EINVAL, "bad record options");
		goto out;
	}
	if ((r = parse_events(s, req, &l, &filters)) < 0)
		goto out;
	r = req->cpu_list[0] ? sonde_cpulist_parse(req->cpu_list, &cpus)
			     : sonde_cpulist_online("/sys", &cpus);
	if (r < 0) {
		r = send_error(s, -EINVAL, "bad CPU list '%s' for the target", req->cpu_list);
		goto out;
	}
	pids = calloc(req->npids + 1, sizeof(*pids));
	tids = calloc(req->ntids + 1, sizeof(*tids));
	if (!pids || !tids) {
		r = send_error(s, -ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < req->npids; i++)
		pids[i] = (pid_t)req->pids[i];
	for (uint32_t i = 0; i < req->ntids; i++)
		tids[i] = (pid_t)req->tids[i];
	co.rec = (struct sonde_record_opts){
	    .events = &l,
	    .target = {.pids = pids,
		       .npids = req->npids,
		       .tids = tids,
		       .ntids = req->ntids,
		       .cpus = &cpus,
		       .procfs = "/proc"},
	    .freq = req->freq,
	    .period = req->period,
	    .callgraph = (enum sonde_callgraph)req->callgraph,
	    .dwarf_size = req->dwarf_size,
	    .pages = req->pages,
	    .filters = (const char *const *)filters,
	    .system_wide = req->flags & SONDE_AGENT_R_SYSTEM_WIDE,
	};
	co.argv = req->argc ? (char *const *)req->argv : NULL;
	co.sink = data_sink;
	co.sink_ctx = s;
	co.extra[0] = (struct pollfd){.fd = s->conn.rfd, .events = POLLIN};
	co.nextra = 1;
	co.on_extra = on_extra;
	co.on_pass = on_pass;
	co.ctx = s;
	co.stop_signal = s->cfg->stop_signal;
	/* Large rings fill slowly: flush at least every 100 ms so the host sees progress. */
	co.poll_timeout_ms = 100;
	r = sonde_capture_open(&c, &co);
	if (r < 0) {
		char why[512] = "";

		if (c.rec && c.rec->failed)
			sonde_doctor_explain_open_error(&c.rec->failed->attr, c.rec->failed_err,
							why, sizeof(why));
		/* The explanation has its own line, as a local record prints it;
		 * without a failed event, the error code is the explanation. */
		r = send_error(s, r, "on the target: %s%s%s",
			       c.err.text[0] ? c.err.text : sonde_strerror(r), why[0] ? "\n  " : "",
			       why);
		goto out;
	}
	sonde_wbuf_begin(&s->chunk, SONDE_AM_DATA);
	if ((r = send_events(s, &c, &l)) < 0)
		goto out;
	r = sonde_pd_writer_open_fd(&fw, -1, NULL);
	if (r == 0)
		r = sonde_record_header_features(fw, (int)req->cmdc, req->cmdline);
	if (r == 0 && (r = send_features(s, fw)) < 0)
		goto out;
	sonde_pd_writer_close(fw, NULL);
	fw = NULL;
	r = sonde_capture_synthesize(&c, emit_sink, s);
	if (r == 0)
		r = flush_chunk(s);
	if (r < 0)
		goto out;
	r = sonde_capture_run(&c);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s", c.err.text);
		end.reason = SONDE_AGENT_END_ERROR;
	}
	if (!s->peer_gone)
		flush_chunk(s);
	if (s->peer_gone)
		goto out; /* nobody to tell: clean up for the next one */
	if (r == 0) {
		r = sonde_pd_writer_open_fd(&fw, -1, NULL);
		if (r == 0) {
			/* Errors here cost features, not the capture. */
			sonde_record_end_features(fw, c.rec, s->have_tracefs ? s->tracefs : NULL,
						  req->flags & SONDE_AGENT_R_KALLSYMS);
			if (send_features(s, fw) < 0)
				goto out;
		}
		end.reason =
		    s->size_capped			     ? SONDE_AGENT_END_SIZE_CAP
		    : c.end == SONDE_CAPTURE_WORKLOAD_EXITED ? SONDE_AGENT_END_WORKLOAD
		    : c.end == SONDE_CAPTURE_SINK_ERROR || c.end == SONDE_CAPTURE_POLL_ERROR
			? SONDE_AGENT_END_ERROR
			: SONDE_AGENT_END_STOPPED;
		if (s->size_capped)
			snprintf(msg, sizeof(msg), "the agent's size cap (%llu bytes) was reached",
				 (unsigned long long)s->cfg->max_bytes);
	}
	end.status = c.status;
	end.bytes = s->sent;
	end.nrings = (uint32_t)c.rec->nrings;
	end.rings = calloc(c.rec->nrings + 1, sizeof(*end.rings));
	for (size_t k = 0; end.rings && k < c.rec->nrings; k++) {
		const struct sonde_ring_stats *st = &c.rec->stats[k];

		end.rings[k] =
		    (struct sonde_agent_ring){st->cpu, st->samples, st->lost, st->throttles};
	}
	if (!end.rings)
		end.nrings = 0;
	end.message = msg;
	sonde_agent_put_end(&s->out, &end);
	send_out(s);
	free(end.rings);
	r = 0;
out:
	sonde_pd_writer_close(fw, NULL);
	sonde_capture_close(&c);
	if (held)
		capture_give(s);
	sonde_cpulist_fini(&cpus);
	free(filters);
	free(pids);
	free(tids);
	sonde_evlist_fini(&l);
	return s->peer_gone ? -EPIPE : r < 0 ? r : 0;
}

static int do_buildid(struct session *s, struct sonde_wmsg *m)
{
	uint32_t kind, pid;
	const char *name;
	uint8_t id[SONDE_BUILD_ID_MAX];
	char path[SONDE_AGENT_MAX_STRING + 64];
	const struct agent_object *o;
	int r = -ENOENT;

	if (sonde_agent_get_buildid(m, &kind, &pid, &name) < 0)
		return -EBADMSG;
	switch (kind) {
	case SONDE_AGENT_BID_KERNEL:
		r = sonde_build_id_of_kernel("/sys", id);
		break;
	case SONDE_AGENT_BID_MODULE:
		if (!sonde_agent_module_ok(name))
			return send_error(s, -EACCES, "refused: '%s' is not a module name", name);
		r = sonde_build_id_of_module("/sys", name, id);
		break;
	case SONDE_AGENT_BID_FILE:
		if (!sonde_agent_path_ok(name) || !(o = agent_objects_find(&s->objects, name)))
			return send_error(
			    s, -EACCES, "refused: '%s' is not an object named in the last capture",
			    name);
		/* Only from the very file the capture mapped (see objects.c). */
		if (pid) {
			snprintf(path, sizeof(path), "/proc/%u/root%s", pid, name);
			r = agent_object_build_id(o, path, id);
		}
		if (r < 0)
			r = agent_object_build_id(o, name, id);
		break;
	default:
		return send_error(s, -EINVAL, "unknown build-id kind %u", kind);
	}
	sonde_agent_put_reply_blob(&s->out, SONDE_AM_BUILDID_REPLY, id, r > 0 ? (size_t)r : 0);
	return send_out(s);
}

/* The host keeps it in its build-id cache to name [vdso] samples. */
static int vdso_copy(char **blob, size_t *len)
{
	const void *image;
	int r = sonde_vdso_image(&image, len);

	if (r < 0)
		return r;
	if (!(*blob = malloc(*len)))
		return -ENOMEM;
	memcpy(*blob, image, *len);
	return 0;
}

static int do_file(struct session *s, struct sonde_wmsg *m)
{
	uint32_t kind;
	char *blob = NULL;
	size_t len = 0;
	int r;

	if (sonde_agent_get_file(m, &kind) < 0)
		return -EBADMSG;
	if (kind == SONDE_AGENT_FILE_KALLSYMS)
		r = sonde_kallsyms_snapshot("/proc", &blob, &len);
	else if (kind == SONDE_AGENT_FILE_MODULES)
		r = sonde_module_sections("/proc", "/sys", &blob, &len);
	else if (kind == SONDE_AGENT_FILE_VDSO)
		r = vdso_copy(&blob, &len);
	else
		return send_error(s, -EACCES, "refused: file kind %u is not served", kind);
	if (r < 0)
		return send_error(s, r, "%s", sonde_strerror(r));
	sonde_agent_put_reply_blob(&s->out, SONDE_AM_FILE_REPLY, blob, len);
	free(blob);
	return send_out(s);
}

/* The events this target can open, by kind (what `sonde list` shows). */
static int do_list(struct session *s, struct sonde_wmsg *m)
{
	bool hw = sonde_hw_pmu_probe() == 0;
	const char *hw_what = hw ? "Hardware event" : "Hardware event; not supported here";
	struct sonde_strlist a, b;
	struct sonde_wbuf *o = &s->out;
	struct sonde_agent_list_reply n;
	const char *what;
	char name[600];
	size_t ne;
	const struct sonde_named_event *ev = sonde_named_events(&ne);

	if (sonde_agent_get_list(m, &what) < 0)
		return -EBADMSG;
	sonde_agent_list_reply_begin(o, &n);
	for (size_t i = 0; i < ne; i++)
		sonde_agent_list_reply_add(o, &n, ev[i].name,
					   ev[i].type == PERF_TYPE_HARDWARE ? hw_what
									    : "Software event");
	for (unsigned int i = 0; i < sonde_cache_event_count(); i++) {
		uint64_t config;

		if (sonde_cache_event_name(i, name, sizeof(name), &config))
			sonde_agent_list_reply_add(o, &n, name,
						   hw ? "Hardware cache event"
						      : "Hardware cache event; not supported here");
	}
	sonde_strlist_init(&a);
	sonde_pmu_names("/sys", &a);
	for (size_t i = 0; i < a.n; i++) {
		sonde_strlist_init(&b);
		sonde_pmu_event_names("/sys", a.v[i], &b);
		for (size_t j = 0; j < b.n; j++) {
			snprintf(name, sizeof(name), "%s/%s/", a.v[i], b.v[j]);
			sonde_agent_list_reply_add(o, &n, name, "Kernel PMU event");
		}
		sonde_strlist_fini(&b);
	}
	sonde_strlist_fini(&a);
	if (s->have_tracefs) {
		sonde_strlist_init(&a);
		sonde_tracepoint_systems(s->tracefs, &a);
		for (size_t i = 0; i < a.n; i++) {
			sonde_strlist_init(&b);
			sonde_tracepoint_events(s->tracefs, a.v[i], &b);
			for (size_t j = 0; j < b.n; j++) {
				snprintf(name, sizeof(name), "%s:%s", a.v[i], b.v[j]);
				sonde_agent_list_reply_add(o, &n, name, "Tracepoint event");
			}
			sonde_strlist_fini(&b);
		}
		sonde_strlist_fini(&a);
	} else {
		sonde_agent_list_reply_add(o, &n, "tracepoints",
					   "not available: no tracefs on the target");
	}
	sonde_agent_list_reply_end(o, &n);
	return send_out(s);
}

static void fill_hello(struct session *s, struct sonde_agent_hello *h, struct utsname *u)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN), conf = sysconf(_SC_NPROCESSORS_CONF);
	const uint16_t one = 1;

	uname(u);
	*h = (struct sonde_agent_hello){
	    .proto = SONDE_AGENT_PROTO_VERSION,
	    .version = s->cfg->version ? s->cfg->version : "",
	    .machine = u->machine,
	    .release = u->release,
	    .ncpus_online = online > 0 ? (uint32_t)online : 1,
	    .ncpus_conf = conf > 0 ? (uint32_t)conf : 1,
	    .max_bytes = s->cfg->max_bytes,
	    .max_rate = s->cfg->max_rate,
	};
	h->kinds = 1u << SONDE_EV_SOFTWARE | 1u << SONDE_EV_BREAKPOINT;
	if (s->cfg->allow_exec)
		h->flags |= SONDE_AGENT_F_ALLOW_EXEC;
	if (s->cfg->token)
		h->flags |= SONDE_AGENT_F_TOKEN;
	if (*(const uint8_t *)&one == 0)
		h->flags |= SONDE_AGENT_F_BIG_ENDIAN;
	if (s->have_tracefs) {
		h->flags |= SONDE_AGENT_F_TRACEFS;
		h->kinds |= 1u << SONDE_EV_TRACEPOINT;
	}
	if (sonde_hw_pmu_probe() == 0) {
		h->flags |= SONDE_AGENT_F_HW_PMU;
		h->kinds |= 1u << SONDE_EV_HARDWARE | 1u << SONDE_EV_CACHE | 1u << SONDE_EV_RAW;
	}
	h->kinds |= 1u << SONDE_EV_PMU;
}

static int authenticate(struct session *s, struct sonde_errmsg *why)
{
	struct sonde_wmsg m;
	uint32_t proto, tlen;
	const void *tok;
	int r = sonde_agent_recv(&s->conn, SONDE_AGENT_MAX_REQUEST, &m);

	if (r <= 0)
		return sonde_errmsg_set(why, r ? r : -EPIPE, "no authentication from the host");
	if (m.type != SONDE_AM_AUTH) {
		send_error(s, -EPROTO, "expected AUTH, got %s", sonde_agent_msg_name(m.type));
		return sonde_errmsg_set(why, -EPROTO, "host sent %s before AUTH",
					sonde_agent_msg_name(m.type));
	}
	if (sonde_agent_get_auth(&m, &proto, &tok, &tlen) < 0)
		return sonde_errmsg_set(why, -EBADMSG, "malformed AUTH");
	if (proto != SONDE_AGENT_PROTO_VERSION) {
		send_error(s, -EPROTO, "protocol version %u, the agent speaks %u", proto,
			   SONDE_AGENT_PROTO_VERSION);
		return sonde_errmsg_set(why, -EPROTO, "host protocol %u", proto);
	}
	if (s->cfg->token && !sonde_agent_token_eq(tok, tlen, s->cfg->token, s->cfg->token_len)) {
		/* A second per failed attempt: guessing is slow. */
		sleep(1);
		send_error(s, -EACCES, "authentication failed: wrong or missing token");
		return sonde_errmsg_set(why, -EACCES, "wrong token");
	}
	sonde_agent_put_empty(&s->out, SONDE_AM_OK);
	if (send_out(s) < 0)
		return sonde_errmsg_set(why, -EPIPE, "the host left after AUTH");
	if (s->cfg->authenticated)
		s->cfg->authenticated(s->cfg->ctx);
	return 0;
}

int sonde_agent_serve(const struct sonde_agent_config *cfg, int rfd, int wfd,
		      struct sonde_errmsg *why)
{
	struct sonde_errmsg dummy;
	struct session s = {.cfg = cfg,
			    .conn = {.rfd = rfd,
				     .wfd = wfd,
				     .stop = cfg->stop_signal,
				     .send_timeout_s = cfg->send_timeout_s}};
	struct sonde_agent_hello h;
	struct utsname u;
	int r;

	if (!why)
		why = &dummy;
	why->text[0] = '\0';
	s.have_tracefs =
	    sonde_tracefs_find("/proc/mounts", s.tracefs, sizeof(s.tracefs), true) == 0;
	fill_hello(&s, &h, &u);
	sonde_agent_put_hello(&s.out, &h);
	r = send_out(&s);
	if (r == 0)
		r = authenticate(&s, why);
	while (r == 0) {
		struct sonde_wmsg m;
		struct sonde_agent_record_req req;

		r = sonde_agent_recv(&s.conn, SONDE_AGENT_MAX_REQUEST, &m);
		if (r <= 0) {
			if (r < 0)
				sonde_errmsg_set(why, r, "receiving: %s", sonde_strerror(r));
			break;
		}
		r = 0;
		switch (m.type) {
		case SONDE_AM_RECORD:
			if (sonde_agent_get_record(&m, &req) < 0) {
				send_error(&s, -EBADMSG, "malformed RECORD request");
				r = sonde_errmsg_set(why, -EBADMSG, "malformed RECORD");
				break;
			}
			r = do_record(&s, &req);
			sonde_agent_record_req_fini(&req);
			if (r == -EPIPE)
				sonde_errmsg_set(why, r, "the host went away during a capture");
			break;
		case SONDE_AM_BUILDID:
			r = do_buildid(&s, &m);
			break;
		case SONDE_AM_FILE:
			r = do_file(&s, &m);
			break;
		case SONDE_AM_LIST:
			r = do_list(&s, &m);
			break;
		case SONDE_AM_STOP:
			break; /* a late STOP after END */
		case SONDE_AM_BYE:
			r = 1;
			break;
		default:
			send_error(&s, -EPROTO, "unexpected %s", sonde_agent_msg_name(m.type));
			r = sonde_errmsg_set(why, -EPROTO, "unexpected %s",
					     sonde_agent_msg_name(m.type));
		}
		if (r == -EBADMSG && !why->text[0]) {
			send_error(&s, r, "malformed %s", sonde_agent_msg_name(m.type));
			sonde_errmsg_set(why, r, "malformed %s", sonde_agent_msg_name(m.type));
		}
	}
	agent_objects_clear(&s.objects);
	sonde_wbuf_fini(&s.out);
	sonde_wbuf_fini(&s.chunk);
	sonde_agent_conn_fini(&s.conn);
	return r > 0 ? 0 : r;
}
