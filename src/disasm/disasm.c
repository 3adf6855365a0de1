// SPDX-License-Identifier: MIT
/*
 * Disassembly through capstone: a handle opened once per annotate run and
 * one reusable cs_insn, decoded with cs_disasm_iter() (no allocation per
 * instruction).  Built without capstone, every call says "not supported"
 * and annotate prints sample counts per address without instructions.
 */
#include <sonde/disasm.h>
#include <sonde/error.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#ifdef SONDE_HAVE_CAPSTONE
#include <capstone/capstone.h>

struct sonde_disasm {
	csh h;
	cs_insn *insn; /* capstone's, reused */
};

/* capstone's arch and mode for a uname -m name; false when unknown. */
static bool arch_mode(const char *arch, bool thumb, cs_arch *a, cs_mode *m)
{
	if (!strcmp(arch, "x86_64") || !strcmp(arch, "amd64")) {
		*a = CS_ARCH_X86, *m = CS_MODE_64;
	} else if (arch[0] == 'i' && strlen(arch) == 4 && !strcmp(arch + 2, "86")) {
		*a = CS_ARCH_X86, *m = CS_MODE_32;
	} else if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64")) {
		*a = CS_ARCH_ARM64, *m = CS_MODE_ARM;
	} else if (!strncmp(arch, "arm", 3)) {
		*a = CS_ARCH_ARM, *m = thumb ? CS_MODE_THUMB : CS_MODE_ARM;
	} else {
		return false;
	}
	return true;
}

int sonde_disasm_new(struct sonde_disasm **out, const char *arch, bool thumb)
{
	struct sonde_disasm *d;
	struct utsname u;
	cs_arch a;
	cs_mode m;

	if (!arch || !*arch) {
		if (uname(&u) < 0)
			return -errno;
		arch = u.machine;
	}
	if (!arch_mode(arch, thumb, &a, &m))
		return SONDE_E_NOT_SUPPORTED;
	if (!(d = calloc(1, sizeof(*d))))
		return -ENOMEM;
	if (cs_open(a, m, &d->h) != CS_ERR_OK) {
		free(d);
		return SONDE_E_NOT_SUPPORTED;
	}
	if (a == CS_ARCH_X86)
		cs_option(d->h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	if (!(d->insn = cs_malloc(d->h))) {
		cs_close(&d->h);
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void sonde_disasm_free(struct sonde_disasm *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->h);
	free(d);
}

size_t sonde_disasm_one(struct sonde_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
			char *text, size_t textlen)
{
	const uint8_t *p = code;
	uint64_t at = addr;

	if (!cs_disasm_iter(d->h, &p, &len, &at, d->insn))
		return 0;
	if (textlen)
		snprintf(text, textlen, "%s%s%s", d->insn->mnemonic, d->insn->op_str[0] ? " " : "",
			 d->insn->op_str);
	return d->insn->size;
}

#else /* !SONDE_HAVE_CAPSTONE */

int sonde_disasm_new(struct sonde_disasm **out, const char *arch, bool thumb)
{
	(void)out, (void)arch, (void)thumb;
	return SONDE_E_NOT_SUPPORTED;
}

void sonde_disasm_free(struct sonde_disasm *d)
{
	(void)d;
}

size_t sonde_disasm_one(struct sonde_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
			char *text, size_t textlen)
{
	(void)d, (void)code, (void)len, (void)addr, (void)text, (void)textlen;
	return 0;
}
#endif
