/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The public API returns negative errno values, as the kernel's does, and
 * also sets errno, as a C library caller expects.
 */
#ifndef FHOOK_UTIL_ERRNO_H
#define FHOOK_UTIL_ERRNO_H

#include <errno.h>

static inline int fhook_ret_errno(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

#endif /* FHOOK_UTIL_ERRNO_H */
