// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fprobe API contracts one by one: entry and exit handlers, ips and
 * return values, entry data, cancel, disable, nmissed from a refused
 * recursion and from an exhausted pool, globs, unknown symbols,
 * unregister with calls in flight, tail calls, two fprobes on one
 * function, long double returns, backtrace() through hooked frames.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <string.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

#include "../check.h"

NOINLINE int t_add(int a, int b) { __asm__ volatile(""); return a + b; }
NOINLINE double t_half(double x) { __asm__ volatile(""); return x / 2; }
NOINLINE long double t_ld(long double x) { __asm__ volatile(""); return x * 3; }
NOINLINE int t_rec(int n)
{
	int r;

	if (!n)
		return 0;
	r = t_rec(n - 1);
	__asm__ volatile("" : "+r"(r) :: "memory");	/* no tail recursion */
	return r + 1;
}
NOINLINE int t_ga(int x) { __asm__ volatile(""); return x + 1; }
NOINLINE int t_gb(int x) { __asm__ volatile(""); return x + 2; }
NOINLINE int t_gc(int x) { __asm__ volatile(""); return x + 3; }
NOINLINE int t_leaf(int x) { __asm__ volatile(""); return x * 7; }
/* a sibling call: t_tail's return slot becomes t_leaf's */
NOINLINE int t_tail(int x) { __asm__ volatile(""); return t_leaf(x + 1); }
NOINLINE int t_caller(int n)
{
	__asm__ volatile("");
	return t_add(n, 1) + 1;
}

static struct fprobe *unreg_me;
NOINLINE int t_unreg_inside(int x)
{
	__asm__ volatile("");
	unregister_fprobe(unreg_me);
	return x + 1;
}

static int bt_depth;
static void *bt_buf[64];
NOINLINE int t_bt(int x)
{
	__asm__ volatile("");
	bt_depth = backtrace(bt_buf, 64);
	return x;
}
NOINLINE int t_bt_outer(int x) { __asm__ volatile(""); return t_bt(x) + 1; }
/* one call site for the traced and the untraced run */
NOINLINE int t_bt_run(int x) { __asm__ volatile(""); return t_bt_outer(x) + 1; }

static void *t_retaddr_seen;
NOINLINE int t_retaddr(int x)
{
	__asm__ volatile("");
	t_retaddr_seen = __builtin_return_address(0);
	return x;
}

static volatile struct {
	long entries, exits, bad;
	unsigned long entry_ip, ret_ip, exit_ip, exit_ret_ip;
	long retval;
	double fpret;
	long data_ok;
} s;

static void reset(void) { memset((void *)&s, 0, sizeof(s)); }

static int h_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		   struct ftrace_regs *fregs, void *data)
{
	s.entries++;
	s.entry_ip = ip;
	s.ret_ip = ret_ip;
	if (data)
		*(unsigned long *)data = ftrace_regs_get_argument(fregs, 0) ^ 0x5a5a;
	return 0;
}

static void h_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		   struct ftrace_regs *fregs, void *data)
{
	s.exits++;
	s.exit_ip = ip;
	s.exit_ret_ip = ret_ip;
	s.retval = (long)ftrace_regs_get_return_value(fregs);
	s.fpret = ftrace_regs_get_fp_return_value(fregs);
	if (data)
		s.data_ok += *(unsigned long *)data == ((unsigned long)(s.retval - 1) ^ 0x5a5a);
}

static int h_cancel_odd(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			struct ftrace_regs *fregs, void *data)
{
	s.entries++;
	return ftrace_regs_get_argument(fregs, 0) & 1;
}

static int h_recurse(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		     struct ftrace_regs *fregs, void *data)
{
	s.entries++;
	t_add(1, 2);	/* probed too: refused as recursion */
	return 0;
}

static void h_exit_plus(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			struct ftrace_regs *fregs, void *data)
{
	s.exits++;
	ftrace_regs_set_return_value(fregs, ftrace_regs_get_return_value(fregs) + 100);
}

