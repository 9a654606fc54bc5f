// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The frameless graph paths: an fprobe whose handlers the assembler front
 * end proves (built with `fhook cflags`' -B) is entered and returned
 * through with no frame and no ftrace_regs.  What they must keep: the
 * traced function's arguments and its return values in %rax:%rdx, %xmm0
 * and on the x87 stack, with handlers that clobber every general register
 * they may; the entry data reaching the exit; a declined return hook
 * undone; a disabled probe calling nothing; a tail call from a hooked
 * function taking the C path; unregister_fprobe() returning only once no
 * handler can run (four threads in a tight loop); and no kprobe inside a
 * handler that a frameless path calls.  Which paths are bound is asked
 * of fhook_fprobe_frameless(): a handler that reads of its fregs more
 * than the frameless path gives (the arguments on entry, the return
 * values on return), calls a function or is not proven keeps its frame,
 * and a probe with a pool takes C.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>
#include <fhook/kprobes.h>

#include "../check.h"
#include "race.h"
#include "../argregs.h"

/* no site of its own, nothing a sanitizer adds: proven at build time */
#define NOTRACE __attribute__((noinline, patchable_function_entry(0, 0), \
			       no_sanitize("address", "thread", "undefined")))

#ifdef __SANITIZE_THREAD__
#define BOTH 0		/* ThreadSanitizer's builds of libfhook take the C path */
#define ENTRY_ONLY 0
#define EXIT_ONLY 0
#else
#define BOTH (FHOOK_FPROBE_FRAMELESS_ENTRY | FHOOK_FPROBE_FRAMELESS_EXIT)
#define ENTRY_ONLY FHOOK_FPROBE_FRAMELESS_ENTRY
#define EXIT_ONLY FHOOK_FPROBE_FRAMELESS_EXIT
#endif

static long entries, exits, after_unregister, declines, decline_now;
static unsigned long last_ip, last_ret, data_seen;

/* every general register a handler may use (%rcx once written: not as its fregs) */
#define CLOBBER()								\
	__asm__ volatile("movq $-1, %%rax\n\tmovq $-1, %%rdx\n\tmovq $-1, %%rsi\n\t"	\
			 "movq $-1, %%rdi\n\tmovq $-1, %%r8\n\tmovq $-1, %%r9\n\t"	\
			 "movq $-1, %%r10\n\tmovq $-1, %%r11\n\tmovq $-1, %%rcx"		\
			 ::: "rax", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "rcx")

NOTRACE static int lean_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	long n = __atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);

	if (!__atomic_load_n(&race_alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&after_unregister, 1, __ATOMIC_RELAXED);
	last_ip = ip;
	last_ret = ret_ip;
	if (data)
		*(unsigned long *)data = ip ^ 0x5a5a;
	(void)n;
	if (decline_now) {
		declines++;
		return 1;
	}
	CLOBBER();
	return 0;
}

NOTRACE static void lean_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	__atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&race_alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&after_unregister, 1, __ATOMIC_RELAXED);
	if (data)
		data_seen = *(unsigned long *)data ^ ip;
	CLOBBER();
}

/*
 * Arguments and return values read through fregs: proven, and given
 * them by the frameless paths (the argument registers on entry, %rax and
 * %rdx on return), with and without entry data
 */
/* volatile: stores GCC would otherwise merge into vector ones */
static volatile unsigned long args_seen[6], ret_seen[2];

/*
 * The accessors, inlined; but GCC does not inline an instrumented inline
 * function into a handler that is not (no_sanitize), and a call is never
 * proven: sanitized builds read the fields themselves
 */
#ifdef __SANITIZE_ADDRESS__
#define FREGS_ARG(fregs, n, reg)	((fregs)->regs.reg)
#else
#define FREGS_ARG(fregs, n, reg)	ftrace_regs_get_argument(fregs, n)
#endif

