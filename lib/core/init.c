// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Start-up: learn the loaded objects and turn their sites into nops before
 * the program's own constructors run (libfhook's constructor runs before
 * those of the objects that depend on it, and before any thread the
 * program starts), and keep our locks sane across fork().
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "core.h"
#include "arch/arch.h"
#include "kallsyms/objects.h"
#include "util/rcu.h"

static void before_fork(void)
{
	pthread_mutex_lock(&ftrace_lock);
	fhook_text_lock();
}

static void after_fork_parent(void)
{
	fhook_text_unlock();
	pthread_mutex_unlock(&ftrace_lock);
}

static void __fhook_startup after_fork_child(void)
{
	/* the child keeps the patched text and only this thread */
	fhook_rcu_after_fork_child();
	fhook_text_unlock();
	pthread_mutex_unlock(&ftrace_lock);
}

extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
			     void *dso_handle);
extern void *__dso_handle __attribute__((weak, visibility("hidden")));

/*
 * What pthread_atfork() does.  That one is a stub in libc_nonshared.a
 * that passes this object's __dso_handle on, linked at the very end of
 * libfhook's text: one more page for a process that never reaches the
 * destructors there (a shell's child that execs).
 */
int __fhook_startup fhook_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	return __register_atfork(prepare, parent, child, &__dso_handle);
}

__attribute__((constructor(101))) static void fhook_core_init(void)
{
	fhook_atfork(before_fork, after_fork_parent, after_fork_child);
	fhook_sites_init();
	/*
	 * The SIGTRAP handler is installed by the first batch that writes an
	 * int3 (fhook_text_poke_batch()): a process that never patches a
	 * site never needs it.
	 */
	pthread_mutex_lock(&ftrace_lock);
	fhook_objects_refresh();
	pthread_mutex_unlock(&ftrace_lock);
}
