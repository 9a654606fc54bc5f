// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Frames removed without a return: the exits of FPROBE_FL_EXIT_ON_UNWIND.
 *
 * A hooked frame can leave the stack without returning through its stub:
 * an exception passes through it, pthread_exit() or cancellation unwinds
 * it, longjmp/siglongjmp jumps over it.  Its shadow-stack entry then
 * stays until something finds it dead (rethook.c); for a rethook that
 * asked for it, that is when its handler is called with NULL regs.  To
 * make the report come when the frame really went, not whenever the
 * entry happens to be looked at, the removal is caught where it happens:
 *
 *  - exceptions and forced unwinds: the FDE that describes every stub
 *    (rethook.c) names rethook_personality() as the personality routine,
 *    so libgcc calls it for the stub's pseudo-frame in its cleanup phase,
 *    i.e. right after the hooked function's own cleanups ran and before
 *    its caller's do.  A frame the unwinder passes in that phase is gone:
 *    phase 2 only runs once a handler was found further up (or, forced,
 *    to the end of the thread's stack).
 *
 *  - longjmp, _longjmp, siglongjmp, __longjmp_chk are interposed: after
 *    a jump to a stack pointer T, every frame deeper than T on the same
 *    stack is dead.  Only the thread's own stack is trusted for that: a
 *    jump onto another stack may be a coroutine switch, which leaves the
 *    frames it jumps away from alive.  The one other sure case is a jump
 *    out of the signal stack (sigaltstack) while running on it: the
 *    handlers there are left for good.  Other jumps are left to the next
 *    two.
 *
 *  - a hook or a return that finds entries deeper than itself on the
 *    thread's own stack (rethook_try_get, the trampoline, and fprobe's
 *    entry for probes without a return hook): those are dead.
 *
 *  - thread exit (rethook.c): entries on the thread's stack are dead, and
 *    so are those elsewhere whose slot no longer holds their stub.
 *
 * A frame on another stack (a parked coroutine) is never reported while
 * its slot still holds its stub: it may be resumed and return normally.
 *
 * Contexts made with makecontext() run on stacks of their own, which a
 * program may carve out of its thread's stack (an array in main's
 * frame): the interposer tells their ranges, and those are not the
 * thread's own stack for any of the above, so that a switch between two
 * contexts never passes for frames removed without a return.  Their
 * frames are kept while their slots hold their stubs, as any other
 * stack's.
 *
 * The thread's own stack is the mapping that holds its thread descriptor
 * (glibc puts it at the top of every thread's stack block) or, for the
 * main thread, the one that holds the auxiliary vector's random bytes;
 * it is read from /proc/self/maps with plain system calls (this may run
 * in a signal handler), once per thread, and only while some rethook
 * reports unwound frames.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>
#include <unwind.h>
#include <dlfcn.h>

#include "core/core.h"
#include "util/rcu.h"
#include "util/tasks.h"

#include <fhook/fprobe.h>
#include "rethook.h"


static unsigned long (*uw_get_ip)(struct _Unwind_Context *);
static unsigned long (*uw_get_cfa)(struct _Unwind_Context *);

/**
 * rethook_report_unwound - call @node's handler for a frame that is gone
 * @node:	its entry, which cannot be reused meanwhile (the caller claimed
 *		it, or it stays in place: the personality's case)
 * @locked:	the caller holds the recursion lock already
 *
 * With the rules of a return: the handler runs under the recursion lock,
 * in an RCU read-side section; a refused lock is a miss.  Once per entry,
 * whoever finds it first (the personality, a longjmp, a scan).
 */
void rethook_report_unwound(struct rethook_node *node, bool locked)
{
	struct rethook *rh = node->rethook;
	void *data;
	int bit = 0;

	if (!rh->unwind || __atomic_exchange_n(&node->unwound, 1, __ATOMIC_ACQ_REL))
		return;
	if (!locked)
		bit = fhook_recursion_trylock();
	if (fhook_tasks_enter()) {
		data = __atomic_load_n(&rh->fgraph.probe, __ATOMIC_ACQUIRE);
		if (data && bit >= 0)
			rh->handler(node, data, node->ret_ip, NULL);
		else if (data && !fhook_recursion_internal())
			__atomic_add_fetch(&((struct fprobe *)data)->nmissed, 1,
					   __ATOMIC_RELAXED);
		fhook_tasks_leave();
	}
	if (!locked && bit >= 0)
		fhook_recursion_unlock(bit);
}

/* ---- the thread's own stack ---- */

static unsigned long parse_hex(const char **p, const char *end)
{
	unsigned long v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (c - 'a' + 10);
		else
			break;
	}
	return v;
}

