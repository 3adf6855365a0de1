// SPDX-License-Identifier: MIT
/*
 * The session pass: time-ordered records -> machine -> filters ->
 * resolved frames -> every registered tool (see include/sonde/session.h).
 *
 * The per-sample work is done once for all tools: the thread looked up,
 * the cheap filters checked before any symbol lookup, the frames
 * resolved into one buffer the tools borrow.  Non-sample records go to
 * the tools through sonde_tool_dispatch() after the machine took them.
 */
#include <sonde/session.h>
#include <sonde/unwind.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <sonde/evspec.h>
#include <sonde/profile.h>

#define MAX_FRAMES 1024

struct pass {
	struct sonde_session *ses;
	const struct sonde_session_opts *o;
	const struct sonde_sample_filter *f;
	const struct sonde_tool_slot *tools;
	size_t ntools;
	bool started; /* the events are known and the tools began */
	struct sonde_unwinder *unwinder;
	const char *arch;
	uint32_t *comm_ids; /* filter comms, interned */
	struct sonde_frame frames[MAX_FRAMES];
	uint64_t raw[MAX_FRAMES]; /* the recorded address of each frame */
	uint64_t ips[MAX_FRAMES]; /* the unwinder's output */
	bool inlines;		  /* expand inlined frames of every frame (call graphs only) */
	bool inlines_unwound;	  /* ... of the frames the DWARF unwinder found */
	uint64_t size;		  /* of the file, for progress */
	char path[4096];
};

static size_t event_index(const struct sonde_session *ses, const struct sonde_pd_attr *a)
{
	for (size_t i = 0; i < ses->nevents; i++)
		if (ses->events[i] == a)
			return i;
	return 0;
}

static bool has_u32(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool cpu_kept(const struct sonde_cpulist *l, uint32_t cpu)
{
	return !l || !l->n || sonde_cpulist_contains(l, (int)cpu);
}

/* The filters that need no symbols: event, CPU, time, pid, tid, comm. */
static bool sample_kept(const struct pass *ps, size_t event, const struct sonde_pd_sample *s,
			uint32_t comm)
{
	const struct sonde_sample_filter *f = ps->f;

	return (!ps->ses->event_kept || ps->ses->event_kept[event]) &&
	       (!(s->present & PERF_SAMPLE_CPU) || cpu_kept(f->cpus, s->cpu)) &&
	       (!f->has_time || (s->time >= f->time_start && s->time <= f->time_end)) &&
	       (!f->npids || has_u32(f->pids, f->npids, s->pid)) &&
	       (!f->ntids || has_u32(f->tids, f->ntids, s->tid)) &&
	       (!f->ncomms || has_u32(ps->comm_ids, f->ncomms, comm));
}

static bool dso_kept(const struct pass *ps, const struct sonde_dso *d)
{
	if (!ps->f->ndsos)
		return true;
	for (size_t i = 0; d && i < ps->f->ndsos; i++)
		if (!strcmp(ps->f->dsos[i], sonde_dso_short_name(d)) ||
		    !strcmp(ps->f->dsos[i], sonde_dso_long_name(d)))
			return true;
	return false;
}

bool sonde_sample_filter_event(const struct sonde_sample_filter *f, const char *name)
{
	const char *colon = strchr(name, ':');

	for (size_t i = 0; i < f->nevents; i++)
		if (!strcmp(f->events[i], name) || (colon && !strcmp(f->events[i], colon + 1)))
			return true;
	return false;
}

/* Resolves @ip into frame @f. */
static void resolve(struct pass *ps, uint32_t pid, uint16_t cpumode, uint64_t ip,
		    struct sonde_frame *f)
{
	struct sonde_location loc;

	sonde_machine_resolve(ps->ses->machine, pid, cpumode, ip, &loc);
	f->dso = loc.dso;
	f->sym = loc.sym;
	f->addr = loc.addr;
	f->kernel = loc.kernel;
	f->src = (struct sonde_srcline){NULL, 0};
	if (ps->o->srcline && loc.dso)
		sonde_dso_srcline(loc.dso, loc.addr, &f->src);
}

/*
 * Appends the frames of @ip at *@n: the inlined functions running there
 * (innermost first, when call graphs are drawn) and then the function.
 */
static void add_frames(struct pass *ps, size_t *n, uint32_t pid, uint16_t cpumode, uint64_t ip,
		       bool unwound)
{
	struct sonde_frame f;
	const char *names[8], *outer;
	int k = 0;

	if (*n >= MAX_FRAMES)
		return;
	resolve(ps, pid, cpumode, ip, &f);
	f.inlined = NULL;
	f.dwarf_name = NULL;
	if ((ps->inlines || (unwound && ps->inlines_unwound)) && f.dso && f.sym) {
		/* perf's inline list ends with the DWARF's function, which it
		 * shows instead of the symbol when the names differ. */
		k = sonde_dso_inlines(f.dso, f.addr, names, NULL, 8, &outer);
		if (outer && strcmp(outer, f.sym->name))
			f.dwarf_name = outer;
	}
	for (int i = 0; i < k && *n < MAX_FRAMES - 1; i++) {
		ps->raw[*n] = ip;
		ps->frames[*n] = f;
		ps->frames[(*n)++].inlined = names[i];
	}
	ps->raw[*n] = ip;
	ps->frames[(*n)++] = f;
}

/* The call chain's frames; context markers switch kernel/user. */
static size_t chain_frames(struct pass *ps, const struct sonde_pd_sample *s, uint16_t cpumode)
{
	size_t n = 0;

	for (uint64_t i = 0; i < s->callchain_nr && n < MAX_FRAMES; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= PERF_CONTEXT_MAX) {
			if (ip == PERF_CONTEXT_KERNEL)
				cpumode = PERF_RECORD_MISC_KERNEL;
			else if (ip == PERF_CONTEXT_USER)
				cpumode = PERF_RECORD_MISC_USER;
			else if (ip == PERF_CONTEXT_GUEST_KERNEL)
				cpumode = PERF_RECORD_MISC_GUEST_KERNEL;
			else if (ip == PERF_CONTEXT_GUEST_USER)
				cpumode = PERF_RECORD_MISC_GUEST_USER;
			continue;
		}
		add_frames(ps, &n, s->pid, cpumode, ip, false);
	}
	return n;
}

