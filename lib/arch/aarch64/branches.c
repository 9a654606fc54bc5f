// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Branch decoding (lib/arch/arch.h) on aarch64: fixed-size words, so a
 * walk over the function finds every bl and b; a PLT stub ("adrp x16;
 * ldr x17, [x16, #off]; add x16, x16, #off; br x17") is followed to the
 * GOT slot it jumps through.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static bool is_target(unsigned long a, const unsigned long *targets, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (targets[i] == a)
			return true;
	return false;
}

/* Where the PLT stub at @a jumps, or 0 if @a holds none. */
static unsigned long plt_target(unsigned long a)
{
	uint32_t w[4];
	unsigned long page, slot, v;

	if (fhook_text_read(a, w, sizeof(w)))
		return 0;
	/* adrp x16, page; ldr x17, [x16, #lo12]; add x16, x16, #lo12; br x17 */
	if ((w[0] & 0x9f00001fu) != 0x90000010u || (w[1] & 0xffc003ffu) != 0xf9400211u ||
	    w[3] != 0xd61f0220u)
		return 0;
	page = (a & ~0xfffUL) +
	       (unsigned long)(((long)(int32_t)((((w[0] >> 5) & 0x7ffff) << 2 | ((w[0] >> 29) & 3))
						 << 11) >> 11) << 12);
	slot = page + ((w[1] >> 10) & 0xfff) * 8;
	if (fhook_text_read(slot, &v, sizeof(v)))
		return 0;
	return v;
}

int fhook_insn_scan_branches(unsigned long start, unsigned long size,
			     const unsigned long *targets, int nr,
			     struct fhook_branch_scan *out)
{
	unsigned long a;

	memset(out, 0, sizeof(*out));
	for (a = start; a + 4 <= start + size; a += 4) {
		uint32_t w;
		unsigned long t;

		if (fhook_text_read(a, &w, 4))
			return -EFAULT;
		if ((w & 0x7c000000u) == 0x14000000u) {		/* b, bl */
			t = a + (unsigned long)((long)((int32_t)(w << 6) >> 6) * 4);
			if (!is_target(t, targets, nr)) {
				unsigned long p = plt_target(t);

				if (!p || !is_target(p, targets, nr))
					continue;
			}
			if (w & 0x80000000u) {
				if (!out->call_at)
					out->call_at = a;
			} else if (!out->jump_at) {
				out->jump_at = a;
			}
		} else if ((w & 0xfffffc1fu) == 0xd63f0000u) {	/* blr */
			out->indirect++;
		}
	}
	return 0;
}
