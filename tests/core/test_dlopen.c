// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dlopen()/dlclose() of an instrumented library while hooks are live.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "../check.h"

static atomic_ulong hits, all_hits;
/* the site of dl_target_fn: the handler's ip, past the entry's pad on aarch64 */
static unsigned long want_ip;

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	if (ip == want_ip)
		atomic_fetch_add(&hits, 1);
}

static void all_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			struct ftrace_regs *fregs)
{
	atomic_fetch_add(&all_hits, 1);
}

static struct ftrace_ops ops = { .func = handler };
static struct ftrace_ops all_ops = { .func = all_handler, .flags = FTRACE_OPS_FL_RECURSION };

int main(void)
{
	char lib[PATH_MAX], sym[KSYM_SYMBOL_LEN];
	unsigned long addr;
	ssize_t n = readlink("/proc/self/exe", lib, sizeof(lib) - 40);
	int (*fn)(int), (*other)(int), round;
	void *h;

	lib[n] = 0;
	strcpy(strrchr(lib, '/'), "/libdltarget.so");

	for (round = 0; round < 3; round++) {
		char name[64];

		h = dlopen(lib, RTLD_NOW);
		CHECK(h != NULL, "dlopen", "%s", dlerror());
		if (!h)
			return check_exit();
		fn = dlsym(h, "dl_target_fn");
		addr = kallsyms_lookup_name("dl_target_fn");
		snprintf(name, sizeof(name), "lookup_new_object_%d", round);
		CHECK(addr == (unsigned long)fn, name, "%#lx vs %p", addr, (void *)fn);
		sprint_symbol(sym, addr);
		snprintf(name, sizeof(name), "module_suffix_%d", round);
		CHECK(strstr(sym, "dl_target_fn+0x0/") && strstr(sym, " [libdltarget.so]"), name,
		      "%s", sym);
		want_ip = ftrace_location(addr);
		snprintf(name, sizeof(name), "site_in_new_object_%d", round);
		CHECK(want_ip == addr + TEST_SITE_OFF, name, "%#lx for %#lx", want_ip, addr);
		snprintf(name, sizeof(name), "filter_new_object_%d", round);
		CHECK_EQ(ftrace_set_filter_ip(&ops, addr, 0, 1), 0, name);
		if (round == 0)
			CHECK_EQ(register_ftrace_function(&ops), 0, "register");
		hits = 0;
		fn(1);
		fn(2);
		snprintf(name, sizeof(name), "hooked_in_new_object_%d", round);
		CHECK_EQ(hits, 2, name);
		/* unload while the ops is registered with a filter on it */
		snprintf(name, sizeof(name), "dlclose_%d", round);
		CHECK_EQ(dlclose(h), 0, name);
	}
	unregister_ftrace_function(&ops);

	/* an ops on every function sees a library loaded after it */
	CHECK_EQ(register_ftrace_function(&all_ops), 0, "register_all");
	h = dlopen(lib, RTLD_NOW);
	fhook_refresh();
	other = dlsym(h, "dl_other_fn");
	all_hits = 0;
	CHECK_EQ(other(2), 23, "result_under_all");
	CHECK_EQ(all_hits, 2, "all_ops_sees_new_object");
	CHECK_EQ(unregister_ftrace_function(&all_ops), 0, "unregister_all");
	dlclose(h);
	{
		struct fhook_stats st;

		fhook_get_stats(&st);
		CHECK_EQ(st.nr_enabled, 0, "nothing_left_enabled");
	}
	return check_exit();
}