/* The mapping that holds @addr, from /proc/self/maps; false if none. */
static bool mapping_of(unsigned long addr, unsigned long *lo, unsigned long *hi)
{
	char buf[4096];
	size_t have = 0;
	bool found = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (!found) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		const char *line = buf, *nl, *end;

		if (n <= 0)
			break;
		have += n;
		end = buf + have;
		while (!found && (nl = memchr(line, '\n', end - line))) {
			const char *p = line;
			unsigned long s = parse_hex(&p, nl), e;

			if (p < nl && *p == '-') {
				p++;
				e = parse_hex(&p, nl);
				if (addr >= s && addr < e) {
					*lo = s;
					*hi = e;
					found = true;
				}
			}
			line = nl + 1;
		}
		have = end - line;
		if (have == sizeof(buf))
			have = 0;	/* a line longer than the buffer: skip it */
		memmove(buf, line, have);
	}
	close(fd);
	return found;
}

/* The calling thread's own stack: [@lo, @hi), both 1 if not found. */
static void own_stack_range(unsigned long *lo_out, unsigned long *hi_out)
{
	unsigned long lo = 1, hi = 1, anchor;
	bool main_thread = gettid() == getpid();

	anchor = main_thread ? getauxval(AT_RANDOM) : (unsigned long)pthread_self();
	if (anchor && mapping_of(anchor, &lo, &hi) && main_thread) {
		struct rlimit rl;

		/* the main stack grows down: count what it may still grow */
		if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur < hi && hi - rl.rlim_cur < lo)
			lo = hi - rl.rlim_cur;
	}
	if (lo >= hi)
		lo = hi = 1;	/* looked up, not found: nothing is on it */
	*lo_out = lo;
	*hi_out = hi;
}

static void own_stack_lookup(struct rethook_thread *t)
{
	unsigned long lo, hi;

	own_stack_range(&lo, &hi);
	t->stack_lo = lo;
	__atomic_store_n(&t->stack_hi, hi, __ATOMIC_RELEASE);
}

/*
 * The stacks makecontext() was given inside a thread's own stack: ranges
 * never removed (a stale one only makes frames there kept until their
 * slots change), a few of them; NCTX at most, later ones are not told
 * apart (their frames may then pass for dead on the thread's stack).
 */
#define NCTX	64
static struct { unsigned long lo, hi; } ctx_stacks[NCTX] __fhook_cold_bss;
static unsigned int ctx_nr;

static void ctx_new_stack(unsigned long lo, unsigned long hi)
{
	struct rethook_thread *t = rethook_self;
	unsigned long own_lo, own_hi;
	unsigned int i, n;

	if (lo >= hi)
		return;
	/* a thread that has hooked no return yet: looked up for this once */
	if (t) {
		if (!__atomic_load_n(&t->stack_hi, __ATOMIC_ACQUIRE))
			own_stack_lookup(t);
		own_lo = t->stack_lo;
		own_hi = t->stack_hi;
	} else {
		own_stack_range(&own_lo, &own_hi);
	}
	if (hi <= own_lo || lo >= own_hi)
		return;		/* not on this thread's stack: told apart already */
	n = __atomic_load_n(&ctx_nr, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < NCTX; i++)
		if (__atomic_load_n(&ctx_stacks[i].lo, __ATOMIC_RELAXED) == lo &&
		    __atomic_load_n(&ctx_stacks[i].hi, __ATOMIC_RELAXED) == hi)
			return;
	i = __atomic_fetch_add(&ctx_nr, 1, __ATOMIC_ACQ_REL);
	if (i >= NCTX) {
		__atomic_store_n(&ctx_nr, NCTX, __ATOMIC_RELEASE);
		return;
	}
	/* hi last: a reader that sees it sees lo */
	__atomic_store_n(&ctx_stacks[i].lo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&ctx_stacks[i].hi, hi, __ATOMIC_RELEASE);
}

