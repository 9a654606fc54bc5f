/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tables indexed by numbers that come from a recording (threads, process
 * images, depths): grown by doubling to hold an index, zero-filled.
 */
#ifndef FHOOK_EV_ARRAY_H
#define FHOOK_EV_ARRAY_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Make *@arrp (*@cap elements of @size bytes) hold index @idx; new elements
 * are zero.  Returns 0 or -ENOMEM (the table is left as it was).
 */
static inline int ev_array_fit(void *arrp, size_t *cap, size_t idx, size_t size)
{
	void **arr = arrp;
	size_t n = *cap ? *cap : 64;
	void *na;

	if (idx < *cap)
		return 0;
	while (n <= idx)
		n *= 2;
	na = realloc(*arr, n * size);
	if (!na)
		return -ENOMEM;
	memset((char *)na + *cap * size, 0, (n - *cap) * size);
	*arr = na;
	*cap = n;
	return 0;
}

#endif