NOTRACE static int args_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	args_seen[0] = FREGS_ARG(fregs, 0, di);
	args_seen[1] = FREGS_ARG(fregs, 1, si);
	args_seen[2] = FREGS_ARG(fregs, 2, dx);
	args_seen[3] = FREGS_ARG(fregs, 3, cx);
	args_seen[4] = FREGS_ARG(fregs, 4, r8);
	args_seen[5] = FREGS_ARG(fregs, 5, r9);
	__atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
	if (data)
		*(unsigned long *)data = args_seen[5] * 7;
	CLOBBER();
	return 0;
}

NOTRACE static void ret_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			     struct ftrace_regs *fregs, void *data)
{
#ifdef __SANITIZE_ADDRESS__
	ret_seen[0] = fregs->regs.ax;
#else
	ret_seen[0] = ftrace_regs_get_return_value(fregs);
#endif
	ret_seen[1] = fregs->regs.dx;
	if (data)
		data_seen = *(unsigned long *)data;
	__atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED);
	CLOBBER();
}

/* not proven for a frameless return: reads its fregs' ip, which that has not */
NOTRACE static void regs_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	if (ftrace_regs_get_instruction_pointer(fregs) == ret_ip)
		__atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED);
}

/* not proven: calls a function */
static NOINLINE void count(void)
{
	__atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
}

NOTRACE static int calling_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
				 struct ftrace_regs *fregs, void *data)
{
	count();
	return 0;
}

/* ---- the traced functions ---- */

/* each with an empty asm: not pure, every call is made */
NOINLINE double fp_traced(double a, double b, double c, double d, double e, double f,
			  double g, double h)
{
	__asm__ volatile("" ::: "memory");
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

NOINLINE long double ld_traced(long double x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3;
}

NOINLINE _Complex long double cld_traced(long double x)
{
	__asm__ volatile("" ::: "memory");
	return x + 2.5iL * x;
}

struct pair {
	long a, b;
};

NOINLINE struct pair pair_traced(long a, long b, long c, long d, long e, long f, long g)
{
	struct pair p = { a + 2 * b + 3 * c + 4 * d, 5 * e + 6 * f + 7 * g };

	__asm__ volatile("" ::: "memory");
	return p;
}

static void reset(void)
{
	entries = exits = after_unregister = declines = decline_now = 0;
	data_seen = 0;
	__atomic_store_n(&race_alive, 1, __ATOMIC_RELEASE);
}

/* ---- which paths are bound ---- */

static void check_frameless(struct fprobe *fp, int expected, const char *name)
{
	int got = fhook_fprobe_frameless(fp);

	CHECK(got == expected, name, "%d, expected %d", got, expected);
}

static void case_bound(void)
{
	struct fprobe both = { .entry_handler = lean_entry, .exit_handler = lean_exit };
	struct fprobe entry_only = { .entry_handler = lean_entry };
	struct fprobe regs = { .entry_handler = lean_entry, .exit_handler = regs_exit };
	struct fprobe calling = { .entry_handler = calling_entry, .exit_handler = lean_exit };
	struct fprobe pool = { .entry_handler = lean_entry, .exit_handler = lean_exit,
			       .nr_maxactive = 64 };
	struct {
		struct fprobe *fp;
		int expected;
		const char *name;
	} t[] = {
		{ &both, BOTH, "bound_both" },
		{ &entry_only, ENTRY_ONLY, "bound_entry_only" },
		{ &regs, ENTRY_ONLY, "bound_exit_reads_fregs" },
		{ &calling, EXIT_ONLY, "bound_entry_calls" },
		{ &pool, 0, "bound_pool" },
	};
	const char *sym = "traced";
	unsigned int i;

	CHECK_EQ(fhook_fprobe_frameless(&both), -EINVAL, "bound_unregistered");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char n[64];

		reset();
		snprintf(n, sizeof(n), "%s_register", t[i].name);
		CHECK_EQ(register_fprobe_syms(t[i].fp, &sym, 1), 0, n);
		check_frameless(t[i].fp, t[i].expected, t[i].name);
		snprintf(n, sizeof(n), "%s_calls", t[i].name);
		CHECK(traced(41) == 42 && traced(1) == 2 && entries == 2 &&
		      exits == (t[i].fp->exit_handler ? 2 : 0), n, "%ld entries, %ld exits",
		      entries, exits);
		unregister_fprobe(t[i].fp);
	}
}

