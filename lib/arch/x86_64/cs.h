/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capstone, opened with dlopen() at first use (cs.c): a process
 * that never decodes an instruction never maps it.
 */
#ifndef FHOOK_ARCH_X86_64_CS_H
#define FHOOK_ARCH_X86_64_CS_H

#include <stdbool.h>
#include <capstone/capstone.h>

#include "internal.h"

/* The capstone functions we use. */
struct fhook_cs {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	cs_insn *(*malloc)(csh handle);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
	bool (*insn_group)(csh handle, const cs_insn *insn, unsigned int group_id);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
};

extern struct fhook_cs fhook_cs __arch_hidden;

/* Nothing said when libcapstone cannot be loaded (the assembler front end). */
extern bool fhook_cs_quiet __arch_hidden;

/* Load libcapstone once; false (said on stderr) when it cannot be. */
bool fhook_cs_load(void) __arch_hidden;

/* Is it loaded already (nothing loaded, nothing said)? */
bool fhook_cs_loaded(void) __arch_hidden;

/*
 * A handle for x86-64 with operand details, and one instruction to decode
 * into.  0, -ENOSYS (no capstone) or -ENOMEM.  fhook_cs_close() after.
 */
int fhook_cs_open(csh *h, cs_insn **insn) __arch_hidden;
void fhook_cs_close(csh *h, cs_insn *insn) __arch_hidden;

#endif
