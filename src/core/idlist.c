// SPDX-License-Identifier: MIT
/*
 * The id-list parser (see include/sonde/idlist.h).
 *
 * One walk over the text hands each id to an append callback, so the int
 * and uint32_t forms share every rule.  Numbers are accumulated digit by
 * digit against the kind's maximum: strtol would accept "4294967297" and the
 * cast to pid_t would make it 1.
 */
#include <sonde/idlist.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct sonde_idkind sonde_idkind_pid = {"process id", 1, SONDE_PID_MAX, 0};
const struct sonde_idkind sonde_idkind_tid = {"thread id", 1, SONDE_PID_MAX, 0};
const struct sonde_idkind sonde_idkind_sample_pid = {"process id", 0, SONDE_PID_MAX, 0};
const struct sonde_idkind sonde_idkind_sample_tid = {"thread id", 0, SONDE_PID_MAX, 0};
const struct sonde_idkind sonde_idkind_cpu = {"CPU", 0, SONDE_CPU_MAX, 1};
const struct sonde_idkind sonde_idkind_index = {"number", 0, UINT32_MAX, 0};

typedef int (*append_fn)(void *v, size_t *n, int64_t id);

/* Whether an array of @n elements is full: arrays made here have a power
 * of two (or zero) elements of room, so a long range costs log(n) reallocs. */
static size_t room_for(size_t n)
{
	return (n & (n - 1)) == 0 ? (n ? 2 * n : 1) : 0;
}

static int append_int(void *ctx, size_t *n, int64_t id)
{
	int **v = ctx, *nv = *v;
	size_t room = room_for(*n);

	if (room && !(nv = realloc(*v, room * sizeof(**v))))
		return -ENOMEM;
	*v = nv;
	nv[(*n)++] = (int)id;
	return 0;
}

static int append_u32(void *ctx, size_t *n, int64_t id)
{
	uint32_t **v = ctx, *nv = *v;
	size_t room = room_for(*n);

	if (room && !(nv = realloc(*v, room * sizeof(**v))))
		return -ENOMEM;
	*v = nv;
	nv[(*n)++] = (uint32_t)id;
	return 0;
}

/* The token that starts at @p, for messages: up to the next comma. */
static int token_len(const char *p)
{
	size_t len = strcspn(p, ",\n");

	return len > 64 ? 64 : (int)len;
}

/* One number at *p, advanced past it. Return: 0, -EINVAL, -ERANGE. */
static int number(const char **p, const struct sonde_idkind *k, int64_t *out)
{
	int64_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		/* Stop before v can overflow; the digits left still end the token. */
		if (v > k->max) {
			while (*s >= '0' && *s <= '9')
				s++;
			*p = s;
			return -ERANGE;
		}
	}
	*p = s;
	*out = v;
	return v < k->min ? -ERANGE : 0;
}

static int bad(struct sonde_errmsg *err, int r, const struct sonde_idkind *k, const char *tok)
{
	if (r == -ERANGE)
		return sonde_errmsg_set(err, r, "'%.*s': a %s is %lld..%lld", token_len(tok), tok,
					k->what, (long long)k->min, (long long)k->max);
	return sonde_errmsg_set(err, r, "'%.*s' is not a %s%s", token_len(tok), tok, k->what,
				k->ranges ? " or a range of them (a-b)" : "");
}

static int walk(const char *text, const struct sonde_idkind *k, void *v, size_t *n,
		append_fn append, struct sonde_errmsg *err)
{
	const char *p = text;

	for (;;) {
		const char *tok = p;
		int64_t lo = 0, hi;
		int r = number(&p, k, &lo);

		/* Bad syntax wins over a range error: "0x10" is not a number at all. */
		hi = lo;
		if (r != -EINVAL && *p == '-' && k->ranges) {
			int rhi;

			p++;
			rhi = number(&p, k, &hi);
			r = rhi == -EINVAL || !r ? rhi : r;
			if (!r && hi < lo)
				r = -EINVAL;
		}
		if (r != -EINVAL && *p && *p != ',' && strcmp(p, "\n"))
			r = -EINVAL;
		if (r && (*tok == ',' || !*tok || !strcmp(tok, "\n")))
			return sonde_errmsg_set(err, -EINVAL, "'%s' has an empty entry", text);
		if (r)
			return bad(err, r, k, tok);
		for (int64_t id = lo; id <= hi; id++)
			if ((r = append(v, n, id)))
				return sonde_errmsg_set(err, r, "out of memory");
		if (*p != ',')
			return 0;
		p++;
	}
}

int sonde_idlist_add(const char *text, const struct sonde_idkind *kind, int **v, size_t *n,
		     struct sonde_errmsg *err)
{
	return walk(text, kind, v, n, append_int, err);
}

int sonde_idlist_add_u32(const char *text, const struct sonde_idkind *kind, uint32_t **v, size_t *n,
			 struct sonde_errmsg *err)
{
	return walk(text, kind, v, n, append_u32, err);
}
