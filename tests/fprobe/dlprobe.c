// A library opened and closed by test_dlopen_glob: libfunc_a calls libfunc_b.
__attribute__((noinline)) int libfunc_b(int x)
{
	__asm__ volatile("");
	return x * 3;
}

__attribute__((noinline)) int libfunc_a(int x)
{
	__asm__ volatile("");
	return libfunc_b(x) + 1;
}

int untraced_helper(int x)
{
	return x - 1;
}
