/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one classifier of site bytes, implemented by the arch layer
 * (lib/arch/<arch>/insn.c) and used by start-up, by patching and by
 * `fhook prepare`, which builds the same file into the command.  Not
 * installed, not part of the API.
 */
#ifndef FHOOK_INTERNAL_SITE_H
#define FHOOK_INTERNAL_SITE_H

#include <stdbool.h>
#include <stddef.h>

#define FHOOK_SITE_BYTES_MAX	16

/* What a site holds as the compiler left it, and its nop form. */
struct fhook_site_nop {
	unsigned char len;		/* bytes to write; 0: a nop already */
	unsigned char insn_len;		/* length of the instruction there */
	bool split;			/* several instructions (gcc's 1-byte nops): no
					 * protocol can rewrite them while threads run */
	unsigned char bytes[FHOOK_SITE_BYTES_MAX];
};

/*
 * Classify the @avail bytes @cur at a site (@mcount: recorded by
 * -mrecord-mcount, so a call to __fentry__ is expected there) and fill
 * @out with what turns it into a nop.  Returns 0, or -EINVAL for bytes
 * that are no site the compilers emit (or too few of them).
 */
int fhook_site_classify(const unsigned char *cur, size_t avail, bool mcount,
			struct fhook_site_nop *out);

#endif /* FHOOK_INTERNAL_SITE_H */
