// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel module that redirects a function only for one caller, ported to user space with fhook.
 *
 * Only what user space requires is changed, each marked "fhook:":
 *   - the includes (fhook's headers and the example's memcg.h);
 *   - module_init/module_exit become a constructor and a destructor, run by
 *     dlopen()/dlclose() in the program that loads the module;
 *   - the handler takes struct ftrace_regs and reaches pt_regs through
 *     ftrace_get_regs() (non-NULL because of FTRACE_OPS_FL_SAVE_REGS);
 *   - return values the module ignores are checked;
 *   - pr_info prints to stderr, msleep is usleep.
 * The structs, the handler's range test, kallsyms_lookup_name +
 * sprint_symbol + sscanf of the size, ftrace_set_filter_ip and
 * register_ftrace_function are the module's own.
 */
/* fhook: user-space headers instead of <linux/...> */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fhook/ftrace.h>
#include <fhook/kallsyms.h>

#include "../memcg/memcg.h"

/* fhook: the kernel helpers the module uses */
#define pr_info(fmt, ...)	fprintf(stderr, fmt, ##__VA_ARGS__)
#define pr_err(fmt, ...)	fprintf(stderr, fmt, ##__VA_ARGS__)
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define notrace			__attribute__((no_instrument_function))
#define msleep(ms)		usleep((ms) * 1000)
/*
 * fhook: unregister_ftrace_function() already waited for a grace period
 * (util/tasks.h); the msleep() below is kept, as in the module, for a thread that
 * left the handler but has not yet jumped to the new function.
 */
#define synchronize_rcu()	do { } while (0)

struct ftrace_handler {
	const char *symbol;
	unsigned long new_addr;
	unsigned long old_addr;
	struct ftrace_ops ops;
};

struct parent_symbol {
	const char *symbol;
	unsigned long start_addr;
	unsigned long end_addr;
};

static struct ftrace_handler g_handler = {
	.symbol = "__memory_events_show",
};

static struct parent_symbol g_parent_symbol[] = {
	{
		.symbol = "memory_events_show",
	},
};

static char g_buffer[100];
static int g_registered;

static void __memory_events_show_new(struct seq_file *m, atomic_long_t *events)
{
	seq_printf(m, "This is from __memory_events_show_new\n");
	seq_printf(m, "low %lu\n", atomic_long_read(&events[MEMCG_LOW]));
	seq_printf(m, "high %lu\n", atomic_long_read(&events[MEMCG_HIGH]));
	seq_printf(m, "max %lu\n", atomic_long_read(&events[MEMCG_MAX]));
	seq_printf(m, "oom %lu\n", atomic_long_read(&events[MEMCG_OOM]));
	seq_printf(m, "oom_kill %lu\n",
		   atomic_long_read(&events[MEMCG_OOM_KILL]));
}

/* fhook: struct ftrace_regs, and pt_regs through ftrace_get_regs() */
static void notrace test_ftrace_handler(unsigned long ip,
					unsigned long parent_ip,
					struct ftrace_ops *fops,
					struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	int i = 0;
	struct ftrace_handler *handler;

	handler = container_of(fops, struct ftrace_handler, ops);

	for (i = 0; i < ARRAY_SIZE(g_parent_symbol); ++i) {
		if (g_parent_symbol[i].start_addr <= parent_ip &&
			parent_ip < g_parent_symbol[i].end_addr) {
			instruction_pointer_set(regs, handler->new_addr);
		}
	}
}

/* fhook: returns an error instead of ignoring it */
static int register_handler(struct ftrace_handler *handler)
{
	int ret;
	int i = 0;
	unsigned long size;
	char *slash;

	handler->old_addr = kallsyms_lookup_name(handler->symbol);
	if (!handler->old_addr) {
		pr_err("no symbol %s\n", handler->symbol);
		return -1;
	}
	handler->new_addr = (unsigned long)&__memory_events_show_new;
	handler->ops.func = test_ftrace_handler;
	handler->ops.flags = FTRACE_OPS_FL_SAVE_REGS |
		  FTRACE_OPS_FL_DYNAMIC |
		  FTRACE_OPS_FL_IPMODIFY;

	for (i = 0; i < ARRAY_SIZE(g_parent_symbol); ++i) {
		memset(g_buffer, 0, sizeof(g_buffer));
		g_parent_symbol[i].start_addr = kallsyms_lookup_name(g_parent_symbol[i].symbol);
		if (!g_parent_symbol[i].start_addr) {
			pr_err("no symbol %s\n", g_parent_symbol[i].symbol);
			return -1;
		}
		ret = sprint_symbol(g_buffer, g_parent_symbol[i].start_addr);
		slash = strchr(g_buffer, '/');
		if (ret <= 0 || !slash) {
			pr_err("no size for %s: '%s'\n", g_parent_symbol[i].symbol, g_buffer);
			return -1;
		}
		ret = sscanf(slash + 1, "%lx", &size);
		if (ret != 1) {
			pr_err("bad size for %s: '%s'\n", g_parent_symbol[i].symbol, g_buffer);
			return -1;
		}
		g_parent_symbol[i].end_addr = g_parent_symbol[i].start_addr + size;

		pr_info("parent_symbol = %s, start_addr = 0x%lx, end_addr = 0x%lx, buffer = %s\n",
			g_parent_symbol[i].symbol, g_parent_symbol[i].start_addr, g_parent_symbol[i].end_addr,
			g_buffer);
	}

	ret = ftrace_set_filter_ip(&handler->ops, handler->old_addr, 0, 0);
	if (ret) {
		pr_err("ftrace_set_filter_ip(%s) failed: %d\n", handler->symbol, ret);
		return ret;
	}

	ret = register_ftrace_function(&handler->ops);
	if (ret) {
		pr_err("register_ftrace_function failed: %d\n", ret);
		ftrace_set_filter_ip(&handler->ops, handler->old_addr, 1, 0);
		return ret;
	}
	return 0;
}

static void unregister_handler(struct ftrace_handler *handler)
{
	unregister_ftrace_function(&handler->ops);
	ftrace_set_filter_ip(&handler->ops, handler->old_addr, 1, 0);
}

/* fhook: module_init -> constructor, run by dlopen() */
__attribute__((constructor)) static void test_hook_init(void)
{
	if (register_handler(&g_handler)) {
		pr_err("test hook init failed\n");
		return;
	}
	g_registered = 1;
	pr_info("test hook init\n");
}

/* fhook: module_exit -> destructor, run by dlclose() */
__attribute__((destructor)) static void test_hook_exit(void)
{
	if (!g_registered)
		return;
	unregister_handler(&g_handler);

	synchronize_rcu();
	msleep(100);

	pr_info("test hook exit\n");
}