/* Is @a on a context's stack (makecontext) inside a thread's? */
static bool on_ctx_stack(unsigned long a)
{
	unsigned int i, n = __atomic_load_n(&ctx_nr, __ATOMIC_ACQUIRE);

	for (i = 0; i < n && i < NCTX; i++) {
		unsigned long hi = __atomic_load_n(&ctx_stacks[i].hi, __ATOMIC_ACQUIRE);

		if (a - ctx_stacks[i].lo < hi - ctx_stacks[i].lo)
			return true;
	}
	return false;
}

/* Is @a on @t's own stack (the one its thread started on), not a context's inside it? */
static bool own_stack(struct rethook_thread *t, unsigned long a)
{
	if (!__atomic_load_n(&t->stack_hi, __ATOMIC_ACQUIRE))
		own_stack_lookup(t);
	return a - t->stack_lo < t->stack_hi - t->stack_lo &&
	       !(__atomic_load_n(&ctx_nr, __ATOMIC_RELAXED) && on_ctx_stack(a));
}

/* Are @a and @b both on @t's own stack (the one its thread started on)? */
bool rethook_on_own_stack(struct rethook_thread *t, unsigned long a, unsigned long b)
{
	return own_stack(t, a) && own_stack(t, b);
}

/*
 * Report and drop this thread's entries whose slots lie in [@lo, @hi):
 * those frames are gone.  Innermost first; entries elsewhere are passed
 * over.  @ordered: [@lo, @hi) is the deep end of the thread's own stack,
 * where older entries are shallower, so the first entry of that stack
 * at or above @hi ends the walk.
 */
static void reap_range(struct rethook_thread *t, unsigned long lo, unsigned long hi,
		       bool ordered, bool locked)
{
	unsigned long base = rethook_region_of((unsigned long)t);
	unsigned long i, r_sp;

	for (i = rethook_top(t, __ATOMIC_RELAXED); i > 0; i--) {
		r_sp = __atomic_load_n(&rethook_ret_of(base, i)->sp, __ATOMIC_ACQUIRE);
		if (!r_sp || (r_sp & RETHOOK_RETURNING))
			continue;
		if (r_sp - lo >= hi - lo) {
			if (ordered && r_sp >= hi && rethook_on_own_stack(t, r_sp, r_sp))
				break;
			continue;
		}
		/* another context's frame, on a stack inside the thread's: alive */
		if (ordered && !own_stack(t, r_sp))
			continue;
		if (!rethook_drop_entry(base, i, locked))
			break;
		t->holes = 1;	/* the top is popped by the next hook */
	}
}

/* The frames on the thread's own stack below @below are gone. */
static void reap_below(struct rethook_thread *t, unsigned long below, bool locked)
{
	if (rethook_on_own_stack(t, below, below))
		reap_range(t, t->stack_lo, below, true, locked);
}

/**
 * rethook_reap_deeper - report this thread's frames below @sp as unwound
 *
 * For a hook or a return at stack slot @sp: entries deeper than it on the
 * thread's own stack belong to frames that were removed without a return.
 * @locked: the caller holds the recursion lock (fprobe's entry does, the
 * return trampoline does not).
 */
void rethook_reap_deeper(unsigned long sp, bool locked)
{
	struct rethook_thread *t = rethook_self;
	unsigned long base, top, r_sp;

	if (!t || !(top = rethook_top(t, __ATOMIC_RELAXED)))
		return;
	base = rethook_region_of((unsigned long)t);
	r_sp = __atomic_load_n(&rethook_ret_of(base, top)->sp, __ATOMIC_ACQUIRE);
	/* the usual case: the top entry is a caller's */
	if (r_sp >= sp && !(r_sp & RETHOOK_RETURNING))
		return;
	reap_below(t, sp, locked);
}

/* ---- exceptions and forced unwinds ---- */

