/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lock rules as checks: fhook_assert_held(&lock) where a function relies
 * on its caller holding @lock, the counterpart of the kernel's
 * lockdep_assert_held().  A caller that breaks the rule aborts at once,
 * naming the lock and the place, instead of racing silently.
 *
 * Compiled in when FHOOK_DEBUG_LOCKS is defined (the sanitizer builds of
 * make test-asan and make test-tsan define it); otherwise it costs nothing.
 *
 * glibc records the owner's thread id in every mutex it locks, the
 * default kind included (__data.__owner, cleared again by unlock), so the
 * check needs no wrapper around pthread_mutex_lock(): locks taken
 * anywhere, the fork handlers' included, are seen.
 */
#ifndef FHOOK_UTIL_LOCKDEP_H
#define FHOOK_UTIL_LOCKDEP_H

#include <pthread.h>

#if defined(FHOOK_DEBUG_LOCKS) && defined(__GLIBC__)
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void fhook_lockdep_check(const pthread_mutex_t *m, const char *name,
				       const char *file, int line)
{
	int owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);

	if (owner == (int)syscall(SYS_gettid))
		return;
	fprintf(stderr, "fhook: lockdep: %s:%d: %s not held by this thread (owner %d)\n",
		file, line, name, owner);
	abort();
}

/*
 * The other way round, lockdep_assert_not_held(): for a function that
 * takes @m itself, or calls what must not run under it (a dlopen()).
 */
static inline void fhook_lockdep_check_not(const pthread_mutex_t *m, const char *name,
					   const char *file, int line)
{
	int owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);

	if (owner != (int)syscall(SYS_gettid))
		return;
	fprintf(stderr, "fhook: lockdep: %s:%d: %s held by this thread\n", file, line, name);
	abort();
}

#define fhook_assert_held(m)	fhook_lockdep_check((m), #m, __FILE__, __LINE__)
#define fhook_assert_not_held(m) fhook_lockdep_check_not((m), #m, __FILE__, __LINE__)
#else
/* (sizeof: @m type-checked, not evaluated, when it is a call) */
#define fhook_assert_held(m)	do { (void)sizeof(m); } while (0)
#define fhook_assert_not_held(m) do { (void)sizeof(m); } while (0)
#endif

#endif /* FHOOK_UTIL_LOCKDEP_H */
