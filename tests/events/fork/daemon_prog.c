/* daemon(): the parent leaves inside it, the child goes on in main and returns. */
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int leaf(int x)
{
	__asm__ volatile("");
	return x + 1;
}

int main(void)
{
	if (daemon(1, 1))
		return 1;
	leaf(1);
	return 0;
}
