/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one sort of site records and symbols: 16-byte records ordered by
 * the address in their first eight bytes (struct dyn_ftrace, struct
 * fhook_sym).  An LSD radix sort on the bytes in which the addresses
 * differ, with a fast path for input that is nearly sorted already (the
 * linker keeps each input file's records in order, and main() sits in
 * .text.startup): a comparison sort through a callback cost hundreds of
 * instructions per record at start-up.
 */
#ifndef FHOOK_UTIL_SORT_H
#define FHOOK_UTIL_SORT_H

#include <stddef.h>

struct fhook_addr_rec {
	unsigned long addr;
	unsigned long rest;
};

/* Sort @nr records in place, stable.  Returns 0 or -ENOMEM. */
int fhook_sort_addr_recs(struct fhook_addr_rec *recs, size_t nr)
	__attribute__((visibility("hidden")));

#endif /* FHOOK_UTIL_SORT_H */
