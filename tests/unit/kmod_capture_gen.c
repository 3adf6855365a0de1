// SPDX-License-Identifier: MIT
/*
 * Test-only: a capture of samples inside a kernel module, made the way a
 * target capture would be, for a machine whose kernel has no loadable
 * modules (tests/fixtures/kmod, tests/integration/test_kmod_capture.py).
 *
 *   kmod_capture_gen KO BASE OUT [--kallsyms FILE]
 *
 * KO is a real .ko with DWARF (tests/fixtures/kmod/sonde_chardev.ko), BASE
 * its load address (0xffffffffc0a00000).  The tool:
 *
 *  1. lays the .ko's allocated sections out as the 6.1 kernel's
 *     layout_sections() does: the core allocation holds executable
 *     sections first, then read-only ones, then .data..ro_after_init and
 *     __jump_table, then writable ones, each group page-aligned
 *     (CONFIG_STRICT_MODULE_RWX) and each section aligned to its
 *     sh_addralign, in section-header order; ".init*" sections go to a
 *     second allocation after the core one; .modinfo and __versions are
 *     not allocated (the loader clears their SHF_ALLOC);
 *  2. writes what the kernel would show into a fake /proc and /sys:
 *     /proc/modules, /sys/module/NAME/sections/SECTION, /proc/kallsyms (this
 *     machine's, or FILE's, plus the module's functions as the kernel
 *     lists them) and /proc/sys/kernel/osrelease (the .ko's vermagic
 *     release), and runs sonde's own synthesizers over it: the kernel
 *     and module MMAPs, the SONDE_PD_SFEAT_MODULES text and the kallsyms
 *     snapshot, so the capture holds exactly what `sonde record` saves;
 *  3. picks sample addresses at line-table rows (instruction starts)
 *     inside chosen functions: 600 in sonde_chardev_mix (the hot helper;
 *     rows of the inlined fold_byte() weigh 3, others 1), 300 in
 *     sonde_chardev_write, 100 in sonde_chardev_ioctl, and 10 in kernel
 *     functions named in kallsyms (vfs_write 5, ksys_write 3,
 *     do_syscall_64 2, when listed);
 *  4. writes OUT (perf.data through sonde's writer: one cpu-clock event,
 *     sample_type IP|TID|TIME|CPU|PERIOD, sample_id_all; kernel MMAP,
 *     module MMAP "[sonde_chardev]", a COMM, the samples in a shuffled
 *     order over 2 CPUs), OUT.json (the expectation: for every sampled
 *     address its count, symbol+offset, innermost function and file:line
 *     as libdwfl reads them from the .ko; the integration test checks
 *     them against eu-addr2line) and OUT.kallsyms (the kallsyms text of
 *     the fake /proc, for perf report --kallsyms).
 *
 * DWARF of an ET_REL file needs relocation: libdwfl applies it in its own
 * offline layout, so addresses are taken there and moved by the section's
 * offset into the kernel layout above.
 */
#include <sonde/perf_data.h>
#include <sonde/synth.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_tree.h"

#define PAGE 4096ull
#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))
#define MAX_SECS 128
#define MAX_ROWS 256
#define PID 4343u
#define COMM "sonde-kmod-wl"
#define PERIOD 1000000ull
#define T0 5000000000ull

struct sec {
	char name[64];
	uint64_t addr; /* kernel layout */
	uint64_t size, align, flags;
	size_t idx;
	int placed;
};

struct ksym {
	char name[64];
	size_t shndx;
	uint64_t value, size;
	int global;
};

/* One sampled address and what the expectation says about it. */
struct pick {
	uint64_t addr; /* runtime address */
	unsigned count;
	int kernel;
	char symbol[64];
	uint64_t symoff;
	char function[64];
	char file[512];
	int line;
};

struct gen {
	const char *ko;
	uint64_t base, core_size;
	char release[128];
	struct sec secs[MAX_SECS];
	size_t nsecs;
	struct ksym *syms;
	size_t nsyms;
	struct pick picks[1024];
	size_t npicks;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t dwfl_text; /* .text in libdwfl's offline layout */
};

