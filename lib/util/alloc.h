/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Large arrays that are written whole right after they are allocated (a
 * site list, a batch of writes).  malloc() hands out such blocks as fresh
 * mappings, whose every page then costs a fault; asking the kernel for
 * all of them in one call costs about half as much (a fault is several
 * microseconds in a virtual machine).
 */
#ifndef FHOOK_UTIL_ALLOC_H
#define FHOOK_UTIL_ALLOC_H

#include <stdlib.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

/* below this, a block most likely comes from pages the heap has touched */
#define FHOOK_ALLOC_POPULATE_MIN	(64UL << 10)

/* malloc(@size), with the block's whole pages made present; free() it. */
static inline void *fhook_malloc_whole(size_t size)
{
	void *p = malloc(size);
	unsigned long lo, hi;

	if (!p || size < FHOOK_ALLOC_POPULATE_MIN)
		return p;
	lo = ((unsigned long)p + 4095) & ~4095UL;
	hi = ((unsigned long)p + size) & ~4095UL;
	/* kernels before 5.14 refuse it: the pages then fault in as ever */
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	return p;
}

/*
 * Make the pages of the next entries of an array present, 64 KiB at a
 * time: of the @left entries of @size bytes from @p (in a page-aligned
 * array), how many are now.  madvise() wants a page-aligned start, and
 * after the first call @p is one only if @size divides 64 KiB: from the
 * page that holds @p (present already, and passed over).
 */
static inline size_t fhook_populate(void *p, size_t left, size_t size)
{
	size_t n = FHOOK_ALLOC_POPULATE_MIN / size;
	unsigned long lo = (unsigned long)p & ~4095UL;

	if (n > left)
		n = left;
	madvise((void *)lo, (unsigned long)p + n * size - lo, MADV_POPULATE_WRITE);
	return n;
}

#endif /* FHOOK_UTIL_ALLOC_H */
