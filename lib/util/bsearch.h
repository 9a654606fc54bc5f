/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one binary search: over any sorted sequence, given how to read the
 * key of element @i.  Written as statement expressions so that the key is
 * read inline (sites, symbols and hash sets are searched on hot paths and
 * in signal handlers, where a comparison callback costs too much).
 */
#ifndef FHOOK_UTIL_BSEARCH_H
#define FHOOK_UTIL_BSEARCH_H

#include <stddef.h>

/*
 * The index of the first of the @n elements whose key (the expression
 * @key, which reads element @i) is not below @k; @n if there is none.
 */
#define fhook_lower_bound(n, i, key, k) ({				\
	size_t __lo = 0, __hi = (n);					\
	while (__lo < __hi) {						\
		size_t i = __lo + (__hi - __lo) / 2;			\
		if ((key) < (k))					\
			__lo = i + 1;					\
		else							\
			__hi = i;					\
	}								\
	__lo;								\
})

/* The index of the first element whose key is above @k; @n if none. */
#define fhook_upper_bound(n, i, key, k) ({				\
	size_t __lo = 0, __hi = (n);					\
	while (__lo < __hi) {						\
		size_t i = __lo + (__hi - __lo) / 2;			\
		if ((key) <= (k))					\
			__lo = i + 1;					\
		else							\
			__hi = i;					\
	}								\
	__lo;								\
})

#endif /* FHOOK_UTIL_BSEARCH_H */
