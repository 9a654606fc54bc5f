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
#include <setjmp.h>
#include <signal.h>
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

/* the fprobe every case registers; setup() clears it and the counts */
static struct fprobe fp;

static void reset(void) { memset((void *)&s, 0, sizeof(s)); }

static void setup(void)
{
	reset();
	memset(&fp, 0, sizeof(fp));
}

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

static void case_unknown_symbols(void)
{
	const char *syms[] = { "t_add", "no_such_function_xyz" };
	int r;

	setup();
	fp.entry_handler = h_entry;
	r = register_fprobe_syms(&fp, syms, 2);
	CHECK_EQ(r, -ENOENT, "syms_unknown_enoent");
	CHECK(!fprobe_is_registered(&fp), "syms_unknown_not_registered", "registered");
	r = register_fprobe(&fp, "no_such_glob_*", NULL);
	CHECK_EQ(r, -ENOENT, "glob_nomatch_enoent");
}

/* entry and exit handlers with entry data on t_add, by symbol list */
static int register_add(void)
{
	const char *syms[] = { "t_add" };

	setup();
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	fp.entry_data_size = sizeof(unsigned long);
	return register_fprobe_syms(&fp, syms, 1);
}

/* entry and exit, ips, integer return value, entry data */
static void case_entry_exit(void)
{
	unsigned long size = 0, off, caller = (unsigned long)t_caller;
	int r, i;

	kallsyms_lookup_size_offset(caller, &size, &off);
	r = register_add();
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
	unregister_fprobe(&fp);
}

static void case_register_twice(void)
{
	int r;

	register_add();
	r = register_fprobe(&fp, "t_add", NULL);
	CHECK_EQ(r, -EBUSY, "register_twice_ebusy");
	unregister_fprobe(&fp);
}

static void case_disable_enable(void)
{
	register_add();
	disable_fprobe(&fp);
	reset();
	t_add(1, 1);
	CHECK(s.entries == 0 && s.exits == 0, "disabled_no_handlers", "%ld %ld", s.entries,
	      s.exits);
	enable_fprobe(&fp);
	t_add(1, 1);
	CHECK(s.entries == 1 && s.exits == 1, "enabled_again", "%ld %ld", s.entries, s.exits);
	unregister_fprobe(&fp);
}

static void case_unregister(void)
{
	int r;

	register_add();
	r = unregister_fprobe(&fp);
	CHECK_EQ(r, 0, "unregister");
	CHECK(!fprobe_is_registered(&fp), "unregistered", "still registered");
	reset();
	t_add(1, 1);
	CHECK(s.entries == 0 && s.exits == 0, "unregistered_no_handlers", "%ld %ld", s.entries,
	      s.exits);
	r = unregister_fprobe(&fp);
	CHECK_EQ(r, -EINVAL, "unregister_twice_einval");
}

static void case_fp_return(void)
{
	volatile double d;
	int r;

	setup();
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_half", NULL);
	CHECK_EQ(r, 0, "register_glob_exact");
	d = t_half(5.0);
	CHECK(d == 2.5, "fp_result_unchanged", "%g", d);
	CHECK(s.fpret == 2.5, "exit_fp_retval", "%g", s.fpret);
	unregister_fprobe(&fp);
}

static void case_long_double_return(void)
{
	volatile long double x;
	int r;

	setup();
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_ld", NULL);
	x = t_ld(1.5L);
	CHECK(r == 0 && x == 4.5L, "long_double_preserved", "r %d %Lg", r, x);
	unregister_fprobe(&fp);
}

/* an entry handler returning non-zero skips that call's exit */
static void case_cancel(void)
{
	int r, i;

	setup();
	fp.entry_handler = h_cancel_odd;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_add", NULL);
	for (i = 0; i < 10; i++)
		t_add(i, 0);
	CHECK(r == 0 && s.entries == 10 && s.exits == 5, "cancel_exit", "r %d %ld %ld", r,
	      s.entries, s.exits);
	CHECK_EQ(fprobe_nmissed(&fp), 0, "cancel_is_not_missed");
	unregister_fprobe(&fp);
}

