// SPDX-License-Identifier: MIT
/*
 * sonde script's text and JSON lines.
 *
 * The text follows perf script's printing (tools/perf/builtin-script.c,
 * perf 6.1) so the two can be compared line by line: comm right-aligned in
 * 16 columns (left as is when a call chain follows), tid in 5, "[cpu]" in
 * 3 digits, "secs.usecs:" in 12, period in 10, the event name aligned to
 * the longest name of the capture, then the tracepoint's print format
 * output.  A leaf address is printed as recorded; call-chain lines show
 * the address within the object (what perf prints there) with sym+off and
 * the object's path.
 */
#include <sonde/json.h>
#include <sonde/script_print.h>

#include <errno.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
    {"comm", SONDE_SF_COMM}, {"tid", SONDE_SF_TID},	{"pid", SONDE_SF_PID},
    {"cpu", SONDE_SF_CPU},   {"time", SONDE_SF_TIME},	{"event", SONDE_SF_EVENT},
    {"ip", SONDE_SF_IP},     {"sym", SONDE_SF_SYM},	{"symoff", SONDE_SF_SYMOFF},
    {"dso", SONDE_SF_DSO},   {"trace", SONDE_SF_TRACE}, {"period", SONDE_SF_PERIOD},
};

int sonde_script_fields_parse(const char *list, unsigned *mask, const char **bad)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
			if (strlen(field_names[i].name) == n && !strncmp(field_names[i].name, p, n))
				break;
		if (i == sizeof(field_names) / sizeof(field_names[0])) {
			*bad = p;
			return -EINVAL;
		}
		*mask |= field_names[i].bit;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* Drops fields the samples of @a don't carry. */
static unsigned available(const struct perf_event_attr *a, unsigned f)
{
	uint64_t st = a->sample_type;

	if (!(st & PERF_SAMPLE_CPU))
		f &= ~SONDE_SF_CPU;
	if (!(st & PERF_SAMPLE_TIME))
		f &= ~SONDE_SF_TIME;
	if (!(st & PERF_SAMPLE_PERIOD))
		f &= ~SONDE_SF_PERIOD;
	if (!(st & PERF_SAMPLE_TID))
		f &= ~(SONDE_SF_TID | SONDE_SF_PID);
	if (!(st & (PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN)))
		f &= ~(SONDE_SF_IP | SONDE_SF_SYM | SONDE_SF_SYMOFF | SONDE_SF_DSO);
	if (!(st & PERF_SAMPLE_RAW))
		f &= ~SONDE_SF_TRACE;
	return f;
}

unsigned sonde_script_default_fields(const struct perf_event_attr *a)
{
	unsigned f = SONDE_SF_COMM | SONDE_SF_TID | SONDE_SF_CPU | SONDE_SF_TIME | SONDE_SF_EVENT;
	const unsigned sym = SONDE_SF_IP | SONDE_SF_SYM | SONDE_SF_SYMOFF | SONDE_SF_DSO;

	if (a->type == PERF_TYPE_TRACEPOINT) {
		f |= SONDE_SF_TRACE;
		if (a->sample_type & PERF_SAMPLE_CALLCHAIN)
			f |= sym;
	} else {
		f |= SONDE_SF_PERIOD | sym;
	}
	f = available(a, f);
	/* A fixed period (-c) leaves PERIOD out of the samples; perf script
	 * still shows it, from the attr. */
	if (a->type != PERF_TYPE_TRACEPOINT && !a->freq && a->sample_period)
		f |= SONDE_SF_PERIOD;
	return f;
}

static unsigned fields_of(const struct sonde_script_print *p, const struct sonde_session *ses,
			  const struct sonde_tool_sample *rs)
{
	const struct perf_event_attr *a = &ses->events[rs->event]->attr;

	return p->fields ? available(a, p->fields) : sonde_script_default_fields(a);
}

static const char *comm_of(const struct sonde_session *ses, const struct sonde_tool_sample *rs)
{
	const char *c = sonde_machine_str(ses->machine, rs->thread->comm);

	return c && *c ? c : ":-1";
}

