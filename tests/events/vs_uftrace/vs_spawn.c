/* Four processes, three generations below the first, each started with an
 * empty environment: gen 0 posix_spawn()s gen 1, gen 1 execve()s gen 2 (the
 * same process, a new image), gen 2 posix_spawn()s gen 3. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* noipa: built with -O2 too, every call in the source stays a call (tail
 * calls may become jumps) */
#define NOIPA __attribute__((noipa))

NOIPA int note(int x)
{
	return x + 1;
}

NOIPA int work(int gen)
{
	int s = 0;

	for (int i = 0; i <= gen; i++)
		s += note(i);
	return s;
}

NOIPA int spawn_next(char *self, int gen)
{
	char arg[16];
	char *argv[] = { self, arg, NULL };
	char *envp[] = { NULL };
	pid_t pid;
	int st;

	snprintf(arg, sizeof(arg), "%d", gen + 1);
	if (posix_spawn(&pid, self, NULL, NULL, argv, envp))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

NOIPA void exec_next(char *self, int gen)
{
	char arg[16];
	char *argv[] = { self, arg, NULL };
	char *envp[] = { NULL };

	snprintf(arg, sizeof(arg), "%d", gen + 1);
	execve(self, argv, envp);
	_exit(127);
}

int main(int argc, char **argv)
{
	int gen = argc > 1 ? atoi(argv[1]) : 0;
	int r = 0;

	work(gen);
	if (gen == 0 || gen == 2)
		r = spawn_next(argv[0], gen);
	else if (gen == 1)
		exec_next(argv[0], gen);
	return r;
}