int main(void)
{
	unsigned long size, off, caller = (unsigned long)t_caller;
	struct fprobe fp;
	int r, i;

	kallsyms_lookup_size_offset(caller, &size, &off);

	/* unknown symbols */
	{
		const char *syms[] = { "t_add", "no_such_function_xyz" };

		memset(&fp, 0, sizeof(fp));
		fp.entry_handler = h_entry;
		r = register_fprobe_syms(&fp, syms, 2);
		CHECK_EQ(r, -ENOENT, "syms_unknown_enoent");
		CHECK(!fprobe_is_registered(&fp), "syms_unknown_not_registered", "registered");
		r = register_fprobe(&fp, "no_such_glob_*", NULL);
		CHECK_EQ(r, -ENOENT, "glob_nomatch_enoent");
	}

	/* entry and exit, ips, integer return value, entry data */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	fp.entry_data_size = sizeof(unsigned long);
	{
		const char *syms[] = { "t_add" };

		r = register_fprobe_syms(&fp, syms, 1);
	}
	CHECK_EQ(r, 0, "register_syms");
	CHECK(fprobe_is_registered(&fp), "is_registered", "not registered");
	CHECK_EQ(t_caller(41), 43, "result_unchanged");
	CHECK_EQ(s.entries, 1, "entry_once");
	CHECK_EQ(s.exits, 1, "exit_once");
	CHECK_EQ(s.entry_ip, ftrace_location((unsigned long)t_add), "entry_ip");
	CHECK_EQ(s.exit_ip, ftrace_location((unsigned long)t_add), "exit_entry_ip");
	CHECK(s.ret_ip > caller && s.ret_ip < caller + size, "entry_ret_ip",
	      "%#lx not in t_caller", s.ret_ip);
	CHECK_EQ(s.exit_ret_ip, s.ret_ip, "exit_ret_ip");
	CHECK_EQ(s.retval, 42, "exit_retval");
	CHECK_EQ(s.data_ok, 1, "entry_data_reaches_exit");
	for (i = 0; i < 1000; i++)
		t_add(i, 1);
	CHECK_EQ(s.exits, 1001, "exit_count_1000");
	CHECK_EQ(s.data_ok, 1001, "entry_data_1000");
	CHECK_EQ(fprobe_nmissed(&fp), 0, "no_misses");
	r = register_fprobe(&fp, "t_add", NULL);
	CHECK_EQ(r, -EBUSY, "register_twice_ebusy");

	/* disable, enable */
	disable_fprobe(&fp);
	reset();
	t_add(1, 1);
	CHECK(s.entries == 0 && s.exits == 0, "disabled_no_handlers", "%ld %ld", s.entries,
	      s.exits);
	enable_fprobe(&fp);
	t_add(1, 1);
	CHECK(s.entries == 1 && s.exits == 1, "enabled_again", "%ld %ld", s.entries, s.exits);
	/* disabled while in flight: the exit handler is skipped too */
	r = unregister_fprobe(&fp);
	CHECK_EQ(r, 0, "unregister");
	CHECK(!fprobe_is_registered(&fp), "unregistered", "still registered");
	reset();
	t_add(1, 1);
	CHECK(s.entries == 0 && s.exits == 0, "unregistered_no_handlers", "%ld %ld", s.entries,
	      s.exits);
	r = unregister_fprobe(&fp);
	CHECK_EQ(r, -EINVAL, "unregister_twice_einval");

	/* floating-point and long double returns */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_half", NULL);
	CHECK_EQ(r, 0, "register_glob_exact");
	{
		volatile double d = t_half(5.0);

		CHECK(d == 2.5, "fp_result_unchanged", "%g", d);
		CHECK(s.fpret == 2.5, "exit_fp_retval", "%g", s.fpret);
	}
	unregister_fprobe(&fp);
	memset(&fp, 0, sizeof(fp));
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_ld", NULL);
	{
		volatile long double x = t_ld(1.5L);

		CHECK(r == 0 && x == 4.5L, "long_double_preserved", "r %d %Lg", r, x);
	}
	unregister_fprobe(&fp);

	/* cancel: entry handler returning non-zero skips that exit */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_cancel_odd;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_add", NULL);
	for (i = 0; i < 10; i++)
		t_add(i, 0);
	CHECK(r == 0 && s.entries == 10 && s.exits == 5, "cancel_exit", "r %d %ld %ld", r,
	      s.entries, s.exits);
	CHECK_EQ(fprobe_nmissed(&fp), 0, "cancel_is_not_missed");
	unregister_fprobe(&fp);

	/* nmissed: recursion refused, both handlers skipped */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_recurse;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_add", NULL);
	t_add(2, 3);
	CHECK(r == 0 && s.entries == 1 && s.exits == 1, "recursion_refused",
	      "r %d entries %ld exits %ld", r, s.entries, s.exits);
	CHECK_EQ(fprobe_nmissed(&fp), 1, "nmissed_recursion");
	unregister_fprobe(&fp);

	/* nmissed: pool of 3 return hooks, recursion 6 deep */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	fp.nr_maxactive = 3;
	r = register_fprobe(&fp, "t_rec", NULL);
	CHECK_EQ(t_rec(5), 5, "pool_result_unchanged");
	CHECK(r == 0 && s.entries == 3 && s.exits == 3, "pool_exhausted_skips",
	      "r %d entries %ld exits %ld", r, s.entries, s.exits);
	CHECK_EQ(fprobe_nmissed(&fp), 3, "nmissed_pool");
	reset();
	t_rec(2);
	CHECK(s.entries == 3 && s.exits == 3, "pool_refilled", "entries %ld exits %ld",
	      s.entries, s.exits);
	unregister_fprobe(&fp);

	/* the default pool: deep recursion is bounded by the shadow stack only */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_rec", NULL);
	CHECK_EQ(t_rec(3000), 3000, "deep_result_unchanged");
	CHECK(r == 0 && s.entries == 3001 && s.exits == 3001, "deep_recursion_default_pool",
	      "r %d entries %ld exits %ld", r, s.entries, s.exits);
	CHECK_EQ(fprobe_nmissed(&fp), 0, "deep_recursion_no_miss");
	/* past the shadow stack: the deepest calls are missed, the rest balance */
	reset();
	CHECK_EQ(t_rec(9000), 9000, "deeper_result_unchanged");
	CHECK(s.entries == s.exits && s.entries + (long)fprobe_nmissed(&fp) == 9001,
	      "deeper_than_shadow_stack", "entries %ld exits %ld nmissed %lu", s.entries,
	      s.exits, fprobe_nmissed(&fp));
	unregister_fprobe(&fp);

	/* globs with a notfilter */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_g[a-z]", "t_gb");
	CHECK_EQ(r, 0, "register_glob");
	CHECK_EQ(fp.ops.nr_sites, 2, "glob_sites");
	t_ga(1);
	t_gb(1);
	t_gc(1);
	CHECK(s.entries == 2 && s.exits == 2, "glob_notfilter", "%ld %ld", s.entries, s.exits);
	unregister_fprobe(&fp);

	/* unregister while a call is in flight: its exit handler never runs */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	unreg_me = &fp;
	r = register_fprobe(&fp, "t_unreg_inside", NULL);
	CHECK_EQ(t_unreg_inside(1), 2, "unreg_inflight_result");
	CHECK(r == 0 && s.entries == 1 && s.exits == 0, "unreg_inflight_no_exit",
	      "r %d %ld %ld", r, s.entries, s.exits);

	/* a tail call: two hooked frames share one return slot */
	reset();
	memset(&fp, 0, sizeof(fp));
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_[lt][ea][ai][fl]", NULL);
	CHECK_EQ(r, 0, "register_tail");
	CHECK_EQ(t_tail(2), 21, "tail_result");
	CHECK(s.entries == 2 && s.exits == 2, "tail_both_exits", "%ld %ld", s.entries, s.exits);
	CHECK_EQ(s.retval, 21, "tail_retval");
	unregister_fprobe(&fp);

	/* two fprobes on one function, and a changed return value */
	{
		struct fprobe fp2;

		reset();
		memset(&fp, 0, sizeof(fp));
		memset(&fp2, 0, sizeof(fp2));
		fp.exit_handler = h_exit;
		fp2.exit_handler = h_exit_plus;
		r = register_fprobe(&fp, "t_caller", NULL);
		r |= register_fprobe(&fp2, "t_caller", NULL);
		CHECK_EQ(t_caller(1), 103, "two_fprobes_retval_changed");
		CHECK_EQ(s.exits, 2, "two_fprobes_exits");
		CHECK(s.exit_ret_ip == (unsigned long)__builtin_return_address(0) ||
		      (s.exit_ret_ip > (unsigned long)main &&
		       s.exit_ret_ip < (unsigned long)main + 0x10000),
		      "two_fprobes_ret_ip", "%#lx", s.exit_ret_ip);
		unregister_fprobe(&fp2);
		unregister_fprobe(&fp);
	}

	/* backtrace() and __builtin_return_address() through hooked frames */
	{
		void *plain[64];
		int plain_depth;

		t_bt_run(1);
		plain_depth = bt_depth;
		memcpy(plain, bt_buf, sizeof(plain));
		memset(&fp, 0, sizeof(fp));
		fp.exit_handler = h_exit;
		r = register_fprobe(&fp, "t_bt*", NULL);
		t_bt_run(1);
		/* the frames up to t_bt_run's caller, which differs */
		CHECK(r == 0 && bt_depth == plain_depth && plain_depth > 3 &&
		      !memcmp(plain, bt_buf, 3 * sizeof(void *)),
		      "backtrace_unchanged", "r %d depth %d vs %d", r, bt_depth, plain_depth);
		unregister_fprobe(&fp);

		memset(&fp, 0, sizeof(fp));
		fp.exit_handler = h_exit;
		r = register_fprobe(&fp, "t_retaddr", NULL);
		t_retaddr(1);
		{
			unsigned long ra = rethook_find_ret_addr((unsigned long)t_retaddr_seen);

			CHECK(ra > (unsigned long)main && ra < (unsigned long)main + 0x10000,
			      "find_ret_addr", "%p -> %#lx", t_retaddr_seen, ra);
		}
		unregister_fprobe(&fp);
	}
	return check_exit();
}
