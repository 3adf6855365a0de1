/* SPDX-License-Identifier: MIT */
/*
 * Tracepoint decoding: the tracing data a capture carries (perf.data's
 * HEADER_TRACING_DATA feature, trace-cmd's layout: header_page,
 * header_event, ftrace and event formats, kallsyms, printk formats, saved
 * comms) parsed into libtraceevent, and the PERF_SAMPLE_RAW payload of a
 * tracepoint sample decoded through it: typed field values (numbers,
 * strings, arrays) and the event's print format output, flags and
 * symbolic values included.  Host side only.
 *
 * The blob is outside data: every length is checked against what is left
 * before anything is handed to libtraceevent, and a payload is decoded
 * from a zero-padded copy, so a short or lying record reads zeros instead
 * of memory past its end.
 */
#ifndef SONDE_TPDECODE_H
#define SONDE_TPDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sonde/error.h>

struct sonde_tp_decoder;
struct sonde_tp_event; /* one event format, owned by the decoder */

/**
 * sonde_tp_decoder_new() - parse a tracing data blob
 * @blob, @len: the feature section (borrowed for the call only)
 * @err: receives the message of a failure (with the offset in the blob)
 *
 * An event whose format libtraceevent cannot parse is kept out (counted by
 * sonde_tp_decoder_nr_failed()); a blob whose layout is broken fails whole.
 * Return: 0 with *out new (free with sonde_tp_decoder_free()), or
 * SONDE_E_FORMAT / SONDE_E_TRUNCATED / -ENOMEM.
 */
int sonde_tp_decoder_new(struct sonde_tp_decoder **out, const void *blob, size_t len,
			 struct sonde_errmsg *err);
void sonde_tp_decoder_free(struct sonde_tp_decoder *d);

struct sonde_pd_reader;
/**
 * sonde_tp_decoder_open_capture() - the decoder of a capture's tracing data
 *
 * Also hands the capture's saved kallsyms (sonde's own feature) to the
 * decoder when a print format shows kernel symbols.
 * Return: 0 with *out new, -ENOENT when the capture has no tracing data,
 * or an error of sonde_tp_decoder_new() with @err set.
 */
int sonde_tp_decoder_open_capture(struct sonde_tp_decoder **out, struct sonde_pd_reader *r,
				  struct sonde_errmsg *err);

/* Event formats that failed to parse. */
size_t sonde_tp_decoder_nr_failed(const struct sonde_tp_decoder *d);

/*
 * Whether some print format prints kernel addresses as symbols (%ps, %pS,
 * ...), so that handing in kallsyms is worth its parse time.
 */
bool sonde_tp_decoder_wants_kallsyms(const struct sonde_tp_decoder *d);
/* Adds kallsyms text (as /proc/kallsyms prints it) for those.  Return: 0 or -ENOMEM. */
int sonde_tp_decoder_add_kallsyms(struct sonde_tp_decoder *d, const char *text, size_t len);

/* Borrowed: the event with format ID @id, or NULL. */
const struct sonde_tp_event *sonde_tp_find_id(const struct sonde_tp_decoder *d, uint32_t id);
/* Borrowed: the event of a raw payload (its common_type), or NULL. */
const struct sonde_tp_event *sonde_tp_find_raw(const struct sonde_tp_decoder *d, const void *raw,
					       size_t size);
/* Borrowed: the event "sys:name", or NULL. */
const struct sonde_tp_event *sonde_tp_find_name(const struct sonde_tp_decoder *d, const char *sys,
						const char *name);

/**
 * sonde_tp_event_system() - the event's system ("sched" of sched:sched_switch)
 * @ev: the event
 * Return: borrowed from the decoder.
 */
const char *sonde_tp_event_system(const struct sonde_tp_event *ev);
/**
 * sonde_tp_event_name() - the event's name ("sched_switch")
 * @ev: the event
 * Return: borrowed from the decoder.
 */
const char *sonde_tp_event_name(const struct sonde_tp_event *ev);
/**
 * sonde_tp_event_id() - the event's format ID (the common_type its payloads start with)
 * @ev: the event
 * Return: the ID.
 */
uint32_t sonde_tp_event_id(const struct sonde_tp_event *ev);
/* The event's own fields (not the common_* ones), in format order. */
size_t sonde_tp_event_nr_fields(const struct sonde_tp_event *ev);
/**
 * sonde_tp_field_name() - the name of the event's own field @i
 * @ev: the event
 * @i: below sonde_tp_event_nr_fields()
 * Return: borrowed from the decoder.
 */
const char *sonde_tp_field_name(const struct sonde_tp_event *ev, size_t i);
/* Index of field @name (own or common_*), or -1. */
int sonde_tp_field_index(const struct sonde_tp_event *ev, const char *name);

enum sonde_tp_kind {
	SONDE_TP_INT,	/* signed number: .i */
	SONDE_TP_UINT,	/* unsigned number (also pointers): .u */
	SONDE_TP_STR,	/* char array or __data_loc char[]: .str, .len (no NUL) */
	SONDE_TP_ARRAY, /* other arrays: .data, .nelem of .elem_size bytes */
};

/* A decoded field; pointers borrowed from the payload given. */
struct sonde_tp_value {
	const char *name;
	enum sonde_tp_kind kind;
	bool pointer; /* a C pointer: show in hex */
	int64_t i;
	uint64_t u;
	const char *str;
	size_t len;
	const uint8_t *data;
	uint32_t nelem, elem_size;
	bool elem_signed;
};

/**
 * sonde_tp_field() - decode field @i of @ev (own fields first, then the
 * common ones at nr_fields..) from payload @raw of @size bytes
 * Return: 0, -ENOENT (no such field) or SONDE_E_TRUNCATED (the field, or
 * the dynamic array it points at, runs past @size).
 */
int sonde_tp_field(const struct sonde_tp_decoder *d, const struct sonde_tp_event *ev, size_t i,
		   const void *raw, size_t size, struct sonde_tp_value *v);
/* Element @k of an array value, as a number (sign-extended when signed). */
uint64_t sonde_tp_array_elem(const struct sonde_tp_decoder *d, const struct sonde_tp_value *v,
			     uint32_t k);
/**
 * sonde_tp_field_int() - the number in field @name
 * Return: 0, -ENOENT, SONDE_E_TRUNCATED, or -EINVAL (not a number).
 */
int sonde_tp_field_int(const struct sonde_tp_decoder *d, const struct sonde_tp_event *ev,
		       const char *name, const void *raw, size_t size, int64_t *out);

/**
 * sonde_tp_print() - the event's print format applied to a payload, as
 * the kernel's trace output and `perf script` show it ("prev_comm=a
 * prev_pid=1 ... prev_state=S ==> ...")
 * @cpu: the sample's CPU (some formats print it)
 * Return: borrowed: valid until the next call on @d.
 */
const char *sonde_tp_print(struct sonde_tp_decoder *d, const void *raw, size_t size, int cpu);

#endif
