/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How a hooked return should be made, for the branch predictors (bench/tight_ret.c):
 * four ways for a function whose patchable site sends it to a trampoline
 * that hooks its return, each with a one-word shadow stack.
 *
 *   A  swap: the site calls the trampoline, which swaps the caller's
 *      return address for a stub and returns into the body; the body's
 *      ret goes to the stub, which jumps to the caller (fhook's way).
 *   B  call-through from a call site, back with push + ret.
 *   C  call-through from a call site, back with an indirect jmp.
 *   D  the site jumps to a trampoline of its own (which knows the body),
 *      which calls the body and returns to the caller with push + ret:
 *      every ret pairs with a call.
 */
	.text
	.globl	f_a, f_b, f_c, f_d

.macro BODY
	addl	$1, %edi
	movl	%edi, %eax
	ret
.endm

.macro SHADOW_PUSH reg
	movq	shadow_top(%rip), %rcx
	movq	\reg, (%rcx)
	addq	$8, %rcx
	movq	%rcx, shadow_top(%rip)
.endm

.macro SHADOW_POP
	movq	shadow_top(%rip), %rcx
	subq	$8, %rcx
	movq	%rcx, shadow_top(%rip)
.endm

f_a:	call	tramp_a
	BODY
f_b:	call	tramp_b
	BODY
f_c:	call	tramp_c
	BODY
f_d:	jmp	tramp_d
body_d:	BODY

tramp_a:
	movq	8(%rsp), %rax
	SHADOW_PUSH %rax
	leaq	stub_a(%rip), %rax
	movq	%rax, 8(%rsp)
	ret
stub_a:
	SHADOW_POP
	jmp	*(%rcx)

tramp_b:
	popq	%r11
	popq	%rax
	SHADOW_PUSH %rax
	call	*%r11
	SHADOW_POP
	pushq	(%rcx)
	ret

tramp_c:
	popq	%r11
	popq	%rdx
	SHADOW_PUSH %rdx
	call	*%r11
	SHADOW_POP
	jmp	*(%rcx)

tramp_d:
	popq	%rax
	SHADOW_PUSH %rax
	call	body_d
	SHADOW_POP
	pushq	(%rcx)
	ret

	.data
shadow_top:
	.quad	shadow
	.bss
shadow:
	.skip	4096
	.section .note.GNU-stack,"",@progbits
