// SPDX-License-Identifier: MIT
/*
 * Offline DWARF unwinding of `--call-graph dwarf` samples with libdwfl.
 *
 * A sample carries the user registers and a copy of the user stack from
 * the sampled SP upwards.  libdwfl's unwinder (dwfl_attach_state +
 * dwfl_getthread_frames) replays the CFI of each frame's module over that
 * state: registers come from the sample (perf's sample_regs_user order,
 * mapped to DWARF numbers), memory reads come from the stack copy, and
 * reads outside it fall back to the file mapped at that address (constant
 * data), never to anything invented.
 *
 * State kept across samples:
 *  - one Dwfl per process (a pid), attached once with callbacks that read
 *    the "current sample" held by the unwinder.  Modules are reported to
 *    it lazily, when the initial pc or a frame's pc first lands in a
 *    mapping libdwfl does not know yet (before libdwfl unwinds past that
 *    frame, which needs the module's CFI).  Mappings of a running process
 *    do not move, so the Dwfl (and the CFI it parsed) lives until
 *    sonde_unwinder_forget() (exit/exec) or sonde_unwinder_free().
 *  - one cache of opened ELF files shared by all processes: libc is opened
 *    once however many processes map it.  Modules get the cached Elf
 *    through the find_elf callback with its reference count raised
 *    (elf_begin on the same Elf), so every Dwfl can elf_end its own
 *    reference.
 *
 * A module is reported at its load bias: the mapping tells which file
 * offset sits at which address, the PT_LOAD segment holding that offset
 * tells which p_vaddr that offset has, and the difference is the bias
 * (0 for ET_EXEC).  The module spans the file's PT_LOAD range.
 *
 * Hot path: a sample costs the find_map calls of modules not reported
 * yet (none once a process is warm) and libdwfl's own frame states; this
 * file allocates nothing per sample.
 */
#include <sonde/unwind.h>
#include <sonde/hash.h>
#include <sonde/u32map.h>

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum uw_arch { UW_ARCH_NONE, UW_ARCH_X86_64, UW_ARCH_AARCH64 };

/* perf_regs.h register numbers (arch/x86 and arch/arm64 uapi). */
enum {
	X86_AX = 0,
	X86_BX,
	X86_CX,
	X86_DX,
	X86_SI,
	X86_DI,
	X86_BP,
	X86_SP,
	X86_IP,
	X86_R8 = 16, /* R8..R15 = 16..23 */
	ARM64_SP = 31,
	ARM64_PC = 32,
};

/* DWARF register n of x86_64 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip). */
static const uint8_t x86_64_dwarf_to_perf[17] = {
    X86_AX,	X86_DX,	    X86_CX,	X86_BX,	    X86_SI,	X86_DI,
    X86_BP,	X86_SP,	    X86_R8 + 0, X86_R8 + 1, X86_R8 + 2, X86_R8 + 3,
    X86_R8 + 4, X86_R8 + 5, X86_R8 + 6, X86_R8 + 7, X86_IP,
};

struct uw_seg {
	uint64_t vaddr, offset, filesz;
};

/* An ELF file opened once for every process that maps it. */
struct uw_file {
	char *path; /* owned */
	int fd;	    /* -1: the file could not be used (negative entry) */
	Elf *elf;   /* the cache's reference; modules hold their own */
	uint16_t machine;
	uint64_t lo, hi;     /* PT_LOAD span in p_vaddr terms: first page, end */
	struct uw_seg *segs; /* owned: the PT_LOAD segments */
	size_t nsegs;
	const char *raw; /* the whole file image (elf_rawfile), for memory reads */
	size_t rawsize;
};

struct uw_proc {
	uint32_t pid;
	Dwfl *dwfl;    /* NULL until the first sample, and after forget */
	bool attached; /* dwfl_attach_state done */
	enum uw_arch arch;
};

struct sonde_unwinder {
	sonde_unwind_find_map_fn find;
	void *ctx;

	/* processes: pid -> index into procs (slots are reused after forget) */
	struct sonde_u32map pids;
	struct uw_proc **procs; /* owned, each owned */
	size_t nprocs, procs_cap;

	/* ELF cache: open addressing on the path hash, grows at half full */
	struct uw_file **files; /* owned, each owned */
	size_t files_cap, nfiles;

