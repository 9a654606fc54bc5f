/*
 * "both": open both libraries, then call each.  "reuse": open, call and
 * close one, then the other (the loader gives it the addresses the first
 * had), then the first again.  Prints each function's address.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void *lib(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return dlopen(path, RTLD_NOW);
}

static int call(void *h, const char *sym, int close)
{
	int (*f)(int) = (int (*)(int))dlsym(h, sym);
	int r = f ? f(1) : -1;

	printf("%s %p %d\n", sym, (void *)f, r);
	if (close)
		dlclose(h);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[2], "both")) {
		void *a = lib(argv[1], "libone.so"), *b = lib(argv[1], "libtwo.so");

		call(b, "lib_b", 0);
		call(a, "lib_a", 0);
		return 0;
	}
	call(lib(argv[1], "libone.so"), "lib_a", 1);
	call(lib(argv[1], "libtwo.so"), "lib_b", 1);
	call(lib(argv[1], "libone.so"), "lib_a", 1);
	return 0;
}
