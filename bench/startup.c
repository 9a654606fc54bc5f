// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The start-up benchmark's main(), linked with a generated body of N
 * functions (gen_funcs.sh).
 *   startup none   start and exit (with libfhook: its start-up only)
 *   startup all    (-DSTARTUP_FHOOK) enable every site with an empty ops
 * Prints "enable_ns HEAP_BEFORE HEAP_AFTER" on stdout: the time of
 * register_ftrace_function() and the bytes malloc holds before and after.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef STARTUP_FHOOK
#include <fhook/fhook.h>

__attribute__((no_instrument_function, patchable_function_entry(0, 0)))
static void empty(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		  struct ftrace_regs *fregs)
{
}

static struct ftrace_ops ops = { .func = empty };
#endif

extern int gen_n;
extern int (*const gen_tab[])(int);

static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	size_t before = heap_bytes(), after;
	long ns = 0;

	if (argc > 1 && !strcmp(argv[1], "all")) {
#ifdef STARTUP_FHOOK
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (register_ftrace_function(&ops))
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
		if ((long)ops.nr_sites < gen_n)
			fprintf(stderr, "startup: only %lu sites enabled\n", ops.nr_sites);
#else
		return 1;
#endif
	}
	after = heap_bytes();
	printf("%ld %zu %zu %d\n", ns, before, after, gen_tab[gen_n - 1](1) != 0);
	return 0;
}