/* "secs.usecs" as perf's timestamp__scnprintf_usec() writes it, or with
 * --ns "secs.nsecs" as its timestamp__scnprintf_nsec(). */
static void fmt_time(char *buf, size_t len, uint64_t ns, bool nsecs)
{
	if (nsecs)
		snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
	else
		snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, ns / 1000000000u,
			 ns % 1000000000u / 1000u);
}

/*
 * ip, sym+off and (dso), each as selected.  An inlined frame (or one shown
 * under its DWARF name) is "name+off (inlined)" in place of the dso, the
 * offset into the symbol it lies in, as perf script prints it.
 */
static void print_frame(FILE *f, unsigned fl, uint64_t ip, const struct sonde_frame *fr)
{
	const char *sp = "", *inl = fr->sym ? sonde_frame_inline_name(fr) : NULL;

	if (fl & SONDE_SF_IP) {
		fprintf(f, "%16" PRIx64, ip);
		sp = " ";
	}
	if (fl & SONDE_SF_SYM) {
		fputs(sp, f);
		if (fr->sym) {
			fputs(inl ? inl : fr->sym->name, f);
			if (fl & SONDE_SF_SYMOFF)
				fprintf(f, "+0x%" PRIx64, fr->addr - fr->sym->start);
		} else {
			fputs("[unknown]", f);
		}
		sp = " ";
	}
	if (inl)
		fprintf(f, "%s(inlined)", sp);
	else if (fl & SONDE_SF_DSO)
		fprintf(f, "%s(%s)", sp, fr->dso ? sonde_dso_long_name(fr->dso) : "[unknown]");
}

/*
 * The time a line shows: absolute, or --reltime / --deltatime's difference.
 * As in perf, a zero time (a synthesized record's) sets no reference.
 */
static uint64_t shown_time(struct sonde_script_print *p, uint64_t t)
{
	uint64_t prev = p->prev_time;

	switch (p->time_mode) {
	case SONDE_TIME_REL:
		if (!p->first_time)
			p->first_time = t;
		return t - p->first_time;
	case SONDE_TIME_DELTA:
		p->prev_time = t;
		return prev ? t - prev : 0;
	default:
		return t;
	}
}

/* The columns every line starts with (perf's perf_sample__fprintf_start). */
struct line_start {
	const char *comm;
	uint32_t pid, tid, cpu;
	uint64_t time;
	bool chain; /* a call chain follows: the comm is not padded */
};

static void print_start(struct sonde_script_print *p, unsigned fl, const struct line_start *ls)
{
	FILE *f = p->out;
	char t[32];

	if (fl & SONDE_SF_COMM) {
		if ((fl & SONDE_SF_IP) && ls->chain)
			fprintf(f, "%s ", ls->comm);
		else
			fprintf(f, "%16s ", ls->comm);
	}
	if ((fl & SONDE_SF_PID) && (fl & SONDE_SF_TID))
		fprintf(f, "%5d/%-5d ", (int)ls->pid, (int)ls->tid);
	else if (fl & SONDE_SF_PID)
		fprintf(f, "%5d ", (int)ls->pid);
	else if (fl & SONDE_SF_TID)
		fprintf(f, "%5d ", (int)ls->tid);
	if (fl & SONDE_SF_CPU)
		fprintf(f, "[%03u] ", ls->cpu);
	if (fl & SONDE_SF_TIME) {
		fmt_time(t, sizeof(t), shown_time(p, ls->time), p->ns);
		/* perf's column: 12 wide, 15 with nanoseconds */
		fprintf(f, "%*s: ", p->ns ? 15 : 12, t);
	}
}

