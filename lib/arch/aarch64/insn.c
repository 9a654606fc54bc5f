// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The few aarch64 instructions a site can hold: the one encoder and
 * classifier of site words, for patching, start-up and `fhook prepare`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

const unsigned char fhook_site_nop[FHOOK_SITE_LEN] = { 0x1f, 0x20, 0x03, 0xd5 };

bool fhook_site_in_reach(unsigned long ip, unsigned long target)
{
	long d = (long)(target - ip);

	return !(d & 3) && d >= -(long)A64_BL_REACH && d < (long)A64_BL_REACH;
}

void fhook_site_encode_call(unsigned char *buf, unsigned long ip, unsigned long target)
{
	uint32_t w = A64_BL | ((uint32_t)((long)(target - ip) >> 2) & 0x03ffffffu);

	memcpy(buf, &w, 4);
}

_Static_assert(FHOOK_SITE_MAX <= FHOOK_SITE_BYTES_MAX, "struct fhook_site_nop");

/*
 * @cur is the site word alone: a nop (the compiler's, or ours), or a bl
 * a -pg build or an earlier fhook left.  The word before it ("mov x9,
 * x30") is written at start-up with the pads (fhook_text_init_pads()).
 */
int fhook_site_classify(const unsigned char *cur, size_t avail, bool mcount,
			struct fhook_site_nop *out)
{
	uint32_t w;

	memset(out, 0, sizeof(*out));
	if (avail < FHOOK_SITE_MAX)
		return -EINVAL;
	memcpy(out->bytes, fhook_site_nop, FHOOK_SITE_LEN);
	out->insn_len = FHOOK_SITE_LEN;
	w = a64_word(cur);
	if (w == A64_NOP)
		return 0;
	out->len = FHOOK_SITE_LEN;
	if ((w & A64_BL_MASK) == A64_BL && mcount)
		return 0;
	return -EINVAL;
}

void fhook_insn_hex(char *out, size_t size, const unsigned char *b, size_t len)
{
	size_t i, o = 0;

	if (!size)
		return;
	out[0] = 0;
	/* words, as objdump prints them */
	for (i = 0; i + 4 <= len && o + 10 < size; i += 4)
		o += (size_t)snprintf(out + o, size - o, "%s%08x", i ? ":" : "", a64_word(b + i));
}
