/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread's words that the trampolines read on every call, in one
 * block of initial-exec TLS: util/thread_word.h's word at +0, then
 * arch/shadow.h's header pointer at SHADOW_SELF_TW.  One GOT load gives
 * the offset of both (TLS_WORDS, graph.h), where two variables placed by
 * the linker would each need their own.  C declares them as the two
 * variables they are; they are defined here only, in this order.
 */
#include "arch/shadow.h"

	.section .tdata,"awT",@progbits
	.p2align 4
	.globl	fhook_tw
	.hidden	fhook_tw
	.type	fhook_tw, @object
	.size	fhook_tw, 8
fhook_tw:
	.quad	0
	.globl	fhook_shadow_self
	.hidden	fhook_shadow_self
	.type	fhook_shadow_self, @object
	.size	fhook_shadow_self, 8
fhook_shadow_self:
	.quad	fhook_shadow_none + (SHADOW_HDR_OFF - SHADOW_NODE_OFF)	/* FHOOK_SHADOW_NONE */

#if SHADOW_SELF_TW != 8
#error "fhook_shadow_self follows fhook_tw"
#endif

	.section .note.GNU-stack,"",@progbits
