/* The library that vs_dlopen.c loads: traced, built with the same flags. */
#define NOIPA __attribute__((noipa))

static NOIPA int lib_leaf(int x)
{
	return x * 3;
}

NOIPA int lib_work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += lib_leaf(i);
	return s;
}
