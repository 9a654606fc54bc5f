// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kretprobes (<fhook/kprobes.h>): a kprobe on a function's entry whose
 * pre_handler hooks the return, on fprobe's rethook (the return address
 * swapped for a stub of the thread's shadow stack), as the kernel's
 * kretprobes sit on its rethook since 5.19.
 *
 * An instance lives in the shadow-stack entry's data area: struct
 * kretprobe_instance, then data_size bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include <fhook/fprobe.h>
#include <fhook/kallsyms.h>
#include <fhook/kprobes.h>

#include "core/core.h"
#include "fprobe/rethook.h"
#include "kpglob.h"
#include "nokprobe.h"
#include "util/errno.h"
#include "util/recursion.h"

/*
 * What the rethook's data points at.  rethook counts the exits it refuses
 * to a recursion in a struct fprobe's nmissed: this one's, folded into
 * the kretprobe's when read.
 */
struct kretprobe_holder {
	struct fprobe fp;
	struct kretprobe *rp;
	struct rethook *rh;
};

/*
 * The caller-saved registers at entry, given back at the return: a caller
 * built with GCC's -fipa-ra (a program not built for fhook, at -O2) keeps
 * values across a call in the registers its local callee leaves alone,
 * and the return hook's path clobbers them.  A register the callee
 * changed is dead to such a caller, so the entry's value does for all.
 */
struct kretprobe_saved {
	struct fhook_regs_scratch regs;
};

_Static_assert(sizeof(struct kretprobe_instance) + sizeof(struct kretprobe_saved) +
	       KRETPROBE_DATA_MAX <= RETHOOK_DATA_MAX,
	       "an instance, the saved registers and its data fit a shadow-stack entry");

static struct kretprobe_saved *kretprobe_saved_of(struct kretprobe_instance *ri)
{
	return (struct kretprobe_saved *)(ri + 1);
}

static int kretprobe_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct kretprobe *rp = (struct kretprobe *)((char *)p - offsetof(struct kretprobe, kp));
	struct kretprobe_holder *h = rp->fhook_rethook;
	struct kretprobe_instance *ri;
	struct rethook_node *node;
	unsigned long *where = regs_return_address_ptr(regs), ret = *where;

	node = rethook_try_get(h->rh, user_stack_pointer(regs), ret);
	if (!node) {
		__atomic_add_fetch(&rp->nmissed, 1, __ATOMIC_RELAXED);
		return 0;
	}
	/* a tail call from a hooked function: the slot holds that one's stub */
	if (rethook_is_stub(ret))
		ret = rethook_stub_ret_ip(ret);
	node->entry_ip = (unsigned long)p->addr;
	node->entry_parent_ip = ret;
	ri = rethook_node_data(node);
	ri->rp = rp;
	ri->ret_addr = ret;
	ri->data = (char *)(kretprobe_saved_of(ri) + 1);
	fhook_regs_scratch_save(&kretprobe_saved_of(ri)->regs, regs);
	if (rp->entry_handler && rp->entry_handler(ri, regs)) {
		rethook_recycle(node);
		return 0;
	}
	rethook_hook(node, user_stack_pointer(regs), where);
	return 0;
}

static void kretprobe_exit(struct rethook_node *node, void *data, unsigned long ret_ip,
			   struct ftrace_regs *fregs)
{
	struct kretprobe_holder *h = data;
	struct kretprobe *rp = h->rp;
	struct kretprobe_saved *sv = kretprobe_saved_of(rethook_node_data(node));

	if (!fregs) {
		/* a frame unwound (rethook_alloc()'s @unwind: the flag's) */
		if (rp->handler &&
		    !(__atomic_load_n(&rp->kp.flags, __ATOMIC_RELAXED) & KPROBE_FLAG_DISABLED))
			rp->handler(rethook_node_data(node), NULL);
		return;
	}
	/* the trampoline gives them back (rethook_tramp.S) */
	fhook_regs_scratch_restore(&fregs->regs, &sv->regs);
	fregs->fhook_full = 1;
	if (!rp->handler ||
	    (__atomic_load_n(&rp->kp.flags, __ATOMIC_RELAXED) & KPROBE_FLAG_DISABLED))
		return;
	rp->handler(rethook_node_data(node), &fregs->regs);
}

/* The address @rp->kp asks for is a function's entry (0), or an errno. */
static int kretprobe_check_entry(struct kretprobe *rp)
{
	char name[KSYM_NAME_LEN];
	unsigned long addr, size, off;

	addr = rp->kp.symbol_name ? kallsyms_lookup_name(rp->kp.symbol_name) :
				    (unsigned long)rp->kp.addr;
	if (!addr)
		return rp->kp.symbol_name ? -ENOENT : -EINVAL;
	addr += rp->kp.offset;
	if (!kallsyms_lookup_size_offset(addr, &size, &off) || off)
		return -EINVAL;
	/* its "return address" would be the word its function left on the stack */
	if (kallsyms_lookup(addr, NULL, NULL, NULL, name) && fhook_nokprobe_cold(name)) {
		fhook_kprobe_why_set("the cold part of a function, entered by a jump from it: "
				     "no return of its own to probe");
		return -EINVAL;
	}
	/* the program's entry point: no call enters it, the stack holds argc */
	if (addr == getauxval(AT_ENTRY)) {
		fhook_kprobe_why_set("the program's entry point: no call enters it, no return "
				     "to probe");
		return -EINVAL;
	}
	return 0;
}

