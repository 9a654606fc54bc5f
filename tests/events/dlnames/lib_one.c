/* Its static foo and the other library's have one name, and different sizes. */
__attribute__((noinline)) static int foo(int x)
{
	__asm__ volatile("");
	return x + 1;
}

int lib_a(int x)
{
	return foo(x) * 2;
}
