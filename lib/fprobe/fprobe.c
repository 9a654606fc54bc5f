// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fprobe: entry and exit handlers on many functions through one
 * ftrace_ops, after kernel/trace/fprobe.c at v6.12.
 *
 * The entry side is an ftrace handler: take the recursion lock (a refused
 * recursion skips both handlers and counts in nmissed), get a return hook
 * from the fprobe's pool (none left: both handlers skipped, counted; that
 * is 6.12's order), run the entry handler, and hook the return unless it
 * asked not to.  The exit side is rethook's trampoline calling
 * fprobe_exit_handler().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fhook/fprobe.h>
#include <fhook/kallsyms.h>
#include "util/errno.h"
#include "arch/arch.h"
#include "core/core.h"
#include "rethook.h"

static void fprobe_handler_slow(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct fprobe *fp = (struct fprobe *)ops;	/* ops is the first member */
	struct rethook_node *node = NULL;
	struct rethook *rh;
	void *entry_data = NULL;
	int bit, ret = 0;

	if (fprobe_disabled(fp))
		return;
	/*
	 * A tail call from a hooked function: the slot already holds that
	 * one's stub.  Report where the call really returns to.
	 */
	if (__builtin_expect(rethook_is_stub(parent_ip), 0))
		parent_ip = rethook_stub_ret_ip(parent_ip);
	bit = fhook_recursion_trylock();
	if (bit < 0) {
		/* fhook's own calls are neither events nor misses */
		if (!fhook_recursion_internal())
			__atomic_add_fetch(&fp->nmissed, 1, __ATOMIC_RELAXED);
		return;
	}
	rh = fp->rethook;
	/* hooks without a return hook see frames removed since, too */
	if (!rh && __atomic_load_n(&rethook_unwind_users, __ATOMIC_RELAXED))
		rethook_reap_deeper(ftrace_regs_get_stack_pointer(fregs), true);
	if (rh) {
		node = rethook_try_get(rh, ftrace_regs_get_stack_pointer(fregs),
				       *fhook_fregs_ret_ptr(fregs));
		if (!node) {
			__atomic_add_fetch(&fp->nmissed, 1, __ATOMIC_RELAXED);
			goto out;
		}
		node->entry_ip = ip;
		node->entry_parent_ip = parent_ip;
		if (fp->entry_data_size)
			entry_data = rethook_node_data(node);
	}
	if (fp->entry_handler)
		ret = fp->entry_handler(fp, ip, parent_ip, fregs, entry_data);
	if (node) {
		/* non-zero cancels the exit handler; that is not a miss */
		if (ret)
			rethook_recycle(node);
		else
			rethook_hook(node, ftrace_regs_get_stack_pointer(fregs),
				     fhook_fregs_ret_ptr(fregs));
	}
out:
	fhook_recursion_unlock(bit);
}

/*
 * The common entry, in one pass and touching nothing shared: a probe with
 * a return hook and no pool, on a thread that has its shadow stack, whose
 * top entry is a caller's (nothing stale to drop), 
 * not nested, and a plain return address in the slot.  What
 * rethook_try_get() and rethook_hook() do for that case, inlined (with
 * the top entry a caller's, no frame is left to reap as unwound); every
 * other case is fprobe_handler_slow()'s.
 */
static void fprobe_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *ops,
			   struct ftrace_regs *fregs)
{
	struct fprobe *fp = (struct fprobe *)ops;	/* ops is the first member */
	struct rethook *rh = fp->rethook;
	struct rethook_thread *t = rethook_self;
	unsigned long sp = ftrace_regs_get_stack_pointer(fregs), base, top, idx;
	struct rethook_node *node;
	struct rethook_ret *r;
	void *entry_data = NULL;
	int ret = 0;

