/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64 editions of the functions of kp_funcs.S that test_kretprobes
 * and test_kprobes_stress use, with the same results; no fhook site, so
 * each probe is a brk.  Some start with their landing pad, others with a
 * pc-relative instruction (simulated) or a plain one (run out of line).
 */
	.text
	.p2align 2

#define FUNC_NOBTI(name)	.globl name; .type name, %function; name:
#define FUNC(name)	FUNC_NOBTI(name) hint #34
#define END(name)	.size name, . - name

/* two instructions: arg */
FUNC(kp_two)
	mov	w0, w0
	ret
END(kp_two)

/* 3 * arg */
FUNC(kp_helper)
	add	w0, w0, w0, lsl #1
	ret
END(kp_helper)

/* a frame, and the argument through the stack: arg + 2 */
FUNC(kp_push)
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	str	w0, [sp, #28]
	ldr	w0, [sp, #28]
	add	w0, w0, #2
	ldp	x29, x30, [sp], #32
	ret
END(kp_push)

/* recursion: arg, from arg + 1 nested calls */
FUNC(kp_rec)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	cbz	w0, 1f
	sub	w0, w0, #1
	bl	kp_rec
	add	w0, w0, #1
1:	ldp	x29, x30, [sp], #16
	ret
END(kp_rec)

/* a pc-relative load first: kp_data + arg */
FUNC_NOBTI(kp_riprel)
	adrp	x1, kp_data
	ldr	w1, [x1, :lo12:kp_data]
	add	w0, w0, w1
	ret
END(kp_riprel)

/* a loop, its branch back near the entry: 1 + 2 + ... + arg */
FUNC_NOBTI(kp_jcc_back)
	mov	w1, wzr
1:	add	w1, w1, w0
	subs	w0, w0, #1
	b.ne	1b
	mov	w0, w1
	ret
END(kp_jcc_back)

/* a leaf through the stack below its pointer: arg + 100 */
FUNC(kp_leaf)
	str	w0, [sp, #-16]
	mov	w0, #0
	ldr	w1, [sp, #-16]
	add	w0, w0, w1
	add	w0, w0, #100
	ret
END(kp_leaf)

/* a tail call after one instruction: 3 * (arg + 1) */
FUNC_NOBTI(kp_tail)
	add	w0, w0, #1
	b	kp_helper
END(kp_tail)

/* a call near the entry (the return address kept in x9): 3 * arg + 1 */
FUNC_NOBTI(kp_call_first)
	mov	x9, x30
	bl	kp_helper
	add	w0, w0, #1
	ret	x9
END(kp_call_first)

	.data
	.p2align 2
	.globl	kp_data
kp_data:
	.word	1000

	.section .note.GNU-stack, "", %progbits
