// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kretprobes on functions probed by each method (site, jump, trap): the
 * entry and return handlers, the per-call data, the return value seen and
 * changed, maxactive and nmissed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <fhook/kprobes.h>

#include "../check.h"

int kp_push(int), kp_two(int), kp_rec(int), kp_helper(int);

/* how a probe that is no site is placed: aarch64 places no jump */
#ifdef __aarch64__
#define KP_NOSITE_METHOD	KPROBE_METHOD_TRAP
#else
#define KP_NOSITE_METHOD	KPROBE_METHOD_JUMP
#endif

static long entries, returns;
static long last_ret, last_arg;

NOINLINE int kr_c_func(int x)
{
	__asm__ __volatile__("");
	return x * 5;
}

struct call_data {
	long arg;
};

static int on_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *d = (struct call_data *)ri->data;

	entries++;
	d->arg = (long)regs_get_kernel_argument(regs, 0);
	return 0;
}

static int on_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *d = (struct call_data *)ri->data;

	returns++;
	last_ret = (long)regs_return_value(regs);
	last_arg = d->arg;
	return 0;
}

static int on_return_change(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	regs_set_return_value(regs, 1234);
	return 0;
}

static void ret_one(const char *name, int (*f)(int), int mult, enum kprobe_method method)
{
	struct kretprobe rp = { .kp.symbol_name = name, .entry_handler = on_entry,
				.handler = on_return, .data_size = sizeof(struct call_data) };
	char t[128];
	int ret, r;

	entries = returns = last_ret = last_arg = 0;
	ret = register_kretprobe(&rp);
	snprintf(t, sizeof(t), "%s_ret_registered", name);
	CHECK(ret == 0, t, "%d", ret);
	if (ret)
		return;
	snprintf(t, sizeof(t), "%s_ret_method_%s", name, kprobe_method_name(method));
	CHECK(kprobe_method(&rp.kp, NULL, 0) == method, t, "got %s",
	      kprobe_method_name(kprobe_method(&rp.kp, NULL, 0)));
	r = f(4);
	snprintf(t, sizeof(t), "%s_ret_result", name);
	CHECK_EQ(r, 4 * mult + (mult == 1 ? 2 : 0), t);
	snprintf(t, sizeof(t), "%s_ret_counts", name);
	CHECK(entries == 1 && returns == 1, t, "%ld entries, %ld returns", entries, returns);
	snprintf(t, sizeof(t), "%s_ret_value_and_data", name);
	CHECK(last_ret == r && last_arg == 4, t, "ret %ld, arg %ld", last_ret, last_arg);
	unregister_kretprobe(&rp);
	f(4);
	snprintf(t, sizeof(t), "%s_ret_after", name);
	CHECK(entries == 1 && returns == 1, t, "%ld entries, %ld returns", entries, returns);
}

static void case_site(void) { ret_one("kr_c_func", kr_c_func, 5, KPROBE_METHOD_SITE); }
static void case_jump(void) { ret_one("kp_push", kp_push, 1, KP_NOSITE_METHOD); }

static void case_trap(void)
{
	struct kretprobe rp = { .kp.symbol_name = "kp_two", .handler = on_return };

	returns = 0;
	CHECK(register_kretprobe(&rp) == 0, "trap_ret_registered", "");
	CHECK(kprobe_method(&rp.kp, NULL, 0) == KPROBE_METHOD_TRAP, "trap_ret_method", "");
	CHECK(kp_two(9) == 9 && returns == 1 && last_ret == 9, "trap_ret_value", "returns %ld",
	      returns);
	unregister_kretprobe(&rp);
}

static void case_change_return(void)
{
	struct kretprobe rp = { .kp.symbol_name = "kp_helper", .handler = on_return_change };

	CHECK(register_kretprobe(&rp) == 0, "change_registered", "");
	CHECK_EQ(kp_helper(2), 1234, "change_return_value");
	unregister_kretprobe(&rp);
	CHECK_EQ(kp_helper(2), 6, "change_after");
}

/* maxactive 1 on a recursion 4 deep: the outermost call only, 3 missed */
static void case_maxactive(void)
{
	struct kretprobe rp = { .kp.symbol_name = "kp_rec", .handler = on_return,
				.entry_handler = on_entry, .maxactive = 1,
				.data_size = sizeof(struct call_data) };

	entries = returns = 0;
	CHECK(register_kretprobe(&rp) == 0, "maxactive_registered", "");
	CHECK_EQ(kp_rec(3), 3, "maxactive_result");
	CHECK(entries == 1 && returns == 1 && rp.nmissed == 3, "maxactive_nmissed",
	      "%ld entries, %ld returns, nmissed %d", entries, returns, rp.nmissed);
	CHECK(last_ret == 3 && last_arg == 3, "maxactive_outermost", "ret %ld arg %ld",
	      last_ret, last_arg);
	unregister_kretprobe(&rp);
}

static int skip_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	entries++;
	return 1;
}

/* an entry_handler that returns non-zero: no return handler for that call */
static void case_entry_refuses(void)
{
	struct kretprobe rp = { .kp.symbol_name = "kp_push", .handler = on_return,
				.entry_handler = skip_entry };

	entries = returns = 0;
	CHECK(register_kretprobe(&rp) == 0, "refuse_registered", "");
	CHECK(kp_push(1) == 3 && entries == 1 && returns == 0, "refuse_no_return",
	      "%ld entries, %ld returns", entries, returns);
	unregister_kretprobe(&rp);
}

static void case_errors(void)
{
	struct kretprobe off = { .kp.symbol_name = "kp_push", .kp.offset = 1,
				 .handler = on_return };
	struct kretprobe big = { .kp.symbol_name = "kp_push", .handler = on_return,
				 .data_size = KRETPROBE_DATA_MAX + 1 };

	CHECK(register_kretprobe(&off) == -EINVAL, "error_not_entry", "");
	CHECK(register_kretprobe(&big) == -E2BIG, "error_data_size", "");
}

static const struct check_case cases[] = {
	CHECK_CASE(site),
	CHECK_CASE(jump),
	CHECK_CASE(trap),
	CHECK_CASE(change_return),
	CHECK_CASE(maxactive),
	CHECK_CASE(entry_refuses),
	CHECK_CASE(errors),
};

int main(void)
{
	return check_run_cases(cases);
}
