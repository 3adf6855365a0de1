// SPDX-License-Identifier: MIT
/*
 * The report pass: time-ordered records -> machine -> resolved frames ->
 * profile.
 *
 * Side-band records update the machine as they come, so a sample is
 * resolved against the maps that held at its time.  A sample's frames are
 * its call chain (kernel and frame-pointer user frames, context markers
 * switching the address space), then, for --call-graph dwarf captures,
 * the user frames the unwinder finds from the saved registers and stack.
 * Filters apply to the sample's comm, pid and leaf object before any
 * aggregation.
 */
#include <sonde/report.h>
#include <sonde/unwind.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <sonde/evspec.h>

#define MAX_FRAMES 1024

struct pass {
	struct sonde_report *rep;
	const struct sonde_report_opts *o;
	struct sonde_unwinder *unwinder;
	const char *arch;
	uint32_t *comm_ids; /* filter comms, interned */
	struct sonde_frame frames[MAX_FRAMES];
	uint64_t raw[MAX_FRAMES]; /* the recorded address of each frame */
	uint64_t ips[MAX_FRAMES]; /* the unwinder's output */
	bool srcline;
	bool inlines;  /* expand inlined frames of every frame (call graphs only) */
	bool inlines_unwound; /* ... of the frames the DWARF unwinder found */
	uint64_t size; /* of the file, for progress */
	char path[4096];
};

static size_t event_index(const struct sonde_report *rep, const struct sonde_pd_attr *a)
{
	for (size_t i = 0; i < rep->nevents; i++)
		if (rep->events[i] == a)
			return i;
	return 0;
}

static bool comm_kept(const struct pass *ps, uint32_t comm)
{
	if (!ps->o->ncomms)
		return true;
	for (size_t i = 0; i < ps->o->ncomms; i++)
		if (ps->comm_ids[i] == comm)
			return true;
	return false;
}

static bool pid_kept(const struct pass *ps, uint32_t pid)
{
	if (!ps->o->npids)
		return true;
	for (size_t i = 0; i < ps->o->npids; i++)
		if (ps->o->pids[i] == pid)
			return true;
	return false;
}

static bool dso_kept(const struct pass *ps, const struct sonde_dso *d)
{
	if (!ps->o->ndsos)
		return true;
	for (size_t i = 0; d && i < ps->o->ndsos; i++)
		if (!strcmp(ps->o->dsos[i], sonde_dso_short_name(d)) ||
		    !strcmp(ps->o->dsos[i], sonde_dso_long_name(d)))
			return true;
	return false;
}

/* Resolves @ip into frame @f. */
static void resolve(struct pass *ps, uint32_t pid, uint16_t cpumode, uint64_t ip,
		    struct sonde_frame *f)
{
	struct sonde_location loc;

	sonde_machine_resolve(ps->rep->machine, pid, cpumode, ip, &loc);
	f->dso = loc.dso;
	f->sym = loc.sym;
	f->addr = loc.addr;
	f->kernel = loc.kernel;
	f->src = (struct sonde_srcline){NULL, 0};
	if (ps->srcline && loc.dso)
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
	if (got <= 0) {
		ps->rep->unwind_failed++;
		return n;
	}
	ps->rep->unwound++;
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
	struct sonde_report *rep = ps->rep;
	const struct perf_event_attr *a = rec->attr ? &rec->attr->attr : NULL;
	uint16_t cpumode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	struct sonde_thread *t = sonde_machine_findnew_thread(rep->machine, s->pid, s->tid);
	uint64_t period = (s->present & PERF_SAMPLE_PERIOD) && s->period ? s->period : 1;
	size_t n = 0;

	if (!t)
		return -ENOMEM;
	if (!comm_kept(ps, t->comm) || !pid_kept(ps, s->pid)) {
		rep->filtered_out++;
		return 0;
	}
	if (s->present & PERF_SAMPLE_CALLCHAIN) {
		rep->has_callchains = true;
		n = chain_frames(ps, s, cpumode);
	}
	if (a && (s->present & PERF_SAMPLE_STACK_USER) && !ps->o->no_unwind) {
		rep->has_callchains = true;
		if (cpumode == PERF_RECORD_MISC_USER || n == 0 || n < MAX_FRAMES)
			n = unwound_frames(ps, s, a, n);
	}
	bool chain = n > 0;

