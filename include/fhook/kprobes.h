/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: the kernel's kprobes API for user space, on any function of any
 * loaded object, built for fhook or not.
 *
 * Three methods, chosen per address at registration (as the kernel picks
 * an ftrace-based, an optimized or an int3 kprobe):
 *
 *   site  the address is a function's fhook site (the object was built
 *         with -fpatchable-function-entry): an ftrace_ops with
 *         FTRACE_OPS_FL_SAVE_REGS, as the kernel's kprobes use ftrace.
 *   jump  the instructions covering a 5-byte jmp are relocated into a
 *         detour near the function, which calls the handlers and runs them.
 *   trap  an int3; fhook's SIGTRAP handler sends the thread where the
 *         jump would have (the handlers run outside the signal handler),
 *         the instruction then runs out of line.  A signal per hit: slow.
 *
 * kprobe_method() says which one a registered probe got and why.  See
 * docs/kprobes.md.
 *
 * As in the kernel, a pre_handler sees instruction_pointer(regs) ==
 * address + 1 on x86-64 (past the int3), address on aarch64; a
 * pre_handler that moves it elsewhere returns 1, and the probed
 * instructions are then skipped (the thread resumes there).  Every
 * field of the struct pt_regs is valid; changes to registers take effect.
 *
 * Registering and unregistering may allocate and take locks: call them
 * from ordinary thread context, not from a handler.
 */
#ifndef FHOOK_KPROBES_H
#define FHOOK_KPROBES_H

#include <fhook/ftrace.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned char kprobe_opcode_t;

struct kprobe;

/* Return 1 when regs->ip was changed (the probed code is then skipped). */
typedef int (*kprobe_pre_handler_t)(struct kprobe *p, struct pt_regs *regs);
/* After the probed instruction; only trap-method probes have one. */
typedef void (*kprobe_post_handler_t)(struct kprobe *p, struct pt_regs *regs,
				      unsigned long flags);

/* struct kprobe.flags, with the kernel's values */
#define KPROBE_FLAG_GONE	1	/* the object was unloaded */
#define KPROBE_FLAG_DISABLED	2	/* registered, but does not fire */
#define KPROBE_FLAG_OPTIMIZED	4	/* set by fhook: a jump probe */
#define KPROBE_FLAG_FTRACE	8	/* set by fhook: a site probe */

/**
 * struct kprobe - a probe on one instruction
 * @symbol_name: the function, looked up with kallsyms_lookup_name(), or NULL
 * @offset:	bytes into @symbol_name (or into @addr)
 * @addr:	the address when @symbol_name is NULL; set by registration
 * @pre_handler: called before the instruction at @addr runs, may be NULL
 * @post_handler: called after it (forces the trap method), may be NULL
 * @flags:	KPROBE_FLAG_DISABLED to register it disabled
 * @nmissed:	hits whose handlers were skipped (a handler's own recursion)
 *
 * Zero it and set the fields above.  The rest is fhook's.
 */
struct kprobe {
	struct kprobe *next;		/* fhook's: the probes of one address */
	unsigned long nmissed;
	kprobe_opcode_t *addr;
	const char *symbol_name;
	unsigned int offset;
	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
	kprobe_opcode_t opcode;		/* the first byte at @addr */
	unsigned int flags;
	void *fhook_site;		/* fhook's: the address's record */
};

/*
 * register_kprobe - put @p on its address.  Returns 0, or -EINVAL (no
 * address, or @addr not what @symbol_name + @offset is), -EEXIST (@p is
 * registered), -ENOENT (no such symbol), -EILSEQ (an offset inside an
 * instruction, or an instruction that cannot be moved), -EBUSY (inside
 * the jump of a probe placed before, or a thread has SIGTRAP blocked),
 * -ENOSYS (no capstone, for an address that is no site), -ENOMEM; errno
 * is set too.
 */
int register_kprobe(struct kprobe *p);
/*
 * unregister_kprobe - remove @p; returns once no thread can still be in
 * its handlers.  @p may then be freed.
 */