static __attribute__((noreturn)) void die(const char *what, const char *detail)
{
	fprintf(stderr, "kmod_capture_gen: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	exit(1);
}

static const struct sec *find_sec(const struct gen *g, const char *name)
{
	for (size_t i = 0; i < g->nsecs; i++)
		if (!strcmp(g->secs[i].name, name))
			return &g->secs[i];
	return NULL;
}

/* Place the sections of one layout group after *size (module_get_offset). */
static void place(struct gen *g, uint64_t base, uint64_t *size, int (*want)(const struct sec *))
{
	for (size_t i = 0; i < g->nsecs; i++) {
		struct sec *s = &g->secs[i];

		if (s->placed || !want(s))
			continue;
		*size = ALIGN_UP(*size, s->align ? s->align : 1);
		s->addr = base + *size;
		*size += s->size;
		s->placed = 1;
	}
}

static int is_init(const struct sec *s)
{
	return !strncmp(s->name, ".init", 5);
}
static int g_text(const struct sec *s)
{
	return !is_init(s) && (s->flags & SHF_EXECINSTR);
}
static int g_ro(const struct sec *s)
{
	return !is_init(s) && !(s->flags & SHF_WRITE);
}
static int is_ro_after_init(const struct sec *s)
{
	return !strcmp(s->name, ".data..ro_after_init") || !strcmp(s->name, "__jump_table");
}
static int g_ro_after_init(const struct sec *s)
{
	return !is_init(s) && is_ro_after_init(s);
}
static int g_data(const struct sec *s)
{
	return !is_init(s);
}
static int i_text(const struct sec *s)
{
	return is_init(s) && (s->flags & SHF_EXECINSTR);
}
static int i_ro(const struct sec *s)
{
	return is_init(s) && !(s->flags & SHF_WRITE);
}
static int i_data(const struct sec *s)
{
	return is_init(s);
}

/* Reads sections, symbols and the vermagic release with libelf; lays out. */
static void read_ko(struct gen *g)
{
	size_t shstrndx, i;
	Elf_Scn *scn = NULL;
	uint64_t size = 0, isize = 0, ibase;
	int fd = open(g->ko, O_RDONLY);
	Elf *e;

	if (fd < 0)
		die(g->ko, strerror(errno));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		die(g->ko, elf_errmsg(-1));
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".modinfo")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			for (size_t off = 0; d && off < d->d_size;
			     off += strlen((char *)d->d_buf + off) + 1)
				if (!strncmp((char *)d->d_buf + off, "vermagic=", 9))
					sscanf((char *)d->d_buf + off + 9, "%127s", g->release);
		}
		if (sh.sh_type == SHT_SYMTAB) {
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

			g->syms = calloc(n ? n : 1, sizeof(*g->syms));
			for (i = 0; d && i < n; i++) {
				GElf_Sym sym;
				const char *sn;

				if (!gelf_getsym(d, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
					continue;
				sn = elf_strptr(e, sh.sh_link, sym.st_name);
				if (!sn || strlen(sn) >= sizeof(g->syms->name))
					continue;
				struct ksym *k = &g->syms[g->nsyms++];

				snprintf(k->name, sizeof(k->name), "%s", sn);
				k->shndx = sym.st_shndx;
				k->value = sym.st_value;
				k->size = sym.st_size;
				k->global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
			}
		}
		/* Allocated, non-empty: what /sys/module/NAME/sections lists. */
		if (!(sh.sh_flags & SHF_ALLOC) || !sh.sh_size || !strcmp(name, ".modinfo") ||
		    !strcmp(name, "__versions"))
			continue;
		if (g->nsecs == MAX_SECS || strlen(name) >= sizeof(g->secs->name))
			die("too many or too long sections", name);
		struct sec *s = &g->secs[g->nsecs++];

		snprintf(s->name, sizeof(s->name), "%s", name);
		s->size = sh.sh_size;
		s->align = sh.sh_addralign;
		s->flags = sh.sh_flags;
		s->idx = elf_ndxscn(scn);
	}
	elf_end(e);
	close(fd);
	if (!g->release[0])
		die(g->ko, "no vermagic in .modinfo");

	/* Core allocation: text | ro | ro_after_init | data, page-aligned groups. */
	place(g, g->base, &size, g_text);
	size = ALIGN_UP(size, PAGE);
	place(g, g->base, &size, g_ro);
	size = ALIGN_UP(size, PAGE);
	place(g, g->base, &size, g_ro_after_init);
	size = ALIGN_UP(size, PAGE);
	place(g, g->base, &size, g_data);
	g->core_size = ALIGN_UP(size, PAGE);
	/* Init allocation: its own vmalloc area after the core one (and a guard page). */
	ibase = g->base + g->core_size + PAGE;
	place(g, ibase, &isize, i_text);
	isize = ALIGN_UP(isize, PAGE);
	place(g, ibase, &isize, i_ro);
	isize = ALIGN_UP(isize, PAGE);
	place(g, ibase, &isize, i_data);
	if (!find_sec(g, ".text"))
		die(g->ko, "no .text");
}

