/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * aarch64 functions with one instruction of each class a kprobe treats
 * apart, each at a global label (kpa_*_at) for the test to probe:
 * out-of-line ones, and the pc-relative ones that are simulated.  No
 * fhook site: every probe here is a brk.
 */
	.text
	.p2align 2

/* each entry a landing pad: the test calls through pointers, with BTI on in _pac */
#define FUNC_NOBTI(name)	.globl name; .type name, %function; name:
#define FUNC(name)	FUNC_NOBTI(name) hint #34
#define AT(name)	.globl name; name:
#define END(name)	.size name, . - name

/* x0 + 3: "bti c" (the landing pad), an add, a ret */
FUNC_NOBTI(kpa_add)
AT(kpa_add_bti)
	hint	#34			/* bti c */
AT(kpa_add_at)
	add	x0, x0, #3
AT(kpa_add_ret)
	ret
END(kpa_add)

/* x0 + 5: its first words are overwritten by the test, as another tool would patch them */
FUNC_NOBTI(kpa_victim)
AT(kpa_victim_at)
	add	x0, x0, #2
	add	x0, x0, #3
	ret
END(kpa_victim)

/* the address of kpa_data, by adr */
FUNC(kpa_adr)
AT(kpa_adr_at)
	adr	x0, kpa_near
	ret
END(kpa_adr)
	.globl kpa_near
kpa_near:
	.word	0

/* the address of kpa_data, by adrp + add */
FUNC(kpa_adrp)
AT(kpa_adrp_at)
	adrp	x0, kpa_data
	add	x0, x0, :lo12:kpa_data
	ret
END(kpa_adrp)

/* literal loads: 0xdeadbeef (w, zero-extended), a doubleword, -5 (sw) */
FUNC(kpa_ldr_w)
AT(kpa_ldr_w_at)
	ldr	w0, 1f
	ret
	.p2align 3
1:	.word	0xdeadbeef, 0x11111111
END(kpa_ldr_w)

FUNC(kpa_ldr_x)
AT(kpa_ldr_x_at)
	ldr	x0, 1f
	ret
	.p2align 3
1:	.quad	0x0123456789abcdef
END(kpa_ldr_x)

FUNC(kpa_ldrsw)
AT(kpa_ldrsw_at)
	ldrsw	x0, 1f
	ret
	.p2align 2
1:	.word	-5
END(kpa_ldrsw)

/* simd literal loads, the register read back whole (the upper part zeroed) */
FUNC(kpa_ldr_s)
	movi	v0.2d, #0xffffffffffffffff
AT(kpa_ldr_s_at)
	ldr	s0, 1f
	mov	x0, v0.d[0]
	mov	x1, v0.d[1]
	eor	x0, x0, x1
	ret
	.p2align 2
1:	.word	0x40490fdb
END(kpa_ldr_s)

FUNC(kpa_ldr_d)
	movi	v0.2d, #0xffffffffffffffff
AT(kpa_ldr_d_at)
	ldr	d0, 1f
	mov	x0, v0.d[0]
	mov	x1, v0.d[1]
	eor	x0, x0, x1
	ret
	.p2align 3
1:	.quad	0x400921fb54442d18
END(kpa_ldr_d)

FUNC(kpa_ldr_q)
AT(kpa_ldr_q_at)
	ldr	q0, 1f
	mov	x0, v0.d[0]
	mov	x1, v0.d[1]
	eor	x0, x0, x1, lsl #1
	ret
	.p2align 4
1:	.quad	0x1111222233334444, 0x0101010101010101
END(kpa_ldr_q)

/* a prefetch of a literal: nothing to see but that the function goes on */
FUNC(kpa_prfm)
AT(kpa_prfm_at)
	prfm	pldl1keep, 1f
	mov	x0, #7
	ret
1:	.word	0
END(kpa_prfm)

/* b: 2 */
FUNC(kpa_b)
AT(kpa_b_at)
	b	1f
	mov	x0, #1
	ret
1:	mov	x0, #2
	ret
END(kpa_b)

/* bl: x0 + 10, through a call */
FUNC(kpa_bl)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
AT(kpa_bl_at)
	bl	kpa_callee
	ldp	x29, x30, [sp], #16
	ret
END(kpa_bl)

FUNC(kpa_callee)
	add	x0, x0, #10
	ret
END(kpa_callee)

/* b.cond: 200 for x0 < 5 (signed), else 100 */
FUNC(kpa_bcond)
	cmp	x0, #5
AT(kpa_bcond_at)
	b.lt	1f
	mov	x0, #100
	ret
1:	mov	x0, #200
	ret
END(kpa_bcond)

