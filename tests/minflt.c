// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * minflt CMD [ARGS]: run CMD and print the minor page faults of it and of
 * everything it waited for (wait4's rusage); exit 1 if it failed.  Built
 * by tests/faults.sh for the tests that bound page faults.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2)
		return 2;
	pid = fork();
	if (pid < 0)
		return 127;
	if (!pid) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	printf("%ld\n", ru.ru_minflt);
	return 0;
}
