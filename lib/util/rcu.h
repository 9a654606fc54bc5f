/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook's read side for what is walked outside the call path (the list of
 * loaded objects, their sites and symbols: the trap handler, the
 * symbolizer): the sections of util/tasks.h, so that the grace period the
 * trampolines need covers these readers too, and a traced process needs
 * no RCU library of its own (liburcu-bp cost every process a library, its
 * constructor and about 20 page faults).
 *
 * A thread that no trampoline has made known (most threads of most
 * processes: registering costs system calls and a fork handler) counts
 * itself in a process-wide counter instead, with a full barrier, and so
 * does one being registered or exiting past its last destructor; the
 * grace period waits for that counter to drop too.  These readers are
 * lookups and reports, never a traced call.
 *
 * ThreadSanitizer cannot follow membarrier() and the plain loads of the
 * readers' words: in TSan builds every read-side section ends with a
 * release on one token and every grace period with an acquire of it,
 * which is the ordering RCU guarantees.
 */
#ifndef FHOOK_RCU_H
#define FHOOK_RCU_H

#include "util/tasks.h"

#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
extern char fhook_rcu_token __attribute__((visibility("hidden")));
static inline void fhook_rcu_tsan_release(void) { __tsan_release(&fhook_rcu_token); }
static inline void fhook_rcu_tsan_acquire(void) { __tsan_acquire(&fhook_rcu_token); }
#else
static inline void fhook_rcu_tsan_release(void) { }
static inline void fhook_rcu_tsan_acquire(void) { }
#endif

/* sections of this thread counted in fhook_rcu_strays (rcu.c) */
extern __thread int fhook_rcu_stray_depth
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

void fhook_rcu_stray_enter(void) __attribute__((visibility("hidden")));
void fhook_rcu_stray_leave(void) __attribute__((visibility("hidden")));

/* Enter a read-side section; hand what it returns to fhook_rcu_read_unlock(). */
static inline int fhook_rcu_read_lock(void)
{
	int s = __atomic_load_n(&fhook_tasks_state, __ATOMIC_RELAXED);

	if (s > 0) {
		/* as fhook_tasks_enter(): the grace period's membarrier orders it */
		__atomic_store_n(&fhook_tasks_state, s + 1, __ATOMIC_RELAXED);
		return 0;
	}
	fhook_rcu_stray_enter();
	return 1;
}

static inline void fhook_rcu_read_unlock(int stray)
{
	fhook_rcu_tsan_release();
	if (stray)
		fhook_rcu_stray_leave();
	else
		fhook_tasks_leave();
}

/*
 * Wait until every read-side section and every trampoline section that
 * may have begun before this call has ended.  Call after unpublishing,
 * never from inside a section of the calling thread.
 */
void fhook_rcu_synchronize(void) __attribute__((visibility("hidden")));

/* In the child of fork(): only this thread's sections are left. */
void fhook_rcu_after_fork_child(void) __attribute__((visibility("hidden")));

#endif /* FHOOK_RCU_H */
