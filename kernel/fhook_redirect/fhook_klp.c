// SPDX-License-Identifier: GPL-2.0
/*
 * A plain livepatch of __memory_events_show, for the test only: livepatch
 * is the other IPMODIFY user of ftrace, so it and a redirect of the same
 * function must exclude each other with -EBUSY, whichever comes first.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/livepatch.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/seq_file.h>

static void klp_memory_events_show(struct seq_file *m, atomic_long_t *events)
{
	seq_puts(m, "This is from livepatch\n");
	seq_printf(m, "low %lu\n", atomic_long_read(&events[MEMCG_LOW]));
	seq_printf(m, "high %lu\n", atomic_long_read(&events[MEMCG_HIGH]));
	seq_printf(m, "max %lu\n", atomic_long_read(&events[MEMCG_MAX]));
	seq_printf(m, "oom %lu\n", atomic_long_read(&events[MEMCG_OOM]));
	seq_printf(m, "oom_kill %lu\n",
		   atomic_long_read(&events[MEMCG_OOM_KILL]));
}

static struct klp_func klp_funcs[] = {
	{
		.old_name = "__memory_events_show",
		.new_func = klp_memory_events_show,
	},
	{ }
};

static struct klp_object klp_objs[] = {
	{
		/* name == NULL: vmlinux */
		.funcs = klp_funcs,
	},
	{ }
};

static struct klp_patch klp_patch = {
	.mod = THIS_MODULE,
	.objs = klp_objs,
};

static int __init fhook_klp_init(void)
{
	return klp_enable_patch(&klp_patch);
}

static void __exit fhook_klp_exit(void)
{
}

module_init(fhook_klp_init);
module_exit(fhook_klp_exit);

MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
MODULE_DESCRIPTION("fhook test: livepatch of __memory_events_show");
