// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The process's threads: seized, stopped and let go again, and looked at
 * for a safe point, a place from where a call into libc and the loader
 * cannot wait for a lock the thread holds itself (not in a signal
 * handler, not inside libc but blocked in a quiet system call).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "att.h"

#define ATT_SAFE_TRIES		400	/* times every thread is let run and looked at again */

static struct att_thread *find_thread(struct cli_attach *a, pid_t tid)
{
	int i;

	for (i = 0; i < a->nr_th; i++)
		if (a->th[i].tid == tid)
			return &a->th[i];
	return NULL;
}

/*
 * Sleep until a tracee changes state, or at most a quarter of a
 * millisecond: the kernel sends the tracer SIGCHLD at every stop, taken
 * here.  SIGCHLD is blocked in the attaching thread for the whole attach
 * (cli_attach_open()), and so in the threads it starts: ignored by
 * default, a SIGCHLD that came while this thread was not blocking it was
 * dropped, and the wait took its whole timeout (under load, when the
 * thread was preempted between its waitpid() and the block, often).
 * Polling every few microseconds instead woke the command hundreds of
 * times per request, each time waiting for a CPU that the threads it waits
 * for needed too.  The signal may still go to a thread of ours started
 * before the attach: then the timeout passes.
 */
void att_wait_for_tracee(void)
{
	struct timespec ts = { 0, 250000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &ts);
}

/*
 * Wait until @t stops for us (PTRACE_EVENT_STOP), letting any signal that
 * arrives first be delivered.  -ESRCH when the thread is gone.
 */
int att_wait_stop(struct att_thread *t)
{
	double deadline = att_now_ms() + 2000;
	int st;

	for (;;) {
		pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			t->gone = true;
			return -ESRCH;
		}
		if (!r) {
			if (att_now_ms() > deadline) {
				/* a zombie leader never stops: it has no user context left */
				t->gone = true;
				return -ESRCH;
			}
			att_wait_for_tracee();
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = true;
			return -ESRCH;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			t->stop_sig = WSTOPSIG(st);
			return att_arch_get_regs(t->tid, &t->regs);
		}
		/* a signal on its way: deliver it, our interrupt is still pending */
		ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)WSTOPSIG(st));
	}
}

/* Seize and stop every thread, including threads started meanwhile. */
int att_stop_all(struct cli_attach *a)
{
	char path[64];
	bool added;
	int ret;

	do {
		struct dirent *de;
		DIR *d;

		added = false;
		snprintf(path, sizeof(path), "/proc/%d/task", a->pid);
		d = opendir(path);
		if (!d)
			return -ESRCH;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			struct att_thread *t;

			if (tid <= 0 || find_thread(a, tid))
				continue;
			if (a->nr_th >= ATT_MAX_THREADS) {
				closedir(d);
				fprintf(stderr, "fhook: %s: process %d has more than %d threads\n",
					a->cmd, a->pid, ATT_MAX_THREADS);
				return -E2BIG;
			}
			if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
				ret = -errno;
				if (ret == -ESRCH)
					continue;	/* it exited */
				closedir(d);
				if (ret == -EPERM)
					att_explain_eperm(a->cmd, a->pid);
				else
					fprintf(stderr, "fhook: %s: cannot attach to thread %d of "
						"process %d: %s\n", a->cmd, tid, a->pid, strerror(-ret));
				return ret;
			}
			t = &a->th[a->nr_th++];
			memset(t, 0, sizeof(*t));
			t->tid = tid;
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			added = true;
		}
		closedir(d);
		for (int i = 0; i < a->nr_th; i++)
			if (!a->th[i].gone && !a->th[i].stop_sig)
				att_wait_stop(&a->th[i]);
	} while (added);
	for (int i = 0; i < a->nr_th; i++)
		if (!a->th[i].gone)
			return 0;
	fprintf(stderr, "fhook: %s: process %d exited\n", a->cmd, a->pid);
	return -ESRCH;
}

void att_release(struct att_thread *t)
{
	if (t->sched_saved && !t->gone)
		fhook_restore_sched(t->tid, &t->sched);
	t->sched_saved = false;
	if (!t->gone)
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
	t->gone = true;
}

/*
 * att_start_loader()'s thread is let go returning 0 from its sleep instead of
 * sleeping on: its start routine returns and the thread ends.
 */
void att_end_loader(struct att_thread *t)
{
	struct att_regs regs = t->regs;

	if (!t->gone) {
		att_regs_syscall_return(&regs, 0);
		att_arch_set_regs(t->tid, &regs);
	}
	att_release(t);
}

