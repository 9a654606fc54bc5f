// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The grace period of util/rcu.h: the tasks' one, and the sections of
 * threads that could not be known counted apart.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>

#include "util/rcu.h"
#include "util/startup.h"

#ifdef __SANITIZE_THREAD__
char fhook_rcu_token;
#endif

__thread int fhook_rcu_stray_depth __attribute__((tls_model("initial-exec")));
static long fhook_rcu_strays;

/*
 * A full barrier before the section reads anything (the locked add), so
 * that either the writer sees the count or the section sees what the
 * writer unpublished before it looked.
 */
void fhook_rcu_stray_enter(void)
{
	fhook_rcu_stray_depth++;
	__atomic_fetch_add(&fhook_rcu_strays, 1, __ATOMIC_SEQ_CST);
}

void fhook_rcu_stray_leave(void)
{
	__atomic_fetch_sub(&fhook_rcu_strays, 1, __ATOMIC_RELEASE);
	fhook_rcu_stray_depth--;
}

void fhook_rcu_synchronize(void)
{
	struct timespec nap = { 0, 20000 };
	int spins = 0;

	/* its membarrier orders the unpublishing before the loads below */
	fhook_tasks_synchronize();
	while (__atomic_load_n(&fhook_rcu_strays, __ATOMIC_ACQUIRE) > fhook_rcu_stray_depth) {
		if (spins++ < 100)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
	fhook_rcu_tsan_acquire();
}

void __fhook_startup fhook_rcu_after_fork_child(void)
{
	/* not written when right: a forked child copies every page it writes */
	if (__atomic_load_n(&fhook_rcu_strays, __ATOMIC_RELAXED) != fhook_rcu_stray_depth)
		__atomic_store_n(&fhook_rcu_strays, fhook_rcu_stray_depth, __ATOMIC_RELAXED);
}
