// SPDX-License-Identifier: LGPL-2.1-or-later
/* Replacements for att_prog's work() and ping(). */
#define PATCH_DELTA 1000000L

long work_new(long x)
{
	return x * 2 + 1 + PATCH_DELTA;
}

long ping_new(long x)
{
	return -x;
}
