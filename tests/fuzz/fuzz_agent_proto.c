// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the agent's wire protocol (src/agent/proto.c): the
 * bytes either side receives from the other.
 *
 * The input is a stream of frames, read the way sonde_agent_recv() reads
 * them (header check against the receiver's cap, then the payload), and
 * every payload goes through every decoder whatever its type, plus the
 * record walker of DATA and the name checks the agent applies to file
 * requests.  Promises checked: a decoder that accepts a message consumed
 * all of it; a RECORD request that decodes re-encodes to the same bytes;
 * an accepted path has no "." or ".." component.  A broken promise aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/agent_proto.h>

static void check_record(const uint8_t *p, size_t len)
{
	struct sonde_agent_record_req r, again;
	struct sonde_wmsg m;
	struct sonde_wbuf b = {0};

	sonde_wmsg_init(&m, SONDE_AM_RECORD, p, len);
	if (sonde_agent_get_record(&m, &r) < 0)
		return;
	if (m.off != len)
		abort();
	sonde_agent_put_record(&b, &r);
	if (b.err || b.len - SONDE_AGENT_FRAME_SIZE != len ||
	    memcmp(b.p + SONDE_AGENT_FRAME_SIZE, p, len))
		abort();
	sonde_wmsg_init(&m, SONDE_AM_RECORD, b.p + SONDE_AGENT_FRAME_SIZE, len);
	if (sonde_agent_get_record(&m, &again) < 0 || again.argc != r.argc ||
	    again.nspecs != r.nspecs || (r.argc && r.argv[r.argc]))
		abort();
	sonde_agent_record_req_fini(&again);
	sonde_agent_record_req_fini(&r);
	sonde_wbuf_fini(&b);
}

static void check_names(const uint8_t *p, size_t len)
{
	char buf[256];
	size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1, k;

	memcpy(buf, p, n);
	buf[n] = '\0';
	k = strlen(buf);
	if (sonde_agent_path_ok(buf) &&
	    (strstr(buf, "/../") || strstr(buf, "/./") || strstr(buf, "//") ||
	     (k >= 3 && !strcmp(buf + k - 3, "/..")) || (k >= 2 && !strcmp(buf + k - 2, "/."))))
		abort();
	(void)sonde_agent_module_ok(buf);
	(void)sonde_agent_token_eq(buf, n, p, len);
}

static void payload(uint16_t type, const uint8_t *p, size_t len)
{
	struct sonde_wmsg m;
	struct sonde_agent_hello h;
	struct sonde_agent_events e;
	struct sonde_agent_end end;
	const char *text;
	int32_t code;

	sonde_wmsg_init(&m, type, p, len);
	if (sonde_agent_get_hello(&m, &h) == 0 && m.off != len)
		abort();
	sonde_wmsg_init(&m, type, p, len);
	(void)sonde_agent_get_error(&m, &code, &text);
	check_record(p, len);
	sonde_wmsg_init(&m, type, p, len);
	if (sonde_agent_get_events(&m, &e) == 0)
		sonde_agent_events_fini(&e);
	sonde_wmsg_init(&m, type, p, len);
	if (sonde_agent_get_end(&m, &end) == 0)
		sonde_agent_end_fini(&end);
	(void)sonde_agent_check_records(p, len, false);
	(void)sonde_agent_check_records(p, len, true);
	check_names(p, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	while (size >= SONDE_AGENT_FRAME_SIZE) {
		uint16_t type;
		uint32_t len;

		if (sonde_wire_frame(data, SONDE_AGENT_MAX_REQUEST, &type, &len) < 0)
			return 0;
		data += SONDE_AGENT_FRAME_SIZE;
		size -= SONDE_AGENT_FRAME_SIZE;
		if (len > size)
			len = (uint32_t)size; /* a cut stream: decode what there is */
		payload(type, data, len);
		data += len;
		size -= len;
	}
	return 0;
}
