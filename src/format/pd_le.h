/* SPDX-License-Identifier: MIT */
/*
 * Little-endian load and store helpers for the perf.data code.  Every byte
 * sonde defines on disk goes through these, so unaligned input never
 * becomes an unaligned load and a big-endian port has one place to change.
 */
#ifndef SONDE_PD_LE_H
#define SONDE_PD_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t pd_get16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t pd_get32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t pd_get64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void pd_put16(void *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void pd_put32(void *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void pd_put64(void *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

/* perf pads header strings to 64 bytes, NUL included. */
static inline uint32_t pd_string_len(size_t slen)
{
	return (uint32_t)((slen + 1 + 63) & ~(size_t)63);
}

/*
 * Bytes that follow a record outside its header size: AUXTRACE (71) carries
 * its AUX data, pipe-mode HEADER_TRACING_DATA (66) the tracing blob.
 * @size is the record's size, checked by the caller to be at least 8.
 */
static inline uint64_t pd_record_extra(uint32_t type, const uint8_t *rec, uint16_t size)
{
	if (type == 66 && size >= 12)
		return pd_get32(rec + 8);
	if (type == 71 && size >= 16)
		return pd_get64(rec + 8);
	return 0;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sonde's perf.data code assumes a little-endian host (struct overlays of attrs)"
#endif

#endif
