// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Preloaded into att_prog: a pthread_create() of its own that counts the
 * threads it makes and calls libc's, as a sanitizer's runtime or a
 * thread-tracking library wraps it (test_patch.sh: fhook makes no thread
 * behind such a wrapper's back; a thread of the program loads libfhook).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

static unsigned long att_wrap_made;

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			dlsym(RTLD_NEXT, "pthread_create");
	__atomic_fetch_add(&att_wrap_made, 1, __ATOMIC_RELAXED);
	return real(th, attr, fn, arg);
}
