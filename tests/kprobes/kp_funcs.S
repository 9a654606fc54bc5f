/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hard cases of relocating a function's first bytes, written out by
 * hand so that the bytes are exactly these (test_kprobes.c probes them).
 * Every function returns something that depends on its argument.
 */
	.text

#define FUNC(name) .globl name; .type name, @function; name:
#define END(name) .size name, . - name

/* the jump-table dispatch gcc writes for a switch (position-independent) */
.macro DISPATCH table, reg
	leaq	\table(%rip), %rdx
	movslq	(%rdx,%rdi,4), \reg
	addq	%rdx, \reg
	jmp	*\reg
.endm

/* a rip-relative load in the first bytes: kp_data + arg */
FUNC(kp_riprel)
	movl	kp_data(%rip), %eax
	addl	%edi, %eax
	ret
END(kp_riprel)

/* a jcc rel8 back into the first five bytes: 1 + 2 + ... + arg */
FUNC(kp_jcc_back)
	xorl	%eax, %eax
1:	addl	%edi, %eax
	decl	%edi
	jnz	1b
	ret
END(kp_jcc_back)

/* the same loop with a call in it, which cannot be moved: max(arg, 1) */
FUNC(kp_back_call)
	xorl	%ecx, %ecx
1:	addl	$1, %ecx
	call	kp_ret7
	cmpl	%edi, %ecx
	jl	1b
	movl	%ecx, %eax
	ret
END(kp_back_call)

/* the loop moved whole, but a branch from past it enters it: max(arg, 1) */
FUNC(kp_loop_entered)
	xorl	%eax, %eax
1:	addl	$1, %eax
2:	cmpl	%edi, %eax
	jl	1b
	ret
	jmp	2b
END(kp_loop_entered)

/* two bytes: arg */
FUNC(kp_two)
	xchgl	%edi, %eax
	ret
END(kp_two)

/* endbr64 first: arg + 1 */
FUNC(kp_endbr)
	endbr64
	leal	1(%rdi), %eax
	ret
END(kp_endbr)

/* a jump table: 10 + arg for 0..3, else -1 */
FUNC(kp_switch)
	cmpl	$3, %edi
	ja	9f
	DISPATCH kp_table, %rax
10:	movl	$10, %eax
	ret
11:	movl	$11, %eax
	ret
12:	movl	$12, %eax
	ret
13:	movl	$13, %eax
	ret
9:	movl	$-1, %eax
	ret
END(kp_switch)

/* a jump table with an entry at +2, inside the first five bytes: 2, 1, 1 */
FUNC(kp_switch_in)
	xorl	%eax, %eax
20:	addl	$1, %eax
	subl	$1, %edi
	js	29f
	cmpl	$1, %edi
	ja	29f
	DISPATCH kp_table2, %rcx
29:	ret
END(kp_switch_in)

/* 3 * arg, the target of the tail calls and calls below */
FUNC(kp_helper)
	leal	(%rdi,%rdi,2), %eax
	ret
END(kp_helper)

/* a tail call after one instruction: 3 * (arg + 1) */
FUNC(kp_tail)
	addl	$1, %edi
	jmp	kp_helper
END(kp_tail)

/* a tail call first: 3 * arg */
FUNC(kp_tail0)
	{disp32} jmp	kp_helper
END(kp_tail0)

/* a call first (the callee must return into the original code): 3 * arg + 1 */
FUNC(kp_call_first)
	call	kp_helper
	addl	$1, %eax
	ret
END(kp_call_first)

/* push and sub rsp: arg + 2, through the stack */
FUNC(kp_push)
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$16, %rsp
	movl	%edi, -4(%rbp)
	movl	-4(%rbp), %eax
	addl	$2, %eax
	leave
	ret
END(kp_push)

/* five bytes, and the next function right after: arg + 5, arg + 7 */
FUNC(kp_five)
	leal	5(%rdi), %eax
	nop
	ret
END(kp_five)
FUNC(kp_after)
	movl	%edi, %eax
	addl	$7, %eax
	ret
END(kp_after)

/* three bytes, then the padding up to the next 16 bytes: arg + 3 */
	.p2align 4