/* ---- arguments and return values through both paths ---- */

static void case_values(void)
{
	struct fprobe fp = { .entry_handler = lean_entry, .exit_handler = lean_exit };
	const char *syms[] = { "fp_traced", "ld_traced", "cld_traced", "pair_traced" };
	volatile double h = 8.5;	/* each call made, not folded */
	volatile long g = 7;
	_Complex long double c;
	struct pair p;
	long double l;
	double r;
	int i;

	reset();
	CHECK_EQ(register_fprobe_syms(&fp, syms, 4), 0, "values_register");
	check_frameless(&fp, BOTH, "values_frameless");
	for (i = 0; i < 3; i++) {
		r = fp_traced(1, 2, 3, 4, 5, 6, 7, h);
		l = ld_traced(1.25L);
		c = cld_traced(2.0L);
		p = pair_traced(1, 2, 3, 4, 5, 6, g);
	}
	CHECK(r == 208.0, "values_xmm_args_and_return", "%g, expected 208", r);
	CHECK(l == 3.75L, "values_long_double_return", "%Lg, expected 3.75", l);
	CHECK(__real__ c == 2.0L && __imag__ c == 5.0L, "values_complex_long_double_return",
	      "%Lg%+Lgi, expected 2+5i", __real__ c, __imag__ c);
	CHECK(p.a == 30 && p.b == 110, "values_rax_rdx_return", "{%ld, %ld}, expected {30, 110}",
	      p.a, p.b);
	CHECK(entries == 12 && exits == 12, "values_handlers_ran", "%ld entries, %ld exits",
	      entries, exits);
	CHECK(last_ip == (unsigned long)pair_traced, "values_entry_ip", "%#lx, expected %#lx",
	      last_ip, (unsigned long)pair_traced);
	unregister_fprobe(&fp);
}

/* ---- handlers that read their fregs ---- */

static void case_fregs(void)
{
	struct fprobe plain = { .entry_handler = args_entry, .exit_handler = ret_exit };
	struct fprobe data = { .entry_handler = args_entry, .exit_handler = ret_exit,
			       .entry_data_size = 8 };
	struct fprobe entry_only = { .entry_handler = args_entry };
	struct {
		struct fprobe *fp;
		int expected;
		const char *name;
	} t[] = {
		{ &plain, BOTH, "fregs" },
		{ &data, BOTH, "fregs_data" },
		{ &entry_only, ENTRY_ONLY, "fregs_entry_only" },
	};
	const char *sym = "pair_traced";
	volatile long g = 7;
	unsigned int i, k;
	struct pair p;
	char n[64];

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		reset();
		for (k = 0; k < 6; k++)
			args_seen[k] = 0;
		ret_seen[0] = ret_seen[1] = 0;
		snprintf(n, sizeof(n), "%s_register", t[i].name);
		CHECK_EQ(register_fprobe_syms(t[i].fp, &sym, 1), 0, n);
		check_frameless(t[i].fp, t[i].expected, t[i].name);
		for (k = 0; k < 3; k++)
			p = pair_traced(1, 2, 3, 4, 5, 6, g);
		snprintf(n, sizeof(n), "%s_values_intact", t[i].name);
		CHECK(p.a == 30 && p.b == 110, n, "{%ld, %ld}, expected {30, 110}", p.a, p.b);
		snprintf(n, sizeof(n), "%s_arguments", t[i].name);
		CHECK(args_seen[0] == 1 && args_seen[1] == 2 && args_seen[2] == 3 &&
		      args_seen[3] == 4 && args_seen[4] == 5 && args_seen[5] == 6, n,
		      "%lu %lu %lu %lu %lu %lu, expected 1 2 3 4 5 6", args_seen[0], args_seen[1],
		      args_seen[2], args_seen[3], args_seen[4], args_seen[5]);
		snprintf(n, sizeof(n), "%s_return_values", t[i].name);
		if (t[i].fp->exit_handler)
			CHECK(ret_seen[0] == 30 && ret_seen[1] == 110 && exits == 3, n,
			      "%lu:%lu, %ld exits, expected 30:110, 3", ret_seen[0], ret_seen[1],
			      exits);
		else
			CHECK(entries == 3 && exits == 0, n, "%ld entries, %ld exits", entries,
			      exits);
		if (t[i].fp->entry_data_size)
			CHECK_EQ(data_seen, 42, "fregs_data_reaches_exit");
		unregister_fprobe(t[i].fp);
	}
}

