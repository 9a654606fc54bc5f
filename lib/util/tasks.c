// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The registry of threads and the grace period of util/tasks.h.
 *
 * A thread is added the first time it enters a section (a slow path the
 * trampolines take while its word is 0) and removed by a pthread key
 * destructor when it exits, under the registry's lock, before its TLS is
 * freed: the writer reads other threads' words under the same lock, so it
 * never reads a freed one.  A thread still calling traced functions after
 * its last destructor finds its word negative and calls no handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/tasks.h"
#include "util/sync_signals.h"
#include <fhook/internal/processor.h>


unsigned long fhook_tls_none[2] = { (unsigned long)&fhook_tls_none[1] - FHOOK_TLS_NONE_DISP };
__thread struct fhook_tls fhook_tls __attribute__((tls_model("initial-exec"), aligned(16))) = {
	.shadow = fhook_tls_none,
};

static pthread_mutex_t tasks_lock = PTHREAD_MUTEX_INITIALIZER;
static int **threads;			/* each known thread's word */
static size_t nr_threads, cap_threads;
static unsigned long threads_gen;	/* bumped when a thread leaves the list */
static pthread_key_t tasks_key;
static pthread_once_t tasks_once = PTHREAD_ONCE_INIT;
static int barrier_cmd = -1;		/* membarrier command; 0: none works */

static __thread int exit_rounds __attribute__((tls_model("initial-exec")));

static void tasks_thread_exit(void *arg)
{
	int *word = arg;
	size_t i;

	/*
	 * Other destructors may still call handlers (the return hooks report
	 * the frames a thread exit removes), and their keys may come after
	 * ours: stay for all but the last round glibc runs, which the
	 * sanitizers keep for their own end of the thread (their interceptors
	 * no longer work after it).
	 */
	if (++exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS - 1) {
		pthread_setspecific(tasks_key, arg);
		return;
	}
	pthread_mutex_lock(&tasks_lock);
	for (i = 0; i < nr_threads; i++)
		if (threads[i] == word) {
			threads[i] = threads[--nr_threads];
			threads_gen++;
			break;
		}
	/* from now on: no handler (tasks.h); the word is never read again */
	__atomic_store_n(word, -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tasks_lock);
}

/* The child of fork() has one thread: this one. */
static void tasks_atfork_child(void)
{
	size_t i, n = 0;

	pthread_mutex_init(&tasks_lock, NULL);
	for (i = 0; i < nr_threads; i++)
		if (threads[i] == &fhook_tasks_state)
			threads[n++] = threads[i];
	nr_threads = n;
}

static void tasks_init(void)
{
	long mask;

	if (pthread_key_create(&tasks_key, tasks_thread_exit))
		abort();
	pthread_atfork(NULL, NULL, tasks_atfork_child);
	mask = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	barrier_cmd = 0;
	if (mask > 0 && (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    !syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		barrier_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
}

void fhook_tasks_init(void)
{
	pthread_once(&tasks_once, tasks_init);
}

bool fhook_tasks_register(void)
{
	int s = __atomic_load_n(&fhook_tasks_state, __ATOMIC_RELAXED);
	sigset_t all, saved;
	bool ok = false;

	if (s < 0)
		return false;
	if (s > 0)
		return true;
	/*
	 * Signals wait until the thread is known (a handler then runs with
	 * handlers of its own, as it would have a moment later); the ones
	 * that report faults and the trap of a site being patched cannot.
	 */
	fhook_sigfill_async(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, _NSIG / 8);
	/*
	 * What registering calls (malloc, the key's block) may be traced:
	 * meanwhile this thread calls no handler, and does not come back here.
	 */
	__atomic_store_n(&fhook_tasks_state, -2, __ATOMIC_RELAXED);
	pthread_once(&tasks_once, tasks_init);
	pthread_mutex_lock(&tasks_lock);
	if (nr_threads == cap_threads) {
		size_t cap = cap_threads ? 2 * cap_threads : 64;
		int **t = realloc(threads, cap * sizeof(*t));

		if (!t) {
			pthread_mutex_unlock(&tasks_lock);
			__atomic_store_n(&fhook_tasks_state, 0, __ATOMIC_RELAXED);
			goto out;	/* no memory: this call goes untraced */
		}
		threads = t;
		cap_threads = cap;
	}
	threads[nr_threads++] = &fhook_tasks_state;
	pthread_mutex_unlock(&tasks_lock);
	/* after it is in the registry: the destructor finds it */
	pthread_setspecific(tasks_key, &fhook_tasks_state);
	__atomic_store_n(&fhook_tasks_state, 1, __ATOMIC_RELAXED);
	ok = true;
out:
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
	return ok;
}

/*
 * Every running thread executes a full barrier before this returns.
 * Without membarrier, changing a mapping's protection makes the kernel
 * shoot down the TLB of every CPU running us: an IPI, which orders too.
 */
static void barrier_all(void)
{
	static char *page;

	if (barrier_cmd > 0 && !syscall(__NR_membarrier, barrier_cmd, 0, 0))
		return;
	if (!page)
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	if (page != MAP_FAILED && page) {
		page[0] = 1;
		mprotect(page, 4096, PROT_READ);
		mprotect(page, 4096, PROT_READ | PROT_WRITE);
	}
	/* the system calls ordered this thread's own accesses */
	__asm__ __volatile__("" ::: "memory");
}

void fhook_tasks_synchronize(void)
{
	struct timespec nap = { 0, 20000 };
	unsigned long gen;
	size_t i;
	int spins = 0;

	pthread_once(&tasks_once, tasks_init);
	barrier_all();
	pthread_mutex_lock(&tasks_lock);
restart:
	gen = threads_gen;
	for (i = 0; i < nr_threads; i++) {
		int *word = threads[i];

		if (word == &fhook_tasks_state)
			continue;	/* our own sections are the caller's */
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) > 1) {
			int n;

			/*
			 * A running thread is outside most of the time: watch
			 * it for a few microseconds before giving up the cpu.
			 */
			for (n = 0; n < 4096 && __atomic_load_n(word, __ATOMIC_ACQUIRE) > 1; n++)
				cpu_relax();
			if (n < 4096)
				break;
			/*
			 * Let it run, and let it exit: its destructor takes
			 * the lock.  A thread that left reorders the list:
			 * look again from the start (seen threads pass fast).
			 */
			pthread_mutex_unlock(&tasks_lock);
			if (spins++ < 100)
				sched_yield();
			else
				nanosleep(&nap, NULL);
			pthread_mutex_lock(&tasks_lock);
			if (threads_gen != gen)
				goto restart;
		}
	}
	pthread_mutex_unlock(&tasks_lock);
}