/* nmissed: recursion refused, both handlers skipped */
static void case_nmissed_recursion(void)
{
	int r;

	setup();
	fp.entry_handler = h_recurse;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_add", NULL);
	t_add(2, 3);
	CHECK(r == 0 && s.entries == 1 && s.exits == 1, "recursion_refused",
	      "r %d entries %ld exits %ld", r, s.entries, s.exits);
	CHECK_EQ(fprobe_nmissed(&fp), 1, "nmissed_recursion");
	unregister_fprobe(&fp);
}

/* nmissed: pool of 3 return hooks, recursion 6 deep; then it refills */
static void case_pool_exhausted(void)
{
	int r;

	setup();
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
}

/* the default pool: deep recursion is bounded by the shadow stack only */
static void case_deep_recursion(void)
{
	int r;

	setup();
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_rec", NULL);
	CHECK_EQ(t_rec(3000), 3000, "deep_result_unchanged");
	CHECK(r == 0 && s.entries == 3001 && s.exits == 3001, "deep_recursion_default_pool",
	      "r %d entries %ld exits %ld", r, s.entries, s.exits);
	CHECK_EQ(fprobe_nmissed(&fp), 0, "deep_recursion_no_miss");
	unregister_fprobe(&fp);
}

/* past the shadow stack: the deepest calls are missed, the rest balance */
static void case_deeper_than_shadow_stack(void)
{
	setup();
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	register_fprobe(&fp, "t_rec", NULL);
	CHECK_EQ(t_rec(9000), 9000, "deeper_result_unchanged");
	CHECK(s.entries == s.exits && s.entries + (long)fprobe_nmissed(&fp) == 9001,
	      "deeper_than_shadow_stack", "entries %ld exits %ld nmissed %lu", s.entries,
	      s.exits, fprobe_nmissed(&fp));
	unregister_fprobe(&fp);
}

static void case_glob_notfilter(void)
{
	int r;

	setup();
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
}

/* unregister while a call is in flight: its exit handler never runs */
static void case_unregister_in_flight(void)
{
	int r;

	setup();
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	unreg_me = &fp;
	r = register_fprobe(&fp, "t_unreg_inside", NULL);
	CHECK_EQ(t_unreg_inside(1), 2, "unreg_inflight_result");
	CHECK(r == 0 && s.entries == 1 && s.exits == 0, "unreg_inflight_no_exit",
	      "r %d %ld %ld", r, s.entries, s.exits);
}

/* a tail call: two hooked frames share one return slot */
static void case_tail_call(void)
{
	int r;

	setup();
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_[lt][ea][ai][fl]", NULL);
	CHECK_EQ(r, 0, "register_tail");
	CHECK_EQ(t_tail(2), 21, "tail_result");
	CHECK(s.entries == 2 && s.exits == 2, "tail_both_exits", "%ld %ld", s.entries, s.exits);
	CHECK_EQ(s.retval, 21, "tail_retval");
	unregister_fprobe(&fp);
}

/* two fprobes on one function, and a changed return value */
NOINLINE static void case_two_fprobes(void)
{
	struct fprobe fp2;
	int r;

	setup();
	memset(&fp2, 0, sizeof(fp2));
	fp.exit_handler = h_exit;
	fp2.exit_handler = h_exit_plus;
	r = register_fprobe(&fp, "t_caller", NULL);
	r |= register_fprobe(&fp2, "t_caller", NULL);
	CHECK_EQ(t_caller(1), 103, "two_fprobes_retval_changed");
	CHECK_EQ(s.exits, 2, "two_fprobes_exits");
	/* t_caller returns into this case, as it returned into main */
	CHECK(s.exit_ret_ip == (unsigned long)__builtin_return_address(0) ||
	      (s.exit_ret_ip > (unsigned long)case_two_fprobes &&
	       s.exit_ret_ip < (unsigned long)case_two_fprobes + 0x10000),
	      "two_fprobes_ret_ip", "%#lx", s.exit_ret_ip);
	unregister_fprobe(&fp2);
	unregister_fprobe(&fp);
}

/* backtrace() through hooked frames */
static void case_backtrace(void)
{
	void *plain[64];
	int plain_depth, r;

	setup();
	t_bt_run(1);
	plain_depth = bt_depth;
	memcpy(plain, bt_buf, sizeof(plain));
	fp.exit_handler = h_exit;
	r = register_fprobe(&fp, "t_bt*", NULL);
	t_bt_run(1);
	/* the frames up to t_bt_run's caller, which differs */
	CHECK(r == 0 && bt_depth == plain_depth && plain_depth > 3 &&
	      !memcmp(plain, bt_buf, 3 * sizeof(void *)),
	      "backtrace_unchanged", "r %d depth %d vs %d", r, bt_depth, plain_depth);
	unregister_fprobe(&fp);
}