/* User frames unwound from a dwarf sample, appended at @n. */
static size_t unwound_frames(struct pass *ps, const struct sonde_pd_sample *s,
			     const struct perf_event_attr *a, size_t n)
{
	struct sonde_unwind_sample us = {
	    .pid = s->pid,
	    .tid = s->tid,
	    .abi = s->regs_user_abi,
	    .regs_mask = a->sample_regs_user,
	    .regs = s->regs_user,
	    .nr_regs = s->regs_user_nr,
	    .stack = s->stack_user,
	    .stack_size = s->stack_user_dyn_size,
	    .arch = ps->arch,
	};
	int got;

	if (!ps->unwinder || n >= MAX_FRAMES || !s->regs_user_abi)
		return n;
	got = sonde_unwind(ps->unwinder, &us, ps->ips, MAX_FRAMES - n);
	/*
	 * A pc in no mapping (a sample inside execve: the user registers are
	 * still the old image's) unwinds to nothing in perf, whose libdwfl
	 * can't attach without the pc's module: no user frame here either.
	 */
	if (got == 1) {
		struct sonde_location loc;

		sonde_machine_resolve(ps->ses->machine, s->pid, PERF_RECORD_MISC_USER, ps->ips[0],
				      &loc);
		if (!loc.map)
			got = 0;
	}
	if (got <= 0) {
		ps->ses->unwind_failed++;
		return n;
	}
	ps->ses->unwound++;
	for (int i = 0; i < got; i++)
		add_frames(ps, &n, s->pid, PERF_RECORD_MISC_USER, ps->ips[i], true);
	return n;
}

/* Index of the first frame that is a function, not an inlined body. */
static size_t first_function(const struct sonde_frame *f, size_t n)
{
	size_t i = 0;

	while (i + 1 < n && f[i].inlined)
		i++;
	return i;
}

