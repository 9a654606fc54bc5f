/* dlopen a traced library, call it, dlclose it; twice. */
#include <dlfcn.h>
#include <stdio.h>

/* noipa: built with -O2 too, every call in the source stays a call (tail
 * calls may become jumps) */
#define NOIPA __attribute__((noipa))

NOIPA int note(int x)
{
	return x + 1;
}

NOIPA int use_lib(const char *path, int n)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*work)(int);
	int r;

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return -1000;
	}
	work = (int (*)(int))dlsym(h, "lib_work");
	r = work ? work(n) : -1;
	dlclose(h);
	return note(r);
}

int main(int argc, char **argv)
{
	int s = 0;

	if (argc < 2)
		return 2;
	s += use_lib(argv[1], 2);
	s += use_lib(argv[1], 3);
	printf("%d\n", s);
	return s < 0;
}