/* __builtin_return_address() in a hooked frame, mapped back by rethook */
NOINLINE static void case_find_ret_addr(void)
{
	unsigned long ra;

	setup();
	fp.exit_handler = h_exit;
	register_fprobe(&fp, "t_retaddr", NULL);
	t_retaddr(1);
	ra = rethook_find_ret_addr((unsigned long)t_retaddr_seen);
	/* t_retaddr returns into this case, as it returned into main */
	CHECK(ra > (unsigned long)case_find_ret_addr &&
	      ra < (unsigned long)case_find_ret_addr + 0x10000,
	      "find_ret_addr", "%p -> %#lx", t_retaddr_seen, ra);
	unregister_fprobe(&fp);
}

/* ---- frames a jump leaves behind ---- */
static jmp_buf jmp_env;
static sigjmp_buf alt_env;

NOINLINE int t_jmp_inner(int x)
{
	__asm__ volatile("");
	if (x >= 0)
		longjmp(jmp_env, 1);
	return x;
}

NOINLINE int t_jmp_outer(int x)
{
	int r = t_jmp_inner(x);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE int t_alt_leaf(int x) { __asm__ volatile(""); return x + 1; }

static void on_alt_signal(int sig)
{
	t_alt_leaf(sig);
	siglongjmp(alt_env, 1);
}

/*
 * Hooked frames left by longjmp, and by siglongjmp out of a handler on
 * the signal stack, more of them than a shadow stack holds: each is found
 * gone (by the jump, or by the next hook below the frame jumped to), so
 * no call is missed and the probe's exits still run.
 */
static void case_jumped_out(void)
{
	const char *syms[] = { "t_jmp_inner", "t_jmp_outer", "t_alt_leaf", "t_add" };
	static char alt[64 << 10];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) }, old_ss;
	struct sigaction sa = { .sa_handler = on_alt_signal, .sa_flags = SA_ONSTACK }, old_sa;
	volatile int i;

	setup();
	fp.entry_handler = h_entry;
	fp.exit_handler = h_exit;
	CHECK_EQ(register_fprobe_syms(&fp, syms, 4), 0, "jumped_out_register");
	for (i = 0; i < 20000; i++)
		if (!setjmp(jmp_env))
			t_jmp_outer(i);
	CHECK_EQ(fprobe_nmissed(&fp), 0, "longjmp_nothing_missed");
	sigaltstack(&ss, &old_ss);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old_sa);
	for (i = 0; i < 20000; i++)
		if (!sigsetjmp(alt_env, 1))
			raise(SIGUSR1);
	sigaction(SIGUSR1, &old_sa, NULL);
	sigaltstack(&old_ss, NULL);
	CHECK_EQ(fprobe_nmissed(&fp), 0, "siglongjmp_from_altstack_nothing_missed");
	reset();
	CHECK_EQ(t_add(2, 3), 5, "jumped_out_result");
	CHECK(s.entries == 1 && s.exits == 1, "jumped_out_exits_still_run",
	      "%ld entries, %ld exits", s.entries, s.exits);
	unregister_fprobe(&fp);
}

static const struct check_case cases[] = {
	CHECK_CASE(unknown_symbols),
	CHECK_CASE(entry_exit),
	CHECK_CASE(register_twice),
	CHECK_CASE(disable_enable),
	CHECK_CASE(unregister),
	CHECK_CASE(fp_return),
	CHECK_CASE(long_double_return),
	CHECK_CASE(cancel),
	CHECK_CASE(nmissed_recursion),
	CHECK_CASE(pool_exhausted),
	CHECK_CASE(deep_recursion),
	CHECK_CASE(deeper_than_shadow_stack),
	CHECK_CASE(glob_notfilter),
	CHECK_CASE(unregister_in_flight),
	CHECK_CASE(tail_call),
	CHECK_CASE(two_fprobes),
	CHECK_CASE(backtrace),
	CHECK_CASE(find_ret_addr),
	CHECK_CASE(jumped_out),
};

int main(void)
{
	return check_run_cases(cases);
}
