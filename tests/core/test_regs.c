// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every argument register, the vector argument registers (xmm0-7,
 * q0-7), %al of a varargs call, the static chain (%r10, x18) and the
 * callee-saved registers reach a hooked function unchanged, although the
 * handler clobbers every register the ABI lets it clobber.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE double many_args(long a, long b, long c, long d, long e, long f, double x0, double x1,
			  double x2, double x3, double x4, double x5, double x6, double x7,
			  long g, double x8)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + x0 + 2 * x1 + 3 * x2 +
	       4 * x3 + 5 * x4 + 6 * x5 + 7 * x6 + 8 * x7 + 9 * x8;
}

NOINLINE double var_sum(int n, ...)
{
	va_list ap;
	double s = 0;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		s += va_arg(ap, double);
	va_end(ap);
	return s;
}

typedef float v4f __attribute__((vector_size(16)));
NOINLINE v4f vec_add(v4f a, v4f b) { return a + b; }

static volatile unsigned long hits;

static void clobber(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	char buf[128];
	volatile double d = 1.2345;

	hits++;
	/* floating point and vector work in the handler */
	snprintf(buf, sizeof(buf), "%f %f %g", d * 3, d / 7, d + 1e10);
#if defined(__aarch64__)
	__asm__ volatile("movi v0.16b, #0\n\tmovi v1.16b, #0\n\tmovi v2.16b, #0\n\t"
			 "movi v3.16b, #0\n\tmovi v4.16b, #0\n\tmovi v5.16b, #0\n\t"
			 "movi v6.16b, #0\n\tmovi v7.16b, #0\n\t"
			 "mov x0, #-1\n\tmov x1, #-1\n\tmov x2, #-1\n\tmov x3, #-1\n\t"
			 "mov x4, #-1\n\tmov x5, #-1\n\tmov x6, #-1\n\tmov x7, #-1\n\t"
			 "mov x8, #-1\n\tmov x9, #-1\n\tmov x10, #-1\n\tmov x11, #-1\n\t"
			 "mov x12, #-1\n\tmov x13, #-1\n\tmov x14, #-1\n\tmov x15, #-1\n\t"
			 "mov x16, #-1\n\tmov x17, #-1\n\tmov x18, #-1"
			 ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "x0", "x1", "x2", "x3",
			 "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14",
			 "x15", "x16", "x17", "x18", "memory");
#else
	__asm__ volatile("pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
			 "pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
			 "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"
			 "mov $-1, %%r10\n\tmov $-1, %%r11\n\tmov $-1, %%rax\n\t"
			 "mov $-1, %%rcx\n\tmov $-1, %%rdx\n\tmov $-1, %%rsi\n\tmov $-1, %%rdi\n\t"
			 "mov $-1, %%r8\n\tmov $-1, %%r9"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			 "r10", "r11", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "memory");
#endif
}

#if defined(__aarch64__)
#define CHAIN_REG	"x18"
#define VARARGS_NAME	"varargs"		/* doubles in v0-v7, no count */
#define VECTOR_NAME	"vector_q"
/*
 * A static-chain call: x18 carries the chain into the nested function,
 * whose pads are the compiler's (two words before the entry, two at it).
 */
__asm__(".text\n"
	".p2align 3\n"
	".Lchain_fn_pad:\n	nop\n	nop\n"
	".globl chain_fn\n.type chain_fn,%function\nchain_fn:\n"
	"	nop\n	nop\n"
	"	mov x0, x18\n"
	"	ret\n"
	".size chain_fn, .-chain_fn\n"
	".section __patchable_function_entries,\"awo\",%progbits,chain_fn\n"
	".p2align 3\n.8byte .Lchain_fn_pad\n.text\n"
	/* call chain_fn with x18 = x0 and every callee-saved register set */
	".globl call_chain\n.type call_chain,%function\ncall_chain:\n"
	"	stp x29, x30, [sp, #-96]!\n	mov x29, sp\n"
	"	stp x19, x20, [sp, #16]\n	stp x21, x22, [sp, #32]\n	stp x23, x24, [sp, #48]\n"
	"	stp x25, x26, [sp, #64]\n	stp x27, x28, [sp, #80]\n"
	"	mov x19, #0x1111\n	mov x20, #0x2222\n	mov x21, #0x3333\n	mov x22, #0x4444\n"
	"	mov x23, #0x5555\n	mov x24, #0x6666\n	mov x25, #0x7777\n	mov x26, #0x8888\n"
	"	mov x27, #0x9999\n	mov x28, #0xaaaa\n"
	"	mov x18, x0\n	bl chain_fn\n"
	"	mov x2, #0\n"
	"	mov x1, #0x1111\n	cmp x19, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x2222\n	cmp x20, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x3333\n	cmp x21, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x4444\n	cmp x22, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x5555\n	cmp x23, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x6666\n	cmp x24, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x7777\n	cmp x25, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x8888\n	cmp x26, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0x9999\n	cmp x27, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, #0xaaaa\n	cmp x28, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	mov x1, sp\n	cmp x29, x1\n	cset x3, ne\n	orr x2, x2, x3\n"
	"	orr x0, x0, x2, lsl #63\n"
	"	ldp x19, x20, [sp, #16]\n	ldp x21, x22, [sp, #32]\n	ldp x23, x24, [sp, #48]\n"
	"	ldp x25, x26, [sp, #64]\n	ldp x27, x28, [sp, #80]\n"
	"	ldp x29, x30, [sp], #96\n"
	"	ret\n.size call_chain, .-call_chain\n");
