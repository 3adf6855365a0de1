/* SPDX-License-Identifier: MIT */
/*
 * The one JSON writer every sonde output uses (report, annotate, script,
 * the HTML page's data block, stat, doctor).
 *
 * It writes through a sink (a write function and its context, like redis'
 * rio) and keeps a sticky error: the first failed write is remembered,
 * later calls do nothing, and the producer checks once, at the end, with
 * sonde_json_error().  The writer buffers: the sink has every byte once a
 * top-level value is complete (or after sonde_json_line_end(),
 * sonde_json_raw()), so check the error then.  Commas are the writer's business: it remembers per
 * nesting level whether a value was written, so producers only say
 * begin/key/value/end.  Strings are escaped one way everywhere: '"' and
 * '\\' with a backslash, control bytes as \u00XX, valid UTF-8 passed
 * through, and each byte that does not start a valid UTF-8 sequence as
 * \ufffd (so the output is always valid JSON and the same input always
 * gives the same bytes).  Integers are exact; doubles have a fixed number
 * of decimals (non-finite ones are null).
 */
#ifndef SONDE_JSON_H
#define SONDE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Nesting deeper than this is an error (-E2BIG), not a crash. */
#define SONDE_JSON_MAX_DEPTH 1024

enum sonde_json_flags {
	/* Also escape '<', '>' and '&' (a block inside an HTML <script>). */
	SONDE_JSON_HTML = 1u << 0,
	/* ", " between values and ": " after keys. */
	SONDE_JSON_SPACED = 1u << 1,
	/* " : " after keys, as perf stat -j writes (with SONDE_JSON_SPACED). */
	SONDE_JSON_WIDE_COLON = 1u << 2,
	/* Each element of a top-level array on a line of its own, indented. */
	SONDE_JSON_LIST_LINES = 1u << 3,
};

/* Writes all of @len bytes, or returns a negative errno. */
typedef int (*sonde_json_write_fn)(void *ctx, const void *buf, size_t len);

struct sonde_json {
	sonde_json_write_fn write;
	void *ctx;
	int err; /* the first error, then every call is a no-op */
	unsigned flags;
	unsigned depth; /* open objects and arrays */
	bool after_key; /* a key was written: its value takes no comma */
	/* Per level: a value was written there (bit), the level is an object (bit). */
	uint8_t nonempty[SONDE_JSON_MAX_DEPTH / 8];
	uint8_t is_obj[SONDE_JSON_MAX_DEPTH / 8];
	/* Bytes not yet given to the sink (until a top-level value is complete). */
	size_t blen;
	char buf[1024];
};

/**
 * sonde_json_init() - start a writer over a sink
 * @j: caller's storage
 * @write: the sink's write function
 * @ctx: passed to @write
 * @flags: enum sonde_json_flags
 */
void sonde_json_init(struct sonde_json *j, sonde_json_write_fn write, void *ctx, unsigned flags);

/* A writer over a stdio stream (a short fwrite is -EIO). */
void sonde_json_init_file(struct sonde_json *j, FILE *f, unsigned flags);

/**
 * sonde_json_error() - the sticky error
 *
 * Return: 0, the first error a write returned, -E2BIG (nesting too deep)
 * or -EINVAL (unbalanced end, key outside an object).
 */
int sonde_json_error(const struct sonde_json *j);

/**
 * sonde_json_obj_begin() - open an object (a value: after a key, in an array or at the top)
 * @j: the writer; an error is kept sticky in it
 */
void sonde_json_obj_begin(struct sonde_json *j);
/**
 * sonde_json_obj_end() - close the innermost object
 * @j: the writer; -EINVAL (sticky) when the innermost container is not an object
 */
void sonde_json_obj_end(struct sonde_json *j);
/**
 * sonde_json_arr_begin() - open an array (a value, as for sonde_json_obj_begin())
 * @j: the writer
 */
void sonde_json_arr_begin(struct sonde_json *j);
/**
 * sonde_json_arr_end() - close the innermost array
 * @j: the writer; -EINVAL (sticky) when the innermost container is not an array
 */
void sonde_json_arr_end(struct sonde_json *j);

/* A member's name; the next value is its value. */
void sonde_json_key(struct sonde_json *j, const char *k);

/* A string (NUL-terminated; NULL writes null). */
void sonde_json_str(struct sonde_json *j, const char *s);
/* @n bytes of @s as a string, NUL bytes included (as \u0000). */
void sonde_json_strn(struct sonde_json *j, const char *s, size_t n);
/* A string "0x<hex>" (addresses: kernel ones do not fit a double). */
void sonde_json_hex(struct sonde_json *j, uint64_t v);

/**
 * sonde_json_u64() - an unsigned integer, in decimal
 * @j: the writer
 * @v: the value (exact: not converted to a double)
 */
void sonde_json_u64(struct sonde_json *j, uint64_t v);
/**
 * sonde_json_i64() - a signed integer, in decimal
 * @j: the writer
 * @v: the value
 */
void sonde_json_i64(struct sonde_json *j, int64_t v);
/* @v with @decimals digits after the point (printf's %.*f); NaN, inf: null. */
void sonde_json_double(struct sonde_json *j, double v, int decimals);
/* The exact decimal @v / 10^@decimals, e.g. ns as seconds: (1500000000, 9) is 1.500000000. */
void sonde_json_fixed(struct sonde_json *j, uint64_t v, unsigned decimals);
/**
 * sonde_json_bool() - true or false
 * @j: the writer
 * @v: the value
 */
void sonde_json_bool(struct sonde_json *j, bool v);
/**
 * sonde_json_null() - null
 * @j: the writer
 */
void sonde_json_null(struct sonde_json *j);

/* Ends a top-level value with a newline (JSON lines, or a final newline). */
void sonde_json_line_end(struct sonde_json *j);

/* Bytes written verbatim around the JSON (the HTML page around its data block). */
void sonde_json_raw(struct sonde_json *j, const void *buf, size_t len);

/* Key-value shorthands. */
static inline void sonde_json_kstr(struct sonde_json *j, const char *k, const char *s)
{
	sonde_json_key(j, k);
	sonde_json_str(j, s);
}

/**
 * sonde_json_ku64() - a member with an unsigned integer value
 * @j: the writer, inside an object
 * @k: the member's name
 * @v: its value
 */
static inline void sonde_json_ku64(struct sonde_json *j, const char *k, uint64_t v)
{
	sonde_json_key(j, k);
	sonde_json_u64(j, v);
}

/**
 * sonde_json_ki64() - a member with a signed integer value
 * @j: the writer, inside an object
 * @k: the member's name
 * @v: its value
 */
static inline void sonde_json_ki64(struct sonde_json *j, const char *k, int64_t v)
{
	sonde_json_key(j, k);
	sonde_json_i64(j, v);
}

/**
 * sonde_json_kbool() - a member with a true or false value
 * @j: the writer, inside an object
 * @k: the member's name
 * @v: its value
 */
static inline void sonde_json_kbool(struct sonde_json *j, const char *k, bool v)
{
	sonde_json_key(j, k);
	sonde_json_bool(j, v);
}

#endif
