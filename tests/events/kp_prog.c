// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program built WITHOUT fhook's flags (no patchable site anywhere), for
 * the kprobe events ('p', 'r'): it counts its own calls and prints the
 * counts, which the tests compare with the events recorded.
 *
 *   kp_prog [N [LIB]]   N calls of kp_add and of kp_asm (default 3), one
 *                       kp_name; with LIB, dlopen() it and make N calls of
 *                       its kp_lib_fn
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int calls_add, calls_asm, calls_name;

__attribute__((noipa)) long kp_add(long a, long b)
{
	calls_add++;
	return a + b;
}

__attribute__((noipa)) int kp_name(const char *s)
{
	calls_name++;
	return (int)strlen(s);
}

/*
 * Known instructions at known offsets: +0 lea (4 bytes), +4 add (4
 * bytes), +8 ret (aarch64: +0 add, +4 add, +8 ret).  At +4, the return
 * register (%ax, x0) holds a + b; the result is a + b + 1.
 */
long kp_asm(long a, long b);
#if defined(__aarch64__)
__asm__(".text\n"
	".globl kp_asm\n"
	".type kp_asm, @function\n"
	"kp_asm:\n"
	"	add x0, x0, x1\n"
	"	add x0, x0, #1\n"
	"	ret\n"
	".size kp_asm, .-kp_asm\n");
#else
__asm__(".text\n"
	".globl kp_asm\n"
	".type kp_asm, @function\n"
	"kp_asm:\n"
	"	lea (%rdi,%rsi,1), %rax\n"
	"	add $1, %rax\n"
	"	ret\n"
	".size kp_asm, .-kp_asm\n");
#endif

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 3;
	long sum = 0;

	for (i = 0; i < n; i++) {
		sum += kp_add(i, 10 * i);
		sum += kp_asm(i, 100);
		calls_asm++;
	}
	sum += kp_name("hello");
	if (argc > 2) {
		void *h = dlopen(argv[2], RTLD_NOW);
		long (*fn)(long) = h ? (long (*)(long))dlsym(h, "kp_lib_fn") : NULL;

		if (!fn) {
			fprintf(stderr, "kp_prog: %s\n", dlerror());
			return 1;
		}
		for (i = 0; i < n; i++)
			sum += fn(i);
		printf("kp_lib_fn %d\n", n);
	}
	printf("kp_add %d kp_asm %d kp_name %d sum %ld\n", calls_add, calls_asm, calls_name, sum);
	return 0;
}