	if (__builtin_expect(fhook_recursion_bits ||
			     (__atomic_load_n(&fp->flags, __ATOMIC_RELAXED) & FPROBE_FL_DISABLED),
			     0))
		goto slow;
	if (!rh) {
		/* entry only: no shadow stack, but unwound frames to reap */
		if (__builtin_expect(rethook_is_stub(parent_ip) ||
				     __atomic_load_n(&rethook_unwind_users, __ATOMIC_RELAXED), 0))
			goto slow;
		if (fp->entry_handler) {
			fhook_recursion_bits = 1;
			__asm__ __volatile__("" ::: "memory");
			fp->entry_handler(fp, ip, parent_ip, fregs, NULL);
			fhook_recursion_unlock(0);
		}
		return;
	}
	if (__builtin_expect(!t || rh->capped, 0))
		goto slow;
	base = rethook_region_of((unsigned long)t);
	top = rethook_top(t, __ATOMIC_RELAXED);
	/* 0: a hole, which the slow path pops; below us: maybe stale */
	if (top && __atomic_load_n(&rethook_ret_of(base, top)->sp, __ATOMIC_ACQUIRE) <= sp)
		goto slow;
	idx = top + 1;
	if (__builtin_expect(idx >= RETHOOK_DEPTH || rethook_is_stub(parent_ip), 0))
		goto slow;
	fhook_recursion_bits = 1;
	__asm__ __volatile__("" ::: "memory");
	node = rethook_node_of(base, idx);
	node->rethook = rh;
	node->entry_ip = ip;
	node->entry_parent_ip = parent_ip;
	if (fp->entry_data_size)
		entry_data = (void *)(base + RETHOOK_DATA_OFF + idx * RETHOOK_DATA_MAX);
	if (fp->entry_handler)
		ret = fp->entry_handler(fp, ip, parent_ip, fregs, entry_data);
	if (!ret) {
		/* rethook_hook() for a plain return address and a new top */
		r = rethook_ret_of(base, idx);
		node->next = parent_ip;
		node->ret_ip = parent_ip;
		node->unwound = 0;
		r->sp = sp;
		/* the entry is complete before the slot points at it */
		__asm__ __volatile__("" ::: "memory");
		rethook_top_set(t, idx, __ATOMIC_RELAXED);
		__asm__ __volatile__("" ::: "memory");
		*fhook_fregs_ret_ptr(fregs) = rethook_stub_of(base, idx);
	}
	fhook_recursion_unlock(0);
	return;
slow:
	fprobe_handler_slow(ip, parent_ip, ops, fregs);
}

/* @fregs NULL: the frame was removed without a return (EXIT_ON_UNWIND). */
static void fprobe_exit_handler(struct rethook_node *node, void *data, unsigned long ret_ip,
				struct ftrace_regs *fregs)
{
	struct fprobe *fp = data;

	if (fprobe_disabled(fp) || !fp->exit_handler)
		return;
	fp->exit_handler(fp, node->entry_ip, ret_ip, fregs,
			 fp->entry_data_size ? rethook_node_data(node) : NULL);
}

static int fprobe_init_rethook(struct fprobe *fp, int num)
{
	long size;
	int ret;

	fp->rethook = NULL;
	if (!fp->exit_handler)
		return 0;
	if (fp->entry_data_size > RETHOOK_DATA_MAX)
		return -E2BIG;
	/*
	 * The kernel sizes the pool 2 * CPUs * functions because a CPU's
	 * kernel stack bounds how deep probed calls can nest on it.  Here a
	 * thread's stack holds recursions thousands of frames deep (a parser
	 * on nested input), and return hooks live in each thread's own
	 * shadow stack, not in a shared pool: by default that depth is the
	 * only bound.  An explicit nr_maxactive still caps the hooks in flight.
	 */
	size = fp->nr_maxactive ? fp->nr_maxactive : LONG_MAX / 2;
	if (size <= 0)
		return -EINVAL;
	ret = rethook_setup();
	if (ret)
		return ret;
	fp->rethook = rethook_alloc(fp, fprobe_exit_handler, size,
				    fp->flags & FPROBE_FL_EXIT_ON_UNWIND);
	return fp->rethook ? 0 : -ENOMEM;
}

/*
 * What the graph trampolines read of @fp (arch/shadow.h): in its rethook
 * when it hooks returns (a node names the rethook, so the return finds
 * it there), else on its own.  The trampoline takes the common cases; a
 * pool, which counts in a shared word, leaves every call to C.
 */
_Static_assert(FPROBE_FL_DISABLED == FGRAPH_DISABLED_BITS, "the trampolines' disabled bit");

