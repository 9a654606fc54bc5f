// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Counted redirects (lib/arch/arch.h): the thunk a handler points the ip
 * at, which pops the thread's pending redirect, uncounts the thread and
 * jumps to the target.
 */
#include <stddef.h>

#include "internal.h"

__thread struct fhook_redirect_stack fhook_redirect_tls
	__attribute__((tls_model("initial-exec"), visibility("hidden"), used));

_Static_assert(offsetof(struct fhook_redirect_stack, e) == 8, "thunk: entries from 8");
_Static_assert(sizeof(struct fhook_redirect) == 16, "thunk: 16 bytes an entry");
_Static_assert(offsetof(struct fhook_redirect, inflight) == 8, "thunk: inflight at 8");

/*
 * At the target's entry, with the stack as the caller left it: %r11 is
 * scratch there (the trampoline already clobbered it); everything else,
 * including %rax (varargs) and %rcx/%rdx (arguments), must reach the
 * target unchanged.  The flags are not preserved across calls.
 */
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl	fhook_redirect_thunk\n"
	"	.hidden	fhook_redirect_thunk\n"
	"	.type	fhook_redirect_thunk, @function\n"
	"fhook_redirect_thunk:\n"
	"	.cfi_startproc\n"
	"	pushq	%rax\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq	%rcx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq	%rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq	fhook_redirect_tls@gottpoff(%rip), %r11\n"
	"	addq	%fs:0, %r11\n"
	"	movl	(%r11), %eax\n"
	"	subl	$1, %eax\n"
	"	movl	%eax, %ecx\n"
	"	shll	$4, %ecx\n"
	"	movq	8(%r11,%rcx), %rdx\n"		/* the target */
	"	movq	16(%r11,%rcx), %rcx\n"		/* inflight */
	"	movl	%eax, (%r11)\n"			/* entry popped */
	"	movq	%rdx, %r11\n"
	"	lock decq (%rcx)\n"			/* last touch of the owner's memory */
	"	popq	%rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq	%rcx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq	%rax\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp	*%r11\n"
	"	.cfi_endproc\n"
	"	.size	fhook_redirect_thunk, .-fhook_redirect_thunk\n");