/* ---- entry data, declined returns, disabled, tail calls ---- */

static void case_data_declined_disabled(void)
{
	struct fprobe fp = { .entry_handler = lean_entry, .exit_handler = lean_exit,
			     .entry_data_size = 16 };
	unsigned long addrs[2] = { (unsigned long)traced, (unsigned long)outer };
	int i, sum = 0;

	reset();
	CHECK_EQ(register_fprobe_ips(&fp, addrs, 1), 0, "data_register");
	check_frameless(&fp, BOTH, "data_frameless");
	CHECK_EQ(traced(6), 7, "data_result");
	CHECK_EQ(data_seen, 0x5a5a, "data_reaches_exit");
	for (i = 0; i < 9; i++) {
		decline_now = i % 3 == 2;
		sum += traced(i);
	}
	CHECK_EQ(sum, 45, "declined_results");
	CHECK(entries == 10 && exits == 7 && declines == 3, "declined_no_exit",
	      "%ld entries, %ld exits, %ld declined", entries, exits, declines);
	decline_now = 0;
	disable_fprobe(&fp);
	traced(2);
	CHECK(entries == 10 && exits == 7, "disabled_calls_nothing", "%ld entries, %ld exits",
	      entries, exits);
	enable_fprobe(&fp);
	traced(2);
	CHECK(entries == 11 && exits == 8, "enabled_again", "%ld entries, %ld exits", entries,
	      exits);
	unregister_fprobe(&fp);

	/* the tail call's entry is C's, its return and the outer one frameless */
	reset();
	CHECK_EQ(register_fprobe_ips(&fp, addrs, 2), 0, "tail_register");
	for (i = 0; i < 5; i++)
		sum = outer(i);
	CHECK_EQ(sum, 6, "tail_result");
	CHECK(entries == 10 && exits == 10, "tail_handlers_ran", "%ld entries, %ld exits",
	      entries, exits);
	unregister_fprobe(&fp);
}

/*
 * ---- sites whose functions read few argument registers ----
 *
 * Their frameless entries save only %rdi and %rsi, or those and %rdx
 * (read, or returned as a pair's second half unless written): each
 * function below reads what its name says, the handler clobbers every
 * register, and each result needs every argument it reads (argregs.h,
 * and those below).  Which trampoline a site reaches: site_tramp().
 */
NOINLINE long a1b_traced(long a)
{
	__asm__ volatile("" ::: "memory");
	return a * 5 + 2;
}

/* the third argument read on one path only */
NOINLINE long a3_branch_traced(long a, long b, long c)
{
	__asm__ volatile("" ::: "memory");
	if (a > 0)
		return a + c;
	return b;
}

NOINLINE long a6_traced(long a, long b, long c, long d, long e, long f)
{
	__asm__ volatile("" ::: "memory");
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}

