// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An independent count of a program's calls of liblzma's lzma_code(), by
 * interposition (LD_PRELOAD): each call is counted and passed on.  The
 * count goes to the file KP_COUNT_OUT names at exit.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long calls;

int lzma_code(void *strm, int action)
{
	static int (*real)(void *, int);

	if (!real)
		real = (int (*)(void *, int))dlsym(RTLD_NEXT, "lzma_code");
	calls++;
	return real(strm, action);
}

__attribute__((destructor)) static void kp_count_report(void)
{
	const char *path = getenv("KP_COUNT_OUT");
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f) {
		fprintf(f, "%lu\n", calls);
		fclose(f);
	}
}