	/* the sample being unwound, read by the libdwfl callbacks */
	struct uw_proc *cur;
	const struct sonde_unwind_sample *s;
	uint64_t sp;
	bool thread_given; /* next_thread handed out the sample's thread */
	uint64_t *ips;
	size_t max, n;
};

/* ---- ELF cache --------------------------------------------------------- */

static void file_free(struct uw_file *f)
{
	if (!f)
		return;
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->segs);
	free(f->path);
	free(f);
}

/* Reads the program headers of @f (fd open).  Return: 0, or -1 when unusable. */
static int file_load(struct uw_file *f)
{
	GElf_Ehdr eh;
	size_t phnum;
	bool first = true;

	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
	    elf_getphdrnum(f->elf, &phnum) || !phnum)
		return -1;
	f->machine = eh.e_machine;
	f->segs = calloc(phnum, sizeof(*f->segs));
	if (!f->segs)
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first) {
			uint64_t align = ph.p_align > 1 ? ph.p_align : 1;

			/* what libdwfl takes as the module's first address */
			f->lo = ph.p_vaddr & -align;
			first = false;
		}
		if (ph.p_vaddr + ph.p_memsz > f->hi)
			f->hi = ph.p_vaddr + ph.p_memsz;
		f->segs[f->nsegs++] = (struct uw_seg){ph.p_vaddr, ph.p_offset, ph.p_filesz};
	}
	if (first)
		return -1;
	f->raw = elf_rawfile(f->elf, &f->rawsize);
	return 0;
}

static int files_grow(struct sonde_unwinder *u)
{
	size_t cap = u->files_cap ? u->files_cap * 2 : 64;
	struct uw_file **n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < u->files_cap; i++) {
		struct uw_file *f = u->files[i];
		size_t j;

		if (!f)
			continue;
		for (j = sonde_fnv1a_str(f->path) & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
			;
		n[j] = f;
	}
	free(u->files);
	u->files = n;
	u->files_cap = cap;
	return 0;
}

/* Borrowed: the cache entry of @path, opened on first use; NULL when unusable. */
static struct uw_file *file_get(struct sonde_unwinder *u, const char *path)
{
	struct uw_file *f;
	size_t j;

	if ((u->nfiles + 1) * 2 > u->files_cap && files_grow(u))
		return NULL;
	for (j = sonde_fnv1a_str(path) & (u->files_cap - 1); (f = u->files[j]);
	     j = (j + 1) & (u->files_cap - 1))
		if (!strcmp(f->path, path))
			return f->fd >= 0 ? f : NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	u->files[j] = f;
	u->nfiles++;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd >= 0 && file_load(f)) {
		/* keep the entry, so a bad file is tried once */
		if (f->elf)
			elf_end(f->elf);
		f->elf = NULL;
		close(f->fd);
		f->fd = -1;
	}
	return f->fd >= 0 ? f : NULL;
}

/* The load bias of @f mapped at @m: runtime address minus p_vaddr. */
static uint64_t file_bias(const struct uw_file *f, const struct sonde_unwind_map *m)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct uw_seg *g = &f->segs[i];
		uint64_t first_page = g->offset & ~(uint64_t)0xfff;

		if (m->pgoff >= first_page && m->pgoff < g->offset + (g->filesz ? g->filesz : 1))
			return m->start - m->pgoff - (g->vaddr - g->offset);
	}
	return m->start - m->pgoff;
}

/* ---- libdwfl callbacks ------------------------------------------------- */

/* Hands the module its file: the cached Elf with one more reference. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct uw_file *f = *userdata;

	if (!f)
		return -1;
	*elfp = elf_begin(f->fd, ELF_C_READ_MMAP, f->elf);
	if (!*elfp)
		return -1;
	/* the name lets find_debuginfo look beside the file (libdwfl frees it) */
	*file_name = strdup(f->path);
	return -1; /* no fd: ours stays with the cache */
}

static char *debuginfo_path;

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/*
 * The module holding @addr in the current process, reported now if
 * libdwfl does not know it yet.  Return: the module, or NULL (no file
 * mapping there, or an unusable file).
 */