/* Let the kept thread go; how long a thread of the program was stopped, in all, is noted. */
void att_release_hijack(struct cli_attach *a)
{
	if (!a->hijack)
		return;
	if (a->self_boosted)
		fhook_restore_sched(0, &a->self_sched);
	a->self_boosted = false;
	if (a->hijack->loader) {
		att_end_loader(a->hijack);
	} else {
		/* (a second kept thread, after a lost loader thread, adds its time) */
		if (!a->hijack->gone)
			a->times.stopped_ms += att_now_ms() - a->hijack_t0;
		att_release(a->hijack);
	}
	a->hijack = NULL;
}


/*
 * Blocking system calls that libc makes without holding a lock of its own:
 * a thread stopped in one may run our call (and restart it afterwards).
 */
static bool quiet_syscall(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev: case SYS_pread64:
	case SYS_pwrite64: case SYS_ppoll: case SYS_pselect6: case SYS_epoll_pwait:
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_rt_sigsuspend:
	case SYS_rt_sigtimedwait: case SYS_wait4: case SYS_waitid: case SYS_accept:
	case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg: case SYS_sendto: case SYS_sendmsg:
	case SYS_connect: case SYS_msgrcv:
#ifdef SYS_poll		/* the older calls, which aarch64 has not */
	case SYS_poll: case SYS_select: case SYS_epoll_wait: case SYS_pause:
#endif
	/* a sleep that an earlier attach interrupted goes on in restart_syscall */
	case SYS_restart_syscall:
		return true;
	}
	return false;
}

/*
 * A thread is at a safe point when it can call into libc and the loader
 * without meeting a lock it holds itself: in the program's own code (or a
 * library other than libc, the loader and libfhook, whose
 * handlers may hold an RCU read lock), or in libc blocked in a quiet
 * system call.  Not in anonymous memory (fhook's trampolines, JIT code).
 */
static bool safe_point(struct cli_attach *a, struct att_thread *t, const char **why)
{
	const struct att_map *m = att_map_of(a, att_regs_pc(&t->regs));
	long nr = att_regs_syscall(&t->regs);
	const char *b;

	*why = "not in a file's code (a trampoline, JIT code)";
	if (!m || !m->path || !m->exec)
		return false;
	*why = "in a signal handler";
	if (att_in_signal_handler(a, t))
		return false;
	b = att_base_name(m->path);
	*why = "in the loader, libfhook or urcu";
	if (!strncmp(b, "ld-", 3) || !strncmp(b, "libfhook", 8) || !strncmp(b, "liburcu", 7))
		return false;
	if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "libpthread", 10)) {
		*why = nr >= 0 ? "in libc, in a system call that may hold a lock"
			       : "in libc, not in a system call";
		if (nr >= 0 && quiet_syscall(nr)) {
			*why = "safe: blocked in a system call";
			return true;
		}
		return false;
	}
	*why = "safe: in the program's code";
	return true;
}


/* Where a signal handler returns to, in the process: every signal frame's mark. */
unsigned long att_find_restorer(struct cli_attach *a)
{
	return att_arch_find_restorer(a);
}

/*
 * Where a stopped thread's stack is read (att_read_stack()): touched before any
 * thread is stopped, so that its page faults are not taken with every
 * thread stopped.
 */
unsigned long att_stack_words[8192];

/*
 * The top of @t's stack (at most att_stack_words' size) read into
 * att_stack_words, when the signal frames' mark is known: how many words; 0
 * if none.
 */
size_t att_read_stack(struct cli_attach *a, const struct att_thread *t)
{
	unsigned long len, sp = att_regs_sp(&t->regs);
	const struct att_map *m = att_map_of(a, sp);

	if (!a->restorer)
		a->restorer = att_find_restorer(a);
	if (!a->restorer || !m)
		return 0;
	len = m->end - sp;
	if (len > sizeof(att_stack_words))
		len = sizeof(att_stack_words);
	len &= ~7UL;
	return att_mem_read(a, sp, att_stack_words, len) ? 0 : len / 8;
}

/*
 * Is the thread running a signal handler?  Then it may have interrupted
 * malloc or the loader, and a call from there could wait for a lock it
 * holds itself.  A signal frame puts its mark (att_find_restorer())
 * on the stack.
 */
bool att_in_signal_handler(struct cli_attach *a, struct att_thread *t)
{
	size_t i, n = att_read_stack(a, t);

	for (i = 0; i < n; i++)
		if (att_arch_is_return_to(att_stack_words[i], a->restorer))
			return true;
	/* a handler that saved no return address yet holds it in a register */
	return a->restorer && att_arch_regs_return_to(&t->regs, a->restorer);
}

struct att_thread *att_pick_safe(struct cli_attach *a)
{
	struct att_thread *pick = NULL;
	const char *why;
	int i;

