// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Attaching on x86-64: PTRACE_GETREGS/SETREGS, orig_rax and the
 * -ERESTART* value in rax for the system call a thread is stopped in,
 * NT_X86_XSTATE kept across a call, a call that returns to address 0 by
 * a zero pushed as its return address, and libc's __restore_rt as a
 * signal frame's return address.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "../att.h"

#define ATT_XSTATE_MAX		(64 << 10)

int att_arch_get_regs(pid_t tid, struct att_regs *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, &r->r) ? -errno : 0;
}

int att_arch_set_regs(pid_t tid, const struct att_regs *r)
{
	return ptrace(PTRACE_SETREGS, tid, NULL, &r->r) ? -errno : 0;
}

unsigned long att_regs_pc(const struct att_regs *r)
{
	return r->r.rip;
}

void att_regs_set_pc(struct att_regs *r, unsigned long pc)
{
	r->r.rip = pc;
}

unsigned long att_regs_sp(const struct att_regs *r)
{
	return r->r.rsp;
}

long att_regs_syscall(const struct att_regs *r)
{
	return (long)r->r.orig_rax >= 0 ? (long)r->r.orig_rax : -1;
}

long att_regs_restarting(const struct att_regs *r)
{
	long rv = (long)r->r.rax;

	/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK */
	return (long)r->r.orig_rax >= 0 && rv <= -512 && rv >= -516 ? (long)r->r.orig_rax : -1;
}

void att_regs_syscall_return(struct att_regs *r, long val)
{
	r->r.rax = val;
	r->r.orig_rax = -1;	/* no restart */
}

/* @r entering @fn(@args[0..@nargs-1]) with its return address at @sp */
static void call_regs(struct att_regs *r, unsigned long fn, const unsigned long *args,
		      int nargs, unsigned long sp)
{
	r->r.rip = fn;
	r->r.rsp = sp;
	r->r.rax = 0;
	r->r.orig_rax = -1;	/* not inside a system call: nothing to restart */
	r->r.rdi = nargs > 0 ? args[0] : 0;
	r->r.rsi = nargs > 1 ? args[1] : 0;
	r->r.rdx = nargs > 2 ? args[2] : 0;
	r->r.rcx = nargs > 3 ? args[3] : 0;
	r->r.r8 = nargs > 4 ? args[4] : 0;
	r->r.r9 = nargs > 5 ? args[5] : 0;
	r->r.eflags &= ~0x400UL;	/* DF clear, as the ABI says */
}

int att_arch_call_setup(struct cli_attach *a, struct att_regs *r, unsigned long fn,
			const unsigned long *args, int nargs, unsigned long *sp)
{
	unsigned long zero = 0;

	*sp -= 8;	/* at entry, rsp + 8 is 16-byte aligned */
	if (att_mem_write(a, *sp, &zero, sizeof(zero)))
		return -EFAULT;
	call_regs(r, fn, args, nargs, *sp);
	return 0;
}

bool att_arch_call_done(const struct att_regs *r, unsigned long sp, unsigned long *ret)
{
	/* the ret popped the zero */
	if (r->r.rip != 0 || r->r.rsp != sp + 8)
		return false;
	*ret = r->r.rax;
	return true;
}

/*
 * The landing: the function returns into getppid(), which a tracer stops
 * at its system call; without one, getppid()'s own return goes on into
 * pthread_exit() with the stack aligned as for a call, and the unwinding
 * that ends the thread stops at the return address 0 above it (the end
 * of the stack), as at the bottom of any thread.
 */
static const unsigned char getppid_code[] = { 0xb8, 0x6e, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3 };

int att_arch_call_setup_land(struct cli_attach *a, struct att_regs *r, unsigned long fn,
			     const unsigned long *args, int nargs, unsigned long land,
			     unsigned long end, unsigned long *sp)
{
	unsigned char code[sizeof(getppid_code) + 4];
	unsigned long words[3] = { land, end, 0 };
	size_t skip = 0;

	/* getppid() as glibc builds it, with or without its endbr64 */
	if (!land || !end || att_mem_read(a, land, code, sizeof(code)))
		return -EOPNOTSUPP;
	if (!memcmp(code, "\xf3\x0f\x1e\xfa", 4))
		skip = 4;
	if (memcmp(code + skip, getppid_code, sizeof(getppid_code)))
		return -EOPNOTSUPP;
	/* at entry, rsp + 8 is 16-byte aligned; so is it at pthread_exit()'s */
	*sp -= 32;
	*sp += 8;
	if (att_mem_write(a, *sp, words, sizeof(words)))
		return -EFAULT;
	call_regs(r, fn, args, nargs, *sp);
	return 0;
}

