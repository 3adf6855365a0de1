// SPDX-License-Identifier: MIT
/*
 * Golden outputs of sonde annotate's views (src/output/annotate_stdio.c,
 * annotate_json.c) over a capture written with pd_gen.h whose samples
 * fall in tests/fixtures/annotate/annofix.s, linked static at 0x401000,
 * so its bytes and addresses are known from the source:
 *
 *   _start 0x401000: call hot; call cold; mov $60,%eax; xor; syscall
 *   hot    0x401020: mov $1000,%ecx; xor %eax,%eax; 0x401027 add %ecx,%eax;
 *                    0x401029 imul %eax,%edx; 0x40102c dec %ecx;
 *                    0x40102e jne 0x401027; 0x401030 ret
 *   cold   0x401040: nop; ret
 *
 * Process "anno" (pid 300) maps the executable segment (file offset read
 * from the program headers).  cpu-clock (period 1000 each): add 2, imul 5,
 * jne 1 (hot: 8000, so 25%, 62.5%, 12.5%), cold's nop 2 (100%);
 * page-faults: imul 1 (period 1: 100% of hot's), _start's first call 1
 * (period 3).  So the hottest by cpu-clock: hot, cold, then _start (page
 * faults only).  Assembled with -g, its lines are annofix.s's: the mixed
 * view interleaves them (hot's add is line 21, imul 22, cold's nop 32).
 * Paths of the checkout are shown as @ANNOFIX@ (the executable),
 * @ANNOFIX_SRC@ (the source) and @BUILD@ (the DWARF's comp_dir).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sonde/annotate.h>
#include <sonde/annotate_print.h>
#include <sonde/report.h>

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "golden.h"
#include "pd_gen.h"

#define PF_ID 2002ull
#define T0 2000000000ull

static char path[] = "/tmp/sonde-annotate-golden-XXXXXX";
static const char *fixture;

/* The executable PT_LOAD of the fixture: where the kernel would map it. */
static int text_segment(uint64_t *vaddr, uint64_t *offset, uint64_t *size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	FILE *f = fopen(fixture, "rb");
	int ret = -1;

	if (!f)
		return -1;
	if (fread(&eh, sizeof(eh), 1, f) == 1)
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET) ||
			    fread(&ph, sizeof(ph), 1, f) != 1)
				break;
			if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				*vaddr = ph.p_vaddr;
				*offset = ph.p_offset;
				*size = ph.p_memsz;
				ret = 0;
				break;
			}
		}
	fclose(f);
	return ret;
}

static int sample(struct sonde_pd_writer *w, uint64_t id, uint64_t t, uint64_t ip, uint64_t period)
{
	struct pdg_buf b;

	pdg_sample_of(&b, id, PERF_RECORD_MISC_USER, 300, 300, T0 + t, 0, ip, period, NULL, 0);
	return pdg_write(w, &b);
}

static int write_capture(void)
{
	struct sonde_pd_writer *w = pdg_writer_open(path, PDG_FILE);
	struct perf_event_attr a;
	uint64_t id = PF_ID, vaddr, off, size, t = 0;
	struct pdg_buf b;
	int err = 0;

	if (!w || text_segment(&vaddr, &off, &size))
		return -1;
	pdg_attr_init(&a);
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = 1;
	a.freq = 0;
	a.comm = a.mmap = a.mmap2 = a.task = 0;
	if (sonde_pd_writer_add_attr(w, &a, "page-faults", &id, 1) < 0)
		return -1;
	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_ARCH, "x86_64");
	pdg_comm(&b, 300, 300, "anno", true, T0);
	err |= pdg_write(w, &b);
	pdg_mmap2(&b, 300, vaddr, size, off, 99, fixture, T0 + 1);
	err |= pdg_write(w, &b);
	for (int i = 0; i < 2; i++)
		err |= sample(w, PDG_SAMPLE_ID, t += 1000, 0x401027, 1000);
	for (int i = 0; i < 5; i++)
		err |= sample(w, PDG_SAMPLE_ID, t += 1000, 0x401029, 1000);
	err |= sample(w, PDG_SAMPLE_ID, t += 1000, 0x40102e, 1000);
	for (int i = 0; i < 2; i++)
		err |= sample(w, PDG_SAMPLE_ID, t += 1000, 0x401040, 1000);
	err |= sample(w, PF_ID, t += 1000, 0x401029, 1);
	err |= sample(w, PF_ID, t += 1000, 0x401000, 3);
	pdg_round(&b);
	err |= pdg_write(w, &b);
	err |= sonde_pd_writer_close(w, NULL);
	return err ? -1 : 0;
}