static Dwfl_Module *report_addr(struct sonde_unwinder *u, uint64_t addr)
{
	struct uw_proc *p = u->cur;
	struct sonde_unwind_map m;
	struct uw_file *f;
	Dwfl_Module *mod;
	void **ud;
	uint64_t bias;

	mod = dwfl_addrmodule(p->dwfl, addr);
	if (mod)
		return mod;
	if (u->find(u->ctx, p->pid, addr, &m) || !m.path || !(f = file_get(u, m.path)))
		return NULL;
	bias = file_bias(f, &m);
	mod = dwfl_report_module(p->dwfl, f->path, bias + f->lo, bias + f->hi);
	if (!mod)
		return NULL;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = f;
	dwfl_report_end(p->dwfl, NULL, NULL);
	return mod;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sonde_unwinder *u = arg;

	if (u->thread_given)
		return 0;
	u->thread_given = true;
	*thread_argp = u;
	return (pid_t)u->s->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Reads one word for the unwinder: from the stack copy, else the mapped file. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct sonde_unwinder *u = arg;
	const struct sonde_unwind_sample *s = u->s;
	struct sonde_unwind_map m;
	struct uw_file *f;
	uint64_t off;

	if (addr >= u->sp && addr - u->sp <= s->stack_size &&
	    s->stack_size - (addr - u->sp) >= sizeof(*result)) {
		memcpy(result, s->stack + (addr - u->sp), sizeof(*result));
		return true;
	}
	/* Outside the copy: only file contents are known (read-only data). */
	if (u->find(u->ctx, u->cur->pid, addr, &m) || !m.path || !(f = file_get(u, m.path)) ||
	    !f->raw)
		return false;
	off = addr - m.start + m.pgoff;
	if (addr < m.start || off >= f->rawsize || f->rawsize - off < sizeof(*result))
		return false;
	memcpy(result, f->raw + off, sizeof(*result));
	return true;
}

/* The value of perf register @r of the sample.  Return: false when not saved. */
static bool sample_reg(const struct sonde_unwind_sample *s, unsigned r, uint64_t *v)
{
	uint64_t below;
	unsigned idx;

	if (r >= 64 || !(s->regs_mask >> r & 1))
		return false;
	below = s->regs_mask & ((1ull << r) - 1);
	idx = (unsigned)__builtin_popcountll(below);
	if (idx >= s->nr_regs)
		return false;
	*v = s->regs[idx];
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct sonde_unwinder *u = arg;
	const struct sonde_unwind_sample *s = u->s;
	Dwarf_Word v;

	/* Registers not saved stay undefined: CFI needing them fails cleanly. */
	switch (u->cur->arch) {
	case UW_ARCH_X86_64:
		for (unsigned d = 0; d < 17; d++)
			if (sample_reg(s, x86_64_dwarf_to_perf[d], &v) &&
			    !dwfl_thread_state_registers(thread, (int)d, 1, &v))
				return false;
		if (!sample_reg(s, X86_IP, &v))
			return false;
		break;
	case UW_ARCH_AARCH64:
		/* x0..x30 and sp have the same numbers in both schemes */
		for (unsigned d = 0; d <= ARM64_SP; d++)
			if (sample_reg(s, d, &v) &&
			    !dwfl_thread_state_registers(thread, (int)d, 1, &v))
				return false;
		if (!sample_reg(s, ARM64_PC, &v))
			return false;
		break;
	default:
		return false;
	}
	dwfl_thread_state_register_pc(thread, v);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct sonde_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, NULL) || !pc)
		return DWARF_CB_ABORT;
	/*
	 * Report the module now: asking whether this frame is an activation
	 * unwinds the next one, which needs this pc's CFI.  A return address
	 * may sit just past its module's end (a noreturn call), hence pc - 1.
	 */
	if (!report_addr(u, pc))
		report_addr(u, pc - 1);
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* callers: the call instruction's last byte, as perf lists them */
	u->ips[u->n++] = activation ? pc : pc - 1;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* ---- processes ---------------------------------------------------------- */

static enum uw_arch arch_of(const char *arch)
{
	if (!arch) {
#if defined(__x86_64__)
		return UW_ARCH_X86_64;
#elif defined(__aarch64__)
		return UW_ARCH_AARCH64;
#else
		return UW_ARCH_NONE;
#endif
	}
	if (!strcmp(arch, "x86_64"))
		return UW_ARCH_X86_64;
	if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
		return UW_ARCH_AARCH64;
	return UW_ARCH_NONE;
}

/* Borrowed: the process slot of @pid with a Dwfl, made on first use; NULL: ENOMEM. */
static struct uw_proc *proc_get(struct sonde_unwinder *u, uint32_t pid)
{
	struct uw_proc *p = NULL;
	uint32_t idx;