static void arg_classes_run(struct fprobe *fp, const char *what)
{
	const char *syms[] = { "a0_traced", "a1_traced", "a1b_traced", "a2_traced", "a3_traced",
			       "a3_branch_traced", "a2_dx_traced", "pass_traced", "a4_traced",
			       "a6_traced", "ms_traced", "outer" };
	long r[11] = { 0 };
	struct lv_pair p = { 0, 0 };
	int i, ms_kept = 0;
	char n[64];

	reset();
	snprintf(n, sizeof(n), "%s_register", what);
	CHECK_EQ(register_fprobe_syms(fp, syms, 12), 0, n);
	for (i = 0; i < 3; i++) {
		r[0] = a0_traced();
		r[1] = a1_traced(4);
		r[2] = a1b_traced(4);
		r[3] = a2_traced(9, 4);
		r[4] = a3_traced(3, 5, 7);
		r[5] = a3_branch_traced(2, 100, 40);
		r[6] = a3_branch_traced(-2, 100, 40);
		r[7] = a4_traced(1, 2, 3, 4);
		r[8] = a6_traced(1, 1, 1, 1, 1, 1);
		r[9] = a2_dx_traced(20, 3);
		p = pass_traced(8, 9, 10);
		ms_kept += ms_call();
		r[10] = outer(4);
	}
	snprintf(n, sizeof(n), "%s_results", what);
	CHECK(r[0] == 11 && r[1] == 13 && r[2] == 22 && r[3] == 5 && r[4] == 22 && r[5] == 42 &&
	      r[6] == 100 && r[7] == 3 && r[8] == 21 && r[9] == 43 && r[10] == 6, n,
	      "%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld, expected 11 13 22 5 22 42 100 3 21 43 6",
	      r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10]);
	snprintf(n, sizeof(n), "%s_rdx_returned", what);
	CHECK(p.a == 8 && p.b == 10, n, "{%ld, %ld}, expected {8, 10}", p.a, p.b);
	snprintf(n, sizeof(n), "%s_ms_abi_rsi_rdi_kept", what);
	if (!fp->exit_handler)
		CHECK_EQ(ms_kept, 3, n);
	snprintf(n, sizeof(n), "%s_handlers_ran", what);
	CHECK(entries == 39 && exits == (fp->exit_handler ? 39 : 0), n, "%ld entries, %ld exits",
	      entries, exits);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	{
		/* (sanitized functions call the sanitizer: they save everything) */
		unsigned long t0 = site_tramp(a0_traced), t1 = site_tramp(a1_traced),
			      t1b = site_tramp(a1b_traced), t2 = site_tramp(a2_traced),
			      t3 = site_tramp(a3_traced), t3b = site_tramp(a3_branch_traced),
			      tdx = site_tramp(a2_dx_traced), tp = site_tramp(pass_traced),
			      t4 = site_tramp(a4_traced), t6 = site_tramp(a6_traced);

		snprintf(n, sizeof(n), "%s_one_entry_per_class", what);
		CHECK(t1 && t0 == t1 && t1 == t1b && t1 == t2 && t2 == t3 && t3 == t3b && t3 == tp &&
		      t4 == t6, n, "%#lx %#lx %#lx %#lx %#lx %#lx %#lx, %#lx %#lx", t0, t1, t1b, t2,
		      t3, t3b, tp, t4, t6);
		snprintf(n, sizeof(n), "%s_classes_differ", what);
		CHECK(tdx && tdx != t1 && t1 != t4 && tdx != t4 && site_tramp(ms_traced) == tdx, n,
		      "%#lx %#lx %#lx %#lx", tdx, t1, t4, site_tramp(ms_traced));
		/* outer() tail-jumps to traced()'s site: a call, all saved */
		snprintf(n, sizeof(n), "%s_jump_to_site_saves_all", what);
		CHECK(site_tramp(outer) == t4, n, "%#lx, expected %#lx", site_tramp(outer), t4);
	}
#endif
	unregister_fprobe(fp);
}

static void case_arg_classes(void)
{
	struct fprobe both = { .entry_handler = lean_entry, .exit_handler = lean_exit };
	struct fprobe entry_only = { .entry_handler = lean_entry };
	struct fprobe data = { .entry_handler = lean_entry, .exit_handler = lean_exit,
			       .entry_data_size = 8 };

	arg_classes_run(&both, "classes_both");
	arg_classes_run(&entry_only, "classes_entry_only");
	arg_classes_run(&data, "classes_data");
	CHECK_EQ(data_seen, 0x5a5a, "classes_data_reaches_exit");
}

/* ---- unregister under calling threads ---- */

static int race_frameless = BOTH;

