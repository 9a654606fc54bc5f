/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proof an object carries that some of its functions leave the vector
 * registers alone (vecfree.h), made when it was assembled: objtool's way,
 * the decoding done at build time, so that a process registering such a
 * function as a handler need not load a decoder (about 10 ms of CPU).
 *
 * The assembler front end (cli/as_vecproof.c) adds to each object it
 * writes a note section, SHT_NOTE and allocated, so the linker keeps it
 * in a PT_NOTE segment of the program: owner "fhook", type
 * VECNOTE_TYPE, and a record per proven function, 4-byte words:
 *
 *	size	the function's bytes
 *	nmask	in its low 8 bits; then the hash, two words, low first,
 *	hash	then nmask pairs (offset, length) of the bytes the linker
 *		still writes: each a displacement or an immediate of one of
 *		its instructions, counted as zero in the hash
 *
 * The bits of nmask above the count say what of its fregs the function
 * reads (vecfree.h VECFREE_FREGS(), 0: nothing; notes written before
 * proven functions could read it have none), and for one that stores its
 * ip, that and the registers it may change (VECFREE_FREGS_STORES_IP,
 * VECFREE_CLOB_*: a library older than those bits stops reading the list
 * at such a record, and proves fewer handlers).
 *
 * The note names no address: the library proves a handler by hashing its
 * bytes in the process as the record says and finding the record's hash
 * (vecnote.c).  Bytes equal but for operand values decode to the same
 * instructions, wherever they were linked: direct branches inside a
 * function are relative, a branch that needed a relocation did not
 * qualify, and an instruction the linker rewrote whole (a relaxed GOT
 * load) no longer hashes as proven.  So any function whose first bytes
 * match a record is proven, its own or not.
 */
#ifndef FHOOK_ARCH_X86_64_VECNOTE_H
#define FHOOK_ARCH_X86_64_VECNOTE_H

#include <stddef.h>
#include <stdint.h>

#define VECNOTE_OWNER		"fhook"
#define VECNOTE_TYPE		0x76656366u	/* "fcev" */
#define VECNOTE_SECTION		".note.fhook.vecfree"
#define VECNOTE_MAX_SIZE	4096		/* bytes of a function proven */
#define VECNOTE_MAX_MASKS	64
#define VECNOTE_FREGS_SHIFT	8

struct vecnote_rec {
	uint32_t size;
	uint32_t nmask;		/* | fregs << VECNOTE_FREGS_SHIFT */
	uint32_t hash_lo, hash_hi;
	/* then nmask x { uint32_t off, len; } */
};

/* FNV-1a over @size bytes of @code, the masked ones as zero. */
static inline uint64_t vecnote_hash(const unsigned char *code, size_t size,
				    const uint32_t *masks, uint32_t nmask)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < size; i++) {
		unsigned char c = code[i];

		while (m < nmask && i >= (size_t)masks[2 * m] + masks[2 * m + 1])
			m++;
		if (m < nmask && i >= masks[2 * m])
			c = 0;
		h = (h ^ c) * 0x100000001b3ull;
	}
	return h;
}

#endif
