// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec: run ARGS with execvp().  Built with `fhook cflags`, so that it has one
 * patchable site (main): `fhook trace -e 'f *'` resolves its globs against the
 * program it is given, and a test harness (make, sh) has no site at all.
 * Tracing `exec make check` traces make's children with the same globs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: exec PROG [ARGS]\n");
		return 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "exec: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
