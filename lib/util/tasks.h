/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A grace period for code that runs on the call path, without a lock on
 * it: the user-space counterpart of the kernel's synchronize_rcu_tasks().
 *
 * Every thread has a count in its word of initial-exec TLS (util/
 * thread_word.h): 0 until the thread is known, then 1 + the number of
 * trampoline sections it is inside (a handler that calls a traced function
 * nests); negative while it is being registered (-2) and once it is
 * exiting (-1): no handler then.  A trampoline increments it before it
 * reads which handler to call and decrements it after the handler
 * returned: two instructions on the thread's own cache line, no atomic,
 * no fence.
 *
 * fhook_tasks_synchronize() first unpublishes (the caller did: a stub's
 * data set to NULL, an ops unlinked, a site unpatched), then makes every
 * thread execute a full barrier (membarrier), then waits until it has seen
 * each known thread outside every section (its word at 1).  The barrier
 * is what makes the plain increment enough: a thread whose increment was
 * not yet visible when the barrier ran reads the unpublished state after
 * it (the IPI, or the context switch of a thread that was not running,
 * orders its later loads), so it cannot reach what was removed; one whose
 * increment was visible is waited for.
 *
 * A thread stalled between a site's call and its increment is therefore
 * harmless: when it resumes it finds the stub unbound and takes the list
 * function, which no longer holds the removed ops.
 */
#ifndef FHOOK_UTIL_TASKS_H
#define FHOOK_UTIL_TASKS_H

#include <stdbool.h>

#include "util/thread_word.h"

/* Set up (membarrier registration: it may take milliseconds); at start-up. */
void fhook_tasks_init(void) __attribute__((visibility("hidden")));

/* Learn the calling thread (state 0); false when it is exiting. */
bool fhook_tasks_register(void) __attribute__((visibility("hidden")));

/*
 * Enter a section: false when the thread is exiting (past its last
 * destructor): it must then call no handler.
 */
static inline bool fhook_tasks_enter(void)
{
	int s = __atomic_load_n(&fhook_tasks_state, __ATOMIC_RELAXED);

	if (__builtin_expect(s <= 0, 0)) {
		if (!fhook_tasks_register())
			return false;
		s = 1;
	}
	/*
	 * No fence: the writer's membarrier() orders this against its
	 * unpublishing.  (ThreadSanitizer needs none either: what a section
	 * read happens before the writer frees it through the release in
	 * fhook_tasks_leave() and the writer's acquire.)
	 */
	__atomic_store_n(&fhook_tasks_state, s + 1, __ATOMIC_RELAXED);
	return true;
}

static inline void fhook_tasks_leave(void)
{
	/* release: what the section read happens before the writer frees it */
	__atomic_store_n(&fhook_tasks_state, fhook_tasks_state - 1, __ATOMIC_RELEASE);
}

/*
 * Wait until every thread that may have been inside a section when this
 * was called has left it.  Call after unpublishing; never from inside a
 * section of the calling thread that began before (it would wait for
 * itself: the calling thread's own sections are not waited for).
 */
void fhook_tasks_synchronize(void) __attribute__((visibility("hidden")));

#endif /* FHOOK_UTIL_TASKS_H */
