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
		instruction_pointer_set(regs, (unsigned long)t_scale_new);
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

/* t_caller's bounds, for h1's parent_ip check */
static unsigned long find_caller(unsigned long *size)
{
	unsigned long off;

	*size = 0;
	caller_lo = kallsyms_lookup_name("t_caller");
	kallsyms_lookup_size_offset(caller_lo, size, &off);
	caller_hi = caller_lo + *size;
	return off;
}

/* every ops back to no filter and the counts to zero, as at start */
static void reset_ops(void)
{
	ftrace_free_filter(&ops1);
	ftrace_free_filter(&ops2);
	ftrace_free_filter(&ops_ipmod);
	ftrace_free_filter(&ops_ipmod2);
	memset((void *)&c1, 0, sizeof(c1));
	memset((void *)&c2, 0, sizeof(c2));
	seen_n = 0;
	seen_x = 0;
}

static void case_kallsyms(void)
{
	unsigned long size, off;
	char buf[KSYM_SYMBOL_LEN], want[64];

	off = find_caller(&size);
	CHECK(caller_lo == (unsigned long)t_caller, "kallsyms_lookup_name",
	      "%#lx vs %p", caller_lo, (void *)t_caller);
	CHECK(kallsyms_lookup_size_offset(caller_lo, &size, &off) && off == 0 && size > 0,
	      "kallsyms_lookup_size_offset", "size %lu off %lu", size, off);
	sprint_symbol(buf, caller_lo + 3);
	snprintf(want, sizeof(want), "t_caller+0x3/0x%lx", size);
	CHECK(!strcmp(buf, want), "sprint_symbol", "'%s' vs '%s'", buf, want);
	sprint_symbol(buf, (unsigned long)gnu_get_libc_version + 1);
	CHECK(strstr(buf, "[libc.so.6]") != NULL, "sprint_symbol_module", "'%s'", buf);
}

/* the sites as found at start: all nops, none enabled */
static void case_sites_at_start(void)
{
	const unsigned char *b = (const unsigned char *)t_add + TEST_SITE_OFF;
	struct fhook_stats st;

	fhook_get_stats(&st);
	CHECK(st.nr_sites >= 7 && st.nr_enabled == 0, "sites_found", "sites %lu enabled %lu",
	      st.nr_sites, st.nr_enabled);
	CHECK(ftrace_location((unsigned long)t_add) == (unsigned long)t_add + TEST_SITE_OFF,
	      "ftrace_location", "%#lx", ftrace_location((unsigned long)t_add));
	CHECK(!memcmp(b, test_site_nop, sizeof(test_site_nop)),
	      "init_nop", "%02x %02x %02x %02x %02x", b[0], b[1], b[2], b[3], b[4]);
}

/* ops1 on t_add and t_mul by glob */
static int register_ops1(void)
{
	int r;

	r = ftrace_set_filter(&ops1, (unsigned char *)"t_add t_mul", 11, 1);
	return r ?: register_ftrace_function(&ops1);
}

/* ops2 on t_add by address */
static int register_ops2(void)
{
	int r;

	r = ftrace_set_filter_ip(&ops2, (unsigned long)t_add, 0, 1);
	return r ?: register_ftrace_function(&ops2);
}

/* one ops, two functions */
static void case_one_ops_two_functions(void)
{
	unsigned long size;
	int r;

	reset_ops();
	find_caller(&size);
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
	unregister_ftrace_function(&ops1);
}

/* a second ops on t_add: the site is shared */
static void case_shared_site(void)
{
	unsigned long size;
	int r;

	reset_ops();
	find_caller(&size);
	register_ops1();
	r = ftrace_set_filter_ip(&ops2, (unsigned long)t_add, 0, 1);
	CHECK_EQ(r, 0, "set_filter_ip");
	r = register_ftrace_function(&ops2);
	CHECK_EQ(r, 0, "register_ops2");
	t_caller(5);
	CHECK_EQ(c1.calls, 10, "shared_site_ops1");
	CHECK_EQ(c2.calls, 5, "shared_site_ops2");
	CHECK_EQ(c2.last_ip, (unsigned long)t_add + TEST_SITE_OFF, "ops2_ip");
	unregister_ftrace_function(&ops2);
	unregister_ftrace_function(&ops1);
}