static const struct ksym *find_ksym(const struct gen *g, const char *name)
{
	for (size_t i = 0; i < g->nsyms; i++)
		if (!strcmp(g->syms[i].name, name))
			return &g->syms[i];
	return NULL;
}

/* The address of a section index in the kernel layout (0 if not allocated). */
static uint64_t sec_addr(const struct gen *g, size_t idx)
{
	for (size_t i = 0; i < g->nsecs; i++)
		if (g->secs[i].idx == idx)
			return g->secs[i].addr;
	return 0;
}

static void open_dwfl(struct gen *g)
{
	static const Dwfl_Callbacks cb = {
	    .find_debuginfo = dwfl_standard_find_debuginfo,
	    .section_address = dwfl_offline_section_address,
	};
	const struct ksym *k = find_ksym(g, "sonde_chardev_mix");
	GElf_Addr bias;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *e;

	g->dwfl = dwfl_begin(&cb);
	if (!g->dwfl)
		die("dwfl_begin", dwfl_errmsg(-1));
	g->mod = dwfl_report_offline(g->dwfl, "sonde_chardev", g->ko, -1);
	if (!g->mod || dwfl_report_end(g->dwfl, NULL, NULL))
		die("dwfl_report_offline", dwfl_errmsg(-1));
	/* libdwfl writes its layout into the shdrs of its (relocated) Elf. */
	e = dwfl_module_getelf(g->mod, &bias);
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		die("dwfl_module_getelf", dwfl_errmsg(-1));
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".text"))
			g->dwfl_text = sh.sh_addr + bias;
	}
	/* Cross-check the layout with a known symbol. */
	if (!k)
		die(g->ko, "no sonde_chardev_mix symbol");
	const char *n = dwfl_module_addrname(g->mod, g->dwfl_text + k->value + 1);

	if (!n || strcmp(n, "sonde_chardev_mix"))
		die("libdwfl's .text address does not match the symbol table", n);
}

