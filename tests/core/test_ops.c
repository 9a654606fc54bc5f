// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ftrace_ops basics: several functions hooked by one ops, one function by
 * two ops, ip and parent_ip, exact counts, filters, notrace, IPMODIFY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gnu/libc-version.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE int t_add(int a, int b) { __asm__ volatile(""); return a + b; }
NOINLINE int t_mul(int a, int b) { __asm__ volatile(""); return a * b; }
NOINLINE int t_sub(int a, int b) { __asm__ volatile(""); return a - b; }
NOINLINE double t_scale(int n, double x) { __asm__ volatile(""); return n * x; }
NOINLINE double t_scale_new(int n, double x) { __asm__ volatile(""); return n * x + 1000.0; }
NOINLINE int t_caller(int n)
{
	int s = 0, i;

	for (i = 0; i < n; i++)
		s += t_add(i, 1) + t_mul(i, 2);
	return s;
}

static volatile struct {
	unsigned long calls, bad_ip, bad_parent;
	unsigned long last_ip;
} c1, c2;

static unsigned long caller_lo, caller_hi;

static void h1(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
	       struct ftrace_regs *fregs)
{
	c1.calls++;
	c1.last_ip = ip;
	if (ip != ftrace_location((unsigned long)t_add) &&
	    ip != ftrace_location((unsigned long)t_mul))
		c1.bad_ip++;
	if (parent_ip < caller_lo || parent_ip >= caller_hi)
		c1.bad_parent++;
}

static void h2(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
	       struct ftrace_regs *fregs)
{
	c2.calls++;
	c2.last_ip = ip;
}

static struct ftrace_ops ops1 = { .func = h1 };
static struct ftrace_ops ops2 = { .func = h2 };

static int seen_n;
static double seen_x;

static void redirect(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		     struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	seen_n = (int)ftrace_regs_get_argument(fregs, 0);
	seen_x = ftrace_regs_get_fp_argument(fregs, 0);
	if (regs)
		regs->ip = (unsigned long)t_scale_new;
}

static struct ftrace_ops ops_ipmod = {
	.func = redirect,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
};
static struct ftrace_ops ops_ipmod2 = {
	.func = redirect,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
};

/* Can this kernel write a read-only page through /proc/self/mem at all? */
static bool procmem_works(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/self/mem", O_RDWR);
	bool ok = fd >= 0 && pwrite(fd, "x", 1, (off_t)(unsigned long)p) == 1 && p[0] == 'x';

	if (fd >= 0)
		close(fd);
	munmap(p, 4096);
	return ok;
}

