/* fork and vfork, then exec of this program: the new image's calls are a tree of their own. */
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

__attribute__((noinline)) int leaf(int x)
{
	__asm__ volatile("");
	return x + 1;
}

__attribute__((noinline)) int mid(int x)
{
	return leaf(x) * 2;
}

int main(int argc, char **argv)
{
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "image"))
		return mid(3) - 8;
	pid = argc > 1 && !strcmp(argv[1], "vfork") ? vfork() : fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "image", (char *)0);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	mid(2);
	return 0;
}