static int fprobe_init_fgraph(struct fprobe *fp)
{
	struct fhook_fgraph *fg = fp->rethook ? &fp->rethook->fgraph : calloc(1, sizeof(*fg));

	if (!fg)
		return -ENOMEM;
	fg->entry = (void *)fp->entry_handler;
	fg->exit = (void *)fp->exit_handler;
	fg->rethook = fp->rethook;
	fhook_fgraph_tramps_init(fg);
	fg->flags_word = &fp->flags;
	fg->flags = (fp->rethook ? FGRAPH_FL_EXIT : 0) |
		    (fp->entry_data_size ? FGRAPH_FL_DATA : 0) |
		    (fp->rethook && fp->rethook->capped ? FGRAPH_FL_SLOW : 0);
	__atomic_store_n(&fg->probe, fp, __ATOMIC_RELEASE);
	fp->ops.private = fg;
	fp->ops.flags |= FHOOK_OPS_FL_FGRAPH;
	return 0;
}

/* After the grace period: an entry-only probe's own fgraph. */
static void fprobe_free_fgraph(struct fprobe *fp)
{
	if (!fp->rethook)
		free(fp->ops.private);
	fp->ops.private = NULL;
	fp->ops.flags &= ~(unsigned long)FHOOK_OPS_FL_FGRAPH;
}

/**
 * fprobe_graph_rec - the trampolines write @fp's records themselves
 *
 * For a registered probe whose entry and return events are plain (see
 * arch/shadow.h, graph records): @tls is the writer's offset from the
 * thread pointer (the recording's part is fhook_rec_g), @entry and
 * @exit the first words' event ids (<< 48).  Its handlers still take every call
 * the trampolines leave to C.  No effect on a probe with a pool.
 */
void fprobe_graph_rec(struct fprobe *fp, long tls, unsigned long entry, unsigned long exit)
{
	struct fhook_fgraph *fg = fp->ops.private;

	if (!fg || (fg->flags & FGRAPH_FL_SLOW))
		return;
	fg->rec_tls = tls;
	fg->rec_entry = entry;
	fg->rec_exit = exit;
	__atomic_or_fetch(&fg->flags,
			  FGRAPH_FL_REC | ((fg->flags & FGRAPH_FL_EXIT) ? FGRAPH_FL_REC_EXIT : 0),
			  __ATOMIC_RELEASE);
	fhook_ops_retramp(&fp->ops);
}

/*
 * Register @fp once its ops' filter is set by @set_filter: the common
 * body of the three register calls.
 */
static int fprobe_register(struct fprobe *fp, int (*set_filter)(struct fprobe *fp, void *arg),
			   void *arg)
{
	int ret;

	memset(&fp->ops, 0, sizeof(fp->ops));
	fp->nmissed = 0;
	fp->ops.func = fprobe_handler;
	/*
	 * A handler proven to leave the vector registers alone and never read
	 * its fregs is called with no frame at all, promise or not: the core
	 * asks the proof of the fgraph's entry handler when it binds, and of
	 * its exit handler when it registers.
	 */
	if (fp->entry_handler)
		fhook_arch_handler_scan((void *)fp->entry_handler);
	if (fp->exit_handler)
		fhook_arch_handler_scan((void *)fp->exit_handler);
	if ((fp->flags & FPROBE_FL_GENERAL_REGS_ONLY) || !fp->entry_handler)
		fp->ops.flags |= FHOOK_OPS_FL_GENERAL_REGS_ONLY;
	ret = set_filter(fp, arg);
	if (ret)
		goto fail;
	ret = fprobe_init_rethook(fp, 0);
	if (ret)
		goto fail;
	ret = fprobe_init_fgraph(fp);
	if (ret)
		goto fail;
	ret = register_ftrace_function(&fp->ops);
	if (ret)
		goto fail;
	return 0;
fail:
	fprobe_free_fgraph(fp);
	if (fp->rethook) {
		rethook_free(fp->rethook);
		fp->rethook = NULL;
	}
	ftrace_free_filter(&fp->ops);
	fp->ops.func = NULL;
	return ret;
}

struct ips_arg {
	unsigned long *addrs;
	int num;
};

static int set_filter_ips(struct fprobe *fp, void *arg)
{
	struct ips_arg *a = arg;

	return ftrace_set_filter_ips(&fp->ops, a->addrs, a->num, 0, 0);
}

/**
 * register_fprobe_ips - see <fhook/fprobe.h>
 */
