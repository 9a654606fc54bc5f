/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook's read side: urcu-bp, with what ThreadSanitizer needs to see the
 * grace period.  urcu's writer waits with membarrier() and plain loads of
 * the readers' counters, which TSan cannot follow; in TSan builds every
 * read-side section ends with a release on one token and every grace
 * period with an acquire of it, which is the ordering RCU guarantees.
 */
#ifndef FHOOK_RCU_H
#define FHOOK_RCU_H

#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-bp.h>

#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
extern char fhook_rcu_token __attribute__((visibility("hidden")));
static inline void fhook_rcu_tsan_release(void) { __tsan_release(&fhook_rcu_token); }
static inline void fhook_rcu_tsan_acquire(void) { __tsan_acquire(&fhook_rcu_token); }
#else
static inline void fhook_rcu_tsan_release(void) { }
static inline void fhook_rcu_tsan_acquire(void) { }
#endif

static inline void fhook_rcu_read_lock(void)
{
	urcu_bp_read_lock();
}

static inline void fhook_rcu_read_unlock(void)
{
	fhook_rcu_tsan_release();
	urcu_bp_read_unlock();
}

#endif /* FHOOK_RCU_H */