	for (i = 0; i < a->nr_th; i++) {
		if (a->th[i].gone)
			continue;
		if (safe_point(a, &a->th[i], &why) && !pick)
			pick = &a->th[i];
		if (att_verbose())
			fprintf(stderr, "fhook: %s: thread %d: %s\n", a->cmd, a->th[i].tid, why);
		else if (pick)
			break;
	}
	return pick;
}

/* Does a thread of @pid block SIGTRAP? (/proc: nothing is stopped to know.) */
bool att_sigtrap_blocked(pid_t pid)
{
	char path[64], buf[64];
	struct dirent *de;
	bool ret = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!ret && (de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid > 0 && att_status_field(tid, "SigBlk", buf, sizeof(buf)))
			ret = strtoull(buf, NULL, 16) & 1ULL << (SIGTRAP - 1);
	}
	closedir(d);
	return ret;
}

/*
 * With libfhook there already, nothing is rewritten while threads are
 * stopped: stop one thread at a time and keep the first at a safe point,
 * so that no two threads are ever stopped together.
 */
/*
 * Stop thread @tid alone and keep it if it is at a safe point: 1 when it
 * is kept (a->hijack), 0 when it is let go (or gone), a negative errno
 * when the kernel refuses (the reason printed).
 */
static int try_thread(struct cli_attach *a, pid_t tid, bool recheck_maps)
{
	struct att_thread *t = &a->th[0];
	const char *why;
	double t0;
	int ret;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
		ret = -errno;
		if (ret == -ESRCH)
			return 0;
		if (ret == -EPERM)
			att_explain_eperm(a->cmd, a->pid);
		else
			fprintf(stderr, "fhook: %s: cannot attach to thread %d of process %d: %s\n",
				a->cmd, tid, a->pid, strerror(-ret));
		return ret;
	}
	a->nr_th = 1;
	/*
	 * It runs our calls among the process's busy threads: while it is
	 * kept, it runs above them (fhook_boost_rt(): a real-time thread of
	 * the lowest priority, or nice -20 and a short slice), if we may
	 * (CAP_SYS_NICE), put back when it is let go.  Given before it is
	 * stopped: even a thread asleep needs the CPU to stop, and a thread
	 * of nice 0 waited for one up to a scheduler tick (4 ms here) after
	 * the busy threads.  Its calls are bounded and wait for no thread of
	 * the process but through the kernel (a futex sleeps).
	 */
	t->sched_saved = fhook_boost_rt(tid, &t->sched);
	ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	if (att_wait_stop(t)) {
		/* not stopped in time (in D state?), or gone: the boost goes either way */
		if (t->sched_saved)
			fhook_restore_sched(tid, &t->sched);
		t->sched_saved = false;
		att_release(t);
		a->nr_th = 0;
		return 0;
	}
	/*
	 * Stopped from here: until now it was runnable and waiting for a CPU
	 * (up to a scheduler tick, 4 ms, after the busy threads), and ran
	 * nothing of ours once it had one.
	 */
	t0 = att_now_ms();
	if (recheck_maps)
		att_read_maps(a);	/* a library loaded meanwhile */
	if (safe_point(a, t, &why)) {
		/* and the command, whom it waits for at every step, too */
		if (!a->self_boosted)
			a->self_boosted = fhook_boost_rt(0, &a->self_sched);
		a->hijack = t;
		a->hijack_t0 = t0;
		a->times.threads = 1;
		return 1;
	}
	if (att_verbose())
		fprintf(stderr, "fhook: %s: thread %d: %s\n", a->cmd, tid, why);
	att_release(t);
	a->nr_th = 0;
	return 0;
}

int att_stop_one_safe(struct cli_attach *a)
{
	char path[64];
	int tries, ret;

	snprintf(path, sizeof(path), "/proc/%d/task", a->pid);
	for (tries = 0; tries < ATT_SAFE_TRIES; tries++) {
		bool recheck = tries && !(tries % 50);
		struct dirent *de;
		DIR *d;

		/* the thread the world stop found at a safe point, first */
		if (a->preferred && (ret = try_thread(a, a->preferred, recheck)))
			return ret < 0 ? ret : 0;
		d = opendir(path);
		if (!d)
			return -ESRCH;
		a->nr_th = 0;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);

			if (tid <= 0 || tid == a->preferred)
				continue;
			ret = try_thread(a, tid, recheck);
			recheck = false;
			if (ret) {
				closedir(d);
				return ret < 0 ? ret : 0;
			}
		}
		closedir(d);
		att_sleep_ms(1);
	}
	fprintf(stderr, "fhook: %s: no thread of process %d came to a safe point (outside "
		"libc's locks and the loader) in %d tries\n", a->cmd, a->pid, tries);
	return -EAGAIN;
}
