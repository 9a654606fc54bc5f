/* Runs for about 2.5 s, calling a traced function now and then. */
#include <time.h>
__attribute__((noinline)) int tick(int x) { return x + 1; }
int main(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int i, s = 0;

	for (i = 0; i < 50; i++) {
		s += tick(i);
		nanosleep(&ts, 0);
	}
	return s == 1275 ? 0 : 1;
}
