// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Running a program with libfhook preloaded: what "fhook <cmd> -- PROG"
 * does for every command that acts inside a program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* libfhook.so next to the command (build tree), else in ../lib (installed). */
int cli_libfhook_path(char *buf, size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	snprintf(buf, size, "%s/libfhook.so", exe);
	if (!access(buf, R_OK))
		return 0;
	snprintf(buf, size, "%s/../lib/libfhook.so", exe);
	if (!access(buf, R_OK))
		return 0;
	return -ENOENT;
}

int cli_run_preloaded(char **argv, bool wait_child)
{
	char lib[PATH_MAX], *pre;
	const char *old = getenv("LD_PRELOAD");
	pid_t pid;
	int status;

	if (cli_libfhook_path(lib, sizeof(lib))) {
		fprintf(stderr, "fhook: cannot find libfhook.so next to the fhook command\n");
		return 127;
	}
	if (asprintf(&pre, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "") < 0)
		return 127;
	setenv("LD_PRELOAD", pre, 1);
	free(pre);
	if (!wait_child) {
		execvp(argv[0], argv);
		fprintf(stderr, "fhook: cannot run %s: %s\n", argv[0], strerror(errno));
		return 127;
	}
	pid = fork();
	if (pid < 0)
		return 127;
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "fhook: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	signal(SIGINT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	signal(SIGINT, SIG_DFL);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
