// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SIGTRAP must never be blocked in a traced process.
 *
 * While a batch is being applied, a thread that reaches a site meets an
 * int3 and fhook's SIGTRAP handler finishes the instruction for it.  If
 * that thread has SIGTRAP blocked, the kernel does not queue the trap: it
 * unblocks the signal, resets it to the default action and the process
 * dies.  Programs block "every signal" all the time (worker threads that
 * leave signals to one thread, handlers installed with sigfillset() in
 * sa_mask), never because they mean SIGTRAP, which only a debugger or an
 * int3 raises.  So the calls that set a signal mask leave SIGTRAP out of
 * it.  The definitions here take precedence over libc's wherever libfhook
 * is preloaded or linked before libc.
 */
#define _GNU_SOURCE
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
/*
 * Sanitizer runtimes intercept these same calls and block signals inside
 * themselves; fhook leaves them alone there (and the tests that depend on
 * this skip in sanitizer builds).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*action_fn)(int, const struct sigaction *, struct sigaction *);
static mask_fn real_pthread_sigmask, real_sigprocmask;
static action_fn real_sigaction;

/*
 * Resolved before main(): these calls are async-signal-safe and may first
 * come from a signal handler, where dlopen/dlsym must not run.  A call from
 * a constructor that runs before this one resolves its own.
 */
__attribute__((constructor(101))) static void sigtrap_mask_init(void)
{
	if (!real_pthread_sigmask)
		real_pthread_sigmask = (mask_fn)fhook_libc_sym("pthread_sigmask");
	if (!real_sigprocmask)
		real_sigprocmask = (mask_fn)fhook_libc_sym("sigprocmask");
	if (!real_sigaction)
		real_sigaction = (action_fn)fhook_libc_sym("sigaction");
}

static const sigset_t *without_trap(const sigset_t *set, sigset_t *copy)
{
	if (!set || !sigismember(set, SIGTRAP))
		return set;
	*copy = *set;
	sigdelset(copy, SIGTRAP);
	return copy;
}

static int set_mask(mask_fn *real, int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	if (!*real)
		sigtrap_mask_init();
	if (how != SIG_UNBLOCK)
		set = without_trap(set, &copy);
	return (*real)(how, set, old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return set_mask(&real_pthread_sigmask, how, set, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return set_mask(&real_sigprocmask, how, set, old);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction copy;

	if (!real_sigaction)
		sigtrap_mask_init();
	if (act && sigismember(&act->sa_mask, SIGTRAP)) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGTRAP);
		act = &copy;
	}
	return real_sigaction(sig, act, old);
}
#endif