static void race_setup(struct fprobe *fp)
{
	fp->entry_handler = lean_entry;
	fp->exit_handler = lean_exit;
	fp->entry_data_size = sizeof(long);
}

static void race_registered(struct fprobe *fp)
{
	if (fhook_fprobe_frameless(fp) != BOTH)
		race_frameless = fhook_fprobe_frameless(fp);
}

static void case_unregister_race(void)
{
	static struct fprobe fp;
	int cycles;

	reset();
	cycles = race_run(&fp, race_setup, race_registered);
	CHECK(cycles >= 0, "race_cycles_succeed", "a register or unregister failed");
	CHECK_EQ(race_frameless, BOTH, "race_frameless");
	CHECK(cycles >= 20, "race_cycles_enough", "%d cycles", cycles);
	CHECK(entries > 0 && exits > 0, "race_handlers_ran", "%ld entries, %ld exits", entries,
	      exits);
	CHECK(exits <= entries, "race_no_exit_without_entry", "%ld entries, %ld exits", entries,
	      exits);
	CHECK_EQ(after_unregister, 0, "race_no_handler_after_unregister");
	printf("# %d cycles, %ld entries, %ld exits\n", cycles, entries, exits);
}

/*
 * A kprobe inside a handler a frameless path calls could send it to code
 * that needs a frame: refused while the probe is registered, placed once
 * it is not, and the handler is not proven again.
 */
NOTRACE static void kp_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			    struct ftrace_regs *fregs, void *data)
{
	__atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED);
}

static void case_kprobe_on_handler(void)
{
	struct fprobe fp = { .entry_handler = lean_entry, .exit_handler = kp_exit };
	struct kprobe kp_in_exit = { .addr = (kprobe_opcode_t *)kp_exit };
	struct kprobe kp_in_entry = { .addr = (kprobe_opcode_t *)lean_entry };
	const char *sym = "traced";

	reset();
	CHECK_EQ(register_fprobe_syms(&fp, &sym, 1), 0, "kprobed_register");
	check_frameless(&fp, BOTH, "kprobed_frameless");
	CHECK_EQ(register_kprobe(&kp_in_exit), -EBUSY, "kprobed_exit_refused");
	CHECK_EQ(register_kprobe(&kp_in_entry), -EBUSY, "kprobed_entry_refused");
	CHECK(traced(1) == 2 && entries == 1 && exits == 1, "kprobed_refused_unchanged",
	      "%ld entries, %ld exits", entries, exits);
	unregister_fprobe(&fp);
	memset(&kp_in_exit, 0, sizeof(kp_in_exit));
	kp_in_exit.addr = (kprobe_opcode_t *)kp_exit;
	CHECK_EQ(register_kprobe(&kp_in_exit), 0, "kprobed_placed");
	reset();
	CHECK_EQ(register_fprobe_syms(&fp, &sym, 1), 0, "kprobed_register_again");
	check_frameless(&fp, ENTRY_ONLY, "kprobed_exit_keeps_frame");
	CHECK(traced(1) == 2 && entries == 1 && exits == 1, "kprobed_calls",
	      "%ld entries, %ld exits", entries, exits);
	unregister_fprobe(&fp);
	unregister_kprobe(&kp_in_exit);
}

/* ---- a full shadow stack: exactly its entries hooked, the deeper calls missed ---- */

#define SHADOW_ENTRIES	8191	/* lib/arch/shadow.h: SHADOW_DEPTH lines, line 0 none's */
#define FULL_DEPTH	9000

NOINLINE long deep_traced(long n)
{
	long r = n ? deep_traced(n - 1) + 1 : 0;

	__asm__ volatile("" ::: "memory");	/* no tail call: a frame each */
	return r;
}

static void *full_thread(void *arg)
{
	return (void *)deep_traced((long)arg);
}

