// SPDX-License-Identifier: MIT
/*
 * Annotate without a capture: the capstone decoder on known encodings of
 * each architecture, and the per-address accumulator fed through the
 * report pass's on_leaf hook with hand-made symbols (which symbols are
 * kept, the table growing past thousands of addresses, the hottest
 * order, an annotation built without code: one row per sampled address
 * whose counts add up to the function's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/annotate.h>
#include <sonde/disasm.h>
#include <sonde/error.h>

#include <errno.h>
#include <string.h>

static void decodes(const char *arch, bool thumb, const uint8_t *code, size_t len, size_t want_size,
		    const char *want_text)
{
	struct sonde_disasm *d;
	char text[128];

	assert_int_equal(sonde_disasm_new(&d, arch, thumb), 0);
	assert_int_equal(sonde_disasm_one(d, code, len, 0x1000, text, sizeof(text)), want_size);
	assert_string_equal(text, want_text);
	sonde_disasm_free(d);
}

static void test_disasm(void **state)
{
	static const uint8_t divq[] = {0x48, 0xf7, 0xf1, 0xc3}, ret64[] = {0xc0, 0x03, 0x5f, 0xd6},
			     bx_lr[] = {0x70, 0x47}, arm_bx[] = {0x1e, 0xff, 0x2f, 0xe1},
			     jmp[] = {0xeb, 0xfe},
			     bad[] = {0x06}; /* push %es: not in 64-bit mode */
	struct sonde_disasm *d;
	char text[128];

	decodes("x86_64", false, divq, sizeof(divq), 3, "divq %rcx"); /* AT&T, as objdump */
	decodes("x86_64", false, jmp, sizeof(jmp), 2, "jmp 0x1000");  /* targets from addr */
	decodes("aarch64", false, ret64, sizeof(ret64), 4, "ret");
	decodes("armv7l", true, bx_lr, sizeof(bx_lr), 2, "bx lr");
	decodes("armv7l", false, arm_bx, sizeof(arm_bx), 4, "bx lr");
	assert_int_equal(sonde_disasm_new(&d, "x86_64", false), 0);
	assert_int_equal(sonde_disasm_one(d, bad, sizeof(bad), 0, text, sizeof(text)), 0);
	assert_int_equal(sonde_disasm_one(d, divq, 2, 0, text, sizeof(text)), 0); /* cut short */
	sonde_disasm_free(d);
	assert_int_equal(sonde_disasm_new(&d, "mips", false), SONDE_E_NOT_SUPPORTED);
}

static struct sonde_symbol f_sym = {"f", 0x1000, 0x4000, NULL, 0, "f"};
static struct sonde_symbol g_sym = {"g", 0x9000, 0x10, NULL, 7, "g"};

/* One kept sample whose leaf is @s at @addr, as the session hands it to the tool. */
static void feed(struct sonde_annotate *an, const struct sonde_symbol *s, uint64_t addr, size_t ev,
		 uint64_t period)
{
	struct sonde_frame f = {.sym = s, .addr = addr};
	struct sonde_tool_sample ts = {.event = ev, .period = period, .frames = &f, .nframes = 1};

	assert_int_equal(sonde_annotate_tool.sample(an, NULL, &ts), 0);
}

static void test_only_the_symbols_asked(void **state)
{
	const char *names[] = {"g"};
	struct sonde_annotate_opts o = {.names = names, .nnames = 1};
	struct sonde_annotate *an;
	const struct sonde_symbol *hot[4];

	assert_int_equal(sonde_annotate_new(&an, 2, &o), 0);
	feed(an, &f_sym, 0x1000, 0, 1);
	feed(an, &g_sym, 0x9004, 1, 3);
	feed(an, NULL, 0x1234, 0, 1); /* unresolved: never counted */
	assert_int_equal(sonde_annotate_hottest(an, 0, hot, 4), 1);
	assert_ptr_equal(hot[0], &g_sym);
	sonde_annotate_free(an);

	/* by id: 0 is f */
	uint32_t ids[] = {0};
	struct sonde_annotate_opts oi = {.ids = ids, .nids = 1};

	assert_int_equal(sonde_annotate_new(&an, 1, &oi), 0);
	feed(an, &g_sym, 0x9004, 0, 3);
	feed(an, &f_sym, 0x1000, 0, 1);
	assert_int_equal(sonde_annotate_hottest(an, 0, hot, 4), 1);
	assert_ptr_equal(hot[0], &f_sym);
	sonde_annotate_free(an);
}

static void test_many_addresses_add_up(void **state)
{
	struct sonde_annotate_opts o = {0};
	struct sonde_annotate *an;
	struct sonde_annotation *a;
	struct sonde_annotate_build_opts bo = {.no_source = true};
	const struct sonde_symbol *hot[4];
	uint64_t samples = 0, period = 0;

	assert_int_equal(sonde_annotate_new(&an, 2, &o), 0);
	/* 5000 addresses of f, twice each on event 0, once on event 1 */
	for (int round = 0; round < 2; round++)
		for (uint64_t i = 0; i < 5000; i++)
			feed(an, &f_sym, 0x1000 + (i * 3) % 0x4000, 0, 2);
	for (uint64_t i = 0; i < 5000; i++)
		feed(an, &f_sym, 0x1000 + (i * 3) % 0x4000, 1, 5);
	for (int i = 0; i < 20001; i++)
		feed(an, &g_sym, 0x9000 + (uint64_t)(i % 16), 0, 1);
	/* all symbols kept; g has more period on event 0, f on event 1 */
	assert_int_equal(sonde_annotate_hottest(an, 0, hot, 4), 2);
	assert_ptr_equal(hot[0], &g_sym);
	assert_ptr_equal(hot[1], &f_sym);
	sonde_annotate_hottest(an, 1, hot, 4);
	assert_ptr_equal(hot[0], &f_sym);

	/* no object behind f: no code, one row per sampled address, in order */
	assert_int_equal(sonde_annotation_build(&a, an, &f_sym, &bo), 0);
	assert_int_equal(a->disasm_err, -EINVAL);
	assert_int_equal(a->ninsns, 5000);
	assert_int_equal(a->nlines, 0);
	for (size_t i = 0; i < a->ninsns; i++) {
		assert_int_equal(a->insns[i].size, 0);
		assert_string_equal(a->insns[i].text, "");
		if (i)
			assert_true(a->insns[i].addr > a->insns[i - 1].addr);
		assert_int_equal(a->insns[i].counts[0].samples, 2);
		assert_int_equal(a->insns[i].counts[1].period, 5);
		samples += a->insns[i].counts[0].samples;
		period += a->insns[i].counts[0].period;
	}
	assert_int_equal(a->total[0].samples, 10000);
	assert_int_equal(samples, a->total[0].samples);
	assert_int_equal(period, a->total[0].period);
	assert_int_equal(a->total[1].samples, 5000);
	assert_true(sonde_annotate_percent(a, a->insns[0].counts, 0) > 0.0);
	sonde_annotation_free(a);
	sonde_annotate_free(an);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_disasm),
	    cmocka_unit_test(test_only_the_symbols_asked),
	    cmocka_unit_test(test_many_addresses_add_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
