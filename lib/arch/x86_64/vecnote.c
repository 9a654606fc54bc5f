// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A handler proven at build time (vecnote.h): its object's notes list a
 * function with its size and the hash of its bytes, and the bytes at the
 * handler's address hash the same.  Read in place, under the loader's
 * lock (dl_iterate_phdr()), so the object cannot go meanwhile.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>

#include "internal.h"
#include "vecfree.h"
#include "vecnote.h"

struct vecnote_find {
	unsigned long func;
	size_t proven;		/* the bytes a record proved; 0: none */
	unsigned int fregs;	/* what of its fregs the function reads */
};

static size_t proven_by(const unsigned char *desc, size_t len, unsigned long func,
		      unsigned long text_end, unsigned int *fregs)
{
	size_t off = 0;

	while (len - off >= sizeof(struct vecnote_rec)) {
		struct vecnote_rec rec;
		uint32_t masks[2 * VECNOTE_MAX_MASKS];
		size_t mlen;
		uint64_t h;
		unsigned int nmask, fr, ld;

		memcpy(&rec, desc + off, sizeof(rec));
		off += sizeof(rec);
		nmask = rec.nmask & ((1u << VECNOTE_FREGS_SHIFT) - 1);
		fr = rec.nmask >> VECNOTE_FREGS_SHIFT;
		ld = VECFREE_FREGS_LOADS(fr);
		if (nmask > VECNOTE_MAX_MASKS || (ld && (VECFREE_FREGS_LO(ld) >= VECFREE_FREGS_HI(ld) ||
							 VECFREE_FREGS_HI(ld) > VECFREE_FREGS_SLOTS)) ||
		    fr >> VECFREE_FREGS_BITS ||
		    (fr >> VECFREE_CLOB_SHIFT && !(fr & VECFREE_FREGS_STORES_IP)))
			return 0;	/* not a list we wrote: stop reading it */
		mlen = (size_t)nmask * 2 * sizeof(uint32_t);
		if (len - off < mlen)
			return 0;
		memcpy(masks, desc + off, mlen);
		off += mlen;
		if (!rec.size || rec.size > VECNOTE_MAX_SIZE || rec.size > text_end - func)
			continue;
		h = vecnote_hash((const unsigned char *)func, rec.size, masks, nmask);
		if (h == ((uint64_t)rec.hash_hi << 32 | rec.hash_lo)) {
			*fregs = fr;
			return rec.size;
		}
	}
	return 0;
}

static int find_in_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct vecnote_find *f = data;
	unsigned long text_end = 0;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		unsigned long start = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && f->func >= start &&
		    f->func - start < p->p_filesz)
			text_end = start + p->p_filesz;
	}
	if (!text_end)
		return 0;
	for (i = 0; i < info->dlpi_phnum && !f->proven; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		const unsigned char *n = (const unsigned char *)(info->dlpi_addr + p->p_vaddr);
		size_t off = 0, len = p->p_memsz;

		if (p->p_type != PT_NOTE)
			continue;
		while (len - off >= sizeof(ElfW(Nhdr)) && !f->proven) {
			ElfW(Nhdr) nh;
			size_t name_len, desc_len;

			memcpy(&nh, n + off, sizeof(nh));
			off += sizeof(nh);
			/* in size_t: a 32-bit size near 4 GiB must not round to 0 */
			name_len = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
			desc_len = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
			if (name_len > len - off || desc_len > len - off - name_len)
				break;
			if (nh.n_type == VECNOTE_TYPE && nh.n_namesz == sizeof(VECNOTE_OWNER) &&
			    !memcmp(n + off, VECNOTE_OWNER, sizeof(VECNOTE_OWNER)))
				f->proven = proven_by(n + off + name_len, nh.n_descsz, f->func,
						      text_end, &f->fregs);
			off += name_len + desc_len;
		}
	}
	return 1;	/* the object of the function: no other */
}

size_t fhook_vecnote_proven(unsigned long func, unsigned int *fregs)
{
	struct vecnote_find f = { func, 0, 0 };

	dl_iterate_phdr(find_in_object, &f);
	*fregs = f.fregs;
	return f.proven;
}
