// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The process's memory (process_vm_readv/writev), and a call of one of
 * its functions on the kept thread: registers, extended state and signal
 * mask saved, the call made to return to address 0, everything put back.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "att.h"

#define ATT_SIGSETXID		33	/* glibc's internal SIGRTMIN + 1 */

int att_mem_write(struct cli_attach *a, unsigned long addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len }, r = { (void *)addr, len };

	return process_vm_writev(a->pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

int att_mem_read(struct cli_attach *a, unsigned long addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)addr, len };

	return process_vm_readv(a->pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A NUL-terminated string of the process (malloc'd), at most @max bytes. */
char *att_mem_string(struct cli_attach *a, unsigned long addr, size_t max)
{
	size_t len = 0, cap = 0;
	char *s = NULL;

	while (len < max) {
		size_t chunk = 4096 - ((addr + len) & 4095);
		char *ns;
		void *nul;

		if (len + chunk + 1 > cap) {
			cap = (len + chunk + 1) * 2;
			ns = realloc(s, cap);
			if (!ns)
				break;
			s = ns;
		}
		if (att_mem_read(a, addr + len, s + len, chunk))
			break;
		nul = memchr(s + len, 0, chunk);
		if (nul)
			return s;
		len += chunk;
	}
	if (s)
		s[len < cap ? len : cap - 1] = 0;
	return s;
}

/* A system-call stop of @tid: 1 at an entry, 2 at an exit, 0 if unknown */
static int syscall_stop_op(pid_t tid)
{
	struct __ptrace_syscall_info info;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) <= 0)
		return 0;
	return info.op == PTRACE_SYSCALL_INFO_ENTRY ? 1 : info.op == PTRACE_SYSCALL_INFO_EXIT ? 2 : 0;
}

/*
 * Make the hijacked thread call @fn(@args...) with @data (if any) copied
 * below its stack (its address replaces args[@data_arg]); the result in
 * *@ret.  Everything the thread had is put back after.  @land: the call
 * returns into the landing (att_arch_call_setup_land()), which is watched
 * for at every system call the thread makes (PTRACE_SYSCALL): no result.
 */
static int do_call(struct cli_attach *a, unsigned long fn, unsigned long *args, int nargs,
		   const void *data, size_t dlen, int data_arg, unsigned long *ret, bool land)
{
	struct att_thread *t = a->hijack;
	struct att_regs regs = t->regs, now;
	unsigned long sp, mask, callmask;
	bool have_x, have_mask, landed = false;
	double start = att_now_ms(), deadline = start + ATT_CALL_TIMEOUT_MS;
	int st, err = 0, resume = land ? PTRACE_SYSCALL : PTRACE_CONT;

	have_x = !att_arch_save_ext(t->tid);
	have_mask = !ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	/* below the red zone, and then some */
	sp = (att_regs_sp(&t->regs) - 512) & ~15UL;
	if (data) {
		sp = (sp - dlen) & ~15UL;
		if (att_mem_write(a, sp, data, dlen))
			return -EFAULT;
		args[data_arg] = sp;
	}
	if (land) {
		err = att_arch_call_setup_land(a, &regs, fn, args, nargs, a->land_fn, a->end_fn,
					       &sp);
		/* system-call stops told apart from SIGTRAP's */
		if (!err && ptrace(PTRACE_SETOPTIONS, t->tid, NULL, (void *)PTRACE_O_TRACESYSGOOD))
			err = -EOPNOTSUPP;
		if (err)
			return err;
	} else if (att_arch_call_setup(a, &regs, fn, args, nargs, &sp)) {
		return -EFAULT;
	}
	err = att_arch_set_regs(t->tid, &regs);
	if (err)
		return err;
	/*
	 * Asynchronous signals wait until the thread is back in its own code,
	 * but glibc's SIGSETXID (33): a setuid() of another thread waits until
	 * every thread has run its handler (which only makes the system call),
	 * and a thread pthread_create() makes here (att_start_loader()) has this
	 * mask for its whole life.
	 */
	callmask = ~0UL;
	callmask &= ~(1UL << (SIGTRAP - 1) | 1UL << (SIGSEGV - 1) | 1UL << (SIGBUS - 1) |
		      1UL << (SIGILL - 1) | 1UL << (SIGFPE - 1) | 1UL << (ATT_SIGSETXID - 1));
	if (have_mask)
		ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(callmask), &callmask);
	if (ptrace(resume, t->tid, NULL, NULL))
		return -errno;
	for (;;) {
		pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (r > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) {
			t->gone = true;
			return -ESRCH;
		}
		if (!r) {
			if (att_now_ms() > deadline) {
				fprintf(stderr, "fhook: %s: the call into process %d did not return "
					"in %d s; the process is left running it\n", a->cmd, a->pid,
					ATT_CALL_TIMEOUT_MS / 1000);
				att_release(t);
				return -ETIMEDOUT;
			}
			att_wait_for_tracee();
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			/* the landing's stop (below), where the registers are put back */
			if (landed)
				break;
			/* stopped with the group meanwhile: finish our call first */
			ptrace(resume, t->tid, NULL, NULL);
			continue;
		}
		if (land && WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			int op = syscall_stop_op(t->tid);

			/*
			 * The landing's getppid() is not made; from its exit the
			 * thread is stopped once more on its way out of the kernel,
			 * in the signal path: registers put back there make the
			 * system call it was stopped in restart, as after a fault's
			 * stop (put back at a system call's exit, they would not).
			 */
			if (op == 2 && landed) {
				ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
			} else if (op == 1 && !att_arch_get_regs(t->tid, &now) &&
				   att_arch_call_landed(&now, sp)) {
				att_arch_skip_syscall(&now);
				if (!att_arch_set_regs(t->tid, &now))
					landed = true;
			}
			ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL);
			continue;
		}
		if (st >> 16 == PTRACE_EVENT_CLONE) {
			/* att_start_loader()'s thread, attached to us at birth */
			unsigned long msg = 0;

			if (!ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg))
				a->clone_tid = (pid_t)msg;
			ptrace(resume, t->tid, NULL, NULL);
			continue;
		}
		if (!land && WSTOPSIG(st) == SIGSEGV && !att_arch_get_regs(t->tid, &now) &&
		    att_arch_call_done(&now, sp, ret))
			break;
		/* fhook's int3 mid-patch, or a real fault of the call: its handler decides */
		ptrace(resume, t->tid, NULL, (void *)(long)WSTOPSIG(st));
	}
	if (land)
		ptrace(PTRACE_SETOPTIONS, t->tid, NULL, NULL);
	err = att_arch_call_restore(t->tid, &t->regs);
	if (have_x) {
		int e = att_arch_restore_ext(t->tid);

		if (e)
			err = e;
	}
	/* the fault unblocks SIGSEGV if it was blocked: the mask comes back whole */
	if (have_mask)
		ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	a->times.call_ms = att_now_ms() - start;
	return err;
}

int att_call(struct cli_attach *a, unsigned long fn, unsigned long *args, int nargs,
	     const void *data, size_t dlen, int data_arg, unsigned long *ret)
{
	return do_call(a, fn, args, nargs, data, dlen, data_arg, ret, false);
}

int att_call_land(struct cli_attach *a, unsigned long fn, unsigned long *args, int nargs,
		  const void *data, size_t dlen, int data_arg)
{
	unsigned long unused;

	return do_call(a, fn, args, nargs, data, dlen, data_arg, &unused, true);
}
