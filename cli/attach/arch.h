/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What attaching needs to know of the architecture the command is built
 * for, which is the only one it attaches to: a stopped thread's registers
 * and the system call it is stopped in, a call made on a thread and its
 * return caught, the extended (vector) state kept across it, and how a
 * signal frame is recognised on a stack.  cli/attach/arch/<arch>.c
 * implements it (the x86-64 and aarch64 ptrace interfaces differ in every
 * one of these); the rest of cli/attach/ names no register.
 *
 * The arch files are part of the cli layer: they use ptrace on another
 * process, which lib/arch/ (code that runs inside the traced process)
 * never does.
 */
#ifndef FHOOK_CLI_ATTACH_ARCH_H
#define FHOOK_CLI_ATTACH_ARCH_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/user.h>

#if defined(__x86_64__)
struct att_regs {
	struct user_regs_struct r;
};
#define ATT_ARCH_EM		EM_X86_64
#define ATT_ARCH_NAME		"64-bit x86"
#elif defined(__aarch64__)
struct att_regs {
	struct user_regs_struct r;	/* NT_PRSTATUS: x0-x30, sp, pc, pstate */
	/*
	 * The system call the thread stopped in and restarts (its svc at pc),
	 * -1 if none: the kernel has already rewound pc and put x0 back by
	 * the time a tracer sees the stop, and forgotten the number it
	 * would give through NT_ARM_SYSTEM_CALL (arch/arm64 do_signal()).
	 */
	long sysno;
};
#define ATT_ARCH_EM		EM_AARCH64
#define ATT_ARCH_NAME		"64-bit Arm (aarch64)"
#else
#error "attach: no cli/attach/arch/ code for this architecture"
#endif

struct cli_attach;
struct att_thread;

/* a stopped thread's registers; 0 or a negative errno */
int att_arch_get_regs(pid_t tid, struct att_regs *r);
int att_arch_set_regs(pid_t tid, const struct att_regs *r);

unsigned long att_regs_pc(const struct att_regs *r);
void att_regs_set_pc(struct att_regs *r, unsigned long pc);
unsigned long att_regs_sp(const struct att_regs *r);
/* the system call the thread is stopped in (to be restarted or not), or -1 */
long att_regs_syscall(const struct att_regs *r);
/* the system call it was interrupted in and restarts when let go, or -1 */
long att_regs_restarting(const struct att_regs *r);
/* the system call it is stopped in returns @val when let go, not restarted */
void att_regs_syscall_return(struct att_regs *r, long val);

/*
 * A call of @fn(@args[0..@nargs-1]) from @r (whose stack pointer was
 * moved to *@sp, 16-byte aligned, below anything the thread had),
 * returning to address 0; *@sp becomes what att_arch_call_done() is to
 * compare with.  0 or -EFAULT.
 */
int att_arch_call_setup(struct cli_attach *a, struct att_regs *r, unsigned long fn,
			const unsigned long *args, int nargs, unsigned long *sp);
/* @r, stopped by a fault, is the return of that call: its value in *@ret */
bool att_arch_call_done(const struct att_regs *r, unsigned long sp, unsigned long *ret);
/*
 * As att_arch_call_setup(), for a call that must not need us to end well:
 * it returns into @land, libc's getppid() (a system call and a return:
 * where we take the call back, at its system call), and if no tracer does,
 * from there into @end, pthread_exit(), which ends the thread as its start
 * routine's return would.  -EOPNOTSUPP where that cannot be arranged (the
 * return address is a register, or @land is not what it must be).
 */
int att_arch_call_setup_land(struct cli_attach *a, struct att_regs *r, unsigned long fn,
			     const unsigned long *args, int nargs, unsigned long land,
			     unsigned long end, unsigned long *sp);
/* @r, at the entry of a system call, is that call's landing: the function has returned */
bool att_arch_call_landed(const struct att_regs *r, unsigned long sp);
/* the system call @r is at the entry of is not made (the landing's) */
void att_arch_skip_syscall(struct att_regs *r);
/* the extended state kept across a call (one call at a time); 0 or -errno */
int att_arch_save_ext(pid_t tid);
int att_arch_restore_ext(pid_t tid);
/* the registers @saved put back after a call, its system call restarting as it would have */
int att_arch_call_restore(pid_t tid, const struct att_regs *saved);

/* where a signal handler returns to (a signal frame's mark), 0 if not found */
unsigned long att_arch_find_restorer(struct cli_attach *a);
/* is the stack word @w a return address to @addr (pointer authentication stripped)? */
bool att_arch_is_return_to(unsigned long w, unsigned long addr);
/* does @r return to @addr from where it stands (a link register)? */
bool att_arch_regs_return_to(const struct att_regs *r, unsigned long addr);
/* the pcs saved in @t's signal frames, and where (t->frame_pc, t->frame_at) */
void att_arch_find_frames(struct cli_attach *a, struct att_thread *t);

#endif
