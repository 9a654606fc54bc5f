// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stamp_exec CMD [ARGS]: print the CLOCK_MONOTONIC time on stderr
 * ("stamp SECONDS"), then become CMD.  bench/attach.sh measures the first
 * event from the moment the command starts: a time stamp taken by another
 * process (date, python) would add that process's own exit and the
 * shell's fork to the figure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;

	if (argc < 2) {
		fprintf(stderr, "usage: stamp_exec CMD [ARGS]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "stamp %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
	execvp(argv[1], argv + 1);
	fprintf(stderr, "stamp_exec: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
