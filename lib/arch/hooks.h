/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The upward half of the contract between lib/arch/<arch>/ and generic
 * code: the only ways arch code reaches above itself.  Generic code fills
 * these in and hands them over once, before any site is patched, as the
 * kernel's arch code reaches generic ftrace only through a few entry
 * points (ftrace_rec_iter, ftrace_test_record, ftrace_bug).
 */
#ifndef FHOOK_ARCH_HOOKS_H
#define FHOOK_ARCH_HOOKS_H

#include <stdbool.h>
#include <fhook/ftrace.h>

struct fhook_stub;

/* A mapped segment of a loaded object: page-aligned bounds, PROT_* bits. */
struct fhook_text_seg {
	unsigned long start, end;
	int prot;
};

struct fhook_arch_hooks {
	/*
	 * The segment of a loaded object that holds @addr, or false for an
	 * address no object maps (the patcher then asks the kernel).  Called
	 * with text_mutex held, and by fhook_text_read() with whatever lock
	 * its caller holds (kprobes: kp_mutex); lock-free readers only.
	 */
	bool (*text_seg)(unsigned long addr, struct fhook_text_seg *seg);
	/*
	 * Is @ip a site generic code may have written an int3 to?  Called in
	 * the SIGTRAP handler: async-signal-safe, no lock.
	 */
	bool (*is_site)(unsigned long ip);
	/* What a stub with no data calls: the list function. */
	ftrace_func_t list_func;
	/*
	 * The trampolines' slow path: call the stub's handler if it has
	 * one, else the list function; with bit 0 of @stub set (fregs
	 * holds only the registers the function reads), nothing else.
	 */
	void (*dispatch)(unsigned long ip, unsigned long parent_ip, struct fhook_stub *stub,
			 struct ftrace_regs *fregs);
};

/* Hand arch its hooks; before any other arch function is called. */
void fhook_arch_init(const struct fhook_arch_hooks *hooks);

/*
 * The return trampoline's handler, handed over by the return-hook layer:
 * given the stub the hooked return went through, it returns the real
 * return address.  @libgcc: the dlopen() handle of the process's
 * libgcc_s (NULL: none), with which arch registers the unwind information
 * of the code it generates.  Before any stub is written.
 */
typedef unsigned long (*fhook_rethook_handler_t)(unsigned long stub, struct ftrace_regs *fregs);
void fhook_arch_rethook_init(fhook_rethook_handler_t handler, void *libgcc);

/*
 * The longjmp interposers' hook, handed over by the return-hook layer:
 * told the stack pointer a jump will restore, @before_jump drops the
 * shadow entries of the frames the jump removes.  @libc_sym finds libc's
 * own functions to jump on to; they are looked up here, at once.
 */
void fhook_arch_longjmp_init(void (*before_jump)(unsigned long target_sp),
			     void *(*libc_sym)(const char *name));

/*
 * The makecontext() interposer's hook: told the memory [@lo, @hi) a new
 * context will run on, before libc's makecontext() (found with the
 * longjmp interposers' @libc_sym) builds it.
 */
void fhook_arch_makecontext_init(void (*new_stack)(unsigned long lo, unsigned long hi));

/*
 * The kprobe layer's handlers, for the detours and the SIGTRAP handler:
 * @hit runs a probe's pre_handlers (the regs' ip is the address +
 * FHOOK_KPROBE_HIT_IP_OFF: + 1 on x86-64, the address on aarch64) and
 * returns 1 when the thread is to go on at that ip instead of the probed
 * code; @post runs its post_handlers.  @cookie is the one given to
 * fhook_kprobe_slot_get(); @vregs the vector argument registers as the
 * probed code had them (8 of 16 bytes), or NULL.  They may run in a
 * signal handler.
 */
struct fhook_kprobe_hooks {
	int (*hit)(void *cookie, struct pt_regs *regs, const void *vregs);
	void (*post)(void *cookie, struct pt_regs *regs);
};
void fhook_arch_kprobe_init(const struct fhook_kprobe_hooks *hooks);

#endif /* FHOOK_ARCH_HOOKS_H */
