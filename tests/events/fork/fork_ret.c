/* A child that returns from main, and one that returns first from the function that forked. */
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

__attribute__((noinline)) pid_t spawn(void)
{
	return fork();
}

int main(void)
{
	pid_t pid = spawn();

	if (pid == 0) {
		mid(1);
		return 0;
	}
	waitpid(pid, NULL, 0);
	mid(2);
	return 0;
}
