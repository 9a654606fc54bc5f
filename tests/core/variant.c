// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One program, built by test_variants.sh with every kind of patchable
 * site: gcc's five 1-byte nops, with and without endbr64, clang's 5-byte
 * nop, -pg -mfentry calls (5-byte in non-PIE, 6-byte GOTPCREL in PIE), and
 * a file already rewritten by `fhook prepare`.
 */
#define _GNU_SOURCE
#include <string.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE int v_add(int a, int b) { __asm__ volatile(""); return a + b; }
NOINLINE double v_fp(double x, int n) { __asm__ volatile(""); return x * n; }
NOINLINE double v_fp_new(double x, int n) { __asm__ volatile(""); return x * n + 0.5; }
NOINLINE int v_caller(int n)
{
	int i, s = 0;

	for (i = 0; i < n; i++)
		s += v_add(i, 1);
	return s;
}

static volatile unsigned long hits, bad;
static unsigned long lo, hi;

static void count(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		  struct ftrace_regs *fregs)
{
	hits++;
	if (ip != ftrace_location((unsigned long)v_add) || parent_ip < lo || parent_ip >= hi)
		bad++;
}

static void redirect(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		     struct ftrace_regs *fregs)
{
	ftrace_regs_set_instruction_pointer(fregs, (unsigned long)v_fp_new);
}

static struct ftrace_ops ops = { .func = count };
static struct ftrace_ops rops = { .func = redirect, .flags = FTRACE_OPS_FL_IPMODIFY };

int main(int argc, char **argv)
{
	const char *v = argc > 1 ? argv[1] : "default";
	unsigned long site = ftrace_location((unsigned long)v_add), size;
	const unsigned char *b = (const unsigned char *)site;
	char name[128];

	lo = (unsigned long)v_caller;
	kallsyms_lookup_size_offset(lo, &size, NULL);
	hi = lo + size;

#define NAME(s) (snprintf(name, sizeof(name), "%s_%s", v, s), name)
	CHECK(site && site - (unsigned long)v_add <= 4, NAME("site_found"), "site %#lx fn %p",
	      site, (void *)v_add);
	CHECK(site && b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0,
	      NAME("site_is_nop5"), "%02x %02x", site ? b[0] : 0, site ? b[1] : 0);
	if (!site)
		return check_exit();
	CHECK_EQ(ftrace_set_filter_ip(&ops, (unsigned long)v_add, 0, 1), 0, NAME("filter"));
	CHECK_EQ(register_ftrace_function(&ops), 0, NAME("register"));
	CHECK_EQ(v_caller(10), 55, NAME("result"));
	CHECK_EQ(hits, 10, NAME("count"));
	CHECK_EQ(bad, 0, NAME("ip_parent_ip"));
	CHECK_EQ(unregister_ftrace_function(&ops), 0, NAME("unregister"));
	CHECK(b[0] == 0x0f && b[1] == 0x1f, NAME("nop_again"), "%02x", b[0]);

	CHECK_EQ(ftrace_set_filter_ip(&rops, (unsigned long)v_fp, 0, 1), 0, NAME("ipmodify_filter"));
	CHECK_EQ(register_ftrace_function(&rops), 0, NAME("ipmodify_register"));
	CHECK(v_fp(1.5, 2) == 3.5, NAME("ipmodify_redirect"), "%f", v_fp(1.5, 2));
	unregister_ftrace_function(&rops);
	CHECK(v_fp(1.5, 2) == 3.0, NAME("ipmodify_restored"), "%f", v_fp(1.5, 2));
	return check_exit();
}