static int on_sample(struct pass *ps, const struct sonde_pd_record *rec,
		     const struct sonde_pd_sample *s)
{
	struct sonde_session *ses = ps->ses;
	const struct perf_event_attr *a = rec->attr ? &rec->attr->attr : NULL;
	uint16_t cpumode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	struct sonde_thread *t = sonde_machine_findnew_thread(ses->machine, s->pid, s->tid);
	struct sonde_tool_sample ts = {
	    .rec = rec,
	    .s = s,
	    .event = event_index(ses, rec->attr),
	    .period = (s->present & PERF_SAMPLE_PERIOD) && s->period ? s->period : 1,
	    .thread = t,
	    .frames = ps->frames,
	    .ips = ps->raw,
	};
	size_t n = 0;

	if (!t)
		return -ENOMEM;
	if (!sample_kept(ps, ts.event, s, t->comm)) {
		ses->filtered_out++;
		return 0;
	}
	if (s->present & PERF_SAMPLE_CALLCHAIN) {
		ses->has_callchains = true;
		n = chain_frames(ps, s, cpumode);
	}
	if (a && (s->present & PERF_SAMPLE_STACK_USER) && !ps->o->no_unwind) {
		ses->has_callchains = true;
		if (cpumode == PERF_RECORD_MISC_USER || n == 0 || n < MAX_FRAMES)
			n = unwound_frames(ps, s, a, n);
	}
	ts.chain = n > 0;
	if (n == 0)
		add_frames(ps, &n, s->pid, cpumode, s->ip, false);
	ts.nframes = n;
	ts.leaf = first_function(ps->frames, n);
	if (!dso_kept(ps, ps->frames[ts.leaf].dso)) {
		ses->filtered_out++;
		return 0;
	}
	for (size_t i = 0; i < ps->ntools; i++) {
		const struct sonde_tool *tool = ps->tools[i].tool;
		int err;

		if (tool->sample && (err = tool->sample(ps->tools[i].ctx, ses, &ts)))
			return err;
	}
	return 0;
}

/* Every tool's callback for a non-sample record, in order. */
static int dispatch(struct pass *ps, const struct sonde_pd_record *rec,
		    const struct sonde_pd_event *ev)
{
	for (size_t i = 0; i < ps->ntools; i++) {
		int err =
		    sonde_tool_dispatch(ps->tools[i].tool, ps->tools[i].ctx, ps->ses, rec, ev);

		if (err)
			return err;
	}
	return 0;
}

static int start_events(struct pass *ps);

static int on_record(void *ctx, const struct sonde_pd_record *rec, const struct sonde_pd_event *ev)
{
	struct pass *ps = ctx;
	struct sonde_session *ses = ps->ses;
	int err = 0;

	if (!ps->started && rec->type < SONDE_PD_KERNEL_RECORD_MAX && (err = start_events(ps)))
		return err;
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(ps, rec, &ev->sample);
	case PERF_RECORD_LOST:
		ses->lost += ev->lost.lost;
		ses->lost_chunks++;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (rec->size >= 16)
			ses->lost_samples += ((const uint64_t *)rec->data)[1];
		break;
	case PERF_RECORD_THROTTLE:
		ses->throttled++;
		break;
	case PERF_RECORD_EXIT:
		if (ps->unwinder && ev->fork.pid == ev->fork.tid)
			sonde_unwinder_forget(ps->unwinder, ev->fork.pid);
		break;
	case PERF_RECORD_COMM:
		if (ps->unwinder && (rec->misc & PERF_RECORD_MISC_COMM_EXEC))
			sonde_unwinder_forget(ps->unwinder, ev->comm.pid);
		err = sonde_machine_process(ses->machine, rec, ev);
		break;
	default:
		err = sonde_machine_process(ses->machine, rec, ev);
		break;
	}
	return err ? err : dispatch(ps, rec, ev);
}

/* After each round's records: the tools that care. */
static int on_round(void *ctx)
{
	struct pass *ps = ctx;

	for (size_t i = 0; i < ps->ntools; i++) {
		const struct sonde_tool *t = ps->tools[i].tool;
		int err;

		if (t->finished_round && (err = t->finished_round(ps->tools[i].ctx, ps->ses)))
			return err;
	}
	return 0;
}

static void on_progress(void *ctx, uint64_t off)
{
	struct pass *ps = ctx;

	ps->o->progress(ps->o->progress_ctx, off, ps->size);
}

/* The unwinder asks which file holds an address of a process. */
static int find_map(void *ctx, uint32_t pid, uint64_t addr, struct sonde_unwind_map *out)
{
	struct pass *ps = ctx;
	const char *symfs = ps->o->sym.symfs, *obj;
	struct sonde_location loc;

	sonde_machine_resolve(ps->ses->machine, pid, PERF_RECORD_MISC_USER, addr, &loc);
	if (!loc.map || !loc.dso)
		return -ENOENT;
	/*
	 * The unwinder reads the object's CFI and code from the very file its
	 * symbols come from, found by build id where the capture has one (a
	 * rebuilt file at the path is never read), the [vdso] included.
	 */
	obj = sonde_dso_object_file(loc.dso);
	if (!obj && (sonde_dso_kind(loc.dso) != SONDE_DSO_USER ||
		     sonde_dso_warning(loc.dso, ps->path, sizeof(ps->path))))
		return -ENOENT;
	out->start = loc.map->start;
	out->end = loc.map->end;
	out->pgoff = loc.map->pgoff;
	out->path = obj;
	/* No symbols, yet no build id refused it: the mapped file, under the symfs. */
	if (!obj)
		out->path = sonde_dso_long_name(loc.dso);
	if (!obj && symfs && *symfs) {
		snprintf(ps->path, sizeof(ps->path), "%s%s", symfs, out->path);
		out->path = ps->path;
	}
	return 0;
}