/* @rp's holder off again, before its kprobe was registered */
static void kretprobe_holder_free(struct kretprobe *rp)
{
	struct kretprobe_holder *h = rp->fhook_rethook;

	rethook_free(h->rh);
	free(h);
	rp->fhook_rethook = NULL;
}

/*
 * Every rethook is set up first, then the kprobes are registered in one
 * register_kprobes(): one round of text patching for all, not one each.
 */
int register_kretprobes(struct kretprobe **rps, int num)
{
	fhook_internal_guard();
	struct kprobe **kps;
	int i, set = 0, ret = 0;

	fhook_kprobe_why_clear();
	if (num <= 0 || !rps)
		return fhook_ret_errno(-EINVAL);
	kps = calloc((size_t)num, sizeof(*kps));
	if (!kps)
		return fhook_ret_errno(-ENOMEM);
	for (i = 0; i < num && !ret; i++) {
		struct kretprobe *rp = rps[i];
		struct kretprobe_holder *h;
		long pool;

		if (!rp || rp->kp.fhook_site || rp->kp.post_handler) {
			ret = -EINVAL;
			break;
		}
		if (rp->data_size > KRETPROBE_DATA_MAX || rp->maxactive < 0) {
			ret = -E2BIG;
			break;
		}
		ret = kretprobe_check_entry(rp);
		if (!ret)
			ret = rethook_setup();
		if (ret)
			break;
		h = calloc(1, sizeof(*h));
		pool = rp->maxactive ? rp->maxactive : LONG_MAX / 2;
		if (h)
			h->rh = rethook_alloc(h, kretprobe_exit, pool,
					      rp->fhook_flags & KRETPROBE_FL_EXIT_ON_UNWIND);
#ifdef FGRAPH_FL_SLOW
		/*
		 * Where returns have a fast path in the trampoline (arch/shadow.h),
		 * it knows fprobes only: this rethook takes the C one.
		 */
		if (h && h->rh)
			h->rh->fgraph.flags |= FGRAPH_FL_SLOW;
#endif
		if (!h || !h->rh) {
			free(h);
			ret = -ENOMEM;
			break;
		}
		h->rp = rp;
		rp->fhook_rethook = h;
		rp->nmissed = 0;
		rp->kp.pre_handler = kretprobe_pre;
		kps[i] = &rp->kp;
		set = i + 1;
	}
	if (!ret)
		ret = register_kprobes(kps, num);
	if (ret) {
		/* no pre-handler ran; rethook_free() waits for the rest */
		for (i = 0; i < set; i++)
			kretprobe_holder_free(rps[i]);
	}
	free(kps);
	return fhook_ret_errno(ret);
}

int register_kretprobe(struct kretprobe *rp)
{
	return register_kretprobes(&rp, 1);
}

void unregister_kretprobes(struct kretprobe **rps, int num)
{
	fhook_internal_guard();
	struct kprobe **kps = num > 0 ? calloc((size_t)num, sizeof(*kps)) : NULL;
	int i, n = 0;

	if (num <= 0 || !rps)
		return;
	/*
	 * The kernel's order: the kprobes first, which waits until no
	 * pre-handler can still take a node of a rethook; then the rethooks,
	 * after which returns still in flight run no handler (each waits for
	 * those that began before) and go back to their callers.  Freed the
	 * other way round, a pre-handler running meanwhile hooked a return
	 * on a rethook already freed, or swept as unused.  The kprobes go in
	 * one unregister_kprobes(): one round of text patching for all.
	 */
	for (i = 0; i < num; i++) {
		if (!rps[i] || !rps[i]->fhook_rethook)
			continue;
		if (kps)
			kps[n++] = &rps[i]->kp;
		else
			unregister_kprobe(&rps[i]->kp);	/* waits a grace period */
	}
	if (n)
		unregister_kprobes(kps, n);
	free(kps);
	for (i = 0; i < num; i++) {
		struct kretprobe_holder *h = rps[i] ? rps[i]->fhook_rethook : NULL;

		if (!h)
			continue;
		rethook_free(h->rh);
		rps[i]->nmissed += (int)h->fp.nmissed;
		free(h);
		rps[i]->fhook_rethook = NULL;
	}
}

void unregister_kretprobe(struct kretprobe *rp)
{
	unregister_kretprobes(&rp, 1);
}

int disable_kretprobe(struct kretprobe *rp)
{
	return disable_kprobe(&rp->kp);
}

int enable_kretprobe(struct kretprobe *rp)
{
	return enable_kprobe(&rp->kp);
}
