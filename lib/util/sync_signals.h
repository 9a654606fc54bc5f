/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The signals a thread raises itself: a fault, or the int3 of a site being
 * patched.  A thread that blocks every other signal must leave these
 * unblocked: for a blocked one the kernel resets the action to the default
 * and the process dies.
 */
#ifndef FHOOK_UTIL_SYNC_SIGNALS_H
#define FHOOK_UTIL_SYNC_SIGNALS_H

#include <signal.h>

/* @set: every signal but SIGTRAP, SIGSEGV, SIGBUS, SIGILL and SIGFPE. */
static inline void fhook_sigfill_async(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGTRAP);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
}

#endif /* FHOOK_UTIL_SYNC_SIGNALS_H */
