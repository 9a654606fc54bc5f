/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A short time slice for a thread that must answer soon among busy ones
 * (EEVDF's per-task slice, Linux 6.12; older kernels ignore it): its
 * share of the CPU stays that of any thread, but woken, its earlier
 * deadline gets it the CPU first.
 */
#ifndef FHOOK_UTIL_SCHED_SLICE_H
#define FHOOK_UTIL_SCHED_SLICE_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* struct sched_attr of sched_setattr(2), which glibc does not declare */
struct fhook_sched_attr {
	unsigned int size, policy;
	unsigned long long flags;
	int nice;
	unsigned int priority;
	unsigned long long runtime, deadline, period;
};

/* The calling thread's slice: @ns, or the kernel's default for 0.  Its nice value is kept. */
static inline void fhook_set_slice(unsigned long long ns)
{
	struct fhook_sched_attr attr = {
		.size = sizeof(attr),
		.policy = SCHED_OTHER,
		.runtime = ns,
	};
	int saved = errno;

	errno = 0;
	attr.nice = getpriority(PRIO_PROCESS, 0);
	if (!errno)
		syscall(SYS_sched_setattr, 0, &attr, 0);
	errno = saved;
}

/*
 * The smallest slice the kernel takes: served first when woken, but
 * preempted as soon: for a thread that mostly waits, not for a burst of
 * work.
 */
static inline void fhook_short_slice(void)
{
	fhook_set_slice(100 * 1000);
}

/*
 * Thread @tid (another process's too, with the permission to change its
 * scheduling) given slice @ns and nice value @nice for a while: its
 * attributes before go to @old for fhook_restore_sched().  Threads it
 * starts meanwhile are ordinary ones unless @inherit.  Where the nice value
 * is refused (a lower one needs CAP_SYS_NICE), the slice alone.  False,
 * nothing changed, when it is not an ordinary thread (real-time, deadline)
 * or the kernel refuses both.
 */
static inline bool fhook_boost_thread(pid_t tid, unsigned long long ns, int nice, bool inherit,
				      struct fhook_sched_attr *old)
{
	struct fhook_sched_attr attr;
	int saved = errno;
	bool ok = false;

	if (!syscall(SYS_sched_getattr, tid, old, sizeof(*old), 0) &&
	    (old->policy == SCHED_OTHER || old->policy == SCHED_BATCH)) {
		attr = *old;
		attr.size = sizeof(attr);
		attr.flags = inherit ? 0 : 1;	/* SCHED_FLAG_RESET_ON_FORK */
		attr.runtime = ns;
		attr.nice = nice;
		ok = !syscall(SYS_sched_setattr, tid, &attr, 0);
		if (!ok) {
			attr.nice = old->nice;
			ok = !syscall(SYS_sched_setattr, tid, &attr, 0);
		}
	}
	errno = saved;
	return ok;
}

/*
 * Thread @tid made a real-time thread of the lowest priority
 * (SCHED_FIFO 1) for a short, bounded piece of work that other threads
 * wait for, as the kernel's stop_machine() runs above every ordinary
 * thread: a thread of nice -20 could still be preempted by busy threads
 * of nice 0 for two scheduler ticks (EEVDF serves a thread that ran more
 * than its share only after the others, whatever its weight).  Its
 * attributes before go to @old for fhook_restore_sched(); a thread it
 * starts meanwhile is an ordinary one (SCHED_FLAG_RESET_ON_FORK).  Where
 * that is refused (no CAP_SYS_NICE, RLIMIT_RTPRIO 0), fhook_boost_thread()'s
 * nice -20 and short slice instead.  Never for work that may wait for
 * another thread of the process: that thread could wait for a CPU behind it.
 */
static inline bool fhook_boost_rt(pid_t tid, struct fhook_sched_attr *old)
{
	struct fhook_sched_attr attr = {
		.size = sizeof(attr),
		.policy = SCHED_FIFO,
		.flags = 1,		/* SCHED_FLAG_RESET_ON_FORK */
		.priority = 1,
	};
	int saved = errno;
	bool ok = false;

	if (!syscall(SYS_sched_getattr, tid, old, sizeof(*old), 0) &&
	    (old->policy == SCHED_OTHER || old->policy == SCHED_BATCH))
		ok = !syscall(SYS_sched_setattr, tid, &attr, 0);
	errno = saved;
	return ok || fhook_boost_thread(tid, 100 * 1000, -20, false, old);
}

/*
 * Put back what fhook_boost_thread() or fhook_boost_rt() saved.  (The slice read then is put
 * back as one set explicitly: the kernel does not say whether it was.)
 */
static inline void fhook_restore_sched(pid_t tid, struct fhook_sched_attr *old)
{
	int saved = errno;

	old->size = sizeof(*old);
	old->flags &= 1;	/* the thread's own SCHED_FLAG_RESET_ON_FORK, if it had it */
	syscall(SYS_sched_setattr, tid, old, 0);
	errno = saved;
}

#endif