static void full_run(struct fprobe *fp, const char *what)
{
	const char *sym = "deep_traced";
	pthread_t t;
	void *r = NULL;
	char n[64];

	reset();
	snprintf(n, sizeof(n), "full_%s_register", what);
	CHECK_EQ(register_fprobe_syms(fp, &sym, 1), 0, n);
	snprintf(n, sizeof(n), "full_%s_frameless", what);
	check_frameless(fp, BOTH, n);
	/* a thread of its own: its shadow stack holds nothing else */
	snprintf(n, sizeof(n), "full_%s_result", what);
	CHECK(!pthread_create(&t, NULL, full_thread, (void *)(long)FULL_DEPTH) &&
	      !pthread_join(t, &r) && (long)r == FULL_DEPTH, n, "%ld", (long)r);
	snprintf(n, sizeof(n), "full_%s_exact", what);
	CHECK(entries == SHADOW_ENTRIES && exits == SHADOW_ENTRIES &&
	      entries + (long)fprobe_nmissed(fp) == FULL_DEPTH + 1, n,
	      "%ld entries, %ld exits, %lu missed", entries, exits, fprobe_nmissed(fp));
	snprintf(n, sizeof(n), "full_%s_data", what);
	CHECK(!fp->entry_data_size || data_seen == 0x5a5a, n, "%#lx", data_seen);
	unregister_fprobe(fp);
	/* and room again */
	reset();
	snprintf(n, sizeof(n), "full_%s_register_again", what);
	CHECK_EQ(register_fprobe_syms(fp, &sym, 1), 0, n);
	snprintf(n, sizeof(n), "full_%s_again", what);
	CHECK(deep_traced(10) == 10 && entries == 11 && exits == 11, n,
	      "%ld entries, %ld exits", entries, exits);
	unregister_fprobe(fp);
}

static void case_full_stack(void)
{
	struct fprobe plain = { .entry_handler = lean_entry, .exit_handler = lean_exit };
	struct fprobe data = { .entry_handler = lean_entry, .exit_handler = lean_exit,
			       .entry_data_size = sizeof(unsigned long) };

	full_run(&plain, "plain");
	full_run(&data, "data");
}

/*
 * ---- the copies: the entry and the return of a probe that hooks returns
 * go through generated copies (no object holds them), unless FHOOK_GEN=0
 */

NOINLINE unsigned long where_traced(void)
{
	unsigned long r = (unsigned long)__builtin_return_address(0);

	__asm__ volatile("" ::: "memory");
	return r;
}

/* in no loaded object: generated */
static bool generated(unsigned long addr)
{
	Dl_info info;

	return addr && !dladdr((void *)addr, &info);
}

static void case_copies(void)
{
	struct fprobe fp = { .entry_handler = lean_entry, .exit_handler = lean_exit };
	const char *e = getenv("FHOOK_GEN");
	bool gen = BOTH && !(e && !strcmp(e, "0"));
	const char *sym = "where_traced";
	unsigned long stub, target;

	reset();
	CHECK_EQ(register_fprobe_syms(&fp, &sym, 1), 0, "copies_register");
	check_frameless(&fp, BOTH, "copies_frameless");
	CHECK(generated(site_tramp(where_traced)) == gen, "copies_entry",
	      "the site's trampoline %#lx, generated: expected %d", site_tramp(where_traced), gen);
	/* the return address in the slot is the entry's line's stub: "jmp *8(stub)" */
	where_traced();		/* the thread's first call may take C, which knows it from then on */
	stub = where_traced();
	memcpy(&target, (void *)(stub + 8), sizeof(target));
	CHECK(!BOTH || generated(target) == gen, "copies_return",
	      "the stub %#lx goes to %#lx, generated: expected %d", stub, target, gen);
	CHECK(entries == 2 && exits == 2, "copies_calls", "%ld entries, %ld exits",
	      entries, exits);
	unregister_fprobe(&fp);
}

/*
 * ---- bare: handlers that read none of their arguments (counters) are
 * called with nothing loaded, and their entries return through the
 * line's third stub, when copies are made
 */

NOTRACE static int bare_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	__atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&race_alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&after_unregister, 1, __ATOMIC_RELAXED);
	CLOBBER();
	return 0;
}

