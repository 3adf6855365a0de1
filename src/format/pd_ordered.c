// SPDX-License-Identifier: MIT
/*
 * Time ordering of a perf.data record stream.
 *
 * Pending records are copied into one growing byte arena (the reader's
 * pointers are only valid until its next call) with an index entry of
 * {time, sequence, arena offset}.  A flush sorts the index by (time,
 * sequence) and delivers the prefix up to the limit, then moves the rest
 * to the front; the arena is compacted when it is empty.  Sorting per
 * round keeps the work proportional to a round, not to the file.
 */
#include <sonde/pd_ordered.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct pending {
	uint64_t time;
	uint64_t seq;
	const uint8_t *data; /* a stable record in the reader, or NULL: in the arena */
	size_t off;	     /* in the arena */
	uint64_t file_off;
	const struct sonde_pd_attr *attr;
};

struct queue {
	struct pending *v;
	size_t n, cap;
	uint8_t *arena;
	size_t used, acap;
	uint8_t *spare; /* the next arena (compact() copies into it) */
	size_t spare_cap;
	uint64_t seq;
};

struct walk {
	struct sonde_pd_reader *r;
	sonde_pd_deliver_fn deliver;
	void *ctx;
	struct sonde_pd_walk_stats *st;
	uint64_t delivered_time; /* newest time delivered */
};

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int push(struct queue *q, const struct sonde_pd_record *rec, uint64_t time)
{
	size_t need = rec->stable ? 0 : (rec->size + 7u) & ~7u;

	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct pending *v = realloc(q->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		q->v = v;
		q->cap = cap;
	}
	if (q->used + need > q->acap) {
		size_t cap = q->acap ? q->acap * 2 : 64 << 10;
		uint8_t *a;

		while (cap < q->used + need)
			cap *= 2;
		if (!(a = realloc(q->arena, cap)))
			return -ENOMEM;
		q->arena = a;
		q->acap = cap;
	}
	/* Records in a mapped file stay put: only borrowed ones are copied. */
	if (need)
		memcpy(q->arena + q->used, rec->data, rec->size);
	q->v[q->n++] = (struct pending){time,	 q->seq++,    rec->stable ? rec->data : NULL,
					q->used, rec->offset, rec->attr};
	q->used += need;
	return 0;
}

static int deliver_one(struct walk *w, const struct pending *p, const uint8_t *data)
{
	struct sonde_pd_record rec = {
	    .offset = p->file_off,
	    .type = ((const struct perf_event_header *)data)->type,
	    .misc = ((const struct perf_event_header *)data)->misc,
	    .size = ((const struct perf_event_header *)data)->size,
	    .data = data,
	    .attr = p->attr,
	};
	struct sonde_pd_event ev;

	if (sonde_pd_reader_parse(w->r, &rec, &ev) != 0) {
		w->st->undecodable++;
		return 0;
	}
	if (p->time < w->delivered_time)
		w->st->out_of_order++;
	else
		w->delivered_time = p->time;
	w->st->samples += rec.type == PERF_RECORD_SAMPLE;
	return w->deliver(w->ctx, &rec, &ev);
}

/*
 * Moves the arena bytes of the records still pending to its front, so the
 * arena holds about one round, not the file.
 */
static int compact(struct queue *q)
{
	size_t used = 0, cap;
	uint8_t *t;

	if (!q->used)
		return 0;
	/* Into a second buffer: the records left are in time order, not arena
	 * order, so moving them within one buffer could overwrite one not yet
	 * moved. */
	if (q->spare_cap < q->used) {
		if (!(t = realloc(q->spare, q->used)))
			return -ENOMEM;
		q->spare = t;
		q->spare_cap = q->used;
	}
	for (size_t i = 0; i < q->n; i++) {
		struct pending *p = &q->v[i];
		size_t len;

		if (p->data)
			continue;
		len = (((const struct perf_event_header *)(q->arena + p->off))->size + 7u) & ~7u;
		memcpy(q->spare + used, q->arena + p->off, len);
		p->off = used;
		used += len;
	}
	t = q->arena;
	q->arena = q->spare;
	q->spare = t;
	cap = q->acap;
	q->acap = q->spare_cap;
	q->spare_cap = cap;
	q->used = used;
	return 0;
}

/* Delivers pending records with time <= @limit (all when @all). */
static int flush(struct walk *w, struct queue *q, uint64_t limit, bool all)
{
	size_t i, k;
	int err = 0;

	if (!q->n)
		return 0;
	/* A round from one CPU is usually in order already. */
	for (i = 1; i < q->n && by_time(&q->v[i - 1], &q->v[i]) <= 0; i++)
		;
	if (i < q->n)
		qsort(q->v, q->n, sizeof(*q->v), by_time);
	for (i = 0; i < q->n && (all || q->v[i].time <= limit); i++)
		if ((err = deliver_one(w, &q->v[i],
				       q->v[i].data ? q->v[i].data : q->arena + q->v[i].off)))
			return err;
	k = q->n - i;
	memmove(q->v, q->v + i, k * sizeof(*q->v));
	q->n = k;
	return compact(q);
}

int sonde_pd_walk_ordered(struct sonde_pd_reader *r, sonde_pd_deliver_fn deliver, void *ctx,
			  void (*progress)(void *ctx, uint64_t offset), int (*round)(void *ctx),
			  struct sonde_pd_walk_stats *stats)
{
	struct sonde_pd_walk_stats local = {0};
	struct walk w = {r, deliver, ctx, stats ? stats : &local, 0};
	struct queue q = {0};
	struct sonde_pd_record rec;
	struct sonde_pd_event ev;
	uint64_t max_time = 0, limit = 0;
	int n, err = 0;

	memset(w.st, 0, sizeof(*w.st));
	while ((n = sonde_pd_reader_next(r, &rec)) == 1) {
		uint64_t t = 0;

		w.st->records++;
		if (progress && (w.st->records & 0xffff) == 0)
			progress(ctx, rec.offset);
		if (rec.type == SONDE_PD_RECORD_FINISHED_ROUND) {
			uint64_t keep = rec.offset;

			if ((err = flush(&w, &q, limit, false)) || (round && (err = round(ctx))))
				break;
			limit = max_time;
			for (size_t i = 0; i < q.n; i++)
				if (q.v[i].data && q.v[i].file_off < keep)
					keep = q.v[i].file_off;
			sonde_pd_reader_forget(r, keep);
			continue;
		}
		if (rec.type >= SONDE_PD_KERNEL_RECORD_MAX) {
			/* perf's own records carry no time: they take effect where they are. */
			memset(&ev, 0, sizeof(ev));
			ev.type = rec.type;
			if ((err = deliver(ctx, &rec, &ev)))
				break;
			continue;
		}
		if (rec.attr)
			sonde_pd_record_time(&rec.attr->attr, &rec, &t);
		if (t > max_time)
			max_time = t;
		if ((err = push(&q, &rec, t)))
			break;
	}
	if (n < 0)
		err = n;
	if (!err)
		err = flush(&w, &q, 0, true);
	free(q.v);
	free(q.arena);
	free(q.spare);
	return err;
}