FUNC(kp_short_pad)
	leal	3(%rdi), %eax
	ret
END(kp_short_pad)
	.p2align 4

/* 7, where a pre_handler may send a call */
FUNC(kp_ret7)
	movl	$7, %eax
	ret
END(kp_ret7)

/* a loop whose head is at +5, with a red-zone store: for offset probes */
FUNC(kp_leaf)
	movl	%edi, -8(%rsp)
	movl	$0, %eax
	addl	-8(%rsp), %eax
	addl	$100, %eax
	ret
END(kp_leaf)

/* recursion: arg, counted down one call at a time */
FUNC(kp_rec)
	pushq	%rbx
	movl	%edi, %ebx
	xorl	%eax, %eax
	testl	%edi, %edi
	jz	1f
	leal	-1(%rdi), %edi
	call	kp_rec
	addl	$1, %eax
1:	popq	%rbx
	ret
END(kp_rec)

/*
 * post_handlers on branches (the probe at the label _at): the handler
 * must run after the instruction, wherever it went.  The labels are no
 * symbols (a symbol would make them functions of their own): their
 * addresses are in kp_post_points.
 */
/* jz: arg == 0 -> 20 (taken), else 10 */
FUNC(kp_post_jcc)
	testl	%edi, %edi
.Lkp_post_jcc_at:
	jz	1f
.Lkp_post_jcc_fall:
	movl	$10, %eax
	ret
.Lkp_post_jcc_taken:
1:	movl	$20, %eax
	ret
END(kp_post_jcc)

/* a call first: 7 + arg */
FUNC(kp_post_call)
	call	kp_ret7
.Lkp_post_call_back:
	addl	%edi, %eax
	ret
END(kp_post_call)

/* an indirect jmp through a register: arg + 3 */
FUNC(kp_post_jmpind)
	leaq	1f(%rip), %rax
.Lkp_post_jmpind_at:
	jmp	*%rax
	ud2
.Lkp_post_jmpind_to:
1:	leal	3(%rdi), %eax
	ret
END(kp_post_jmpind)

/* the ret probed: arg * 2 */
FUNC(kp_post_ret)
	leal	(%rdi,%rdi), %eax
.Lkp_post_ret_at:
	ret
END(kp_post_ret)

/* pushfq probed: the trap flag as the function sees it (0), plus arg */
FUNC(kp_post_pushf)
	pushfq
	popq	%rax
	andl	$0x100, %eax
	addl	%edi, %eax
	ret
END(kp_post_pushf)

/* popfq probed: the flags it pops are the program's; arg */
FUNC(kp_post_popf)
	pushq	$0x202
.Lkp_post_popf_at:
	popfq
	movl	%edi, %eax
	ret
END(kp_post_popf)

/* rep stosb probed (one exit after the whole string, not one per byte): 0 */
FUNC(kp_post_rep)
	movl	%edi, %ecx
	leaq	kp_buf(%rip), %rdi
	xorl	%eax, %eax
.Lkp_post_rep_at:
	rep stosb
	movl	%ecx, %eax
	ret
END(kp_post_rep)

/* a call through rip-relative memory: 7 + arg */
FUNC(kp_post_callmem)
	call	*kp_ptr7(%rip)
	addl	%edi, %eax
	ret
END(kp_post_callmem)

	.section .rodata
	.balign	4
kp_table:
	.long	10b - kp_table, 11b - kp_table, 12b - kp_table, 13b - kp_table

kp_table2:
	.long	20b - kp_table2, 29b - kp_table2

	.data
	.globl	kp_post_points
	.balign	8
kp_post_points:
	.quad	.Lkp_post_jcc_at, .Lkp_post_jcc_fall, .Lkp_post_jcc_taken, .Lkp_post_call_back
	.quad	.Lkp_post_jmpind_at, .Lkp_post_jmpind_to, .Lkp_post_ret_at
	.quad	.Lkp_post_popf_at, .Lkp_post_rep_at
kp_ptr7:
	.quad	kp_ret7
	.bss
	.balign	64
kp_buf:
	.skip	1 << 20
	.data

	.globl	kp_data
	.balign	4
kp_data:
	.long	1000

	.section .note.GNU-stack, "", @progbits
