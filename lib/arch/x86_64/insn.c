// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The few x86-64 instructions a site can hold.
 */
#include <stdio.h>
#include <string.h>

#include "arch.h"

/* The 5-byte nop the kernel uses for its ftrace sites: nopl 0(%rax,%rax,1) */
const unsigned char fhook_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

bool fhook_call_in_reach(unsigned long ip, unsigned long target)
{
	long d = (long)(target - (ip + CALL_INSN_SIZE));

	return d >= INT32_MIN && d <= INT32_MAX;
}

void fhook_insn_call(unsigned char *buf, unsigned long ip, unsigned long target)
{
	int32_t rel = (int32_t)(long)(target - (ip + CALL_INSN_SIZE));

	buf[0] = CALL_INSN_OPCODE;
	memcpy(buf + 1, &rel, 4);
}

unsigned long fhook_insn_call_target(const unsigned char *b, unsigned long ip)
{
	int32_t rel;

	if (b[0] != CALL_INSN_OPCODE)
		return 0;
	memcpy(&rel, b + 1, 4);
	return ip + CALL_INSN_SIZE + (long)rel;
}

void fhook_insn_hex(char *out, size_t size, const unsigned char *b, size_t len)
{
	size_t i, o = 0;

	if (!size)
		return;
	out[0] = 0;
	for (i = 0; i < len && o + 4 < size; i++)
		o += (size_t)snprintf(out + o, size - o, "%s%02x", i ? ":" : "", b[i]);
}