	if (n == 0)
		add_frames(ps, &n, s->pid, cpumode, s->ip, false);
	if (!dso_kept(ps, ps->frames[first_function(ps->frames, n)].dso)) {
		rep->filtered_out++;
		return 0;
	}
	if (ps->o->on_sample) {
		struct sonde_report_sample rs = {
		    rec, s, t, event_index(rep, rec->attr), ps->frames, ps->raw, n, chain};
		int err = ps->o->on_sample(ps->o->sample_ctx, rep, &rs);

		if (err || ps->o->no_profile)
			return err;
	}
	if (ps->o->on_leaf) {
		int err = ps->o->on_leaf(ps->o->leaf_ctx, event_index(rep, rec->attr), period,
					 &ps->frames[first_function(ps->frames, n)]);

		if (err)
			return err;
	}
	if (rep->timeline) {
		struct sonde_tl_sample ts = {
		    .time = (s->present & PERF_SAMPLE_TIME) ? s->time : 0,
		    .cpu = (s->present & PERF_SAMPLE_CPU) ? s->cpu : UINT32_MAX,
		    .pid = s->pid,
		    .tid = s->tid,
		    .comm = t->comm,
		    .event = (uint32_t)event_index(rep, rec->attr),
		    .period = period,
		};
		int err = sonde_timeline_add(rep->timeline, &ts, ps->frames, n);

		if (err)
			return err;
	}
	/* the "pid" key is perf's thread key: the tid (shown as tid:comm) */
	return sonde_profile_add(
	    rep->profile, event_index(rep, rec->attr), period, t->comm, s->tid, ps->frames,
	    ps->o->callchains || ps->o->children ? n : first_function(ps->frames, n) + 1);
}

static int start_events(struct pass *ps);

static int on_record(void *ctx, const struct sonde_pd_record *rec, const struct sonde_pd_event *ev)
{
	struct pass *ps = ctx;
	struct sonde_report *rep = ps->rep;
	int err;

	if (!rep->profile && rec->type < SONDE_PD_KERNEL_RECORD_MAX && (err = start_events(ps)))
		return err;
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(ps, rec, &ev->sample);
	case PERF_RECORD_LOST:
		rep->lost += ev->lost.lost;
		rep->lost_chunks++;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (rec->size >= 16)
			rep->lost_samples += ((const uint64_t *)rec->data)[1];
		return 0;
	case PERF_RECORD_THROTTLE:
		rep->throttled++;
		return 0;
	case PERF_RECORD_EXIT:
		if (ps->unwinder && ev->fork.pid == ev->fork.tid)
			sonde_unwinder_forget(ps->unwinder, ev->fork.pid);
		return 0;
	case PERF_RECORD_COMM:
		if (ps->unwinder && (rec->misc & PERF_RECORD_MISC_COMM_EXEC))
			sonde_unwinder_forget(ps->unwinder, ev->comm.pid);
		return sonde_machine_process(rep->machine, rec, ev);
	default:
		return sonde_machine_process(rep->machine, rec, ev);
	}
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

	sonde_machine_resolve(ps->rep->machine, pid, PERF_RECORD_MISC_USER, addr, &loc);
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
	size_t n;
	const struct sonde_named_event *ev = sonde_named_events(&n);

	for (size_t i = 0; i < n; i++)
		if (ev[i].type == a->type && ev[i].config == a->config)
			return ev[i].name;
	return "(unnamed)";
}

/* The events of the capture and a profile with a column for each. */
static bool is_dummy(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY;
}

static int start_events(struct pass *ps)
{
	struct sonde_report *rep = ps->rep;
	const struct sonde_report_opts *o = ps->o;
	struct sonde_profile_opts po = {0};
	int err;

	size_t nattrs = sonde_pd_reader_nr_attrs(rep->reader), ndummy = 0;

	if (!nattrs)
		return SONDE_E_FORMAT;
	for (size_t i = 0; i < nattrs; i++)
		ndummy += is_dummy(&sonde_pd_reader_attr(rep->reader, i)->attr);
	rep->events = calloc(nattrs, sizeof(*rep->events));
	rep->event_names = calloc(nattrs, sizeof(*rep->event_names));
	if (!rep->events || !rep->event_names)
		return -ENOMEM;
	/* The side-band's dummy events (perf's and sonde's -a) never sample:
	 * no column or section of their own, unless they are all there is. */
	rep->nevents = 0;
	for (size_t i = 0; i < nattrs; i++) {
		const struct sonde_pd_attr *a = sonde_pd_reader_attr(rep->reader, i);

		if (ndummy < nattrs && is_dummy(&a->attr))
			continue;
		rep->events[rep->nevents] = a;
		rep->event_names[rep->nevents++] = a->name ? a->name : attr_name(&a->attr);
	}
	memcpy(po.keys, o->keys, sizeof(po.keys));
	po.nkeys = o->nkeys;
	po.nevents = rep->nevents;
	po.children = o->children;
	po.callchains = o->callchains;
	po.caller_order = o->caller_order;
	if (o->timeline && (err = sonde_timeline_new(&rep->timeline, rep->nevents)))
		return err;
	return sonde_profile_new(&rep->profile, &po);
}

