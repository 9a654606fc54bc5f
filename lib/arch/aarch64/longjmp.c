// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The longjmp interposers on aarch64: each tells the return-hook layer
 * which stack pointer the jump restores (the frames below it are gone,
 * and so are their shadow entries), then jumps on to libc's function.
 * And the makecontext() interposer: it tells which memory a context will
 * run on, a stack of its own even where it lies inside the thread's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <ucontext.h>

#include "internal.h"

static const char *const longjmp_names[] = { "longjmp", "_longjmp", "siglongjmp",
					     "__longjmp_chk" };
typedef void (*longjmp_fn)(struct __jmp_buf_tag *env, int val);
static longjmp_fn real_longjmps[4];
static void (*before_longjmp)(unsigned long target_sp);

/*
 * The stack pointer a jmp_buf restores.  glibc's setjmp stores it at
 * JB_SP mangled with the process's pointer guard (PTR_MANGLE on aarch64:
 * an exclusive or with __pointer_chk_guard, which the dynamic loader
 * exports).  The guard is proven on a jmp_buf of our own before any
 * jump is reported: a C library that keeps the stack pointer otherwise
 * gets no interposed reports, the frames a jump leaves behind are then
 * dropped by the stack-pointer comparisons of the next hook instead.
 */
#define JB_SP	13

static const unsigned long *pointer_guard;

static unsigned long jmp_buf_sp(struct __jmp_buf_tag *env)
{
	return (unsigned long)env->__jmpbuf[JB_SP] ^ *pointer_guard;
}

static __attribute__((noinline)) unsigned long sp_here(void)
{
	return (unsigned long)__builtin_frame_address(0);
}

/* Does the guard demangle what setjmp stored to (near) the stack pointer of its call? */
static __attribute__((noinline)) bool guard_proven(void)
{
	jmp_buf env;
	unsigned long sp, here;

	if (setjmp(env))
		return false;	/* never jumped to */
	sp = jmp_buf_sp(env);
	here = sp_here();
	/* setjmp ran on this frame's stack pointer; sp_here's frame lies just below it */
	return sp > here && sp - here < 4096;
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
	if (!pointer_guard) {
		pointer_guard = dlsym(RTLD_DEFAULT, "__pointer_chk_guard");
		if (pointer_guard && !guard_proven())
			pointer_guard = NULL;
	}
	if (pointer_guard)
		__atomic_store_n(&before_longjmp, before_jump, __ATOMIC_RELEASE);
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
	void (*before)(unsigned long) = __atomic_load_n(&before_longjmp, __ATOMIC_ACQUIRE);

	if (before)
		before(jmp_buf_sp(env));
	return __atomic_load_n(&real_longjmps[which], __ATOMIC_RELAXED);
}

/*
 * The interposers are written in assembly: they jump on to libc's
 * function with their own frame gone, so that instrumentation that keeps
 * a shadow stack per call sees no call that never returns.  A frame
 * record keeps backtraces from them whole.
 */
#define LONGJMP_INTERPOSER(name, which)						\
	__asm__(".pushsection .text\n"						\
		".globl " #name "\n"						\
		".type " #name ", %function\n"					\
		".p2align 3\n"							\
		#name ":\n"							\
		"	.cfi_startproc\n"					\
		"	bti	c\n"						\
		"	stp	x29, x30, [sp, #-32]!\n"			\
		"	.cfi_def_cfa_offset 32\n"				\
		"	.cfi_offset x29, -32\n"					\
		"	.cfi_offset x30, -24\n"					\
		"	mov	x29, sp\n"					\
		"	stp	x0, x1, [sp, #16]\n"				\
		"	mov	w1, #" #which "\n"				\
		"	bl	fhook_arch_longjmp_prepare\n"			\
		"	mov	x16, x0\n"					\
		"	ldp	x0, x1, [sp, #16]\n"				\
		"	ldp	x29, x30, [sp], #32\n"				\
		"	.cfi_restore x29\n"					\
		"	.cfi_restore x30\n"					\
		"	.cfi_def_cfa_offset 0\n"				\
		"	br	x16\n"						\
		"	.cfi_endproc\n"						\
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
 * makecontext(ucp, func, argc, ...) passes its arguments on in x0-x7 and,
 * past eight, on the stack: the interposer keeps every argument register
 * and jumps on with its frame gone, so the stack arguments are where
 * libc's function finds them.
 */
__asm__(".pushsection .text\n"
	".globl makecontext\n"
	".type makecontext, %function\n"
	".p2align 3\n"
	"makecontext:\n"
	"	.cfi_startproc\n"
	"	bti	c\n"
	"	stp	x29, x30, [sp, #-80]!\n"
	"	.cfi_def_cfa_offset 80\n"
	"	.cfi_offset x29, -80\n"
	"	.cfi_offset x30, -72\n"
	"	mov	x29, sp\n"
	"	stp	x0, x1, [sp, #16]\n"
	"	stp	x2, x3, [sp, #32]\n"
	"	stp	x4, x5, [sp, #48]\n"
	"	stp	x6, x7, [sp, #64]\n"
	"	bl	fhook_arch_makecontext_prepare\n"
	"	mov	x16, x0\n"
	"	ldp	x0, x1, [sp, #16]\n"
	"	ldp	x2, x3, [sp, #32]\n"
	"	ldp	x4, x5, [sp, #48]\n"
	"	ldp	x6, x7, [sp, #64]\n"
	"	ldp	x29, x30, [sp], #80\n"
	"	.cfi_restore x29\n"
	"	.cfi_restore x30\n"
	"	.cfi_def_cfa_offset 0\n"
	"	br	x16\n"
	"	.cfi_endproc\n"
	".size makecontext, .-makecontext\n"
	".popsection\n");
