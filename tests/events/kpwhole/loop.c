/* Runs until killed, calling tick() and tock() every millisecond: a process to attach to. */
#include <time.h>

static volatile int sink;

__attribute__((noinline)) int tock(int x)
{
	sink = x;
	return x + 1;
}

__attribute__((noinline)) int tick(int x)
{
	return tock(x) * 2;
}

int main(void)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0;; i++) {
		tick(i);
		nanosleep(&ms, NULL);
	}
}
