/* SPDX-License-Identifier: MIT */
/*
 * Disassembly of sampled code (capstone), for sonde annotate.  Host side
 * only.  One decoder per architecture, named as the capture's arch header
 * feature names it (uname -m: "x86_64", "aarch64", "armv7l"); x86 prints
 * AT&T syntax as objdump and perf annotate do.
 */
#ifndef SONDE_DISASM_H
#define SONDE_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sonde_disasm;

/**
 * sonde_disasm_new() - a decoder for @arch
 * @arch: uname -m of the recorded machine; NULL: this machine's
 * @thumb: 32-bit ARM only: Thumb-2 code (Debian armhf's default) rather than A32
 * Return: 0 with *out new (free with sonde_disasm_free()), -ENOMEM, or
 * SONDE_E_NOT_SUPPORTED for an architecture (or a build) without a decoder.
 */
int sonde_disasm_new(struct sonde_disasm **out, const char *arch, bool thumb);
void sonde_disasm_free(struct sonde_disasm *d);

/**
 * sonde_disasm_one() - decode one instruction
 * @code, @len: the bytes from the instruction on
 * @addr: its address (branch targets are printed from it)
 * @text: receives "mnemonic operands", NUL-terminated, truncated to @textlen
 * Return: the instruction's size in bytes, or 0 when the bytes do not decode.
 */
size_t sonde_disasm_one(struct sonde_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
			char *text, size_t textlen);

#endif