/* Fills what libdwfl says about the .text offset @off into @p. */
static void describe(struct gen *g, uint64_t off, struct pick *p)
{
	Dwarf_Addr a = g->dwfl_text + off, cubias;
	GElf_Off symoff = 0;
	GElf_Sym sym;
	const char *s = dwfl_module_addrinfo(g->mod, a, &symoff, &sym, NULL, NULL, NULL);
	Dwfl_Line *l = dwfl_module_getsrc(g->mod, a);
	Dwarf_Die *cu = dwfl_module_addrdie(g->mod, a, &cubias), *scopes = NULL;
	const char *file = l ? dwfl_lineinfo(l, NULL, &p->line, NULL, NULL, NULL) : NULL;
	int n = cu ? dwarf_getscopes(cu, a - cubias, &scopes) : 0;

	snprintf(p->symbol, sizeof(p->symbol), "%s", s ? s : "");
	p->symoff = symoff;
	snprintf(p->file, sizeof(p->file), "%s", file ? file : "");
	p->function[0] = '\0';
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			const char *fn = dwarf_diename(&scopes[i]);

			snprintf(p->function, sizeof(p->function), "%s", fn ? fn : "");
			break;
		}
	}
	free(scopes);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * @total samples over the line-table rows of function @fn (.text offsets),
 * leaving out its first instruction (the __fentry__ call).  Rows inside an
 * inlined function weigh @inline_weight, others 1.
 */
static void pick_function(struct gen *g, const char *fn, unsigned total, unsigned inline_weight)
{
	const struct ksym *k = find_ksym(g, fn);
	const struct sec *text = find_sec(g, ".text");
	uint64_t rows[MAX_ROWS], lo, hi;
	unsigned weight[MAX_ROWS], wsum = 0, given = 0;
	size_t nrows = 0, first = g->npicks, nl, i;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(g->mod, &bias);
	Dwarf_Off cuoff = 0, next;
	size_t hsize;

	if (!k || k->shndx != text->idx)
		die("no such function in .text", fn);
	lo = g->dwfl_text + k->value;
	hi = lo + k->size;
	while (dw && dwarf_nextcu(dw, cuoff, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cudie;
		Dwarf_Lines *lines;

		if (dwarf_offdie(dw, cuoff + hsize, &cudie) &&
		    dwarf_getsrclines(&cudie, &lines, &nl) == 0) {
			for (i = 0; i < nl && nrows < MAX_ROWS; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;
				bool end;

				if (dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &end) || end)
					continue;
				a += bias;
				if (a > lo && a < hi)
					rows[nrows++] = a - g->dwfl_text;
			}
		}
		cuoff = next;
	}
	qsort(rows, nrows, sizeof(*rows), cmp_u64);
	for (i = 0, nl = 0; i < nrows; i++)
		if (!nl || rows[nl - 1] != rows[i])
			rows[nl++] = rows[i];
	nrows = nl;
	if (!nrows)
		die("no line-table rows in", fn);
	for (i = 0; i < nrows; i++) {
		struct pick *p = &g->picks[g->npicks++];

		describe(g, rows[i], p);
		p->addr = text->addr + rows[i];
		weight[i] = strcmp(p->function, fn) ? inline_weight : 1;
		wsum += weight[i];
	}
	for (i = 0; i < nrows; i++) {
		g->picks[first + i].count = total * weight[i] / wsum;
		given += g->picks[first + i].count;
	}
	for (i = 0; given < total; i = (i + 1) % nrows, given++)
		g->picks[first + i].count++; /* the rounding remainder, from the lowest row on */
	for (i = first; i < g->npicks; i++)
		if (!g->picks[i].count) { /* a row that got nothing is no sample */
			memmove(&g->picks[i], &g->picks[i + 1],
				(g->npicks - i - 1) * sizeof(*g->picks));
			g->npicks--;
			i--;
		}
}