void unregister_kprobe(struct kprobe *p);
/* All or nothing: on an error, the ones registered are removed again. */
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);
int disable_kprobe(struct kprobe *p);
int enable_kprobe(struct kprobe *p);

/* fhook's own: how the address of a registered @p is probed */
enum kprobe_method {
	KPROBE_METHOD_NONE = 0,		/* not registered */
	KPROBE_METHOD_SITE,
	KPROBE_METHOD_JUMP,
	KPROBE_METHOD_TRAP,
};

/*
 * kprobe_method - the method of registered @p, and in @why (may be NULL,
 * @size bytes) the reason a jump was not possible, or "".
 */
enum kprobe_method kprobe_method(const struct kprobe *p, char *why, size_t size);
/* "site", "jump", "trap" or "none" */
const char *kprobe_method_name(enum kprobe_method m);

/*
 * kprobe_vector_regs - fhook's own: in a pre_handler, the probed code's
 * vector argument registers (x86-64: %xmm0-7, 16 bytes each), where a
 * function's double and float arguments are; NULL elsewhere.  User-space
 * code keeps floating-point values there, which the kernel's does not:
 * struct pt_regs has no room for them.
 */
const void *kprobe_vector_regs(void);

/* ---- return probes ---- */

struct kretprobe;

/**
 * struct kretprobe_instance - one call in flight
 * @rp:		its kretprobe (get_kretprobe() in the kernel)
 * @ret_addr:	where the call returns to
 * @data:	@rp->data_size bytes, shared by entry_handler and handler
 */
struct kretprobe_instance {
	struct kretprobe *rp;
	unsigned long ret_addr;
	char *data;
};

typedef int (*kretprobe_handler_t)(struct kretprobe_instance *ri, struct pt_regs *regs);

/*
 * at most this many bytes of per-call data (a shadow-stack entry's 256,
 * less the instance and the caller-saved registers kept for the return)
 */
#define KRETPROBE_DATA_MAX	(256 - 88)

/**
 * struct kretprobe - a probe on a function's return
 * @kp:		the entry probe (symbol_name or addr, offset 0 once resolved)
 * @handler:	called on return; regs_return_value(regs) is the return value,
 *		changes to the registers are what the caller sees
 * @entry_handler: called on entry; non-zero: this call is not hooked
 * @maxactive:	calls hooked at once over all threads; 0: no cap but each
 *		thread's shadow stack
 * @nmissed:	entries not hooked for want of a free instance
 * @data_size:	bytes of the instance's data (at most KRETPROBE_DATA_MAX)
 * @fhook_flags: fhook's own, KRETPROBE_FL_*
 */
struct kretprobe {
	struct kprobe kp;
	kretprobe_handler_t handler;
	kretprobe_handler_t entry_handler;
	int maxactive;
	int nmissed;
	size_t data_size;
	unsigned int fhook_flags;
	void *fhook_rethook;		/* fhook's */
};

/*
 * User space has calls that end without a return: an exception, longjmp,
 * a thread's cancellation.  With this flag @handler is called for those
 * too, with @regs NULL, where the unwinder leaves the frame (fprobe's
 * FPROBE_FL_EXIT_ON_UNWIND); without it such a call has no return event.
 */
#define KRETPROBE_FL_EXIT_ON_UNWIND	1

static inline struct kretprobe *get_kretprobe(struct kretprobe_instance *ri)
{
	return ri->rp;
}

static inline unsigned long get_kretprobe_retaddr(struct kretprobe_instance *ri)
{
	return ri->ret_addr;
}

/* Like register_kprobe(); -EINVAL also for an address not a function's entry. */
int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
int register_kretprobes(struct kretprobe **rps, int num);
void unregister_kretprobes(struct kretprobe **rps, int num);
int disable_kretprobe(struct kretprobe *rp);
int enable_kretprobe(struct kretprobe *rp);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_KPROBES_H */
