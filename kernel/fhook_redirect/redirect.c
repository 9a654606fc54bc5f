// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_redirect: one IPMODIFY ftrace_ops per target; its handler sends
 * the calls made from listed callers to their replacements.
 */
#define pr_fmt(fmt) "fhook: " fmt

#include <linux/ftrace.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/version.h>

#include "internal.h"

static __always_inline void fhook_set_ip(struct ftrace_regs *fregs,
					 unsigned long ip)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	ftrace_regs_set_instruction_pointer(fregs, ip);
#else
	ftrace_instruction_pointer_set(fregs, ip);
#endif
}

/*
 * Runs at every call of the target, before its first instruction.
 * parent_ip is the return address pushed by the call, so it lies inside
 * the function that made the call.  The callers are fixed while the ops
 * is registered, so the walk needs no lock.
 */
static void notrace fhook_redirect_handler(unsigned long ip,
					   unsigned long parent_ip,
					   struct ftrace_ops *ops,
					   struct ftrace_regs *fregs)
{
	struct fhook_redirect *rd = container_of(ops, struct fhook_redirect,
						 ops);
	unsigned int i;
	int bit;

	/*
	 * The ops is registered without FTRACE_OPS_FL_RECURSION so that no
	 * extra list trampoline is forced on the site; recursion (an NMI
	 * calling the target while we run, a traced helper) is refused
	 * here and the original runs instead.
	 */
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		atomic_long_inc(&rd->missed);
		return;
	}

	for (i = 0; i < rd->nr_callers; i++) {
		struct fhook_caller *c = &rd->callers[i];

		if (parent_ip >= c->start && parent_ip < c->end) {
			atomic_long_inc(&c->hits);
			fhook_set_ip(fregs, (unsigned long)c->replacement);
			goto out;
		}
	}
	atomic_long_inc(&rd->passthrough);
out:
	ftrace_test_recursion_unlock(bit);
}

static int fhook_redirect_check(const struct fhook_redirect *rd)
{
	unsigned int i, j;

	if (!rd->target || !*rd->target || !rd->callers ||
	    !rd->nr_callers || rd->nr_callers > FHOOK_MAX_CALLERS)
		return -EINVAL;
	for (i = 0; i < rd->nr_callers; i++) {
		if (!rd->callers[i].symbol || !*rd->callers[i].symbol ||
		    !rd->callers[i].replacement)
			return -EINVAL;
		/* Two entries for one caller: only the first could match. */
		for (j = 0; j < i; j++)
			if (!strcmp(rd->callers[i].symbol,
				    rd->callers[j].symbol))
				return -EINVAL;
	}
	return 0;
}

/* Who else redirects @addr, for the -EBUSY message; under fhook_mutex. */
static const char *fhook_redirect_owner_of(unsigned long addr)
{
	struct fhook_redirect *rd;

	list_for_each_entry(rd, &fhook_redirects, node)
		if (rd->target_addr == addr)
			return rd->owner ? module_name(rd->owner) : "kernel";
	return NULL;
}

int fhook_redirect_register(struct fhook_redirect *rd)
{
	const char *other;
	unsigned int i;
	int ret;

	ret = fhook_redirect_check(rd);
	if (ret) {
		pr_err("malformed redirect of %s\n",
		       rd->target ? rd->target : "(null)");
		return ret;
	}

	mutex_lock(&fhook_mutex);
	ret = fhook_resolve_func(rd->target, &rd->target_addr,
				 &rd->target_size);
	if (ret)
		goto out_unlock;
	rd->site = fhook_ftrace_site(rd->target_addr);
	if (!rd->site) {
		pr_err("target %s is not traceable (no ftrace site)\n",
		       rd->target);
		ret = -EINVAL;
		goto out_unlock;
	}

	for (i = 0; i < rd->nr_callers; i++) {
		struct fhook_caller *c = &rd->callers[i];
		unsigned long size;

		ret = fhook_resolve_func(c->symbol, &c->start, &size);
		if (ret)
			goto out_unlock;
		c->end = c->start + size;
		ret = fhook_find_calls(c->symbol, c->start, size, rd->target,
				       rd->target_addr, rd->site, c->sites,
				       FHOOK_MAX_SITES);
		if (ret < 0)
			goto out_unlock;
		c->nr_sites = min_t(unsigned int, ret, FHOOK_MAX_SITES);
		atomic_long_set(&c->hits, 0);
	}
	atomic_long_set(&rd->passthrough, 0);
	atomic_long_set(&rd->missed, 0);

	memset(&rd->ops, 0, sizeof(rd->ops));
	rd->ops.func = fhook_redirect_handler;
	/*
	 * SAVE_REGS: the ip written by the handler is only reloaded by the
	 * regs-saving trampoline.  IPMODIFY: tells ftrace we change the ip,
	 * so that it refuses a second such user of the same function
	 * (livepatch, another redirect) with -EBUSY instead of letting two
	 * redirections silently race.
	 */
	rd->ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY |
			FTRACE_OPS_FL_DYNAMIC;

	ret = ftrace_set_filter_ip(&rd->ops, rd->site, 0, 0);
	if (ret) {
		pr_err("can not filter on %s at %pS: %d\n", rd->target,
		       (void *)rd->site, ret);
		goto out_filter;
	}
	ret = register_ftrace_function(&rd->ops);
	if (ret) {
		if (ret == -EBUSY) {
			other = fhook_redirect_owner_of(rd->target_addr);
			pr_err("%s already has its ip modified by %s%s: IPMODIFY conflict\n",
			       rd->target,
			       other ? "fhook redirect of module " :
				       "another ftrace user (livepatch?)",
			       other ? other : "");
		} else {
			pr_err("can not register the ftrace_ops of %s: %d\n",
			       rd->target, ret);
		}
		goto out_filter;
	}
	list_add_tail(&rd->node, &fhook_redirects);
	mutex_unlock(&fhook_mutex);

	for (i = 0; i < rd->nr_callers; i++)
		pr_info("redirecting %s from %s [%px, %px) to %ps\n",
			rd->target, rd->callers[i].symbol,
			(void *)rd->callers[i].start,
			(void *)rd->callers[i].end,
			rd->callers[i].replacement);
	return 0;

out_filter:
	/* Frees the filter hash that ftrace_set_filter_ip() allocated. */
	ftrace_free_filter(&rd->ops);
out_unlock:
	mutex_unlock(&fhook_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(fhook_redirect_register);

void fhook_redirect_unregister(struct fhook_redirect *rd)
{
	int ret;

	mutex_lock(&fhook_mutex);
	list_del(&rd->node);
	mutex_unlock(&fhook_mutex);

	ret = unregister_ftrace_function(&rd->ops);
	if (ret)
		/* Still live somewhere: leaking the hashes beats freeing them. */
		pr_err("unregistering the ftrace_ops of %s failed: %d\n",
		       rd->target, ret);
	else
		/* Only now, with the ops off every list, may its hashes go. */
		ftrace_free_filter(&rd->ops);

	/*
	 * unregister_ftrace_function() guarantees that no CPU is still in
	 * the handler, but a task it redirected may still be running (or be
	 * preempted in) the replacement, which is text of the client module
	 * about to be freed.  An RCU-tasks grace period ends only after every
	 * task has passed a voluntary context switch or user mode, i.e. has
	 * left the replacement.
	 */
	synchronize_rcu_tasks();
	pr_info("stopped redirecting %s\n", rd->target);
}
EXPORT_SYMBOL_GPL(fhook_redirect_unregister);