int sonde_script_print_text(struct sonde_script_print *p, const struct sonde_session *ses,
			    const struct sonde_tool_sample *rs)
{
	const struct sonde_pd_sample *s = rs->s;
	unsigned fl = fields_of(p, ses, rs);
	bool frames = fl & (SONDE_SF_IP | SONDE_SF_SYM | SONDE_SF_DSO);
	FILE *f = p->out;
	struct line_start ls = {comm_of(ses, rs), s->pid, s->tid, s->cpu, s->time, rs->chain};

	print_start(p, fl, &ls);
	if (fl & SONDE_SF_PERIOD)
		fprintf(f, "%10" PRIu64 " ",
			(s->present & PERF_SAMPLE_PERIOD)
			    ? s->period
			    : (uint64_t)ses->events[rs->event]->attr.sample_period);
	if (fl & SONDE_SF_EVENT)
		fprintf(f, "%*s: ", p->name_width, ses->event_names[rs->event]);
	if ((fl & SONDE_SF_TRACE) && s->raw) {
		if (p->tp)
			fputs(sonde_tp_print(p->tp, s->raw, s->raw_size, (int)s->cpu), f);
		else
			fprintf(f, "[%u bytes of raw data, no formats in the capture]",
				s->raw_size);
	}
	if (frames) {
		if (rs->chain) {
			fputc('\n', f);
			for (size_t i = 0; i < rs->nframes; i++) {
				const struct sonde_frame *fr = &rs->frames[i];

				fputc('\t', f);
				print_frame(f, fl, fr->dso ? fr->addr : rs->ips[i], fr);
				fputc('\n', f);
			}
		} else {
			fputc(' ', f);
			print_frame(f, fl, s->ip, &rs->frames[0]);
		}
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

/* ---- side-band records ---------------------------------------------------- */

static unsigned show_kind(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return SONDE_SHOW_TASK;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return SONDE_SHOW_MMAP;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return SONDE_SHOW_SWITCH;
	case PERF_RECORD_LOST:
		return SONDE_SHOW_LOST;
	default:
		return 0;
	}
}

/* The task a record is about (perf looks its comm up by it). */
static uint32_t record_tid(const struct sonde_pd_record *rec, const struct sonde_pd_event *ev)
{
	switch (rec->type) {
	case PERF_RECORD_COMM:
		return ev->comm.tid;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return ev->fork.tid;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return ev->mmap.pid == UINT32_MAX ? 0 : ev->mmap.tid;
	default:
		return ev->sample.tid;
	}
}

static void print_mmap(FILE *f, const struct sonde_pd_record *rec, const struct sonde_pd_mmap *m)
{
	char id[2 * 20 + 1] = "";

	if (rec->type == PERF_RECORD_MMAP) {
		fprintf(f, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
			(int)m->pid, (int)m->tid, m->start, m->len, m->pgoff,
			(rec->misc & PERF_RECORD_MISC_MMAP_DATA) ? 'r' : 'x', m->filename);
		return;
	}
	fprintf(f, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64, (int)m->pid, (int)m->tid,
		m->start, m->len, m->pgoff);
	if (m->build_id) {
		for (size_t i = 0; i < m->build_id_size && i < 20; i++)
			snprintf(id + 2 * i, 3, "%02x", m->build_id[i]);
		fprintf(f, " <%s>", id);
	} else {
		fprintf(f, " %02x:%02x %" PRIu64 " %" PRIu64, m->maj, m->min, m->ino,
			m->ino_generation);
	}
	fprintf(f, "]: %c%c%c%c %s\n", (m->prot & PROT_READ) ? 'r' : '-',
		(m->prot & PROT_WRITE) ? 'w' : '-', (m->prot & PROT_EXEC) ? 'x' : '-',
		(m->flags & MAP_SHARED) ? 's' : 'p', m->filename);
}

static void print_switch(FILE *f, const struct sonde_pd_record *rec)
{
	bool out = rec->misc & PERF_RECORD_MISC_SWITCH_OUT;
	const char *io = !out						     ? "IN         "
			 : (rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? "OUT preempt"
									     : "OUT        ";
	uint32_t np[2] = {0, 0};

	if (rec->type == PERF_RECORD_SWITCH) {
		fprintf(f, " %s\n", io);
		return;
	}
	if (rec->size >= sizeof(struct perf_event_header) + sizeof(np))
		memcpy(np, (const uint8_t *)rec->data + sizeof(struct perf_event_header),
		       sizeof(np));
	fprintf(f, " %s  %s pid/tid: %5d/%-5d\n", io, out ? "next" : "prev", (int)np[0],
		(int)np[1]);
}

int sonde_script_print_sideband(struct sonde_script_print *p, const struct sonde_session *ses,
				const struct sonde_pd_record *rec, const struct sonde_pd_event *ev)
{
	const struct perf_event_attr *a = rec->attr ? &rec->attr->attr : NULL;
	const struct sonde_thread *th;
	char unseen[16];
	struct line_start ls = {":-1",		ev->sample.pid,	 ev->sample.tid,
				ev->sample.cpu, ev->sample.time, false};
	unsigned fl;
	FILE *f = p->out;

	if (!(show_kind(rec->type) & p->show))
		return 0;
	fl = a ? (p->fields ? available(a, p->fields) : sonde_script_default_fields(a))
	       : SONDE_SF_COMM | SONDE_SF_TID | SONDE_SF_TIME;
	/* Without sample_id_all the record carries no trailer: perf shows its
	 * task, CPU 0 and time 0. */
	if (!a || !a->sample_id_all) {
		ls.tid = record_tid(rec, ev);
		ls.cpu = 0;
		ls.time = 0;
	}
	ls.chain = a && (a->sample_type & PERF_SAMPLE_CALLCHAIN);
	th = sonde_machine_find_thread(ses->machine, record_tid(rec, ev));
	/* A task never seen: perf makes it on the spot, named as the machine
	 * names one (":TID", the idle task "swapper"). */
	if (!th) {
		snprintf(unseen, sizeof(unseen), ":%d", (int)record_tid(rec, ev));
		ls.comm = record_tid(rec, ev) ? unseen : "swapper";
	}
	if (th) {
		const char *c = sonde_machine_str(ses->machine, th->comm);

		if (c && *c)
			ls.comm = c;
	}
	print_start(p, fl, &ls);
	fprintf(f, "PERF_RECORD_%s", sonde_pd_record_name(rec->type));
	switch (rec->type) {
	case PERF_RECORD_COMM:
		fprintf(f, "%s: %s:%d/%d\n",
			(rec->misc & PERF_RECORD_MISC_COMM_EXEC) ? " exec" : "", ev->comm.comm,
			(int)ev->comm.pid, (int)ev->comm.tid);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		fprintf(f, "(%d:%d):(%d:%d)\n", (int)ev->fork.pid, (int)ev->fork.tid,
			(int)ev->fork.ppid, (int)ev->fork.ptid);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		print_mmap(f, rec, &ev->mmap);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		print_switch(f, rec);
		break;
	case PERF_RECORD_LOST:
		fprintf(f, " lost %" PRIu64 "\n", ev->lost.lost);
		break;
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---------------------------------------------------------------- */

/* A string the way script always showed it: up to the first NUL, NULL as "". */
static void json_strn(struct sonde_json *j, const char *s, size_t n)
{
	sonde_json_strn(j, s ? s : "", s ? strnlen(s, n) : 0);
}

static void json_str(struct sonde_json *j, const char *s)
{
	sonde_json_str(j, s ? s : "");
}

static void json_value(struct sonde_json *j, const struct sonde_tp_decoder *tp,
		       const struct sonde_tp_value *v)
{
	switch (v->kind) {
	case SONDE_TP_INT:
		sonde_json_i64(j, v->i);
		break;
	case SONDE_TP_UINT:
		sonde_json_u64(j, v->u);
		break;
	case SONDE_TP_STR:
		json_strn(j, v->str, v->len);
		break;
	case SONDE_TP_ARRAY:
		sonde_json_arr_begin(j);
		for (uint32_t k = 0; k < v->nelem; k++) {
			uint64_t x = sonde_tp_array_elem(tp, v, k);

			if (v->elem_signed)
				sonde_json_i64(j, (int64_t)x);
			else
				sonde_json_u64(j, x);
		}
		sonde_json_arr_end(j);
		break;
	}
}

static void json_frame(struct sonde_json *j, unsigned fl, uint64_t ip, const struct sonde_frame *fr)
{
	const char *inl = fr->sym ? sonde_frame_inline_name(fr) : NULL;

	sonde_json_obj_begin(j);
	if (fl & SONDE_SF_IP)
		sonde_json_ku64(j, "ip", ip);
	if (fl & SONDE_SF_SYM) {
		sonde_json_key(j, "sym");
		if (fr->sym) {
			json_str(j, fr->sym->name);
			sonde_json_key(j, "sym_mangled");
			json_str(j, fr->sym->mangled ? fr->sym->mangled : fr->sym->name);
			sonde_json_ku64(j, "symoff", fr->addr - fr->sym->start);
		} else {
			sonde_json_null(j);
		}
	}
	/* An inlined frame: the function running there; sym is the one it lies in. */
	if (inl) {
		sonde_json_key(j, "inlined");
		json_str(j, inl);
	}
	if (fl & SONDE_SF_DSO) {
		sonde_json_key(j, "dso");
		if (fr->dso)
			json_str(j, sonde_dso_long_name(fr->dso));
		else
			sonde_json_null(j);
	}
	sonde_json_obj_end(j);
}

int sonde_script_print_json(struct sonde_script_print *p, const struct sonde_session *ses,
			    const struct sonde_tool_sample *rs)
{
	const struct sonde_pd_sample *s = rs->s;
	const struct perf_event_attr *a = &ses->events[rs->event]->attr;
	/* Without -F, everything the samples carry. */
	unsigned fl = p->fields ? available(a, p->fields) : available(a, ~0u);
	FILE *f = p->out;
	struct sonde_json js, *j = &js;

	sonde_json_init_file(j, f, 0);
	sonde_json_obj_begin(j);
	sonde_json_key(j, "event");
	json_str(j, ses->event_names[rs->event]);
	if (fl & SONDE_SF_COMM) {
		sonde_json_key(j, "comm");
		json_str(j, comm_of(ses, rs));
	}
	if (fl & SONDE_SF_PID)
		sonde_json_ki64(j, "pid", (int)s->pid);
	if (fl & SONDE_SF_TID)
		sonde_json_ki64(j, "tid", (int)s->tid);
	if (fl & SONDE_SF_CPU)
		sonde_json_ku64(j, "cpu", s->cpu);
	if (fl & SONDE_SF_TIME) {
		sonde_json_key(j, "time");
		sonde_json_fixed(j, s->time, 9);
		sonde_json_ku64(j, "time_ns", s->time);
	}
	if (fl & SONDE_SF_PERIOD)
		sonde_json_ku64(j, "period", s->period);
	if ((fl & SONDE_SF_TRACE) && s->raw && p->tp) {
		const struct sonde_tp_event *ev = sonde_tp_find_raw(p->tp, s->raw, s->raw_size);

		if (ev) {
			size_t n = sonde_tp_event_nr_fields(ev);

			sonde_json_key(j, "fields");
			sonde_json_obj_begin(j);
			for (size_t i = 0; i < n; i++) {
				struct sonde_tp_value v;
				const char *name = sonde_tp_field_name(ev, i);

				sonde_json_key(j, name ? name : "");
				if (sonde_tp_field(p->tp, ev, i, s->raw, s->raw_size, &v))
					sonde_json_null(j);
				else
					json_value(j, p->tp, &v);
			}
			sonde_json_obj_end(j);
			sonde_json_key(j, "trace");
			json_str(j, sonde_tp_print(p->tp, s->raw, s->raw_size, (int)s->cpu));
		}
	}
	if (fl & (SONDE_SF_IP | SONDE_SF_SYM | SONDE_SF_DSO)) {
		if (rs->chain) {
			sonde_json_key(j, "callchain");
			sonde_json_arr_begin(j);
			for (size_t i = 0; i < rs->nframes; i++) {
				const struct sonde_frame *fr = &rs->frames[i];

				json_frame(j, fl, fr->dso ? fr->addr : rs->ips[i], fr);
			}
			sonde_json_arr_end(j);
		} else {
			sonde_json_key(j, "at");
			json_frame(j, fl, s->ip, &rs->frames[0]);
		}
	}
	sonde_json_obj_end(j);
	sonde_json_line_end(j);
	return sonde_json_error(j) ? sonde_json_error(j) : ferror(f) ? -EIO : 0;
}
