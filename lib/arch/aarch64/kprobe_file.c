// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aarch64: a kprobe's placement read from a file (lib/arch/arch.h).  Every
 * probe is a trap (a brk on the probed word); what the decoder the
 * library places probes with (kprobe_insn.c) refuses gets none.  In the
 * fhook command only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "kprobe.h"

int fhook_kprobe_file_how(const struct fhook_kprobe_file_req *req, char *why, size_t why_size)
{
	unsigned long off = req->addr - req->start;
	const char *refused;
	uint32_t w;

	if (req->addr & 3) {
		snprintf(why, why_size, "not an instruction: aarch64 instructions are 4-byte "
			 "aligned");
		return 0;
	}
	if (off + 4 > req->size + req->pad) {
		snprintf(why, why_size, "its instruction is not in the file");
		return 0;
	}
	memcpy(&w, req->code + off, 4);
	if (fhook_a64_kp_decode(w, &refused) < 0) {
		snprintf(why, why_size, "0x%08x: %s", w, refused);
		return 0;
	}
	return FHOOK_KPROBE_TRAP;
}

int fhook_kprobe_file_boundary(const struct fhook_kprobe_file_req *req)
{
	return req->addr & 3 ? -EILSEQ : 0;
}
