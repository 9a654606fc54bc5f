// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libc's own entries for the code below the interposers (libc.h).  Each is
 * found by the symbol version libc gives it, which no interposer of
 * libfhook's carries (they are in its own version node), once, before the
 * first call: none of these runs in a signal handler before a call
 * outside one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libc.h"

/* glibc's alias, which nobody interposes: the same function as sigaction() */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

int fhook_libc_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return __sigaction(sig, act, old);
}

typedef int (*sigmask_fn)(int how, const sigset_t *set, sigset_t *old);
typedef void *(*dlopen_fn)(const char *file, int mode);

static sigmask_fn libc_sigmask;
static dlopen_fn libc_dlopen;

static void *libc_versioned(const char *name, const char *version)
{
	return dlvsym(RTLD_DEFAULT, name, version);
}

int fhook_libc_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigmask_fn fn = __atomic_load_n(&libc_sigmask, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = (sigmask_fn)libc_versioned("pthread_sigmask", "GLIBC_2.32");
		if (fn)
			__atomic_store_n(&libc_sigmask, fn, __ATOMIC_RELEASE);
	}
	if (fn)
		return fn(how, set, old);
	/* an older libc: the system call, which is all pthread_sigmask() adds to */
	return syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) ? -1 : 0;
}

void *fhook_libc_dlopen(const char *file, int mode)
{
	dlopen_fn fn = __atomic_load_n(&libc_dlopen, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = (dlopen_fn)libc_versioned("dlopen", "GLIBC_2.34");
		if (!fn)
			fn = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
		if (!fn)
			return NULL;
		__atomic_store_n(&libc_dlopen, fn, __ATOMIC_RELEASE);
	}
	return fn(file, mode);
}