NOTRACE static void bare_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	__atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&race_alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&after_unregister, 1, __ATOMIC_RELAXED);
	CLOBBER();
}

#define SHADOW_BARE_STUB	32	/* lib/arch/shadow.h */

static void case_bare(void)
{
	struct fprobe fp = { .entry_handler = bare_entry, .exit_handler = bare_exit };
	struct fprobe reads = { .entry_handler = bare_entry, .exit_handler = lean_exit };
	const char *syms[] = { "where_traced", "pair_traced", "traced" };
	const char *e = getenv("FHOOK_GEN");
	bool gen = BOTH && !(e && !strcmp(e, "0"));
	struct pair p;
	unsigned long stub;

	reset();
	CHECK_EQ(register_fprobe_syms(&fp, syms, 3), 0, "bare_register");
	check_frameless(&fp, BOTH, "bare_frameless");
	where_traced();		/* the thread's first call may take C, which knows it from then on */
	stub = where_traced();
	CHECK(!BOTH || ((stub & 63) == SHADOW_BARE_STUB) == gen, "bare_stub",
	      "returns through %#lx, bare: expected %d", stub, gen);
	p = pair_traced(1, 2, 3, 4, 5, 6, 7);
	CHECK(p.a == 1 + 4 + 9 + 16 && p.b == 25 + 36 + 49, "bare_values", "%ld %ld", p.a, p.b);
	CHECK(traced(41) == 42, "bare_traced", "");
	CHECK(entries == 4 && exits == 4, "bare_calls", "%ld entries, %ld exits", entries, exits);
	disable_fprobe(&fp);
	CHECK(traced(1) == 2 && entries == 4 && exits == 4, "bare_disabled",
	      "%ld entries, %ld exits", entries, exits);
	enable_fprobe(&fp);
	unregister_fprobe(&fp);

	/* an exit handler that reads its arguments: not bare */
	reset();
	CHECK_EQ(register_fprobe_syms(&reads, syms, 1), 0, "bare_not_register");
	stub = where_traced();
	CHECK((stub & 63) == 0, "bare_not_stub", "returns through %#lx", stub);
	CHECK(entries == 1 && exits == 1, "bare_not_calls", "%ld entries, %ld exits",
	      entries, exits);
	unregister_fprobe(&reads);
}

static void case_bare_full_stack(void)
{
	struct fprobe fp = { .entry_handler = bare_entry, .exit_handler = bare_exit };

	full_run(&fp, "bare");
}

static void bare_race_setup(struct fprobe *fp)
{
	fp->entry_handler = bare_entry;
	fp->exit_handler = bare_exit;
}

/* the same unregister race, with the bare paths (and their return) */
static void case_bare_unregister_race(void)
{
	static struct fprobe fp;
	int cycles;

	reset();
	race_frameless = BOTH;
	cycles = race_run(&fp, bare_race_setup, race_registered);
	CHECK(cycles >= 0, "bare_race_cycles_succeed", "a register or unregister failed");
	CHECK_EQ(race_frameless, BOTH, "bare_race_frameless");
	CHECK(cycles >= 20, "bare_race_cycles_enough", "%d cycles", cycles);
	CHECK(entries > 0 && exits > 0 && exits <= entries, "bare_race_handlers_ran",
	      "%ld entries, %ld exits", entries, exits);
	CHECK_EQ(after_unregister, 0, "bare_race_no_handler_after_unregister");
	printf("# %d cycles, %ld entries, %ld exits\n", cycles, entries, exits);
}

static const struct check_case cases[] = {
	CHECK_CASE(bound),
	CHECK_CASE(values),
	CHECK_CASE(data_declined_disabled),
	CHECK_CASE(fregs),
	CHECK_CASE(arg_classes),
	CHECK_CASE(unregister_race),
	CHECK_CASE(kprobe_on_handler),
	CHECK_CASE(full_stack),
	CHECK_CASE(copies),
	CHECK_CASE(bare),
	CHECK_CASE(bare_full_stack),
	CHECK_CASE(bare_unregister_race),
};

int main(void)
{
	return check_run_cases(cases);
}
