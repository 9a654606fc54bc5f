// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * x86-64: a kprobe's placement read from a file (lib/arch/arch.h), with
 * the relocation engine the library places probes with (kprobe_insn.c),
 * so that what the command says is what a process would do.  In the fhook
 * command only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "kprobe.h"

static void reloc_req(const struct fhook_kprobe_file_req *req, struct kprobe_reloc_req *r)
{
	memset(r, 0, sizeof(*r));
	r->addr = req->addr;
	r->start = req->start;
	r->size = req->size;
	r->code = req->code;
	r->pad = req->pad;
	r->prefix_len = KPROBE_PREFIX;
	r->dest = req->addr;
	r->read = req->read;
	r->ctx = req->ctx;
}

int fhook_kprobe_file_how(const struct fhook_kprobe_file_req *req, char *why, size_t why_size)
{
	static struct kprobe_reloc out;
	struct kprobe_reloc_req r;
	char w2[96];
	int ret;

	reloc_req(req, &r);
	/* a jump needs the function's end: it must not run over into the next one */
	if (req->size_known) {
		r.min_len = 5;
		ret = fhook_kprobe_relocate(&r, &out, why, why_size);
		if (!ret)
			return FHOOK_KPROBE_JUMP;
		if (ret != -EILSEQ)
			return -ENOSYS;
	}
	r.min_len = 1;
	ret = fhook_kprobe_relocate(&r, &out, w2, sizeof(w2));
	if (ret == -ENOSYS)
		return ret;
	if (ret && !why[0])
		snprintf(why, why_size, "%s", w2);
	return ret ? 0 : FHOOK_KPROBE_TRAP;
}

int fhook_kprobe_file_boundary(const struct fhook_kprobe_file_req *req)
{
	static struct kprobe_reloc out;
	struct kprobe_reloc_req r;
	char why[96];
	int ret;

	reloc_req(req, &r);
	r.pad = 0;
	r.min_len = 1;
	ret = fhook_kprobe_relocate(&r, &out, why, sizeof(why));
	/* only the first instruction's start matters: one it cannot move is the library's to say */
	return ret == -EILSEQ && strstr(why, "is not the start of an instruction") ? -EILSEQ : 0;
}