/* The kallsyms text: @src's lines, then the module's core functions. */
static char *make_kallsyms(struct gen *g, const char *src)
{
	FILE *f = fopen(src, "r"), *m;
	/* on the heap: gcc 12 sees a dangling pointer in a local open_memstream() target */
	struct {
		char *p;
		size_t n;
	} *box = calloc(1, sizeof(*box));
	char line[512], *out;
	uint64_t text_addr = 0;

	m = box ? open_memstream(&box->p, &box->n) : NULL;
	if (!m)
		die("open_memstream", strerror(errno));
	while (f && fgets(line, sizeof(line), f)) {
		uint64_t a;
		char t, name[256];

		fputs(line, m);
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &t, name) == 3 &&
		    !strcmp(name, "_text"))
			text_addr = a;
	}
	if (f)
		fclose(f);
	if (!text_addr) {
		/* No kallsyms, or kptr_restrict (all zero): drop it for a plain
		 * x86_64 layout with the functions pick_kernel() wants. */
		fflush(m);
		fseeko(m, 0, SEEK_SET);
		fprintf(m, "ffffffff81000000 T _text\nffffffff81000000 T _stext\n"
			   "ffffffff81400000 T ksys_write\nffffffff81401000 T vfs_write\n"
			   "ffffffff81800000 T do_syscall_64\nffffffff81e00000 T _etext\n");
	}
	for (size_t i = 0; i < g->nsyms; i++) {
		const struct ksym *k = &g->syms[i];
		uint64_t a = sec_addr(g, k->shndx);
		const struct sec *s;

		/* init functions are gone from kallsyms once the module is live */
		for (s = g->secs; s < g->secs + g->nsecs && s->idx != k->shndx; s++)
			;
		if (!a || s == g->secs + g->nsecs || is_init(s))
			continue;
		fprintf(m, "%016" PRIx64 " %c %s\t[sonde_chardev]\n", a + k->value,
			k->global ? 'T' : 't', k->name);
	}
	fclose(m);
	out = box->p;
	free(box);
	return out;
}

