// SPDX-License-Identifier: GPL-2.0
/*
 * Caller-filtered probe example (needs CONFIG_FPROBE): counts entries and
 * exits of __memory_events_show separately for memory.events
 * (memory_events_show) and memory.events.local (memory_events_local_show).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "fhook_redirect.h"

static char *target = "__memory_events_show";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "function whose calls are counted");

static struct fhook_probe_caller memprobe_callers[] = {
	{ .symbol = "memory_events_show" },
	{ .symbol = "memory_events_local_show" },
};

static struct fhook_probe memprobe = {
	.callers = memprobe_callers,
	.nr_callers = ARRAY_SIZE(memprobe_callers),
	.owner = THIS_MODULE,
};

static int __init memprobe_init(void)
{
	int ret;

	memprobe.target = target;
	ret = fhook_probe_register(&memprobe);
	if (ret)
		pr_err("probing %s failed: %d\n", target, ret);
	return ret;
}

static void __exit memprobe_exit(void)
{
	fhook_probe_unregister(&memprobe);
}

module_init(memprobe_init);
module_exit(memprobe_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook example: per-caller fprobe counts of __memory_events_show");
