// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The few x86-64 instructions a site can hold: the one encoder and
 * classifier of site bytes, for patching, start-up and `fhook prepare`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

/* The 5-byte nop the kernel uses for its ftrace sites: nopl 0(%rax,%rax,1) */
const unsigned char fhook_site_nop[FHOOK_SITE_LEN] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

bool fhook_site_in_reach(unsigned long ip, unsigned long target)
{
	long d = (long)(target - (ip + CALL_INSN_SIZE));

	return d >= INT32_MIN && d <= INT32_MAX;
}

void fhook_site_encode_call(unsigned char *buf, unsigned long ip, unsigned long target)
{
	int32_t rel = (int32_t)(long)(target - (ip + CALL_INSN_SIZE));

	buf[0] = CALL_INSN_OPCODE;
	memcpy(buf + 1, &rel, 4);
}

_Static_assert(FHOOK_SITE_MAX <= FHOOK_SITE_BYTES_MAX, "struct fhook_site_nop");

int fhook_site_classify(const unsigned char *cur, size_t avail, bool mcount,
			struct fhook_site_nop *out)
{
	memset(out, 0, sizeof(*out));
	if (avail < FHOOK_SITE_MAX)
		return -EINVAL;
	memcpy(out->bytes, fhook_site_nop, FHOOK_SITE_LEN);
	out->insn_len = CALL_INSN_SIZE;
	if (fhook_site_is_nop(cur)) {
		/* a GOT call that was made a nop: 5-byte nop + 1-byte nop */
		if (mcount && cur[5] == 0x90)
			out->insn_len = 6;
		return 0;
	}
	out->len = CALL_INSN_SIZE;
	/* gcc's -fpatchable-function-entry=5: five 1-byte nops */
	if (!memcmp(cur, "\x90\x90\x90\x90\x90", 5)) {
		out->split = true;
		return 0;
	}
	/* -pg -mfentry: call __fentry__ */
	if (cur[0] == CALL_INSN_OPCODE && mcount)
		return 0;
	/* -pg -mfentry in PIE: call *__fentry__@GOTPCREL(%rip), six bytes */
	if (cur[0] == 0xff && cur[1] == 0x15 && mcount) {
		out->len = 6;
		out->insn_len = 6;
		out->bytes[5] = 0x90;
		return 0;
	}
	return -EINVAL;
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