/* Fills the symbol options the user left unset from the capture. */
static void capture_symbol_opts(struct sonde_pd_reader *r, struct sonde_symtab_opts *so,
				struct utsname *uts)
{
	const struct sonde_pd_features *f = sonde_pd_reader_features(r);
	const void *data;
	uint64_t size;

	if (!so->osrelease)
		so->osrelease = f->osrelease;
	/* A pipe carries no release: like perf, take it as this machine's capture. */
	if (!so->osrelease && sonde_pd_reader_is_pipe(r) && uname(uts) == 0)
		so->osrelease = uts->release; /* the symbol world copies it */
	if (!so->kallsyms &&
	    sonde_pd_reader_feature(r, SONDE_PD_FEAT_SONDE_BASE + SONDE_PD_SFEAT_KALLSYMS, &data,
				    &size) == 0) {
		so->kallsyms = data;
		so->kallsyms_len = size;
	}
	if (!so->modules &&
	    sonde_pd_reader_feature(r, SONDE_PD_FEAT_SONDE_BASE + SONDE_PD_SFEAT_MODULES, &data,
				    &size) == 0) {
		so->modules = data;
		so->modules_len = size;
	}
}

/* A name for an event the file does not name (pipe mode): perf's, when it is a named one. */
static const char *attr_name(const struct perf_event_attr *a)
{
	const char *name = sonde_named_event_of(a->type, a->config);

	return name ? name : "(unnamed)";
}

/* The events of the capture and a profile with a column for each. */
static bool is_dummy(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY;
}

/* The tracepoint formats, for the tools that decode raw samples. */
static int tracing_data(struct pass *ps)
{
	const void *data;
	uint64_t size;

	if (sonde_pd_reader_feature(ps->ses->reader, SONDE_PD_FEAT_TRACING_DATA, &data, &size) < 0)
		return 0;
	for (size_t i = 0; i < ps->ntools; i++) {
		const struct sonde_tool *t = ps->tools[i].tool;
		int err;

		if (t->tracing_data &&
		    (err = t->tracing_data(ps->tools[i].ctx, ps->ses, data, size)))
			return err;
	}
	return 0;
}

/* The events of the capture (dummies aside), the filters over them, and the tools' start. */
static int start_events(struct pass *ps)
{
	struct sonde_session *ses = ps->ses;
	size_t nattrs = sonde_pd_reader_nr_attrs(ses->reader), ndummy = 0;
	int err;

	if (!nattrs)
		return SONDE_E_FORMAT;
	ps->started = true;
	for (size_t i = 0; i < nattrs; i++)
		ndummy += is_dummy(&sonde_pd_reader_attr(ses->reader, i)->attr);
	ses->events = calloc(nattrs, sizeof(*ses->events));
	ses->event_names = calloc(nattrs, sizeof(*ses->event_names));
	if (!ses->events || !ses->event_names)
		return -ENOMEM;
	/* The side-band's dummy events (perf's and sonde's -a) never sample:
	 * no column or section of their own, unless they are all there is. */
	ses->nevents = 0;
	for (size_t i = 0; i < nattrs; i++) {
		const struct sonde_pd_attr *a = sonde_pd_reader_attr(ses->reader, i);

		if (ndummy < nattrs && is_dummy(&a->attr))
			continue;
		ses->events[ses->nevents] = a;
		ses->event_names[ses->nevents++] = a->name ? a->name : attr_name(&a->attr);
	}
	if (ps->f->nevents) {
		bool *kept = calloc(ses->nevents ? ses->nevents : 1, sizeof(bool));

		if (!kept)
			return -ENOMEM;
		for (size_t i = 0; i < ses->nevents; i++)
			kept[i] = sonde_sample_filter_event(ps->f, ses->event_names[i]);
		ses->event_kept = kept;
	}
	if ((err = tracing_data(ps)))
		return err;
	for (size_t i = 0; i < ps->ntools; i++) {
		const struct sonde_tool *t = ps->tools[i].tool;

		if (t->begin && (err = t->begin(ps->tools[i].ctx, ses)))
			return err;
	}
	return 0;
}

