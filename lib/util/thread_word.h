/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Each thread's word of call-path state: its tasks count (util/tasks.h)
 * in the low half, its recursion bits (util/recursion.h) in the high
 * half, one 64-bit word of initial-exec TLS.
 *
 * Why one word: the trampolines' common cases need both "inside a
 * section" and "holding the recursion lock", and need to know that the
 * thread is known and not already inside anything of ours.  With both in
 * one word that is a single compare against FHOOK_TW_IDLE and a single
 * store of FHOOK_TW_FAST (one section, recursion bit 0); leaving stores
 * FHOOK_TW_IDLE back.  Everything nested in between (a signal handler
 * that meets a site) finds the word not idle and takes the counting
 * paths, which restore what they found before they return, so the store
 * on leaving is exact.  C and the counting paths change one half at a
 * time, with 32-bit accesses, and never disturb the other half.
 *
 * The word is the first of the thread's block of call-path words (struct
 * fhook_tls): the trampolines find it, and the arch's shadow-stack
 * header beside it, with one load of the block's offset from the thread
 * pointer.
 *
 * Included by assembly: plain definitions outside the C part.
 */
#ifndef FHOOK_UTIL_THREAD_WORD_H
#define FHOOK_UTIL_THREAD_WORD_H

#define FHOOK_TW_TASKS		0	/* offset of the tasks count */
#define FHOOK_TW_RECURSION	4	/* offset of the recursion bits */
#define FHOOK_TW_IDLE		1	/* known, outside, no recursion bit */
#define FHOOK_TW_FAST		0x100000002	/* one section, recursion bit 0 */

/* struct fhook_tls */
#define FHOOK_TLS_TW		0
#define FHOOK_TLS_SHADOW	8
/*
 * Where the shadow stack's users read, from a header's first word, the
 * word that tells its top entry is no caller's (arch/shadow.h asserts it)
 */
#define FHOOK_TLS_NONE_DISP	0x80030

#ifndef __ASSEMBLER__
#include <stdbool.h>

union fhook_tw {
	struct {
		/*
		 * 0 until the thread is known, then 1 + the sections it is
		 * inside; -2 while it is being registered, -1 once exiting.
		 */
		int tasks;
		unsigned int recursion;
	};
	unsigned long word;
};

_Static_assert(sizeof(union fhook_tw) == 8, "one word");

/*
 * The thread's block: its word, and the arch's shadow-stack header
 * (arch/shadow.h fhook_shadow_self), fhook_tls_none until the thread has
 * a shadow stack: a header whose first word is FHOOK_TLS_NONE_DISP before
 * its second, 0, so that the shadow stack's users find its top entry no
 * caller's and need no test for a thread without a stack.
 */
struct fhook_tls {
	union fhook_tw tw;
	void *shadow;
};

extern unsigned long fhook_tls_none[2] __attribute__((visibility("hidden")));

_Static_assert(__builtin_offsetof(struct fhook_tls, tw) == FHOOK_TLS_TW &&
	       __builtin_offsetof(struct fhook_tls, shadow) == FHOOK_TLS_SHADOW, "FHOOK_TLS_*");

extern __thread struct fhook_tls fhook_tls
	__attribute__((tls_model("initial-exec"), visibility("hidden"), aligned(16)));

#define fhook_tw		(fhook_tls.tw)

#define fhook_tasks_state	(fhook_tw.tasks)
#define fhook_recursion_bits	(fhook_tw.recursion)

/*
 * The trampolines' common-case entry, for C callers: true (and inside a
 * tasks section, holding the recursion lock) when the thread was inside
 * nothing of ours; else false, nothing changed, and the caller takes the
 * counting path (fhook_tasks_enter() and the recursion lock).  The
 * grace period's membarrier orders the plain store, as in
 * fhook_tasks_enter().
 */
static inline bool fhook_fast_enter(void)
{
	if (__builtin_expect(__atomic_load_n(&fhook_tw.word, __ATOMIC_RELAXED) != FHOOK_TW_IDLE,
			     0))
		return false;
	__atomic_store_n(&fhook_tw.word, FHOOK_TW_FAST, __ATOMIC_RELAXED);
	__asm__ __volatile__("" ::: "memory");
	return true;
}

/* ... and its leave (release: what the section read happens before a free) */
static inline void fhook_fast_leave(void)
{
	__atomic_store_n(&fhook_tw.word, FHOOK_TW_IDLE, __ATOMIC_RELEASE);
}
#endif

#endif /* FHOOK_UTIL_THREAD_WORD_H */
