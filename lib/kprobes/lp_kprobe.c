// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `fhook patch` and `fhook inject` on a function with no fhook site: a
 * kprobe on its entry does what the livepatch handler does on a site, as
 * the kernel redirects from a kprobe (regs->ip moved, pre_handler returns
 * 1) and overrides a return (bpf_override_return: the value in ax, the
 * return address popped into ip).  The caller ranges, fault attributes
 * and counters are livepatch's own (fhook_lp_route_call()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/kprobes.h>

#include "livepatch/lp.h"

struct lp_kprobe {
	struct kprobe kp;
	struct fhook_lp *lp;
	struct lp_kprobe *next;
};

/*
 * The entries this file redirects.  Two of them on one function would
 * both move the ip, and which one wins would depend on the order of the
 * probe's handlers: the one-IPMODIFY-user rule of a site's ftrace_ops
 * holds here too.
 */
static struct lp_kprobe *lp_kprobes;
static pthread_mutex_t lp_kprobes_lock = PTHREAD_MUTEX_INITIALIZER;

static int lp_kprobe_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct lp_kprobe *k = (struct lp_kprobe *)((char *)p - offsetof(struct lp_kprobe, kp));
	unsigned long ret = *regs_return_address_ptr(regs), to;

	switch (fhook_lp_route_call(k->lp, ret, &to)) {
	case LP_CALL_REDIRECT:
		instruction_pointer_set(regs, to);
		return 1;
	case LP_CALL_RETURN:
		regs_return_now(regs, to);
		return 1;
	}
	return 0;
}

static int lp_kprobe_apply(struct fhook_lp *lp)
{
	struct lp_kprobe *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return -ENOMEM;
	k->lp = lp;
	k->kp.addr = (kprobe_opcode_t *)lp->addr;
	k->kp.pre_handler = lp_kprobe_pre;
	pthread_mutex_lock(&lp_kprobes_lock);
	for (struct lp_kprobe *o = lp_kprobes; o; o = o->next)
		if (o->kp.addr == k->kp.addr) {
			fhook_lp_err(lp, "'%s' is already redirected by another IPMODIFY user "
				     "(another patch or fault injection); nothing changed",
				     lp->target);
			ret = -EBUSY;
			goto err;
		}
	ret = register_kprobe(&k->kp);
	if (ret) {
		fhook_lp_err(lp, "cannot probe '%s' (it has no patchable site): %s", lp->target,
			     strerror(-ret));
		goto err;
	}
	k->next = lp_kprobes;
	lp_kprobes = k;
	pthread_mutex_unlock(&lp_kprobes_lock);
	lp->nosite = k;
	return 0;
err:
	pthread_mutex_unlock(&lp_kprobes_lock);
	free(k);
	return ret;
}

static int lp_kprobe_remove(struct fhook_lp *lp)
{
	struct lp_kprobe *k = lp->nosite;

	if (!k)
		return -ENODEV;
	unregister_kprobe(&k->kp);	/* returns once no thread is in the pre_handler */
	pthread_mutex_lock(&lp_kprobes_lock);
	for (struct lp_kprobe **pp = &lp_kprobes; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	pthread_mutex_unlock(&lp_kprobes_lock);
	lp->nosite = NULL;
	free(k);
	return 0;
}

/* before the preloaded patch (lib/livepatch/preload.c, constructor 200) */
__attribute__((constructor(150))) static void lp_kprobe_init(void)
{
	static const struct fhook_lp_nosite ops = {
		.apply = lp_kprobe_apply,
		.remove = lp_kprobe_remove,
	};

	fhook_lp_set_nosite(&ops);
}