int register_fprobe_ips(struct fprobe *fp, unsigned long *addrs, int num)
{
	fhook_internal_guard();
	struct ips_arg a = { addrs, num };
	int i;

	if (!fp || !addrs || num <= 0)
		return fhook_ret_errno(-EINVAL);
	if (fprobe_is_registered(fp))
		return fhook_ret_errno(-EBUSY);
	if (fp->entry_data_size > RETHOOK_DATA_MAX)
		return fhook_ret_errno(-E2BIG);
	for (i = 0; i < num; i++)
		if (!ftrace_location(addrs[i]))
			return fhook_ret_errno(-ENOENT);
	return fhook_ret_errno(fprobe_register(fp, set_filter_ips, &a));
}

/**
 * register_fprobe_syms - see <fhook/fprobe.h>
 */
int register_fprobe_syms(struct fprobe *fp, const char **syms, int num)
{
	fhook_internal_guard();
	unsigned long *addrs;
	int ret, i;

	if (!fp || !syms || num <= 0)
		return fhook_ret_errno(-EINVAL);
	addrs = calloc(num, sizeof(*addrs));
	if (!addrs)
		return fhook_ret_errno(-ENOMEM);
	for (i = 0; i < num; i++) {
		addrs[i] = syms[i] ? kallsyms_lookup_name(syms[i]) : 0;
		if (!addrs[i] || !ftrace_location(addrs[i])) {
			ret = -ENOENT;
			goto out;
		}
	}
	ret = register_fprobe_ips(fp, addrs, num);
out:
	free(addrs);
	return fhook_ret_errno(ret);
}

struct globs_arg {
	const char *filter, *notfilter;
};

static int set_filter_globs(struct fprobe *fp, void *arg)
{
	struct globs_arg *a = arg;

	return fhook_ops_set_globs(&fp->ops, a->filter, a->notfilter);
}

/**
 * register_fprobe - see <fhook/fprobe.h>
 *
 * The globs stay with the fprobe: functions of objects loaded later
 * (dlopen) that match them are probed too, from the moment dlopen()
 * returns.
 */
int register_fprobe(struct fprobe *fp, const char *filter, const char *notfilter)
{
	fhook_internal_guard();
	struct globs_arg a = { filter, notfilter };

	if (!fp || !filter)
		return fhook_ret_errno(-EINVAL);
	if (fprobe_is_registered(fp))
		return fhook_ret_errno(-EBUSY);
	if (fp->entry_data_size > RETHOOK_DATA_MAX)
		return fhook_ret_errno(-E2BIG);
	return fhook_ret_errno(fprobe_register(fp, set_filter_globs, &a));
}

/**
 * fhook_fprobe_frameless - see <fhook/fprobe.h>
 */
int fhook_fprobe_frameless(struct fprobe *fp)
{
	fhook_internal_guard();

	if (!fp || !fprobe_is_registered(fp))
		return fhook_ret_errno(-EINVAL);
	return fhook_ret_errno(fhook_ops_frameless(&fp->ops));
}

/**
 * unregister_fprobe - see <fhook/fprobe.h>
 */
int unregister_fprobe(struct fprobe *fp)
{
	fhook_internal_guard();
	int ret;

	if (!fprobe_is_registered(fp))
		return fhook_ret_errno(-EINVAL);
	/*
	 * The kernel's order: first no new call reaches the probe (its sites
	 * unhooked, its stubs unbound) and no thread is left between a site
	 * and the entry handler (the grace period unregister_ftrace_function()
	 * waits for).  Only then may what the entry reads change: the graph
	 * trampolines test the probe's flags word and then load the probe,
	 * so clearing the probe while a thread was between the two handed
	 * the entry handler a NULL fprobe.
	 */
	ret = unregister_ftrace_function(&fp->ops);
	fprobe_free_fgraph(fp);
	if (fp->rethook) {
		/*
		 * Returns still pending see no fprobe from here on and go back
		 * to their callers; it waits for exit handlers that read the
		 * fprobe before, and keeps the rethook until the last pending
		 * return has passed.
		 */
		rethook_free(fp->rethook);
		fp->rethook = NULL;
	}
	ftrace_free_filter(&fp->ops);
	fp->ops.func = NULL;
	return fhook_ret_errno(ret == -ENODEV ? -EINVAL : ret);
}