static int setup(struct sonde_report *rep, struct pass *ps, struct sonde_pd_reader *r,
		 const struct sonde_report_opts *o)
{
	const struct sonde_pd_features *f = sonde_pd_reader_features(r);
	struct sonde_symtab_opts so = o->sym;
	struct utsname uts;
	int err;

	rep->reader = r;
	/* A pipe's events arrive as records: the profile starts at the first sample. */
	if (!sonde_pd_reader_nr_attrs(r) && !sonde_pd_reader_is_pipe(r))
		return SONDE_E_FORMAT;
	capture_symbol_opts(r, &so, &uts);
	if ((err = sonde_symtab_new(&rep->symtab, &so)) ||
	    (err = sonde_machine_new(&rep->machine, rep->symtab)))
		return err;
	/* The build-id table names the files of mappings recorded without one. */
	for (size_t i = 0; i < f->nr_build_ids; i++)
		if ((err = sonde_symtab_add_build_id(rep->symtab, f->build_ids[i].filename,
						     f->build_ids[i].id, f->build_ids[i].size)))
			return err;
	ps->rep = rep;
	ps->o = o;
	rep->opts = o;
	ps->arch = f->arch;
	for (size_t i = 0; i < o->nkeys; i++)
		ps->srcline |= o->keys[i] == SONDE_SORT_SRCLINE;
	/* perf 6.1 expands inlines where its unwinder adds frames (unwind_entry),
	 * not for frame-pointer chains (add_callchain_ip) */
	ps->inlines = o->callchains && o->inline_frames > 0 && !o->sym.no_inline;
	ps->inlines_unwound = o->callchains && o->inline_frames >= 0 && !o->sym.no_inline;
	if (o->ncomms) {
		if (!(ps->comm_ids = calloc(o->ncomms, sizeof(*ps->comm_ids))))
			return -ENOMEM;
		for (size_t i = 0; i < o->ncomms; i++)
			ps->comm_ids[i] = sonde_machine_intern(rep->machine, o->comms[i]);
	}
	if (!o->no_unwind && (err = sonde_unwinder_new(&ps->unwinder, find_map, ps)))
		return err;
	return sonde_pd_reader_nr_attrs(r) ? start_events(ps) : 0;
}

int sonde_report_build(struct sonde_report **out, struct sonde_pd_reader *r,
		       const struct sonde_report_opts *o, struct sonde_errmsg *err)
{
	struct sonde_report *rep = calloc(1, sizeof(*rep));
	struct pass *ps = calloc(1, sizeof(*ps));
	int ret;

	if (!rep || !ps) {
		free(rep);
		free(ps);
		return -ENOMEM;
	}
	ret = setup(rep, ps, r, o);
	if (ret == 0) {
		const struct sonde_pd_file_header *h = sonde_pd_reader_header(r);

		ps->size = h->data.offset + h->data.size;
		ret = sonde_pd_walk_ordered(r, on_record, ps, o->progress ? on_progress : NULL,
					    &rep->walk);
		/* A pipe that ended before any event was declared has nothing to show. */
		if (!ret && !rep->profile) {
			ret = SONDE_E_FORMAT;
			if (err)
				sonde_errmsg_set(err, ret, "the capture declares no events%s",
						 sonde_pd_reader_is_pipe(r) ? " (the pipe ended first)"
									    : "");
		} else if (ret && err) {
			sonde_errmsg_set(err, ret, "%s",
					 sonde_pd_reader_errmsg(r)[0] ? sonde_pd_reader_errmsg(r)
								      : sonde_strerror(ret));
		}
	} else if (err) {
		sonde_errmsg_set(err, ret, "setting up the report: %s", sonde_strerror(ret));
	}
	sonde_unwinder_free(ps->unwinder);
	free(ps->comm_ids);
	free(ps);
	if (ret) {
		sonde_report_free(rep);
		return ret;
	}
	*out = rep;
	return 0;
}

void sonde_report_free(struct sonde_report *rep)
{
	if (!rep)
		return;
	sonde_profile_free(rep->profile);
	sonde_timeline_free(rep->timeline);
	sonde_machine_free(rep->machine);
	sonde_symtab_free(rep->symtab);
	free(rep->events);
	free(rep->event_names);
	free(rep);
}

const char *sonde_report_sym_name(const struct sonde_entry_key *k, const struct sonde_frame *f,
				  char *buf, size_t len)
{
	const struct sonde_symbol *sym = k ? k->sym : f->sym;
	uint64_t addr = k ? k->addr : f->addr;

	if (sym)
		return sym->name;
	snprintf(buf, len, "0x%016" PRIx64, addr);
	return buf;
}