#else
#define CHAIN_REG	"r10"
#define VARARGS_NAME	"varargs_al"	/* %al: the vector registers used */
#define VECTOR_NAME	"vector_xmm"
/* A static-chain call: %r10 carries the chain into the nested function. */
__asm__(".text\n"
	".globl chain_fn\n.type chain_fn,@function\n.p2align 4\nchain_fn:\n"
	"	.byte 0x90, 0x90, 0x90, 0x90, 0x90\n"
	"	mov %r10, %rax\n"
	"	ret\n"
	".size chain_fn, .-chain_fn\n"
	".section __patchable_function_entries,\"awo\",@progbits,chain_fn\n"
	".p2align 3\n.quad chain_fn\n.text\n"
	/* call chain_fn with %r10 = %rdi and every callee-saved register set */
	".globl call_chain\n.type call_chain,@function\ncall_chain:\n"
	"	push %rbx\n	push %rbp\n	push %r12\n	push %r13\n	push %r14\n	push %r15\n"
	"	mov $0x1111, %rbx\n	mov $0x2222, %rbp\n	mov $0x3333, %r12\n"
	"	mov $0x4444, %r13\n	mov $0x5555, %r14\n	mov $0x6666, %r15\n"
	"	mov %rdi, %r10\n	call chain_fn\n"
	"	xor %rdx, %rdx\n"
	"	cmp $0x1111, %rbx\n	setne %dl\n	cmp $0x2222, %rbp\n	setne %cl\n	or %cl, %dl\n"
	"	cmp $0x3333, %r12\n	setne %cl\n	or %cl, %dl\n	cmp $0x4444, %r13\n	setne %cl\n	or %cl, %dl\n"
	"	cmp $0x5555, %r14\n	setne %cl\n	or %cl, %dl\n	cmp $0x6666, %r15\n	setne %cl\n	or %cl, %dl\n"
	"	shl $63, %rdx\n	or %rdx, %rax\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n	pop %r12\n	pop %rbp\n	pop %rbx\n"
	"	ret\n.size call_chain, .-call_chain\n");
#endif
unsigned long call_chain(unsigned long chain);

int main(void)
{
	const char *variant[2] = { "args", "regs" };
	int v;

	for (v = 0; v < 2; v++) {
		struct ftrace_ops ops = { .func = clobber };
		char name[64];
		double want, got;
		v4f a = { 1, 2, 3, 4 }, b = { 10, 20, 30, 40 }, r;
		unsigned long c;

		if (v)
			ops.flags = FTRACE_OPS_FL_SAVE_REGS;
		ftrace_set_filter(&ops, (unsigned char *)"many_args var_sum vec_add chain_fn", 34, 1);
		snprintf(name, sizeof(name), "%s_register", variant[v]);
		CHECK_EQ(register_ftrace_function(&ops), 0, name);
		hits = 0;

		want = 1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 + 7 * 7 + 0.5 + 2 * 1.5 + 3 * 2.5 +
		       4 * 3.5 + 5 * 4.5 + 6 * 5.5 + 7 * 6.5 + 8 * 7.5 + 9 * 8.5;
		got = many_args(1, 2, 3, 4, 5, 6, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 7, 8.5);
		snprintf(name, sizeof(name), "%s_all_arguments", variant[v]);
		CHECK(got == want, name, "%f vs %f", got, want);

		got = var_sum(8, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0);
		snprintf(name, sizeof(name), "%s_%s", variant[v], VARARGS_NAME);
		CHECK(got == 36.0, name, "%f", got);

		r = vec_add(a, b);
		snprintf(name, sizeof(name), "%s_%s", variant[v], VECTOR_NAME);
		CHECK(r[0] == 11 && r[1] == 22 && r[2] == 33 && r[3] == 44, name, "%f %f %f %f",
		      r[0], r[1], r[2], r[3]);

		c = call_chain(0xabcdef);
		snprintf(name, sizeof(name), "%s_static_chain_%s", variant[v], CHAIN_REG);
		CHECK((c & ~(1UL << 63)) == 0xabcdef, name, "%#lx", c);
		snprintf(name, sizeof(name), "%s_callee_saved", variant[v]);
		CHECK(!(c >> 63), name, "a callee-saved register changed");

		snprintf(name, sizeof(name), "%s_handler_ran", variant[v]);
		CHECK_EQ(hits, 4, name);
		unregister_ftrace_function(&ops);
		ftrace_free_filter(&ops);	/* the ops is on the stack, as a DYNAMIC one */
	}
	return check_exit();
}
