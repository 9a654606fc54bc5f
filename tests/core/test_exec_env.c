// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a child started with an explicit environment gets back: libfhook
 * first in LD_PRELOAD and the FHOOK_* variables this process started
 * with, unless the explicit environment sets them itself, and only what
 * is still in this process's own environment.  The test runs itself again
 * as "started by fhook" (libfhook preloaded, FHOOK_TEST_A set), then
 * starts env(1) with several environments, also from a vfork() child
 * and with posix_spawn.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

extern char **environ;

static const char *lib;

/* Start env(1) with @envp (by execve in a fork or vfork child, or posix_spawn). */
static void child_env(char *const envp[], int how, char *out, size_t size)
{
	char *const argv[] = { "env", NULL };
	int fd[2];
	pid_t pid;
	ssize_t n, got = 0;

	out[0] = 0;
	if (pipe(fd))
		return;
	if (how == 2) {
		posix_spawn_file_actions_t fa;

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
		posix_spawn_file_actions_addclose(&fa, fd[0]);
		if (posix_spawn(&pid, "/usr/bin/env", &fa, NULL, argv, envp))
			pid = -1;
		posix_spawn_file_actions_destroy(&fa);
	} else {
		pid = how ? vfork() : fork();
		if (!pid) {
			dup2(fd[1], 1);
			execve("/usr/bin/env", argv, envp);
			_exit(127);
		}
	}
	close(fd[1]);
	while (pid > 0 && (n = read(fd[0], out + got, size - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void expect(const char *name, char *const envp[], int how, const char *want)
{
	char got[4096];

	child_env(envp, how, got, sizeof(got));
	CHECK(!strcmp(got, want), name, "child's environment \"%s\", expected \"%s\"", got, want);
}

int main(int argc, char **argv)
{
	char *const empty[] = { NULL };
	char *const own[] = { "FHOOK_TEST_A=mine", "LD_PRELOAD=libm.so.6", NULL };
	char want[PATH_MAX * 2];
	Dl_info di;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* a sanitized libfhook cannot be preloaded ahead of the sanitizer's runtime */
	printf("SKIP exec_env: sanitizer build\n");
	return 0;
#endif
	if (argc < 2) {
		/* become "a program fhook started" */
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0 || !dladdr((void *)dlsym(RTLD_DEFAULT, "register_ftrace_function"), &di))
			return 1;
		self[n] = 0;
		/* the harness's own FHOOK_* variables would be given back too */
		for (;;) {
			char **e, name[256];

			for (e = environ; *e && strncmp(*e, "FHOOK_", 6); e++)
				;
			if (!*e)
				break;
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
			unsetenv(name);
		}
		setenv("LD_PRELOAD", di.dli_fname, 1);
		setenv("FHOOK_TEST_A", "1", 1);
		execl(self, self, "started", (char *)NULL);
		return 1;
	}
	lib = getenv("LD_PRELOAD");
	if (!lib)
		return 1;

	snprintf(want, sizeof(want), "LD_PRELOAD=%s\nFHOOK_TEST_A=1\n", lib);
	expect("empty_env", empty, 0, want);
	expect("empty_env_vfork", empty, 1, want);
	expect("empty_env_posix_spawn", empty, 2, want);

	/* the explicit environment's own values win; libfhook goes first */
	snprintf(want, sizeof(want), "FHOOK_TEST_A=mine\nLD_PRELOAD=%s:libm.so.6\n",
		 lib);
	expect("own_values_kept", own, 0, want);

	/* what this process removed from its own environment stays out */
	unsetenv("FHOOK_TEST_A");
	snprintf(want, sizeof(want), "LD_PRELOAD=%s\n", lib);
	expect("removed_variable", empty, 0, want);
	unsetenv("LD_PRELOAD");
	expect("removed_preload", empty, 0, "");
	return check_exit();
}
