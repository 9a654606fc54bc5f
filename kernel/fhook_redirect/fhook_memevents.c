// SPDX-License-Identifier: GPL-2.0
/*
 * The memcg redirect example as a client of fhook_redirect: reads of a memory
 * cgroup's memory.events go to __memory_events_show_new, reads of
 * memory.events.local keep the kernel's __memory_events_show.
 *
 * The symbols are parameters so that the error paths can be exercised:
 *   target=       the redirected function (default __memory_events_show)
 *   caller=       the caller whose calls are redirected
 *   local_caller= optional second caller, sent to its own replacement
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "fhook_redirect.h"

static char *target = "__memory_events_show";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "function whose calls are redirected");

static char *caller = "memory_events_show";
module_param(caller, charp, 0444);
MODULE_PARM_DESC(caller, "caller whose calls go to __memory_events_show_new");

static char *local_caller = "";
module_param(local_caller, charp, 0444);
MODULE_PARM_DESC(local_caller,
		 "optional second caller, sent to __memory_events_local_show_new");

/*
 * Same prototype as mm/memcontrol.c's __memory_events_show().  The lines
 * use the kernel's own format, from the array the caller passed in.
 */
static void __memory_events_print(struct seq_file *m, atomic_long_t *events)
{
	seq_printf(m, "low %lu\n", atomic_long_read(&events[MEMCG_LOW]));
	seq_printf(m, "high %lu\n", atomic_long_read(&events[MEMCG_HIGH]));
	seq_printf(m, "max %lu\n", atomic_long_read(&events[MEMCG_MAX]));
	seq_printf(m, "oom %lu\n", atomic_long_read(&events[MEMCG_OOM]));
	seq_printf(m, "oom_kill %lu\n",
		   atomic_long_read(&events[MEMCG_OOM_KILL]));
}

static void __memory_events_show_new(struct seq_file *m, atomic_long_t *events)
{
	seq_puts(m, "This is from __memory_events_show_new\n");
	__memory_events_print(m, events);
}

static void __memory_events_local_show_new(struct seq_file *m,
					   atomic_long_t *events)
{
	seq_puts(m, "This is from __memory_events_local_show_new\n");
	__memory_events_print(m, events);
}

static struct fhook_caller memevents_callers[2];

static struct fhook_redirect memevents_redirect = {
	.callers = memevents_callers,
	.owner = THIS_MODULE,
};

static int __init memevents_init(void)
{
	unsigned int n = 0;
	int ret;

	memevents_callers[n].symbol = caller;
	memevents_callers[n].replacement = __memory_events_show_new;
	n++;
	if (local_caller && *local_caller) {
		memevents_callers[n].symbol = local_caller;
		memevents_callers[n].replacement =
			__memory_events_local_show_new;
		n++;
	}
	memevents_redirect.target = target;
	memevents_redirect.nr_callers = n;

	ret = fhook_redirect_register(&memevents_redirect);
	if (ret)
		pr_err("redirecting %s from %s failed: %d\n", target, caller,
		       ret);
	return ret;
}

static void __exit memevents_exit(void)
{
	fhook_redirect_unregister(&memevents_redirect);
}

module_init(memevents_init);
module_exit(memevents_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook example: memory.events via __memory_events_show_new");