/* @text with every occurrence of @from replaced by @to (frees @text). */
static char *subst(char *text, const char *from, const char *to)
{
	char *out = NULL, *s = text, *hit;
	size_t len = 0, n = strlen(from);
	FILE *m = open_memstream(&out, &len);

	assert_non_null(m);
	while ((hit = strstr(s, from))) {
		fwrite(s, 1, (size_t)(hit - s), m);
		fputs(to, m);
		s = hit + n;
	}
	fputs(s, m);
	fclose(m);
	free(text);
	return out;
}

/* As cmd_annotate: a report pass with the accumulator, the hottest symbols, their views. */
static void annotate_case(const char *name, bool json, enum sonde_annotate_view view, bool sort_hot)
{
	struct sonde_pd_reader *r = NULL;
	struct sonde_report *rep = NULL;
	struct sonde_annotate *an = NULL;
	struct sonde_annotate_opts ao = {0};
	struct sonde_report_opts ro = {0};
	struct sonde_errmsg em = {{0}};
	struct sonde_tool_slot slot;
	struct sonde_annotation *as[4];
	const struct sonde_symbol *syms[4];
	struct sonde_annotate_build_opts bo = {.no_source = view == SONDE_ANNOTATE_ASM};
	struct sonde_annotate_print_opts po = {
	    .view = view, .sort_hot = sort_hot, .file = "annotate.data"};
	char *out = NULL;
	size_t len = 0, n;
	FILE *f;

	if (sonde_pd_reader_open(&r, path, &em))
		fail_msg("%s", em.text);
	assert_int_equal(sonde_annotate_new(&an, sonde_pd_reader_nr_attrs(r), &ao), 0);
	slot = (struct sonde_tool_slot){&sonde_annotate_tool, an};
	ro.keys[0] = SONDE_SORT_SYM;
	ro.nkeys = 1;
	ro.tools = &slot;
	ro.ntools = 1;
	ro.ses.sym.no_proc_kallsyms = true;
	if (sonde_report_build(&rep, r, &ro, &em))
		fail_msg("%s", em.text);
	bo.arch = sonde_pd_reader_features(r)->arch;
	po.event_names = rep->ses->event_names;
	n = sonde_annotate_hottest(an, 0, syms, 4);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sonde_annotation_build(&as[i], an, syms[i], &bo), 0);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	if (json)
		assert_int_equal(sonde_annotate_print_json(
				     f, (const struct sonde_annotation *const *)as, n, &po),
				 0);
	else
		for (size_t i = 0; i < n; i++)
			assert_int_equal(sonde_annotate_print_stdio(f, as[i], &po), 0);
	fclose(f);
	/* the paths of this checkout: source first (it may lie inside the build dir) */
	out = subst(out, getenv("ANNOFIX_SRC"), "@ANNOFIX_SRC@");
	out = subst(out, fixture, "@ANNOFIX@");
	out = subst(out, getenv("ANNOFIX_COMP_DIR"), "@BUILD@");
	golden(name, out);
	free(out);
	for (size_t i = 0; i < n; i++)
		sonde_annotation_free(as[i]);
	sonde_annotate_free(an);
	sonde_report_free(rep);
	sonde_pd_reader_close(r);
}

static void test_stdio(void **state)
{
	(void)state;
	annotate_case("annotate.txt", false, SONDE_ANNOTATE_MIXED, false);
	annotate_case("annotate_asm_hot.txt", false, SONDE_ANNOTATE_ASM, true);
}

static void test_json(void **state)
{
	(void)state;
	annotate_case("annotate.json", true, SONDE_ANNOTATE_MIXED, false);
}

static int setup(void **state)
{
	(void)state;
	fixture = getenv("ANNOFIX");
	if (!fixture || !getenv("ANNOFIX_SRC") || !getenv("ANNOFIX_COMP_DIR"))
		return -1;
	return pdg_capture_file(path, write_capture);
}

static int teardown(void **state)
{
	(void)state;
	return unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stdio),
	    cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