/*
 * libgcc calls this for the pseudo-frame of a stub (see the FDE in
 * rethook.c).  In the cleanup phase that frame, and the hooked function
 * below it, are being removed; report it, and the hooks chained on the
 * same return (two fprobes on one function), newest first as their
 * returns would have run.  The entry stays for a scan to drop: the
 * unwinder reads its return address after we return.
 */
static _Unwind_Reason_Code rethook_personality(int version, _Unwind_Action actions,
					       uint64_t cls, struct _Unwind_Exception *exc,
					       struct _Unwind_Context *ctx)
{
	unsigned long stub, slot;
	int n;

	if (version != 1 || !(actions & _UA_CLEANUP_PHASE) || !uw_get_ip || !uw_get_cfa)
		return _URC_CONTINUE_UNWIND;
	stub = uw_get_ip(ctx);
	/*
	 * The context a personality gets still holds the CFA of the frame
	 * below (libgcc updates it after the call): the hooked function's,
	 * just above its return slot.  The slot must still lead to the stub;
	 * if it does not (another unwinder's conventions), the frame is left
	 * to the scans of later hooks, returns and thread exit.
	 */
	slot = fhook_ret_key_at_return(uw_get_cfa(ctx));
	if (!rethook_is_stub(stub) || (FHOOK_RET_IN_SLOT && *(unsigned long *)slot != stub))
		return _URC_CONTINUE_UNWIND;
	for (n = 0; n < 64 && rethook_is_stub(stub); n++) {
		unsigned long base = rethook_region_of(stub);
		unsigned long idx = (stub - base) / RETHOOK_STUB_SIZE;
		struct rethook_node *node = rethook_node_of(base, idx);
		unsigned long v = __atomic_load_n(&rethook_ret_of(base, idx)->sp,
						  __ATOMIC_ACQUIRE);

		if (v != slot)
			break;	/* not this frame's, or being returned through */
		rethook_report_unwound(node, false);
		stub = __atomic_load_n(&node->next, __ATOMIC_RELAXED);
	}
	return _URC_CONTINUE_UNWIND;
}

void *rethook_personality_addr(void)
{
	return (void *)rethook_personality;
}

/* From ordinary context, with the libgcc_s that every unwinder uses. */
void rethook_unwind_init(void *libgcc)
{
	uw_get_ip = (unsigned long (*)(struct _Unwind_Context *))dlsym(libgcc, "_Unwind_GetIP");
	uw_get_cfa = (unsigned long (*)(struct _Unwind_Context *))dlsym(libgcc,
									"_Unwind_GetCFA");
}

/* ---- longjmp ---- */

/*
 * A jump to stack pointer @target (the arch layer's longjmp interposers
 * read it from the jmp_buf): on the thread's own stack, the frames below
 * it are gone.  A jump from the signal stack (sigaltstack) to anywhere off
 * it leaves the handlers running there for good: every frame on it is
 * gone.
 */
static void before_longjmp(unsigned long target)
{
	struct rethook_thread *t = rethook_self;
	unsigned long ss_lo;
	stack_t ss;

	/*
	 * Where no slot shows whether a frame's return is still pending
	 * (the return address in a register), the jump is what tells that
	 * the frames it leaves are gone: reaped for every probe, not only
	 * for those that report them.
	 */
	if (!t || !rethook_top(t, __ATOMIC_RELAXED) ||
	    (FHOOK_RET_IN_SLOT && !__atomic_load_n(&rethook_unwind_users, __ATOMIC_RELAXED)))
		return;
	if (!sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK)) {
		ss_lo = (unsigned long)ss.ss_sp;
		if (target - ss_lo >= ss.ss_size)
			reap_range(t, ss_lo, ss_lo + ss.ss_size, false, false);
	}
	/*
	 * The slots of the calls made from the frame jumped to are dead
	 * too: below @target where the return address is pushed, at it
	 * where the slot is the stack pointer of the entry (aarch64).
	 */
	reap_below(t, fhook_ret_key_at_return(target) + 1, false);
}

/* Before any program code can longjmp (a signal handler may). */
__attribute__((constructor(101))) static void rethook_longjmp_init(void)
{
	fhook_arch_longjmp_init(before_longjmp, fhook_libc_sym);
	fhook_arch_makecontext_init(ctx_new_stack);
}