/* notrace, set while registered, wins over the filter */
static void case_notrace(void)
{
	unsigned long size;
	int r;

	reset_ops();
	find_caller(&size);
	register_ops1();
	r = ftrace_set_notrace(&ops1, (unsigned char *)"t_mul", 5, 1);
	CHECK_EQ(r, 0, "set_notrace");
	t_caller(5);
	CHECK_EQ(c1.calls, 5, "notrace_wins");
	unregister_ftrace_function(&ops1);
}

/* unregistering one ops of a shared site, then the other: nops again */
static void case_unregister(void)
{
	const unsigned char *b = (const unsigned char *)t_add + TEST_SITE_OFF;
	struct fhook_stats st;
	unsigned long size;
	int r;

	reset_ops();
	find_caller(&size);
	register_ops1();
	ftrace_set_notrace(&ops1, (unsigned char *)"t_mul", 5, 1);
	register_ops2();
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
	CHECK(!memcmp(b, test_site_nop, sizeof(test_site_nop)), "site_is_nop_after", "%02x", b[0]);
}

static void case_errors(void)
{
	struct ftrace_ops null_ops = { 0 };
	struct ftrace_ops empty = { .func = redirect,
		.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY };
	int r;

	reset_ops();
	r = ftrace_set_filter(&ops2, (unsigned char *)"no_such_function", 16, 1);
	CHECK(r == -EINVAL && errno == EINVAL, "unknown_glob", "r=%d", r);
	r = ftrace_set_filter_ip(&ops2, (unsigned long)t_add + 1, 0, 1);
	CHECK_EQ(r, -ENOENT, "filter_ip_not_a_site");
	r = ftrace_set_filter_ip(&ops2, (unsigned long)strlen, 0, 1);
	CHECK_EQ(r, -ENOENT, "filter_ip_uninstrumented");
	CHECK_EQ(register_ftrace_function(&null_ops), -EINVAL, "null_handler");
	CHECK_EQ(register_ftrace_function(&empty), -EINVAL, "ipmodify_empty_filter");
	CHECK_EQ(unregister_ftrace_function(&ops2), -ENODEV, "unregister_unregistered");
}

/* IPMODIFY: int and double arguments reach the replacement */
static void case_ipmodify_redirect(void)
{
	double d;
	int r;

	reset_ops();
	r = ftrace_set_filter_ip(&ops_ipmod, (unsigned long)t_scale, 0, 1);
	CHECK_EQ(r, 0, "ipmodify_filter");
	r = register_ftrace_function(&ops_ipmod);
	CHECK_EQ(r, 0, "ipmodify_register");
	d = t_scale(3, 2.5);
	CHECK(d == 1007.5, "ipmodify_redirect", "got %f", d);
	CHECK(seen_n == 3 && seen_x == 2.5, "ipmodify_args", "n=%d x=%f", seen_n, seen_x);
	unregister_ftrace_function(&ops_ipmod);
}

/* one IPMODIFY user per function; the second may come once the first goes */
static void case_ipmodify_exclusive(void)
{
	int r;

	reset_ops();
	ftrace_set_filter_ip(&ops_ipmod, (unsigned long)t_scale, 0, 1);
	register_ftrace_function(&ops_ipmod);
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
}

/* with FHOOK_TEXT_POKE (tests/core/test_procmem.sh), the last batch wrote
 * through /proc/self/mem */
static void case_text_poke_path(void)
{
	struct fhook_stats st;

	if (!getenv("FHOOK_TEXT_POKE"))
		return;
	reset_ops();
	register_ops2();
	unregister_ftrace_function(&ops2);
	fhook_get_stats(&st);
	CHECK_EQ(st.procmem, 1, "wrote_through_proc_self_mem");
}

static const struct check_case cases[] = {
	CHECK_CASE(kallsyms),
	CHECK_CASE(sites_at_start),
	CHECK_CASE(one_ops_two_functions),
	CHECK_CASE(shared_site),
	CHECK_CASE(notrace),
	CHECK_CASE(unregister),
	CHECK_CASE(errors),
	CHECK_CASE(ipmodify_redirect),
	CHECK_CASE(ipmodify_exclusive),
	CHECK_CASE(text_poke_path),
};

int main(void)
{
	if (getenv("FHOOK_TEXT_POKE") && !procmem_works()) {
		printf("SKIP procmem: this kernel refuses writes through /proc/self/mem\n");
		return 0;
	}
	return check_run_cases(cases);
}
