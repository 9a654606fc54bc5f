/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the templates of generated copies (trampoline.S, rethook_tramp.S,
 * with GEN_RELOC of graph.h) and gen.c, which copies and patches them,
 * agree on: the kinds of field a copy gets patched, and the words on the
 * page after a copy through which the template reaches outside itself.
 * Included by assembly and C: plain definitions only.
 */
#ifndef FHOOK_ARCH_X86_64_GEN_LAYOUT_H
#define FHOOK_ARCH_X86_64_GEN_LAYOUT_H

/*
 * a field: the thread's block's offset (+ its argument), or a word's
 * displacement; a recording's writer's offset or its cpu word's (+ its
 * argument), known when the copy is made for them; or a %rip-relative
 * displacement of the template that the copy keeps pointing at the same
 * variable (made within reach of the library for that)
 */
#define GEN_TLS		0
#define GEN_WORD	1
#define GEN_REC		2
#define GEN_CPU		3
#define GEN_PCREL	4
#define GEN_VALS	4	/* the values a copy is made with: by kind, up to GEN_CPU */

/*
 * The frameless graph entries' words: the C paths, &fhook_fgraph_other,
 * and the shadow stack's reservation (fixed once there is one; only the
 * kinds that hook returns, which need it, are copied)
 */
#define GEN_W_FGRAPH	0
#define GEN_W_OWN	1
#define GEN_W_OTHER	2
#define GEN_W_BASE	3
#define GEN_W_SIZE	4
#define GEN_W_GRAPH	5	/* how many */

/* the frameless returns' words: on in rethook_trampoline, and its C path */
#define GEN_W_RET_ON	0
#define GEN_W_RET_C	1
#define GEN_W_RET	2	/* how many */

#endif /* FHOOK_ARCH_X86_64_GEN_LAYOUT_H */
