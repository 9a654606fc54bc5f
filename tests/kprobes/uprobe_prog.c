// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A process for another tool's breakpoints (bpftrace uprobes) beside
 * fhook's jumps: four functions whose first instruction is 1, 2, 3 and 4
 * bytes long (a jump covers it and more), called in a loop and checked.
 * Prints "ready" once, then runs until SIGTERM; exits 0 if every result
 * was right, else 1.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>

long up_f1(long x);
long up_f2(long x);
long up_f3(long x);
long up_f4(long x);

__asm__(".text\n"
	".globl up_f1\n.type up_f1, @function\nup_f1:\n"
	"	push %rbx\n		mov %rdi, %rax\n	add $1, %rax\n	pop %rbx\n	ret\n"
	".size up_f1, .-up_f1\n"
	".globl up_f2\n.type up_f2, @function\nup_f2:\n"
	"	push %r12\n		mov %rdi, %rax\n	add $2, %rax\n	pop %r12\n	ret\n"
	".size up_f2, .-up_f2\n"
	".globl up_f3\n.type up_f3, @function\nup_f3:\n"
	"	mov %rdi, %rax\n	add $3, %rax\n	nop\n	ret\n"
	".size up_f3, .-up_f3\n"
	".globl up_f4\n.type up_f4, @function\nup_f4:\n"
	"	sub $8, %rsp\n		mov %rdi, %rax\n	add $8, %rsp\n	add $4, %rax\n	ret\n"
	".size up_f4, .-up_f4\n");

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct timespec pause = { 0, 100000 };
	long i, bad = 0;

	signal(SIGTERM, on_term);
	printf("ready\n");
	fflush(stdout);
	for (i = 0; !stop; i++) {
		bad += up_f1(i) != i + 1;
		bad += up_f2(i) != i + 2;
		bad += up_f3(i) != i + 3;
		bad += up_f4(i) != i + 4;
		nanosleep(&pause, NULL);
	}
	printf("calls %ld, bad %ld\n", 4 * i, bad);
	return bad != 0;
}
