/* A library opened, called, closed and opened again: its probes come and go with it. */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) static int call_lib(const char *path, int x)
{
	void *h = dlopen(path, RTLD_NOW);
	int (*fn)(int);
	int r;

	if (!h)
		return -1;
	fn = (int (*)(int))dlsym(h, "kpw_lib_fn");
	r = fn ? fn(x) : -1;
	dlclose(h);
	return r;
}

int main(int argc, char **argv)
{
	int a, b;

	if (argc < 2)
		return 2;
	a = call_lib(argv[1], 1);
	b = call_lib(argv[1], 2);
	printf("%d %d\n", a, b);
	return a < 0 || b < 0;
}
