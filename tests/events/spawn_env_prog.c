// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program that starts the next generation of itself with an empty
 * environment, for tests/events/test_spawn_env.sh:
 *
 *	spawn_env_prog MODE GEN LAST
 *
 * calls generation_mark(GEN) (the traced function) and, while GEN < LAST,
 * starts "MODE GEN+1 LAST" with the call MODE names, passing an empty
 * environment: posix_spawn (and waits), execve, or "all", which uses
 * posix_spawn, posix_spawnp, execve, execvpe, execle, fexecve and execveat
 * in turn, one per generation.  Built traceable, not linked with libfhook.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void generation_mark(int gen)
{
	sink += gen;
}

static char *const empty_env[] = { NULL };

static int spawn_wait(int p, const char *self, char *const argv[])
{
	pid_t pid;
	int st, ret;

	ret = p ? posix_spawnp(&pid, self, NULL, NULL, argv, empty_env)
		: posix_spawn(&pid, self, NULL, NULL, argv, empty_env);
	if (ret) {
		fprintf(stderr, "spawn: %s\n", strerror(ret));
		return 1;
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	static const char *const calls[] = {
		"posix_spawn", "posix_spawnp", "execve", "execvpe", "execle", "fexecve", "execveat",
	};
	char self[PATH_MAX], next[16];
	const char *call;
	int gen, last;
	ssize_t n;

	if (argc != 4)
		return 2;
	gen = atoi(argv[2]);
	last = atoi(argv[3]);
	generation_mark(gen);
	if (gen >= last)
		return 0;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	snprintf(next, sizeof(next), "%d", gen + 1);
	call = !strcmp(argv[1], "all") ? calls[gen % 7] : argv[1];
	{
		char *const args[] = { self, argv[1], next, argv[3], NULL };

		if (!strcmp(call, "posix_spawn") || !strcmp(call, "posix_spawnp"))
			return spawn_wait(!strcmp(call, "posix_spawnp"), self, args);
		if (!strcmp(call, "execve"))
			execve(self, args, empty_env);
		else if (!strcmp(call, "execvpe"))
			execvpe(self, args, empty_env);
		else if (!strcmp(call, "execle"))
			execle(self, self, argv[1], next, argv[3], (char *)NULL, empty_env);
		else if (!strcmp(call, "fexecve"))
			fexecve(open(self, O_RDONLY | O_CLOEXEC), args, empty_env);
		else if (!strcmp(call, "execveat"))
			execveat(AT_FDCWD, self, args, empty_env, 0);
	}
	perror(call);
	return 1;
}
