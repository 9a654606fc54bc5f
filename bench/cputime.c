// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cputime CMD [ARGS]: run CMD (stdout and stderr as they are) and print, on
 * fd 3 if it is open, else on stderr, "WALL_US USER_US SYS_US MINFLT" of CMD
 * and every descendant it waited for (wait4's rusage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status, fd;
	FILE *out;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: cputime CMD [ARGS]\n");
		return 2;
	}
	fd = fcntl(3, F_GETFD) == -1 ? 2 : 3;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return 127;
	if (!pid) {
		if (fd == 3)
			close(3);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 127;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out = fdopen(fd, "w");
	fprintf(out, "%ld %ld %ld %ld\n",
		(long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000),
		(long)(ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec),
		(long)(ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec), ru.ru_minflt);
	fflush(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
