/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-thread recursion lock, and fhook's own work held under it.
 *
 * The one piece of core that the lower layers (kallsyms, arch) use too:
 * their public functions are fhook's own work, which must never reach a
 * handler (see fhook_internal_enter()).
 */
#ifndef FHOOK_RECURSION_H
#define FHOOK_RECURSION_H

#include <stdbool.h>

/*
 * The recursion lock of ftrace_test_recursion_trylock(), inlined for the
 * library's own hot paths (fprobe entry and exit).  A signal arriving
 * between the test and the set runs its handler to the end before we go
 * on, so the word is consistent again when we write it: no atomic
 * operation is needed on our own thread's word.
 */
#include "util/thread_word.h"		/* fhook_recursion_bits */

static inline int fhook_recursion_trylock(void)
{
	if (fhook_recursion_bits & 1)
		return -1;
	fhook_recursion_bits |= 1;
	__asm__ __volatile__("" ::: "memory");
	return 0;
}

static inline void fhook_recursion_unlock(int bit)
{
	__asm__ __volatile__("" ::: "memory");
	fhook_recursion_bits &= ~(1u << bit);
}

/*
 * fhook's own work (registering, patching text, setting up a thread's
 * shadow stack...) calls libc, and through libc maybe the program's own
 * malloc or other traceable functions.  Those calls are not the program's:
 * no handler may see them, and they are not misses either.  So the work
 * runs with the recursion bit held, and a second bit says that a refused
 * handler is to stay silent rather than count in nmissed.
 */
#define FHOOK_RECURSION_INTERNAL	2u

/* fhook_internal_enter - hold the recursion lock for fhook's own work */
static inline unsigned int fhook_internal_enter(void)
{
	unsigned int old = fhook_recursion_bits;

	fhook_recursion_bits = old | 1u | FHOOK_RECURSION_INTERNAL;
	__asm__ __volatile__("" ::: "memory");
	return old;
}

/* fhook_internal_leave - as it was before fhook_internal_enter() */
static inline void fhook_internal_leave(unsigned int old)
{
	__asm__ __volatile__("" ::: "memory");
	fhook_recursion_bits = old;
}

static inline void fhook_internal_leave_p(unsigned int *old)
{
	fhook_internal_leave(*old);
}

/* The rest of the enclosing block is fhook's own work (the kernel's guard()). */
#define fhook_internal_guard()							\
	unsigned int __fhook_internal_old					\
		__attribute__((cleanup(fhook_internal_leave_p), unused)) =	\
		fhook_internal_enter()

/* Was a refused recursion lock refused for fhook's own work? */
static inline bool fhook_recursion_internal(void)
{
	return fhook_recursion_bits & FHOOK_RECURSION_INTERNAL;
}

#endif /* FHOOK_RECURSION_H */
