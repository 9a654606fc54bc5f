// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The longjmp interposers: each tells the return-hook layer which stack
 * pointer the jump restores (the frames below it are gone, and so are
 * their shadow entries), then jumps on to libc's function.  And the
 * makecontext() interposer: it tells which memory a context will run on,
 * a stack of its own even where it lies inside the thread's.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <ucontext.h>

#include "internal.h"

static const char *const longjmp_names[] = { "longjmp", "_longjmp", "siglongjmp",
					     "__longjmp_chk" };
typedef void (*longjmp_fn)(struct __jmp_buf_tag *env, int val);
static longjmp_fn real_longjmps[4];

/*
 * The stack pointer a jmp_buf restores.  glibc stores it mangled with the
 * thread's pointer guard (PTR_MANGLE: xor with the guard at %fs:0x30 in the
 * x86-64 TCB, then rotate left by 17).
 */
#define JB_RSP	6

static unsigned long jmp_buf_sp(struct __jmp_buf_tag *env)
{
	unsigned long v = (unsigned long)env->__jmpbuf[JB_RSP], guard;

	__asm__("movq %%fs:0x30, %0" : "=r"(guard));
	v = (v >> 17) | (v << 47);
	return v ^ guard;
}

typedef void (*makecontext_fn)(void);
static makecontext_fn real_makecontext;
static void *(*makecontext_libc_sym)(const char *name);
static void (*makecontext_before)(unsigned long lo, unsigned long hi);

void __fhook_startup fhook_arch_longjmp_init(void (*before_jump)(unsigned long target_sp),
			     void *(*libc_sym)(const char *name))
{
	int i;

	for (i = 0; i < 4; i++)
		if (!__atomic_load_n(&real_longjmps[i], __ATOMIC_RELAXED))
			__atomic_store_n(&real_longjmps[i], (longjmp_fn)libc_sym(longjmp_names[i]),
					 __ATOMIC_RELAXED);
	__atomic_store_n(&fhook_arch_before_longjmp, before_jump, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&real_makecontext, __ATOMIC_RELAXED))
		__atomic_store_n(&real_makecontext, (makecontext_fn)libc_sym("makecontext"),
				 __ATOMIC_RELAXED);
	__atomic_store_n(&makecontext_libc_sym, libc_sym, __ATOMIC_RELEASE);
}

void __fhook_startup fhook_arch_makecontext_init(void (*new_stack)(unsigned long lo, unsigned long hi))
{
	__atomic_store_n(&makecontext_before, new_stack, __ATOMIC_RELEASE);
}

longjmp_fn fhook_arch_longjmp_prepare(struct __jmp_buf_tag *env, int which) __arch_hidden
	__attribute__((used));

/* Called by the interposers below: report, then name the libc function to go on to. */
longjmp_fn fhook_arch_longjmp_prepare(struct __jmp_buf_tag *env, int which)
{
	void (*before)(unsigned long) = __atomic_load_n(&fhook_arch_before_longjmp,
							 __ATOMIC_ACQUIRE);

	if (before)
		before(jmp_buf_sp(env));
	return __atomic_load_n(&real_longjmps[which], __ATOMIC_RELAXED);
}

/*
 * The interposers are written in assembly: they jump on to libc's
 * function with their own frame gone.  A C function that never returns
 * leaves its entry on the shadow stacks of instrumentation (ThreadSanitizer
 * pushes one per call, and pops the rest in its own longjmp interceptor,
 * which runs before ours): one per jump, until it overflows.
 */
#define LONGJMP_INTERPOSER(name, which)						\
	__asm__(".pushsection .text\n"						\
		".globl " #name "\n"						\
		".type " #name ", @function\n"					\
		".p2align 4\n"							\
		#name ":\n"							\
		"	.cfi_startproc\n"					\
		"	pushq %rdi\n"						\
		"	.cfi_adjust_cfa_offset 8\n"				\
		"	pushq %rsi\n"						\
		"	.cfi_adjust_cfa_offset 8\n"				\
		"	subq $8, %rsp\n"					\
		"	.cfi_adjust_cfa_offset 8\n"				\
		"	movl $" #which ", %esi\n"				\
		"	call fhook_arch_longjmp_prepare\n"			\
		"	addq $8, %rsp\n"					\
		"	.cfi_adjust_cfa_offset -8\n"				\
		"	popq %rsi\n"						\
		"	.cfi_adjust_cfa_offset -8\n"				\
		"	popq %rdi\n"						\
		"	.cfi_adjust_cfa_offset -8\n"				\
		"	jmp *%rax\n"						\
		"	.cfi_endproc\n"					\
		".size " #name ", .-" #name "\n"				\
		".popsection\n")

LONGJMP_INTERPOSER(longjmp, 0);
LONGJMP_INTERPOSER(_longjmp, 1);
LONGJMP_INTERPOSER(siglongjmp, 2);
LONGJMP_INTERPOSER(__longjmp_chk, 3);

makecontext_fn fhook_arch_makecontext_prepare(ucontext_t *ucp) __arch_hidden
	__attribute__((used));

/* Called by the interposer below: report the stack, then name libc's makecontext. */
makecontext_fn fhook_arch_makecontext_prepare(ucontext_t *ucp)
{
	void (*before)(unsigned long, unsigned long) =
		__atomic_load_n(&makecontext_before, __ATOMIC_ACQUIRE);
	makecontext_fn fn = __atomic_load_n(&real_makecontext, __ATOMIC_RELAXED);
	void *(*sym)(const char *) = __atomic_load_n(&makecontext_libc_sym, __ATOMIC_ACQUIRE);

	if (before && ucp && ucp->uc_stack.ss_size)
		before((unsigned long)ucp->uc_stack.ss_sp,
		       (unsigned long)ucp->uc_stack.ss_sp + ucp->uc_stack.ss_size);
	if (!fn && sym) {
		fn = (makecontext_fn)sym("makecontext");
		__atomic_store_n(&real_makecontext, fn, __ATOMIC_RELAXED);
	}
	return fn;
}

/*
 * makecontext(ucp, func, argc, ...) passes its arguments on in registers
 * and on the stack: the interposer keeps every argument register (and
 * %al, the variadic call's count of vector registers) and jumps on with
 * its frame gone, so the stack arguments are where libc's function finds
 * them.
 */
__asm__(".pushsection .text\n"
	".globl makecontext\n"
	".type makecontext, @function\n"
	".p2align 4\n"
	"makecontext:\n"
	"	.cfi_startproc\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rcx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %r8\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %r9\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rax\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call fhook_arch_makecontext_prepare\n"
	"	movq %rax, %r11\n"
	"	popq %rax\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %r9\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %r8\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rcx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp *%r11\n"
	"	.cfi_endproc\n"
	".size makecontext, .-makecontext\n"
	".popsection\n");
