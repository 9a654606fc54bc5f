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

static const sigset_t *without_trap(const sigset_t *set, sigset_t *copy)
{
	if (!set || !sigismember(set, SIGTRAP))
		return set;
	*copy = *set;
	sigdelset(copy, SIGTRAP);
	return copy;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	static int (*real)(int, const sigset_t *, sigset_t *);
	sigset_t copy;

	if (!real)
		real = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT,
									  "pthread_sigmask");
	if (how != SIG_UNBLOCK)
		set = without_trap(set, &copy);
	return real(how, set, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	static int (*real)(int, const sigset_t *, sigset_t *);
	sigset_t copy;

	if (!real)
		real = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT, "sigprocmask");
	if (how != SIG_UNBLOCK)
		set = without_trap(set, &copy);
	return real(how, set, old);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static int (*real)(int, const struct sigaction *, struct sigaction *);
	struct sigaction copy;

	if (!real)
		real = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(
			RTLD_NEXT, "sigaction");
	if (act && sigismember(&act->sa_mask, SIGTRAP)) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGTRAP);
		act = &copy;
	}
	return real(sig, act, old);
}
#endif