	if (sonde_u32map_get(&u->pids, pid, &idx)) {
		p = u->procs[idx];
	} else {
		if (u->nprocs == u->procs_cap) {
			size_t cap = u->procs_cap ? u->procs_cap * 2 : 16;
			struct uw_proc **n = realloc(u->procs, cap * sizeof(*n));

			if (!n)
				return NULL;
			u->procs = n;
			u->procs_cap = cap;
		}
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		if (sonde_u32map_put(&u->pids, pid, (uint32_t)u->nprocs)) {
			free(p);
			return NULL;
		}
		p->pid = pid;
		u->procs[u->nprocs++] = p;
	}
	if (!p->dwfl) {
		p->dwfl = dwfl_begin(&dwfl_callbacks);
		p->attached = false;
		p->arch = UW_ARCH_NONE;
	}
	return p->dwfl ? p : NULL;
}

static void proc_reset(struct uw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = false;
}

/* ---- public interface --------------------------------------------------- */

int sonde_unwinder_new(struct sonde_unwinder **out, sonde_unwind_find_map_fn find, void *ctx)
{
	struct sonde_unwinder *u;

	if (!find)
		return -EINVAL;
	elf_version(EV_CURRENT);
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->find = find;
	u->ctx = ctx;
	sonde_u32map_init(&u->pids);
	*out = u;
	return 0;
}

void sonde_unwinder_free(struct sonde_unwinder *u)
{
	if (!u)
		return;
	/* Dwfls first: their modules hold references on the cached Elfs. */
	for (size_t i = 0; i < u->nprocs; i++) {
		proc_reset(u->procs[i]);
		free(u->procs[i]);
	}
	free(u->procs);
	sonde_u32map_fini(&u->pids);
	for (size_t i = 0; i < u->files_cap; i++)
		file_free(u->files[i]);
	free(u->files);
	free(u);
}

void sonde_unwinder_forget(struct sonde_unwinder *u, uint32_t pid)
{
	uint32_t idx;

	if (u && sonde_u32map_get(&u->pids, pid, &idx))
		proc_reset(u->procs[idx]);
}

static uint16_t machine_of(enum uw_arch a)
{
	return a == UW_ARCH_X86_64 ? EM_X86_64 : EM_AARCH64;
}

int sonde_unwind(struct sonde_unwinder *u, const struct sonde_unwind_sample *s, uint64_t *ips,
		 size_t max)
{
	enum uw_arch arch = arch_of(s->arch);
	uint64_t pc, sp;
	struct uw_proc *p;
	Dwfl_Module *mod;

	if (arch == UW_ARCH_NONE)
		return -ENOTSUP;
	if (s->abi != PERF_SAMPLE_REGS_ABI_64)
		/* no user regs (a kernel thread), or a 32-bit process */
		return s->abi == PERF_SAMPLE_REGS_ABI_32 ? -ENOTSUP : -ENODATA;
	if (!s->regs || !sample_reg(s, arch == UW_ARCH_X86_64 ? X86_IP : ARM64_PC, &pc))
		return -ENODATA;
	if (!max)
		return 0;
	ips[0] = pc;
	if (max == 1 || !s->stack || !s->stack_size ||
	    !sample_reg(s, arch == UW_ARCH_X86_64 ? X86_SP : ARM64_SP, &sp))
		return 1;

	p = proc_get(u, s->pid);
	if (!p)
		return -ENOMEM;
	u->cur = p;
	u->s = s;
	u->sp = sp;
	mod = report_addr(u, pc);
	if (!p->attached) {
		struct uw_file *f = NULL;
		void **ud;

		/* The first file met selects libdwfl's backend (Ebl). */
		if (!mod)
			return 1;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		f = *ud;
		if (!f || f->machine != machine_of(arch))
			return -ENOTSUP;
		if (!dwfl_attach_state(p->dwfl, f->elf, (pid_t)s->pid, &thread_callbacks, u))
			return -ENOTSUP;
		p->attached = true;
		p->arch = arch;
	} else if (p->arch != arch) {
		return -ENOTSUP;
	}

	u->ips = ips;
	u->max = max;
	u->n = 0;
	u->thread_given = false;
	/* An error here is the normal end: the stack copy or the CFI ran out. */
	dwfl_getthread_frames(p->dwfl, (pid_t)s->tid, frame_cb, u);
	u->cur = NULL;
	u->s = NULL;
	if (!u->n)
		return 1; /* ips[0] still holds pc */
	return (int)u->n;
}
