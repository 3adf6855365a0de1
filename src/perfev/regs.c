// SPDX-License-Identifier: MIT
/*
 * perf's register names per architecture, as its --user-regs and
 * --intr-regs take them.  The index in each table is the kernel's
 * PERF_REG_* number (arch/<arch>/include/uapi/asm/perf_regs.h); NULL
 * marks numbers the kernel refuses to sample (x86-64's segment registers
 * ds, es, fs, gs: perf_reg_validate() rejects them in 64-bit mode).
 */
#include <sonde/regs.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__)
static const char *const names[] = {
    "ax", "bx", "cx", "dx", "si", "di", "bp",  "sp",  "ip",  "flags", "cs",  "ss",
    NULL, NULL, NULL, NULL, "r8", "r9", "r10", "r11", "r12", "r13",   "r14", "r15",
};
static const char list[] = "ax bx cx dx si di bp sp ip flags cs ss r8 r9 r10 r11 r12 r13 r14 r15";
#elif defined(__aarch64__)
static const char *const names[] = {
    "x0",  "x1",  "x2",	 "x3",	"x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
    "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
    "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "lr",  "sp",  "pc",
};
static const char list[] = "x0..x29 lr sp pc";
#elif defined(__arm__)
static const char *const names[] = {
    "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "fp", "ip", "sp", "lr", "pc",
};
static const char list[] = "r0..r10 fp ip sp lr pc";
#else
static const char *const names[] = {NULL};
static const char list[] = "";
#endif

#define NREGS (sizeof(names) / sizeof(names[0]))

const char *sonde_regs_list(void)
{
	return list;
}

const char *sonde_regs_name(unsigned int bit)
{
	return bit < NREGS ? names[bit] : NULL;
}

static int find(const char *name, size_t len)
{
	for (size_t i = 0; i < NREGS; i++)
		if (names[i] && strlen(names[i]) == len && !strncasecmp(names[i], name, len))
			return (int)i;
	return -1;
}

int sonde_regs_parse(const char *s, uint64_t *mask, char *bad, size_t badlen)
{
	*mask = 0;
	if (!list[0])
		return -ENOTSUP;
	if (!s || !*s) {
		for (size_t i = 0; i < NREGS; i++)
			if (names[i])
				*mask |= 1ull << i;
		return 0;
	}
	while (*s) {
		size_t len = strcspn(s, ",");
		int bit = find(s, len);

		if (bit < 0) {
			if (bad)
				snprintf(bad, badlen, "%.*s", (int)len, s);
			return -EINVAL;
		}
		*mask |= 1ull << bit;
		s += len + (s[len] == ',');
	}
	return 0;
}
