// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tight loop: N calls of a tiny function, under a chosen hook mode.
 *   loop MODE N    MODE: none | nop | empty | regs | recursion | shared
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/fhook.h>

__attribute__((noinline)) int tiny(int x) { __asm__ volatile(""); return x + 1; }

static void empty(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		  struct ftrace_regs *fregs)
{
}

static struct ftrace_ops ops = { .func = empty }, ops2 = { .func = empty };

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	long n = argc > 2 ? atol(argv[2]) : 10000000, i;
	volatile int s = 0;

	if (strcmp(mode, "none") && strcmp(mode, "nop")) {
		if (!strcmp(mode, "regs"))
			ops.flags |= FTRACE_OPS_FL_SAVE_REGS;
		if (!strcmp(mode, "recursion"))
			ops.flags |= FTRACE_OPS_FL_RECURSION;
		ftrace_set_filter_ip(&ops, (unsigned long)tiny, 0, 1);
		if (register_ftrace_function(&ops))
			return 1;
		if (!strcmp(mode, "shared")) {
			ftrace_set_filter_ip(&ops2, (unsigned long)tiny, 0, 1);
			register_ftrace_function(&ops2);
		}
	}
	for (i = 0; i < n; i++)
		s += tiny((int)i);
	printf("%d\n", s);
	return 0;
}
