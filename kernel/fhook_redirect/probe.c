// SPDX-License-Identifier: GPL-2.0
/*
 * fhook probes: entry and exit counts of a function per caller, on top of
 * fprobe (CONFIG_FPROBE, i.e. 6.12 but not Debian's 6.1).
 */
#define pr_fmt(fmt) "fhook: " fmt

#include <linux/fprobe.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rcupdate.h>

#include "internal.h"

/*
 * fprobe hands us parent_ip as ret_ip.  Returning non-zero tells fprobe
 * not to hook the return, so only calls from listed callers pay for the
 * rethook; the caller's index rides in the entry data to the exit.
 */
static int notrace fhook_probe_entry(struct fprobe *fp, unsigned long entry_ip,
				     unsigned long ret_ip, struct pt_regs *regs,
				     void *entry_data)
{
	struct fhook_probe *pr = container_of(fp, struct fhook_probe, fp);
	unsigned int i;

	for (i = 0; i < pr->nr_callers; i++) {
		struct fhook_probe_caller *c = &pr->callers[i];

		if (ret_ip >= c->start && ret_ip < c->end) {
			atomic_long_inc(&c->entries);
			*(unsigned int *)entry_data = i;
			return 0;
		}
	}
	atomic_long_inc(&pr->other);
	return 1;
}

static void notrace fhook_probe_exit(struct fprobe *fp, unsigned long entry_ip,
				     unsigned long ret_ip, struct pt_regs *regs,
				     void *entry_data)
{
	struct fhook_probe *pr = container_of(fp, struct fhook_probe, fp);
	unsigned int i = *(unsigned int *)entry_data;

	if (i < pr->nr_callers)
		atomic_long_inc(&pr->callers[i].exits);
}

int fhook_probe_register(struct fhook_probe *pr)
{
	unsigned long size, addr;
	unsigned int i;
	int ret;

	if (!pr->target || !*pr->target || !pr->callers || !pr->nr_callers ||
	    pr->nr_callers > FHOOK_MAX_CALLERS)
		return -EINVAL;
	for (i = 0; i < pr->nr_callers; i++)
		if (!pr->callers[i].symbol || !*pr->callers[i].symbol)
			return -EINVAL;

	mutex_lock(&fhook_mutex);
	ret = fhook_resolve_func(pr->target, &pr->target_addr, &size);
	if (ret)
		goto out_unlock;
	for (i = 0; i < pr->nr_callers; i++) {
		struct fhook_probe_caller *c = &pr->callers[i];
		unsigned long sites[FHOOK_MAX_SITES];

		ret = fhook_resolve_func(c->symbol, &c->start, &size);
		if (ret)
			goto out_unlock;
		c->end = c->start + size;
		ret = fhook_find_calls(c->symbol, c->start, size, pr->target,
				       pr->target_addr,
				       fhook_ftrace_site(pr->target_addr),
				       sites, FHOOK_MAX_SITES);
		if (ret < 0)
			goto out_unlock;
		atomic_long_set(&c->entries, 0);
		atomic_long_set(&c->exits, 0);
	}
	atomic_long_set(&pr->other, 0);

	memset(&pr->fp, 0, sizeof(pr->fp));
	pr->fp.entry_handler = fhook_probe_entry;
	pr->fp.exit_handler = fhook_probe_exit;
	pr->fp.entry_data_size = sizeof(unsigned int);
	/* fprobe maps the symbol address to the ftrace site itself. */
	addr = pr->target_addr;
	ret = register_fprobe_ips(&pr->fp, &addr, 1);
	if (ret) {
		pr_err("register_fprobe_ips(%s) failed: %d\n", pr->target, ret);
		goto out_unlock;
	}
	list_add_tail(&pr->node, &fhook_probes);
	mutex_unlock(&fhook_mutex);
	pr_info("probing %s for %u caller(s)\n", pr->target, pr->nr_callers);
	return 0;

out_unlock:
	mutex_unlock(&fhook_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(fhook_probe_register);

void fhook_probe_unregister(struct fhook_probe *pr)
{
	int ret;

	mutex_lock(&fhook_mutex);
	list_del(&pr->node);
	mutex_unlock(&fhook_mutex);

	ret = unregister_fprobe(&pr->fp);
	if (ret)
		pr_err("unregister_fprobe(%s) failed: %d\n", pr->target, ret);
	/*
	 * A return hooked before the unregistration may still be on its way
	 * to fhook_probe_exit() through the rethook trampoline, which reads
	 * the handler under RCU; let those finish before @pr goes away.
	 */
	synchronize_rcu();
	pr_info("stopped probing %s\n", pr->target);
}
EXPORT_SYMBOL_GPL(fhook_probe_unregister);