/* Kernel samples at functions kallsyms names (+4: inside, past the fentry call). */
static void pick_kernel(struct gen *g, const char *kallsyms)
{
	static const struct {
		const char *name;
		unsigned count;
	} want[] = {{"vfs_write", 5}, {"ksys_write", 3}, {"do_syscall_64", 2}};

	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		char pat[80];
		const char *hit;

		snprintf(pat, sizeof(pat), " %s\n", want[w].name);

		for (hit = strstr(kallsyms, pat); hit; hit = strstr(hit + 1, pat)) {
			const char *ls = hit;
			uint64_t a;

			while (ls > kallsyms && ls[-1] != '\n')
				ls--;
			if (hit - ls != 18 || (ls[17] != 'T' && ls[17] != 't'))
				continue;
			a = strtoull(ls, NULL, 16);
			if (!a)
				continue;
			struct pick *p = &g->picks[g->npicks++];

			memset(p, 0, sizeof(*p));
			p->addr = a + 4;
			p->count = want[w].count;
			p->kernel = 1;
			snprintf(p->symbol, sizeof(p->symbol), "%s", want[w].name);
			p->symoff = 4;
			break;
		}
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_json(const struct gen *g, const char *path, const char *sections)
{
	FILE *f = fopen(path, "w");
	unsigned total = 0;

	if (!f)
		die(path, strerror(errno));
	for (size_t i = 0; i < g->npicks; i++)
		total += g->picks[i].count;
	fprintf(f, "{\n  \"ko\": ");
	json_str(f, g->ko);
	fprintf(f, ",\n  \"module\": \"sonde_chardev\",\n  \"osrelease\": ");
	json_str(f, g->release);
	fprintf(f,
		",\n  \"base\": \"0x%" PRIx64 "\",\n  \"size\": %" PRIu64
		",\n  \"total_samples\": %u,\n  \"period\": %llu,\n  \"modules_feature\": ",
		g->base, g->core_size, total, PERIOD);
	json_str(f, sections);
	fprintf(f, ",\n  \"sections\": {");
	for (size_t i = 0; i < g->nsecs; i++)
		fprintf(f, "%s\n    \"%s\": \"0x%" PRIx64 "\"", i ? "," : "", g->secs[i].name,
			g->secs[i].addr);
	fprintf(f, "\n  },\n  \"samples\": [");
	for (size_t i = 0; i < g->npicks; i++) {
		const struct pick *p = &g->picks[i];

		fprintf(f,
			"%s\n    {\"addr\": \"0x%" PRIx64 "\", \"count\": %u, \"dso\": \"%s\", "
			"\"symbol\": \"%s\", \"symoff\": \"0x%" PRIx64 "\"",
			i ? "," : "", p->addr, p->count,
			p->kernel ? "[kernel.kallsyms]" : "[sonde_chardev]", p->symbol, p->symoff);
		if (!p->kernel) {
			fprintf(f, ", \"section\": \".text\", \"offset\": \"0x%" PRIx64 "\"",
				p->addr - find_sec(g, ".text")->addr);
			fprintf(f, ", \"function\": \"%s\", \"file\": ", p->function);
			json_str(f, p->file);
			fprintf(f, ", \"line\": %d", p->line);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f))
		die(path, strerror(errno));
}

static int emit(void *ctx, const void *rec, size_t len)
{
	return sonde_pd_writer_write(ctx, rec, len);
}

/* The fake /proc and /sys a loaded sonde_chardev would show. */
static char *make_tree(const struct gen *g, const char *kallsyms)
{
	char *root = fake_tree_new();
	int r = 0;

	if (!root)
		die("fake_tree_new", strerror(errno));
	r |= fake_tree_printf(root, "proc/modules",
			      "sonde_chardev %" PRIu64 " 0 - Live 0x%016" PRIx64 " (OE)\n",
			      g->core_size, g->base);
	r |= fake_tree_write(root, "proc/kallsyms", kallsyms);
	r |= fake_tree_printf(root, "proc/sys/kernel/osrelease", "%s\n", g->release);
	for (size_t i = 0; i < g->nsecs; i++) {
		char rel[200];

		snprintf(rel, sizeof(rel), "sys/module/sonde_chardev/sections/%s", g->secs[i].name);
		r |= fake_tree_printf(root, rel, "0x%016" PRIx64 "\n", g->secs[i].addr);
	}
	if (r)
		die("fake tree", root);
	return root;
}

int main(int argc, char **argv)
{
	struct gen g = {0};
	const char *out, *kallsyms_src = "/proc/kallsyms";
	char *root, *ksyms, *sections, path[4096], procfs[4096], sysfs[4096], moddir[4096];
	uint64_t id_hdr, *order;
	unsigned total = 0;
	struct perf_event_attr a = {0};
	struct sonde_pd_writer *w;
	struct sonde_errmsg em;
	size_t n;
	FILE *f;

	if (argc != 4 && !(argc == 6 && !strcmp(argv[4], "--kallsyms"))) {
		fprintf(stderr, "usage: kmod_capture_gen KO BASE OUT [--kallsyms FILE]\n");
		return 2;
	}
	g.ko = realpath(argv[1], NULL);
	if (!g.ko)
		die(argv[1], strerror(errno));
	g.base = strtoull(argv[2], NULL, 0);
	out = argv[3];
	if (argc == 6)
		kallsyms_src = argv[5];
	if (g.base % PAGE || g.base < 0xffff800000000000ull)
		die("BASE must be a page-aligned kernel address", argv[2]);

	read_ko(&g);
	open_dwfl(&g);
	pick_function(&g, "sonde_chardev_mix", 600, 3);
	pick_function(&g, "sonde_chardev_write", 300, 1);
	pick_function(&g, "sonde_chardev_ioctl", 100, 1);
	ksyms = make_kallsyms(&g, kallsyms_src);
	pick_kernel(&g, ksyms);

	root = make_tree(&g, ksyms);
	snprintf(procfs, sizeof(procfs), "%s/proc", root);
	snprintf(sysfs, sizeof(sysfs), "%s/sys", root);
	snprintf(moddir, sizeof(moddir), "%s/lib/modules", root); /* none: "[sonde_chardev]" */

	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = PERIOD;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_PERIOD;
	a.sample_id_all = 1;
	a.mmap = a.comm = a.task = 1;
	a.disabled = 1;
	id_hdr = sonde_pd_sample_id_size(&a);

	if (sonde_pd_writer_open(&w, out, &em))
		die(out, em.text);
	sonde_pd_writer_add_attr(w, &a, "cpu-clock", NULL, 0);
	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_HOSTNAME, "sonde-kmod-target");
	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_OSRELEASE, g.release);
	sonde_pd_writer_set_string(w, SONDE_PD_FEAT_ARCH, "x86_64");
	sonde_pd_writer_set_nrcpus(w, 2, 2);
	{
		const char *cargv[] = {"sonde", "record", "-a", "-o", "perf.data"};

		sonde_pd_writer_set_cmdline(w, 5, cargv);
	}

	/* The recorder's synthesizers over the fake tree: same records, same text. */
	struct sonde_synth s = {.procfs = procfs,
				.sysfs = sysfs,
				.modules_dir = moddir,
				.id_hdr_size = (size_t)id_hdr,
				.emit = emit,
				.ctx = w};
	int r = sonde_synth_kernel_mmap(&s);

	if (r == 0)
		r = sonde_synth_modules(&s);
	if (r == 0)
		r = sonde_synth_module_sections(&s, &sections, NULL);
	if (r)
		die("synthesizers", strerror(-r));
	sonde_pd_writer_set_sonde_feature(w, SONDE_PD_SFEAT_MODULES, sections, strlen(sections));
	{
		char *blob;
		size_t blen;

		if (sonde_kallsyms_snapshot(procfs, &blob, &blen) == 0) {
			sonde_pd_writer_set_sonde_feature(w, SONDE_PD_SFEAT_KALLSYMS, blob, blen);
			free(blob);
		}
	}

	/* COMM of the process the samples interrupt (a writer into the device). */
	{
		uint8_t rec[64] = {0};
		struct perf_event_header *h = (void *)rec;
		uint32_t ids[2] = {PID, PID};
		uint64_t t = T0;

		h->type = PERF_RECORD_COMM;
		memcpy(rec + 8, ids, 8);
		memcpy(rec + 16, COMM, sizeof(COMM)); /* 14 bytes with NUL, padded to 16 */
		memcpy(rec + 32, ids, 8);	      /* trailer: pid, tid, time, cpu */
		memcpy(rec + 40, &t, 8);
		h->size = 56;
		sonde_pd_writer_write(w, rec, h->size);
	}

	/* The samples, every address its count of times, in a fixed shuffled order. */
	for (size_t i = 0; i < g.npicks; i++)
		total += g.picks[i].count;
	order = calloc(total ? total : 1, sizeof(*order));
	n = 0;
	for (size_t i = 0; i < g.npicks; i++)
		for (unsigned c = 0; c < g.picks[i].count; c++)
			order[n++] = i;
	uint64_t rng = 0x5eed;
	for (size_t i = n; i > 1; i--) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		size_t j = (size_t)((rng >> 33) % i);
		uint64_t t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		struct {
			struct perf_event_header h;
			uint64_t ip;
			uint32_t pid, tid;
			uint64_t time;
			uint32_t cpu, res;
			uint64_t period;
		} smp = {{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, sizeof(smp)},
			 g.picks[order[i]].addr,
			 PID,
			 PID,
			 T0 + 1000 + PERIOD * i,
			 (uint32_t)(i % 2),
			 0,
			 PERIOD};

		sonde_pd_writer_write(w, &smp, sizeof(smp));
	}
	free(order);
	sonde_pd_writer_set_sample_time(w, T0 + 1000, T0 + 1000 + PERIOD * (n - 1));
	if (sonde_pd_writer_close(w, &em))
		die(out, em.text);

	snprintf(path, sizeof(path), "%s.json", out);
	write_json(&g, path, sections);
	snprintf(path, sizeof(path), "%s.kallsyms", out);
	f = fopen(path, "w");
	if (!f || fputs(ksyms, f) < 0 || fclose(f))
		die(path, strerror(errno));

	free(sections);
	free(ksyms);
	free(g.syms);
	free((char *)g.ko);
	dwfl_end(g.dwfl);
	fake_tree_remove(root);
	return 0;
}
