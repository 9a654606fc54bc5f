/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Traced functions that read few argument registers, for the tests of
 * the entries that save only those (livein.c): each reads what its name
 * says, and each result needs every argument it reads.  Included once
 * per program (it defines ms_call), after check.h (NOINLINE), by a file
 * built traceable.
 */
#ifndef FHOOK_TEST_ARGREGS_H
#define FHOOK_TEST_ARGREGS_H

#include <stdbool.h>
#include <string.h>

static volatile long a0_global = 10;

NOINLINE long a0_traced(void)
{
	__asm__ volatile("" ::: "memory");
	return a0_global + 1;
}

NOINLINE long a1_traced(long a)
{
	__asm__ volatile("" ::: "memory");
	return a * 3 + 1;
}

NOINLINE long a2_traced(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a - b;
}

NOINLINE long a3_traced(long a, long b, long c)
{
	__asm__ volatile("" ::: "memory");
	return a * b + c;
}

/* %rdx written on every path: nothing of it returned */
NOINLINE long a2_dx_traced(long a, long b)
{
	__asm__ volatile("xorl %%edx, %%edx" ::: "rdx", "memory");
	return a * 2 + b;
}

struct lv_pair {
	long a, b;
};

/* the third argument returned untouched in %rdx */
NOINLINE struct lv_pair pass_traced(long a, long b, long c)
{
	__asm__ volatile("" ::: "memory");
	return (struct lv_pair){ a, c };
}

NOINLINE long a4_traced(long a, long b, long c, long d)
{
	__asm__ volatile("" ::: "memory");
	return a + b * c - d;
}

/*
 * An ms_abi function, called as the Microsoft ABI has it: %rsi and %rdi
 * are callee-saved there, and the caller (ms_call, which returns whether
 * they survived) keeps its values in them across the call.  It reads no
 * register and writes %rdx: only %rdi and %rsi are saved.
 */
__attribute__((ms_abi)) NOINLINE long ms_traced(void)
{
	__asm__ volatile("xorl %%edx, %%edx" ::: "rdx", "memory");
	return a0_global + 2;
}

long ms_call(void);
__asm__(".text\n.globl ms_call\n.type ms_call,@function\nms_call:\n"
	"	subq $40, %rsp\n"		/* the callee's home area, aligned */
	"	movl $0x1111, %esi\n"
	"	movl $0x2222, %edi\n"
	"	call ms_traced\n"
	"	xorl %eax, %eax\n"
	"	cmpq $0x1111, %rsi\n"
	"	jne 1f\n"
	"	cmpq $0x2222, %rdi\n"
	"	jne 1f\n"
	"	movl $1, %eax\n"
	"1:	addq $40, %rsp\n"
	"	ret\n.previous\n");

static inline bool lv_endbr(const unsigned char *b)
{
	return b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa;
}

/* the site at the entry of @fn (after an endbr64) */
static inline unsigned long site_of(void *fn)
{
	return (unsigned long)fn + (lv_endbr(fn) ? 4 : 0);
}

/*
 * The trampoline the site at the entry of @fn jumps to, read off its
 * call, its stub's "lea slot(%rip), %r11" and the slot's first word.
 */
static inline unsigned long site_tramp(void *fn)
{
	const unsigned char *b = (const unsigned char *)site_of(fn);
	int rel;

	if (b[0] != 0xe8)
		return 0;
	memcpy(&rel, b + 1, 4);
	b += 5 + rel;
	if (b[0] != 0x4c || b[1] != 0x8d || b[2] != 0x1d)
		return 0;
	memcpy(&rel, b + 3, 4);
	return *(unsigned long *)(b + 7 + rel);
}

#endif