static int setup(struct sonde_session *ses, struct pass *ps, struct sonde_pd_reader *r,
		 const struct sonde_session_opts *o)
{
	const struct sonde_pd_features *f = sonde_pd_reader_features(r);
	struct sonde_symtab_opts so = o->sym;
	struct utsname uts;
	int err;

	ses->reader = r;
	/* A pipe's events arrive as records: the tools start at the first one. */
	if (!sonde_pd_reader_nr_attrs(r) && !sonde_pd_reader_is_pipe(r))
		return SONDE_E_FORMAT;
	capture_symbol_opts(r, &so, &uts);
	if ((err = sonde_symtab_new(&ses->symtab, &so)) ||
	    (err = sonde_machine_symbols_new(&ses->machine, ses->symtab)))
		return err;
	/* The build-id table names the files of mappings recorded without one. */
	for (size_t i = 0; i < f->nr_build_ids; i++)
		if ((err = sonde_symtab_add_build_id(ses->symtab, f->build_ids[i].filename,
						     f->build_ids[i].id, f->build_ids[i].size)))
			return err;
	ps->ses = ses;
	ps->o = o;
	ps->f = &o->filter;
	ses->opts = o;
	ps->arch = f->arch;
	/* perf 6.1 expands inlines where its unwinder adds frames (unwind_entry),
	 * not for frame-pointer chains (add_callchain_ip) */
	ps->inlines = o->callchains && o->inline_frames > 0 && !o->sym.no_inline;
	ps->inlines_unwound = o->callchains && o->inline_frames >= 0 && !o->sym.no_inline;
	if (o->filter.ncomms) {
		if (!(ps->comm_ids = calloc(o->filter.ncomms, sizeof(*ps->comm_ids))))
			return -ENOMEM;
		for (size_t i = 0; i < o->filter.ncomms; i++)
			ps->comm_ids[i] = sonde_machine_intern(ses->machine, o->filter.comms[i]);
	}
	if (!o->no_unwind && (err = sonde_unwinder_new(&ps->unwinder, find_map, ps)))
		return err;
	return sonde_pd_reader_nr_attrs(r) ? start_events(ps) : 0;
}

/* The tools' end, after a walk without errors. */
static int end_tools(struct pass *ps)
{
	for (size_t i = 0; i < ps->ntools; i++) {
		const struct sonde_tool *t = ps->tools[i].tool;
		int err;

		if (t->end && (err = t->end(ps->tools[i].ctx, ps->ses)))
			return err;
	}
	return 0;
}

int sonde_session_run(struct sonde_session **out, struct sonde_pd_reader *r,
		      const struct sonde_session_opts *o, const struct sonde_tool_slot *tools,
		      size_t ntools, struct sonde_errmsg *err)
{
	struct sonde_session *ses = calloc(1, sizeof(*ses));
	struct pass *ps = calloc(1, sizeof(*ps));
	int ret;

	if (!ses || !ps) {
		free(ses);
		free(ps);
		return -ENOMEM;
	}
	ps->tools = tools;
	ps->ntools = ntools;
	ret = setup(ses, ps, r, o);
	if (ret == 0) {
		const struct sonde_pd_file_header *h = sonde_pd_reader_header(r);

		ps->size = h->data.offset + h->data.size;
		ret = sonde_pd_walk_ordered(r, on_record, ps, o->progress ? on_progress : NULL,
					    on_round, &ses->walk);
		/* A pipe that ended before any event was declared has nothing to show. */
		if (!ret && !ps->started) {
			ret = SONDE_E_FORMAT;
			if (err)
				sonde_errmsg_set(
				    err, ret, "the capture declares no events%s",
				    sonde_pd_reader_is_pipe(r) ? " (the pipe ended first)" : "");
		} else if (ret && err) {
			sonde_errmsg_set(err, ret, "%s",
					 sonde_pd_reader_errmsg(r)[0] ? sonde_pd_reader_errmsg(r)
								      : sonde_strerror(ret));
		}
		if (!ret && (ret = end_tools(ps)) && err)
			sonde_errmsg_set(err, ret, "%s", sonde_strerror(ret));
	} else if (err) {
		sonde_errmsg_set(err, ret, "setting up the pass: %s", sonde_strerror(ret));
	}
	sonde_unwinder_free(ps->unwinder);
	free(ps->comm_ids);
	free(ps);
	if (ret) {
		sonde_session_free(ses);
		return ret;
	}
	*out = ses;
	return 0;
}

void sonde_session_free(struct sonde_session *ses)
{
	if (!ses)
		return;
	sonde_machine_free(ses->machine);
	sonde_symtab_free(ses->symtab);
	free(ses->events);
	free(ses->event_names);
	free((bool *)ses->event_kept);
	free(ses);
}