/* cbz x0: 20 if zero, else 10 */
FUNC(kpa_cbz)
AT(kpa_cbz_at)
	cbz	x0, 1f
	mov	x0, #10
	ret
1:	mov	x0, #20
	ret
END(kpa_cbz)

/* cbnz w0 (the low 32 bits): 30 if they are not zero, else 40 */
FUNC(kpa_cbnz_w)
AT(kpa_cbnz_w_at)
	cbnz	w0, 1f
	mov	x0, #40
	ret
1:	mov	x0, #30
	ret
END(kpa_cbnz_w)

/* tbz x0, #33: 50 if bit 33 is clear, else 60 */
FUNC(kpa_tbz)
AT(kpa_tbz_at)
	tbz	x0, #33, 1f
	mov	x0, #60
	ret
1:	mov	x0, #50
	ret
END(kpa_tbz)

/* tbnz w0, #3: 70 if bit 3 is set, else 80 */
FUNC(kpa_tbnz)
AT(kpa_tbnz_at)
	tbnz	w0, #3, 1f
	mov	x0, #80
	ret
1:	mov	x0, #70
	ret
END(kpa_tbnz)

/* br x16: 42 */
FUNC(kpa_br)
	adr	x16, 1f
AT(kpa_br_at)
	br	x16
	mov	x0, #1
	ret
1:	hint	#38			/* bti jc */
	mov	x0, #42
	ret
END(kpa_br)

/* blr x1: x0 + 10, through a call; blr x30 would read x30 before it changes */
FUNC(kpa_blr)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	adr	x1, kpa_callee
AT(kpa_blr_at)
	blr	x1
	ldp	x29, x30, [sp], #16
	ret
END(kpa_blr)

/*
 * paciasp first: x0 + 10 through a call, its return address signed and
 * authenticated (pointer authentication on: a copy run out of line must
 * sign it with the same stack pointer)
 */
FUNC_NOBTI(kpa_pac)
AT(kpa_pac_at)
	hint	#25			/* paciasp: a landing pad too */
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	kpa_callee
	ldp	x29, x30, [sp], #16
	hint	#29			/* autiasp */
	ret
END(kpa_pac)

/* refused: an exclusive pair (x0: a counter to increment), and svc */
FUNC(kpa_excl)
AT(kpa_excl_ldxr)
1:	ldxr	x1, [x0]
AT(kpa_excl_add)
	add	x1, x1, #1
AT(kpa_excl_stxr)
	stxr	w2, x1, [x0]
	cbnz	w2, 1b
AT(kpa_excl_after)
	mov	x0, x1
	ret
END(kpa_excl)

FUNC(kpa_svc)
	mov	x8, #172		/* getpid */
AT(kpa_svc_at)
	svc	#0
	ret
END(kpa_svc)

/*
 * Never run: words whose probe is accepted (up to kpa_words_refused: out
 * of line, or simulated) or refused with -EILSEQ (up to kpa_words_end),
 * each for its own reason (the exclusive ones last: what follows an
 * exclusive load is refused for that).
 */
	.arch	armv8.5-a
FUNC(kpa_words)
	stlr	x0, [x1]
	ldar	x0, [x1]
	casp	x0, x1, x2, x3, [x4]
	ldadd	x0, x1, [x2]
	mrs	x0, tpidr_el0
	msr	fpcr, x0
	dmb	ish
	paciasp
	autiasp
	hint	#36			/* bti j */
	xpaclri
	ldr	x0, [x1, #8]
	stp	x29, x30, [sp, #-16]!
	ret	x3
	.globl	kpa_words_refused
kpa_words_refused:
	retaa
	braaz	x0
	blraa	x0, x1
	eret
	hvc	#0
	brk	#1
	hlt	#0
	msr	daifset, #2
	yield
	wfe
	sev
	.inst	0x00000000		/* udf #0 */
	.inst	0x02000000		/* unallocated */
	ldaxp	x0, x1, [x2]
	stlxr	w0, x1, [x2]
	ldxrb	w0, [x1]
	.globl	kpa_words_end
kpa_words_end:
END(kpa_words)

	.data
	.p2align 3
	.globl kpa_data
kpa_data:
	.quad	0
	.section .note.GNU-stack, "", %progbits

/*
 * Built with -mbranch-protection=standard: say that this code has its
 * landing pads, or the linker leaves the whole program unguarded.
 */
#if defined(__ARM_FEATURE_BTI_DEFAULT)
	.pushsection .note.gnu.property, "a"
	.p2align 3
	.word	4			/* name size */
	.word	16			/* descriptor size */
	.word	5			/* NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.word	0xc0000000		/* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
	.word	4
	.word	3			/* BTI | PAC */
	.word	0
	.popsection
#endif
