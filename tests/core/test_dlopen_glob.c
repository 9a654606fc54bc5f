// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Filters and a library opened with dlopen() after they were set: a glob
 * filter, a notrace glob and an empty filter ("every function") cover it
 * from the moment dlopen() returns, with no fhook call in between; at
 * dlclose() its sites leave every filter, and a filter left with none
 * traces nothing, not everything.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "../check.h"

static atomic_long glob_hits, all_hits, ip_hits;
static unsigned long lib_target, lib_other;
static volatile int sink;

static void glob_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			 struct ftrace_regs *fregs)
{
	atomic_fetch_add(&glob_hits, 1);
}

static void all_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			struct ftrace_regs *fregs)
{
	if (ip == lib_target || ip == lib_other)
		atomic_fetch_add(&all_hits, 1);
}

static void ip_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		       struct ftrace_regs *fregs)
{
	atomic_fetch_add(&ip_hits, 1);
}

static struct ftrace_ops glob_ops = { .func = glob_handler };
static struct ftrace_ops all_ops = { .func = all_handler, .flags = FTRACE_OPS_FL_RECURSION };
static struct ftrace_ops ip_ops = { .func = ip_handler };

/* In the program, so that the glob matches when it is set. */
NOINLINE int dl_main_fn(int x)
{
	__asm__ volatile("");
	return x + 5;
}

/* Matches the notrace glob. */
NOINLINE int dl_other_main(int x)
{
	__asm__ volatile("");
	return x + 7;
}

NOINLINE int not_dl_fn(int x)
{
	__asm__ volatile("");
	return x + 6;
}

static int set(struct ftrace_ops *ops, const char *s, bool notrace)
{
	return notrace ? ftrace_set_notrace(ops, (unsigned char *)s, (int)strlen(s), 1)
		       : ftrace_set_filter(ops, (unsigned char *)s, (int)strlen(s), 1);
}

int main(void)
{
	char lib[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", lib, sizeof(lib) - 40);
	int (*target)(int), (*other)(int);
	void *h;

	if (n <= 0)
		return 1;
	lib[n] = 0;
	strcpy(strrchr(lib, '/'), "/libdltarget.so");

	CHECK_EQ(set(&glob_ops, "dl_*", false), 0, "glob_filter_before_dlopen");
	CHECK_EQ(set(&glob_ops, "dl_other*", true), 0, "notrace_glob_before_dlopen");
	CHECK_EQ(register_ftrace_function(&glob_ops), 0, "register_glob");
	CHECK_EQ(register_ftrace_function(&all_ops), 0, "register_all");

	h = dlopen(lib, RTLD_NOW);
	CHECK(h != NULL, "dlopen", "%s", dlerror());
	if (!h)
		return check_exit();
	target = (int (*)(int))dlsym(h, "dl_target_fn");
	other = (int (*)(int))dlsym(h, "dl_other_fn");
	lib_target = ftrace_location((unsigned long)target);
	lib_other = ftrace_location((unsigned long)other);
	glob_hits = all_hits = 0;
	sink = target(1);
	CHECK_EQ(glob_hits, 1, "glob_covers_new_object");
	CHECK_EQ(all_hits, 1, "empty_filter_covers_new_object");
	glob_hits = 0;
	sink = other(1);	/* calls dl_target_fn */
	CHECK_EQ(glob_hits, 1, "notrace_glob_covers_new_object");
	CHECK_EQ(glob_ops.nr_sites, 2, "glob_sites_with_library");

	/* a filter by address on the library's function only */
	CHECK_EQ(ftrace_set_filter_ip(&ip_ops, (unsigned long)target, 0, 1), 0, "filter_ip");
	CHECK_EQ(register_ftrace_function(&ip_ops), 0, "register_ip");
	ip_hits = 0;
	sink = target(1);
	CHECK_EQ(ip_hits, 1, "ip_filter_hit");

	CHECK_EQ(dlclose(h), 0, "dlclose");
	CHECK_EQ(glob_ops.nr_sites, 1, "glob_sites_leave_at_dlclose");
	CHECK_EQ(ip_ops.nr_sites, 0, "ip_sites_leave_at_dlclose");
	glob_hits = ip_hits = 0;
	sink = dl_main_fn(1);
	sink = dl_other_main(1);
	sink = not_dl_fn(1);
	CHECK_EQ(glob_hits, 1, "glob_filter_unchanged_in_program");
	CHECK_EQ(ip_hits, 0, "emptied_filter_traces_nothing");

	/* opened again: covered again without any fhook call */
	h = dlopen(lib, RTLD_NOW);
	target = h ? (int (*)(int))dlsym(h, "dl_target_fn") : NULL;
	glob_hits = 0;
	if (target)
		sink = target(1);
	CHECK_EQ(glob_hits, 1, "glob_covers_reopened_object");
	CHECK_EQ(ip_ops.nr_sites, 0, "ip_filter_not_extended");
	if (h)
		dlclose(h);

	CHECK_EQ(unregister_ftrace_function(&ip_ops), 0, "unregister_ip");
	CHECK_EQ(unregister_ftrace_function(&all_ops), 0, "unregister_all");
	CHECK_EQ(unregister_ftrace_function(&glob_ops), 0, "unregister_glob");
	ftrace_free_filter(&ip_ops);
	ftrace_free_filter(&glob_ops);
	{
		struct fhook_stats st;

		fhook_get_stats(&st);
		CHECK_EQ(st.nr_enabled, 0, "nothing_left_enabled");
	}
	return check_exit();
}
