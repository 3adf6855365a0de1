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

int sonde_script_print_text(struct sonde_script_print *p, const struct sonde_session *ses,
			    const struct sonde_tool_sample *rs)
{
	const struct sonde_pd_sample *s = rs->s;
	unsigned fl = fields_of(p, ses, rs);
	bool frames = fl & (SONDE_SF_IP | SONDE_SF_SYM | SONDE_SF_DSO);
	FILE *f = p->out;
	char t[32];

	if (fl & SONDE_SF_COMM) {
		if ((fl & SONDE_SF_IP) && rs->chain)
			fprintf(f, "%s ", comm_of(ses, rs));
		else
			fprintf(f, "%16s ", comm_of(ses, rs));
	}
	if ((fl & SONDE_SF_PID) && (fl & SONDE_SF_TID))
		fprintf(f, "%5d/%-5d ", (int)s->pid, (int)s->tid);
	else if (fl & SONDE_SF_PID)
		fprintf(f, "%5d ", (int)s->pid);
	else if (fl & SONDE_SF_TID)
		fprintf(f, "%5d ", (int)s->tid);
	if (fl & SONDE_SF_CPU)
		fprintf(f, "[%03u] ", s->cpu);
	if (fl & SONDE_SF_TIME) {
		fmt_time(t, sizeof(t), s->time, p->ns);
		/* perf's column: 12 wide, 15 with nanoseconds */
		fprintf(f, "%*s: ", p->ns ? 15 : 12, t);
	}
	if (fl & SONDE_SF_PERIOD)
		fprintf(f, "%10" PRIu64 " ",
			(s->present & PERF_SAMPLE_PERIOD) ? s->period
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

static void json_frame(struct sonde_json *j, unsigned fl, uint64_t ip,
		       const struct sonde_frame *fr)
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
