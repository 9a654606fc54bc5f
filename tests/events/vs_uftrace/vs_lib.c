/* The library that vs_dlopen.c loads: traced, built with the same flags; its
 * constructor and destructor run inside dlopen() and dlclose(). */
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

/* run by dlopen() and dlclose() themselves */
static int lib_state;

__attribute__((constructor)) static NOIPA void lib_init(void)
{
	lib_state = lib_leaf(1);
}

__attribute__((destructor)) static NOIPA void lib_fini(void)
{
	lib_state = lib_leaf(2);
}