bool att_arch_call_landed(const struct att_regs *r, unsigned long sp)
{
	/* getppid()'s system call, its return address (pthread_exit) on top */
	return r->r.orig_rax == 110 && r->r.rsp == sp + 8;
}

void att_arch_skip_syscall(struct att_regs *r)
{
	r->r.orig_rax = -1;
}

static unsigned char xstate[ATT_XSTATE_MAX];
static struct iovec xiov;

int att_arch_save_ext(pid_t tid)
{
	xiov.iov_base = xstate;
	xiov.iov_len = sizeof(xstate);
	return ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &xiov) ? -errno : 0;
}

int att_arch_restore_ext(pid_t tid)
{
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &xiov) ? -errno : 0;
}

/* orig_rax and the -ERESTART* value put back: the kernel restarts as it would have */
int att_arch_call_restore(pid_t tid, const struct att_regs *saved)
{
	return att_arch_set_regs(tid, saved);
}

/*
 * Where libc's signal return trampoline (__restore_rt: mov $15, %rax;
 * syscall) is in the process: every signal frame's return address.  It is
 * a local symbol, so it is found by its bytes in libc's file.
 */
unsigned long att_arch_find_restorer(struct cli_attach *a)
{
	static const unsigned char code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	const struct att_map *libc = att_object_named(a, "libc.so");
	unsigned char *img = NULL, *hit;
	unsigned long off, ret = 0;
	struct stat st;
	int fd, i;

	unsigned long near;
	unsigned char around[8192];

	if (!libc)
		return 0;
	/* glibc defines it beside sigaction(): look there first */
	near = att_object_sym(libc, "sigaction");
	if (near > 4096 && !att_mem_read(a, near - 4096, around, sizeof(around)) &&
	    (hit = memmem(around, sizeof(around), code, sizeof(code))))
		return near - 4096 + (hit - around);
	if ((fd = open(libc->path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (!fstat(fd, &st) && (img = malloc(st.st_size)) &&
	    pread(fd, img, st.st_size, 0) == st.st_size &&
	    (hit = memmem(img, st.st_size, code, sizeof(code)))) {
		off = hit - img;
		for (i = 0; i < a->nr_maps && !ret; i++) {
			const struct att_map *m = &a->maps[i];

			if (m->exec && m->path && !strcmp(m->path, libc->path) && off >= m->off &&
			    off < m->off + (m->end - m->start))
				ret = m->start + (off - m->off);
		}
	}
	free(img);
	close(fd);
	return ret;
}

bool att_arch_is_return_to(unsigned long w, unsigned long addr)
{
	return w == addr;
}

/* a call pushes its return address: on the stack, which the caller reads */
bool att_arch_regs_return_to(const struct att_regs *r, unsigned long addr)
{
	return false;
}

/*
 * Frames are found as att_in_signal_handler() finds them, by the handler's
 * return address (__restore_rt) on the stack, and taken for frames only
 * when they hold a 64-bit user code segment where the kernel puts it.
 */
void att_arch_find_frames(struct cli_attach *a, struct att_thread *t)
{
	const size_t gregs = (offsetof(ucontext_t, uc_mcontext) +
			      offsetof(mcontext_t, gregs)) / 8 + 1;
	const unsigned long *words = att_stack_words;
	size_t i, n = att_read_stack(a, t);

	t->nr_frames = 0;
	for (i = 0; i + gregs + NGREG <= n && t->nr_frames < ATT_MAX_FRAMES; i++) {
		const unsigned long *g = &words[i + gregs];

		if (words[i] != a->restorer || (g[REG_CSGSFS] & 0xffff) != 0x33)
			continue;
		t->frame_pc[t->nr_frames] = g[REG_RIP];
		t->frame_at[t->nr_frames++] = t->regs.r.rsp + (i + gregs + REG_RIP) * 8;
	}
}
