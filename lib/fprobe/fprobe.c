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
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _LGPL_SOURCE
#include <urcu/urcu-bp.h>

#include <fhook/fprobe.h>
#include <fhook/kallsyms.h>
#include "../core/core.h"
#include "rethook.h"

static int ret_errno(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static void fprobe_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *ops,
			   struct ftrace_regs *fregs)
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
		node = rethook_try_get(rh, ftrace_regs_get_stack_pointer(fregs));
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
			rethook_hook(node, ftrace_regs_get_stack_pointer(fregs));
	}
out:
	fhook_recursion_unlock(bit);
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

/**
 * register_fprobe_ips - see <fhook/fprobe.h>
 */
int register_fprobe_ips(struct fprobe *fp, unsigned long *addrs, int num)
{
	fhook_internal_guard();
	int ret, i;

	if (!fp || !addrs || num <= 0)
		return ret_errno(-EINVAL);
	if (fprobe_is_registered(fp))
		return ret_errno(-EBUSY);
	if (fp->entry_data_size > RETHOOK_DATA_MAX)
		return ret_errno(-E2BIG);
	for (i = 0; i < num; i++)
		if (!ftrace_location(addrs[i]))
			return ret_errno(-ENOENT);

	memset(&fp->ops, 0, sizeof(fp->ops));
	fp->nmissed = 0;
	fp->ops.func = fprobe_handler;
	ret = ftrace_set_filter_ips(&fp->ops, addrs, num, 0, 0);
	if (ret)
		goto fail;
	ret = fprobe_init_rethook(fp, num);
	if (ret)
		goto fail;
	ret = register_ftrace_function(&fp->ops);
	if (ret)
		goto fail;
	return 0;
fail:
	if (fp->rethook) {
		rethook_free(fp->rethook);
		fp->rethook = NULL;
	}
	ftrace_free_filter(&fp->ops);
	fp->ops.func = NULL;
	return ret_errno(ret);
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
		return ret_errno(-EINVAL);
	addrs = calloc(num, sizeof(*addrs));
	if (!addrs)
		return ret_errno(-ENOMEM);
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
	return ret_errno(ret);
}

struct glob_ips {
	const char *filter, *notfilter;
	unsigned long *ips;
	size_t nr, cap;
	int err;
};

/* Runs inside kallsyms' read-side section: collect only. */
static int glob_one(void *data, const struct fhook_symbol *sym)
{
	struct glob_ips *g = data;

	if (!sym->site || fnmatch(g->filter, sym->name, 0))
		return 0;
	if (g->notfilter && !fnmatch(g->notfilter, sym->name, 0))
		return 0;
	if (g->nr == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		unsigned long *n = realloc(g->ips, cap * sizeof(*n));

		if (!n) {
			g->err = -ENOMEM;
			return 1;
		}
		g->ips = n;
		g->cap = cap;
	}
	g->ips[g->nr++] = sym->site;
	return 0;
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/**
 * register_fprobe - see <fhook/fprobe.h>
 */
int register_fprobe(struct fprobe *fp, const char *filter, const char *notfilter)
{
	fhook_internal_guard();
	struct glob_ips g = { .filter = filter, .notfilter = notfilter };
	size_t i, n = 0;
	int ret;

	if (!fp || !filter)
		return ret_errno(-EINVAL);
	if (fprobe_is_registered(fp))
		return ret_errno(-EBUSY);
	fhook_kallsyms_for_each(glob_one, &g);
	if (g.err) {
		ret = g.err;
		goto out;
	}
	/* a symbol may have aliases: one site each */
	if (g.nr)
		qsort(g.ips, g.nr, sizeof(*g.ips), cmp_ul);
	for (i = 0; i < g.nr; i++)
		if (!n || g.ips[n - 1] != g.ips[i])
			g.ips[n++] = g.ips[i];
	if (!n) {
		ret = -ENOENT;
		goto out;
	}
	if (n > 0x7fffffff) {
		ret = -E2BIG;
		goto out;
	}
	ret = register_fprobe_ips(fp, g.ips, (int)n);
out:
	free(g.ips);
	return ret_errno(ret);
}

/**
 * unregister_fprobe - see <fhook/fprobe.h>
 */
int unregister_fprobe(struct fprobe *fp)
{
	fhook_internal_guard();
	int ret;

	if (!fprobe_is_registered(fp))
		return ret_errno(-EINVAL);
	/*
	 * Exits still in flight see no fprobe from here on; the grace period
	 * unregister_ftrace_function() waits for also covers exit handlers
	 * that read it before (they run in the same urcu-bp flavour).
	 */
	if (fp->rethook)
		__atomic_store_n(&fp->rethook->data, NULL, __ATOMIC_RELEASE);
	ret = unregister_ftrace_function(&fp->ops);
	if (fp->rethook) {
		rethook_free(fp->rethook);
		fp->rethook = NULL;
	}
	ftrace_free_filter(&fp->ops);
	fp->ops.func = NULL;
	return ret_errno(ret == -ENODEV ? -EINVAL : ret);
}
