// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util/sort.h: the radix sort of 16-byte address records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/bsearch.h"
#include "util/sort.h"

int fhook_sort_addr_recs(struct fhook_addr_rec *recs, size_t nr)
{
	struct fhook_addr_rec *tmp, *src = recs, *dst;
	unsigned long lo = ~0UL, hi = 0;
	size_t i, count[256], descents = 0;
	int shift;

	for (i = 1; i < nr; i++)
		descents += recs[i].addr < recs[i - 1].addr;
	if (descents <= 8) {
		/* nearly sorted: move the few into place */
		for (i = 1; i < nr; i++) {
			struct fhook_addr_rec r = recs[i];
			size_t at;

			if (r.addr >= recs[i - 1].addr)
				continue;
			at = fhook_upper_bound(i, k, recs[k].addr, r.addr);
			memmove(&recs[at + 1], &recs[at], (i - at) * sizeof(*recs));
			recs[at] = r;
		}
		return 0;
	}
	for (i = 0; i < nr; i++) {
		if (recs[i].addr < lo)
			lo = recs[i].addr;
		if (recs[i].addr > hi)
			hi = recs[i].addr;
	}
	tmp = malloc(nr * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (shift = 0; shift < 64 && ((hi - lo) >> shift); shift += 8) {
		size_t pos = 0;

		memset(count, 0, sizeof(count));
		for (i = 0; i < nr; i++)
			count[((src[i].addr - lo) >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = pos;
			pos += c;
		}
		for (i = 0; i < nr; i++)
			dst[count[((src[i].addr - lo) >> shift) & 0xff]++] = src[i];
		src = dst;
		dst = src == recs ? tmp : recs;
	}
	if (src != recs)
		memcpy(recs, src, nr * sizeof(*recs));
	free(tmp);
	return 0;
}
