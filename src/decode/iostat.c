// SPDX-License-Identifier: MIT
/*
 * I/O per process: one row per pid, found through a u32 map, and a small
 * cache from event formats to what they count (a capture has a handful of
 * formats, so a linear list is enough and keeps the name checks off the
 * per-record path).
 */
#include <sonde/iostat.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/u32map.h>

enum io_kind { IO_NONE, IO_ENTER_READ, IO_EXIT_READ, IO_ENTER_WRITE, IO_EXIT_WRITE };

struct kind_cache {
	const struct sonde_tp_event *ev;
	enum io_kind kind;
};

struct sonde_iostat {
	const struct sonde_tp_decoder *tp;
	struct sonde_u32map index; /* pid -> row */
	struct sonde_io_row *rows;
	size_t n, cap;
	struct kind_cache kinds[64];
	size_t nkinds;
	bool exit_read, exit_write; /* the capture has exit events of the direction */
	bool sorted;
};

static const char *const read_calls[] = {"read", "pread64", "readv", "preadv", "preadv2"};
static const char *const write_calls[] = {"write", "pwrite64", "writev", "pwritev", "pwritev2"};

static bool in(const char *name, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, v[i]))
			return true;
	return false;
}

static enum io_kind classify(const struct sonde_tp_event *ev)
{
	const char *name = sonde_tp_event_name(ev);
	bool enter;

	if (strcmp(sonde_tp_event_system(ev), "syscalls"))
		return IO_NONE;
	if (!strncmp(name, "sys_enter_", 10))
		enter = true, name += 10;
	else if (!strncmp(name, "sys_exit_", 9))
		enter = false, name += 9;
	else
		return IO_NONE;
	if (in(name, read_calls, sizeof(read_calls) / sizeof(read_calls[0])))
		return enter ? IO_ENTER_READ : IO_EXIT_READ;
	if (in(name, write_calls, sizeof(write_calls) / sizeof(write_calls[0])))
		return enter ? IO_ENTER_WRITE : IO_EXIT_WRITE;
	return IO_NONE;
}

int sonde_iostat_new(struct sonde_iostat **out, const struct sonde_tp_decoder *tp)
{
	struct sonde_iostat *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->tp = tp;
	sonde_u32map_init(&st->index);
	for (size_t i = 0; i < sizeof(read_calls) / sizeof(read_calls[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "sys_exit_%s", read_calls[i]);
		st->exit_read |= sonde_tp_find_name(tp, "syscalls", name) != NULL;
		snprintf(name, sizeof(name), "sys_exit_%s", write_calls[i]);
		st->exit_write |= sonde_tp_find_name(tp, "syscalls", name) != NULL;
	}
	*out = st;
	return 0;
}

void sonde_iostat_free(struct sonde_iostat *st)
{
	if (!st)
		return;
	sonde_u32map_fini(&st->index);
	free(st->rows);
	free(st);
}

static enum io_kind kind_of(struct sonde_iostat *st, const struct sonde_tp_event *ev)
{
	enum io_kind k;

	for (size_t i = 0; i < st->nkinds; i++)
		if (st->kinds[i].ev == ev)
			return st->kinds[i].kind;
	k = classify(ev);
	if (st->nkinds < sizeof(st->kinds) / sizeof(st->kinds[0]))
		st->kinds[st->nkinds++] = (struct kind_cache){ev, k};
	return k;
}

static struct sonde_io_row *row_of(struct sonde_iostat *st, uint32_t pid)
{
	uint32_t i;

	if (sonde_u32map_get(&st->index, pid, &i))
		return &st->rows[i];
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 64;
		struct sonde_io_row *v = realloc(st->rows, cap * sizeof(*v));

		if (!v)
			return NULL;
		st->rows = v;
		st->cap = cap;
	}
	if (sonde_u32map_put(&st->index, pid, (uint32_t)st->n))
		return NULL;
	memset(&st->rows[st->n], 0, sizeof(st->rows[0]));
	st->rows[st->n].pid = pid;
	return &st->rows[st->n++];
}

int sonde_iostat_add(struct sonde_iostat *st, uint32_t pid, uint32_t comm, const void *raw,
		     size_t size)
{
	const struct sonde_tp_event *ev = sonde_tp_find_raw(st->tp, raw, size);
	enum io_kind k = ev ? kind_of(st, ev) : IO_NONE;
	struct sonde_io_dir *d;
	struct sonde_io_row *row;
	int64_t v;
	bool enter = k == IO_ENTER_READ || k == IO_ENTER_WRITE;
	bool has_exit;

	if (k == IO_NONE)
		return 0;
	if (st->sorted) /* rows were reordered for printing: rebuild the index */
		return -EINVAL;
	if (!(row = row_of(st, pid)))
		return -ENOMEM;
	row->comm = comm;
	d = (k == IO_ENTER_READ || k == IO_EXIT_READ) ? &row->read : &row->write;
	has_exit = d == &row->read ? st->exit_read : st->exit_write;
	if (enter) {
		/* read/write have "count", the vector calls "vlen" (not bytes) */
		if (sonde_tp_field_int(st->tp, ev, "count", raw, size, &v) == 0)
			d->requested += (uint64_t)v;
		if (!has_exit)
			d->calls++;
		return 1;
	}
	d->calls++;
	if (sonde_tp_field_int(st->tp, ev, "ret", raw, size, &v) == 0) {
		if (v < 0)
			d->failed++;
		else
			d->bytes += (uint64_t)v;
	}
	return 1;
}

static int by_bytes(const void *a, const void *b)
{
	const struct sonde_io_row *x = a, *y = b;
	uint64_t bx = x->read.bytes + x->write.bytes, by = y->read.bytes + y->write.bytes;

	if (bx != by)
		return bx > by ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

size_t sonde_iostat_rows(struct sonde_iostat *st, const struct sonde_io_row **rows)
{
	qsort(st->rows, st->n, sizeof(*st->rows), by_bytes);
	st->sorted = true;
	*rows = st->rows;
	return st->n;
}