int main(void)
{
	unsigned long size, off;
	struct fhook_stats st;
	char buf[KSYM_SYMBOL_LEN];
	int r;

	if (getenv("FHOOK_TEXT_POKE") && !procmem_works()) {
		printf("SKIP procmem: this kernel refuses writes through /proc/self/mem\n");
		return 0;
	}
	caller_lo = kallsyms_lookup_name("t_caller");
	CHECK(caller_lo == (unsigned long)t_caller, "kallsyms_lookup_name",
	      "%#lx vs %p", caller_lo, (void *)t_caller);
	CHECK(kallsyms_lookup_size_offset(caller_lo, &size, &off) && off == 0 && size > 0,
	      "kallsyms_lookup_size_offset", "size %lu off %lu", size, off);
	caller_hi = caller_lo + size;
	sprint_symbol(buf, caller_lo + 3);
	{
		char want[64];

		snprintf(want, sizeof(want), "t_caller+0x3/0x%lx", size);
		CHECK(!strcmp(buf, want), "sprint_symbol", "'%s' vs '%s'", buf, want);
	}
	sprint_symbol(buf, (unsigned long)gnu_get_libc_version + 1);
	CHECK(strstr(buf, "[libc.so.6]") != NULL, "sprint_symbol_module", "'%s'", buf);

	fhook_get_stats(&st);
	CHECK(st.nr_sites >= 7 && st.nr_enabled == 0, "sites_found", "sites %lu enabled %lu",
	      st.nr_sites, st.nr_enabled);
	CHECK(ftrace_location((unsigned long)t_add) == (unsigned long)t_add,
	      "ftrace_location", "%#lx", ftrace_location((unsigned long)t_add));
	{
		const unsigned char *b = (const void *)t_add;

		CHECK(b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0 && b[4] == 0,
		      "init_nop", "%02x %02x %02x %02x %02x", b[0], b[1], b[2], b[3], b[4]);
	}

	/* one ops, two functions */
	r = ftrace_set_filter(&ops1, (unsigned char *)"t_add t_mul", 11, 1);
	CHECK_EQ(r, 0, "set_filter_glob");
	r = register_ftrace_function(&ops1);
	CHECK_EQ(r, 0, "register_ops1");
	CHECK_EQ(t_caller(10), 45 + 10 + 90, "results_unchanged");
	CHECK_EQ(c1.calls, 20, "ops1_calls");
	CHECK_EQ(c1.bad_ip, 0, "ops1_ip");
	CHECK_EQ(c1.bad_parent, 0, "ops1_parent_ip");
	t_sub(1, 2);
	CHECK_EQ(c1.calls, 20, "ops1_filter_excludes");

	/* a second ops on t_add: the site is shared */
	r = ftrace_set_filter_ip(&ops2, (unsigned long)t_add, 0, 1);
	CHECK_EQ(r, 0, "set_filter_ip");
	r = register_ftrace_function(&ops2);
	CHECK_EQ(r, 0, "register_ops2");
	c1.calls = 0;
	t_caller(5);
	CHECK_EQ(c1.calls, 10, "shared_site_ops1");
	CHECK_EQ(c2.calls, 5, "shared_site_ops2");
	CHECK_EQ(c2.last_ip, (unsigned long)t_add, "ops2_ip");

	/* notrace wins over the filter */
	r = ftrace_set_notrace(&ops1, (unsigned char *)"t_mul", 5, 1);
	CHECK_EQ(r, 0, "set_notrace");
	c1.calls = 0;
	t_caller(5);
	CHECK_EQ(c1.calls, 5, "notrace_wins");

	r = unregister_ftrace_function(&ops2);
	CHECK_EQ(r, 0, "unregister_ops2");
	c1.calls = c2.calls = 0;
	t_caller(5);
	CHECK_EQ(c2.calls, 0, "ops2_gone");
	CHECK_EQ(c1.calls, 5, "ops1_stays");
	r = unregister_ftrace_function(&ops1);
	CHECK_EQ(r, 0, "unregister_ops1");
	c1.calls = 0;
	t_caller(5);
	CHECK_EQ(c1.calls, 0, "ops1_gone");
	fhook_get_stats(&st);
	CHECK_EQ(st.nr_enabled, 0, "all_sites_nop_again");
	{
		const unsigned char *b = (const void *)t_add;

		CHECK(b[0] == 0x0f && b[1] == 0x1f, "site_is_nop_after", "%02x", b[0]);
	}

	/* errors */
	r = ftrace_set_filter(&ops2, (unsigned char *)"no_such_function", 16, 1);
	CHECK(r == -EINVAL && errno == EINVAL, "unknown_glob", "r=%d", r);
	r = ftrace_set_filter_ip(&ops2, (unsigned long)t_add + 1, 0, 1);
	CHECK_EQ(r, -ENOENT, "filter_ip_not_a_site");
	r = ftrace_set_filter_ip(&ops2, (unsigned long)strlen, 0, 1);
	CHECK_EQ(r, -ENOENT, "filter_ip_uninstrumented");
	{
		struct ftrace_ops null_ops = { 0 };

		CHECK_EQ(register_ftrace_function(&null_ops), -EINVAL, "null_handler");
	}
	{
		struct ftrace_ops empty = { .func = redirect,
			.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY };

		CHECK_EQ(register_ftrace_function(&empty), -EINVAL, "ipmodify_empty_filter");
	}
	CHECK_EQ(unregister_ftrace_function(&ops2), -ENODEV, "unregister_unregistered");

	/* IPMODIFY: int and double arguments reach the replacement */
	r = ftrace_set_filter_ip(&ops_ipmod, (unsigned long)t_scale, 0, 1);
	CHECK_EQ(r, 0, "ipmodify_filter");
	r = register_ftrace_function(&ops_ipmod);
	CHECK_EQ(r, 0, "ipmodify_register");
	{
		double d = t_scale(3, 2.5);

		CHECK(d == 1007.5, "ipmodify_redirect", "got %f", d);
		CHECK(seen_n == 3 && seen_x == 2.5, "ipmodify_args", "n=%d x=%f", seen_n, seen_x);
	}
	ftrace_set_filter_ip(&ops_ipmod2, (unsigned long)t_scale, 0, 1);
	r = register_ftrace_function(&ops_ipmod2);
	CHECK_EQ(r, -EBUSY, "ipmodify_second_user_ebusy");
	CHECK(t_scale(2, 1.0) == 1002.0, "ipmodify_first_stays", "");
	r = unregister_ftrace_function(&ops_ipmod);
	CHECK_EQ(r, 0, "ipmodify_unregister");
	CHECK(t_scale(2, 1.0) == 2.0, "ipmodify_original_back", "");
	r = register_ftrace_function(&ops_ipmod2);
	CHECK_EQ(r, 0, "ipmodify_second_after_first_gone");
	unregister_ftrace_function(&ops_ipmod2);
	if (getenv("FHOOK_TEXT_POKE")) {
		fhook_get_stats(&st);
		CHECK_EQ(st.procmem, 1, "wrote_through_proc_self_mem");
	}
	return check_exit();
}
