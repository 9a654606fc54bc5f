/* lib_b first: at the offset where the other library has its foo. */
static int foo(int x);

int lib_b(int x)
{
	return foo(x) * 3;
}

__attribute__((noinline)) static int foo(int x)
{
	volatile int y = x;

	__asm__ volatile("");
	return y + 2;
}
