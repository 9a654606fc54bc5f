// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kprobes on the hand-written functions of kp_funcs.S (no fhook site) and
 * on a function of this program (which has one): for each, the method it
 * gets, the number of hits, and the function's results, unchanged, with
 * the probe and after it is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <fhook/kprobes.h>

#include "../check.h"

typedef int (*fn_t)(int);

int kp_riprel(int), kp_jcc_back(int), kp_back_call(int), kp_loop_entered(int), kp_two(int), kp_endbr(int), kp_switch(int);
int kp_switch_in(int), kp_helper(int), kp_tail(int), kp_tail0(int), kp_call_first(int), kp_push(int);
int kp_five(int), kp_after(int), kp_ret7(int), kp_leaf(int), kp_short_pad(int);

static long hits, posts;
static unsigned long seen_ip;

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	seen_ip = regs->ip;
	return 0;
}

static void count_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	posts++;
}

/* a function of this program: it has a site */
NOINLINE int kp_c_func(int x)
{
	__asm__ __volatile__("");
	return x * 5;
}

/* Probe @f (by name), call it with 1..3, compare with @expect. */
static void probe_one(const char *name, fn_t f, fn_t expect, enum kprobe_method method)
{
	struct kprobe kp = { .symbol_name = name, .pre_handler = count_pre };
	char t[128], why[128];
	int i, ret, bad = 0;

	hits = 0;
	ret = register_kprobe(&kp);
	snprintf(t, sizeof(t), "%s_registered", name);
	CHECK(ret == 0, t, "register_kprobe: %d (%s)", ret, strerror(-ret));
	if (ret)
		return;
	snprintf(t, sizeof(t), "%s_method_%s", name, kprobe_method_name(method));
	CHECK(kprobe_method(&kp, why, sizeof(why)) == method, t, "got %s (%s)",
	      kprobe_method_name(kprobe_method(&kp, NULL, 0)), why);
	for (i = 1; i <= 3; i++)
		bad += f(i) != expect(i);
	snprintf(t, sizeof(t), "%s_results", name);
	CHECK(!bad, t, "%d of 3 results differ", bad);
	snprintf(t, sizeof(t), "%s_hits", name);
	CHECK_EQ(hits, 3, t);
	snprintf(t, sizeof(t), "%s_ip", name);
	CHECK(seen_ip == (unsigned long)f + 1, t, "regs->ip %#lx, expected %#lx", seen_ip,
	      (unsigned long)f + 1);
	unregister_kprobe(&kp);
	for (i = 1; i <= 3; i++)
		bad += f(i) != expect(i);
	snprintf(t, sizeof(t), "%s_after", name);
	CHECK(!bad && hits == 3, t, "%d results differ, %ld hits", bad, hits);
}

static int e_riprel(int x) { return 1000 + x; }
static int e_jcc_back(int x) { return x * (x + 1) / 2; }
static int e_same(int x) { return x; }
static int e_plus1(int x) { return x + 1; }
static int e_switch(int x) { return x <= 3 ? 10 + x : -1; }
static int e_tail(int x) { return 3 * (x + 1); }
static int e_times3(int x) { return 3 * x; }
static int e_call_first(int x) { return 3 * x + 1; }
static int e_plus2(int x) { return x + 2; }
static int e_plus5(int x) { return x + 5; }
static int e_plus7(int x) { return x + 7; }
static int e_plus100(int x) { return x + 100; }
static int e_times5(int x) { return x * 5; }

static void case_riprel(void) { probe_one("kp_riprel", kp_riprel, e_riprel, KPROBE_METHOD_JUMP); }
/* a loop back into the first bytes: moved whole, branches and all */
static void case_jcc_back(void)
{
	probe_one("kp_jcc_back", kp_jcc_back, e_jcc_back, KPROBE_METHOD_JUMP);
}

static int e_max1(int x) { return x > 1 ? x : 1; }

/* the same with a call in the loop (its return would land in the copy): a trap */
static void case_jcc_back_call(void)
{
	probe_one("kp_back_call", kp_back_call, e_max1, KPROBE_METHOD_TRAP);
}
static void case_two_bytes(void) { probe_one("kp_two", kp_two, e_same, KPROBE_METHOD_TRAP); }
static void case_endbr(void) { probe_one("kp_endbr", kp_endbr, e_plus1, KPROBE_METHOD_JUMP); }
static int e_switch_in(int x) { return x == 1 ? 2 : 1; }

/* a jump table whose entries stay out of the first bytes: a jump */
static void case_jump_table(void)
{
	probe_one("kp_switch", kp_switch, e_switch, KPROBE_METHOD_JUMP);
}

/* one of whose entries leads into them: a trap */
static void case_jump_table_into(void)
{
	probe_one("kp_switch_in", kp_switch_in, e_switch_in, KPROBE_METHOD_TRAP);
}
static void case_tail_call(void) { probe_one("kp_tail", kp_tail, e_tail, KPROBE_METHOD_JUMP); }
static void case_tail_call_first(void)
{
	probe_one("kp_tail0", kp_tail0, e_times3, KPROBE_METHOD_JUMP);
}
static void case_call_first(void)
{
	probe_one("kp_call_first", kp_call_first, e_call_first, KPROBE_METHOD_JUMP);
}
static void case_push_sub(void) { probe_one("kp_push", kp_push, e_plus2, KPROBE_METHOD_JUMP); }
static int e_plus3(int x) { return x + 3; }

/* shorter than a jump, but followed by padding: the jump's tail goes there */
static void case_short_then_padding(void)
{
	probe_one("kp_short_pad", kp_short_pad, e_plus3, KPROBE_METHOD_JUMP);
}

static void case_site(void) { probe_one("kp_c_func", kp_c_func, e_times5, KPROBE_METHOD_SITE); }

/* @a and @b in one register_kprobes() call, hits reset; 0 or the error */
static int register_two(struct kprobe *a, struct kprobe *b, const char *name)
{
	struct kprobe *kps[] = { a, b };
	int ret;

	hits = 0;
	ret = register_kprobes(kps, 2);
	CHECK(ret == 0, name, "register_kprobes: %d", ret);
	return ret;
}

static void unregister_two(struct kprobe *a, struct kprobe *b)
{
	struct kprobe *kps[] = { a, b };

	unregister_kprobes(kps, 2);
}

/* a 5-byte function and the one right after it, both probed at once */
static void case_five_then_next(void)
{
	struct kprobe a = { .symbol_name = "kp_five", .pre_handler = count_pre };
	struct kprobe b = { .symbol_name = "kp_after", .pre_handler = count_pre };
	int bad = 0, i;

	if (register_two(&a, &b, "five_registered"))
		return;
	CHECK(kprobe_method(&a, NULL, 0) == KPROBE_METHOD_JUMP &&
	      kprobe_method(&b, NULL, 0) == KPROBE_METHOD_JUMP, "five_methods_jump",
	      "%s, %s", kprobe_method_name(kprobe_method(&a, NULL, 0)),
	      kprobe_method_name(kprobe_method(&b, NULL, 0)));
	for (i = 1; i <= 3; i++)
		bad += kp_five(i) != e_plus5(i) || kp_after(i) != e_plus7(i);
	CHECK(!bad, "five_results", "%d differ", bad);
	CHECK_EQ(hits, 6, "five_hits");
	unregister_two(&a, &b);
	CHECK(kp_five(1) == 6 && kp_after(1) == 8 && hits == 6, "five_after", "hits %ld", hits);
}

/* at an offset, past a red-zone store: the detour must not touch it */
static void case_offset_red_zone(void)
{
	struct kprobe kp = { .symbol_name = "kp_leaf", .offset = 4, .pre_handler = count_pre };
	int ret, i, bad = 0;

	hits = 0;
	ret = register_kprobe(&kp);
	CHECK(ret == 0, "offset_registered", "%d", ret);
	if (ret)
		return;
	CHECK(kprobe_method(&kp, NULL, 0) == KPROBE_METHOD_JUMP, "offset_method_jump", "%s",
	      kprobe_method_name(kprobe_method(&kp, NULL, 0)));
	for (i = 1; i <= 3; i++)
		bad += kp_leaf(i) != e_plus100(i);
	CHECK(!bad, "offset_results", "%d differ", bad);
	CHECK_EQ(hits, 3, "offset_hits");
	CHECK(seen_ip == (unsigned long)kp_leaf + 5, "offset_ip", "%#lx", seen_ip);
	unregister_kprobe(&kp);
}

static int set_arg(struct kprobe *p, struct pt_regs *regs)
{
	regs->di = 41;
	return 0;
}

static int to_ret7(struct kprobe *p, struct pt_regs *regs)
{
	regs->ip = (unsigned long)kp_ret7;
	return 1;
}

/* a register a pre_handler changes, and an ip it moves, take effect */
static void case_regs_and_ip(void)
{
	struct kprobe a = { .symbol_name = "kp_endbr", .pre_handler = set_arg };
	struct kprobe b = { .symbol_name = "kp_riprel", .pre_handler = to_ret7 };
	struct kprobe c = { .symbol_name = "kp_two", .pre_handler = to_ret7 };
	struct kprobe d = { .symbol_name = "kp_c_func", .pre_handler = to_ret7 };
	struct kprobe *kps[] = { &a, &b, &c, &d };
	int ret = register_kprobes(kps, 4);

	CHECK(ret == 0, "regs_registered", "%d", ret);
	if (ret)
		return;
	CHECK_EQ(kp_endbr(1), 42, "regs_arg_changed");
	CHECK_EQ(kp_riprel(1), 7, "regs_ip_moved_jump");
	CHECK_EQ(kp_two(1), 7, "regs_ip_moved_trap");
	CHECK_EQ(kp_c_func(1), 7, "regs_ip_moved_site");
	unregister_kprobes(kps, 4);
	CHECK(kp_endbr(1) == 2 && kp_riprel(1) == 1001 && kp_two(1) == 1 && kp_c_func(1) == 5,
	      "regs_after", "results differ");
}

/* a post_handler: the trap method, called once per hit */
static void case_post_handler(void)
{
	struct kprobe kp = { .symbol_name = "kp_push", .pre_handler = count_pre,
			     .post_handler = count_post };
	char why[128];
	int ret;

	hits = posts = 0;
	ret = register_kprobe(&kp);
	CHECK(ret == 0, "post_registered", "%d", ret);
	if (ret)
		return;
	CHECK(kprobe_method(&kp, why, sizeof(why)) == KPROBE_METHOD_TRAP, "post_method_trap",
	      "%s", why);
	CHECK(kp_push(1) == 3 && kp_push(2) == 4, "post_results", "differ");
	CHECK(hits == 2 && posts == 2, "post_hits", "%ld pre, %ld post", hits, posts);
	unregister_kprobe(&kp);
}

/*
 * post_handlers on branches: after the instruction, wherever it went,
 * with regs->ip there, as after the kernel's single step.
 */
extern char *kp_post_points[9];
#define kp_post_jcc_at		kp_post_points[0]
#define kp_post_jcc_fall	kp_post_points[1]
#define kp_post_jcc_taken	kp_post_points[2]
#define kp_post_call_back	kp_post_points[3]
#define kp_post_jmpind_at	kp_post_points[4]
#define kp_post_jmpind_to	kp_post_points[5]
#define kp_post_ret_at		kp_post_points[6]
#define kp_post_popf_at		kp_post_points[7]
#define kp_post_rep_at		kp_post_points[8]
int kp_post_jcc(int), kp_post_call(int), kp_post_jmpind(int), kp_post_ret(int),
	kp_post_pushf(int), kp_post_popf(int), kp_post_rep(int), kp_post_callmem(int);

static unsigned long post_ip, post_sp;

static void where_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	posts++;
	post_ip = regs->ip;
	post_sp = regs->sp;
}

/* probe @addr with a post_handler, call @f(@arg): the result and where the post saw it */
static void post_at(const char *name, void *addr, int (*f)(int), int arg, int expect,
		    unsigned long expect_ip)
{
	struct kprobe kp = { .addr = addr, .pre_handler = count_pre,
			     .post_handler = where_post };
	char t[128];
	int ret, r;

	hits = posts = 0;
	post_ip = 0;
	ret = register_kprobe(&kp);
	snprintf(t, sizeof(t), "%s_registered", name);
	CHECK(ret == 0, t, "%d", ret);
	if (ret)
		return;
	r = f(arg);
	snprintf(t, sizeof(t), "%s_result", name);
	CHECK(r == expect, t, "%d, expected %d", r, expect);
	snprintf(t, sizeof(t), "%s_once", name);
	CHECK(hits == 1 && posts == 1, t, "%ld pre, %ld post", hits, posts);
	snprintf(t, sizeof(t), "%s_ip", name);
	CHECK(post_ip == expect_ip, t, "post saw ip %#lx, expected %#lx", post_ip, expect_ip);
	unregister_kprobe(&kp);
}

/* where kp_post_ret's caller goes on: just after this call */
static NOINLINE unsigned long call_ret(int arg, int *res)
{
	*res = kp_post_ret(arg);
	return (unsigned long)__builtin_return_address(0);
}

static void case_post_branches(void)
{
	struct kprobe kp = { .addr = (void *)kp_post_ret_at, .pre_handler = count_pre,
			     .post_handler = where_post };
	struct kprobe flags = { .addr = (void *)kp_post_jcc_at, .pre_handler = count_pre };
	int res = 0, r0, r1;

	/* a jump probe on a jcc: the flags the test before it set reach it */
	hits = 0;
	CHECK_EQ(register_kprobe(&flags), 0, "flags_registered");
	CHECK(kprobe_method(&flags, NULL, 0) == KPROBE_METHOD_JUMP, "flags_method_jump", "%s",
	      kprobe_method_name(kprobe_method(&flags, NULL, 0)));
	r0 = kp_post_jcc(0);
	r1 = kp_post_jcc(1);
	CHECK(r0 == 20 && r1 == 10 && hits == 2, "flags_kept", "%d %d, %ld hits", r0, r1, hits);
	unregister_kprobe(&flags);

	post_at("post_jcc_taken", kp_post_jcc_at, kp_post_jcc, 0, 20,
		(unsigned long)kp_post_jcc_taken);
	post_at("post_jcc_fall", kp_post_jcc_at, kp_post_jcc, 1, 10,
		(unsigned long)kp_post_jcc_fall);
	post_at("post_call", (void *)kp_post_call, kp_post_call, 5, 12, (unsigned long)kp_ret7);
	post_at("post_jmp_indirect", kp_post_jmpind_at, kp_post_jmpind, 4, 7,
		(unsigned long)kp_post_jmpind_to);
	post_at("post_pushf", (void *)kp_post_pushf, kp_post_pushf, 6, 6,
		(unsigned long)kp_post_pushf + 1);
	post_at("post_popf", kp_post_popf_at, kp_post_popf, 5, 5,
		(unsigned long)kp_post_popf_at + 1);
	post_at("post_rep_stos", kp_post_rep_at, kp_post_rep, 1 << 20, 0,
		(unsigned long)kp_post_rep_at + 2);
	post_at("post_call_memory", (void *)kp_post_callmem, kp_post_callmem, 5, 12,
		(unsigned long)kp_ret7);
	/* the ret: the post sees the caller's address, with the stack popped */
	hits = posts = 0;
	CHECK_EQ(register_kprobe(&kp), 0, "post_ret_registered");
	post_ip = 0;
	(void)call_ret(21, &res);
	CHECK(res == 42 && posts == 1, "post_ret_result", "%d, %ld posts", res, posts);
	CHECK(post_ip && post_ip != (unsigned long)kp_post_ret_at + 1 &&
	      post_ip - (unsigned long)call_ret < 64, "post_ret_ip",
	      "post saw ip %#lx (call_ret at %p)", post_ip, (void *)call_ret);
	unregister_kprobe(&kp);
}

/*
 * A probe inside the bytes another's jump replaced: the jump becomes a
 * trap (the kernel unoptimizes it), and both fire on every call.
 */
static long hits_b;

static int count_pre_b(struct kprobe *p, struct pt_regs *regs)
{
	hits_b++;
	return 0;
}

static void case_retrap(void)
{
	struct kprobe a = { .symbol_name = "kp_push", .pre_handler = count_pre };
	struct kprobe b = { .symbol_name = "kp_push", .offset = 1, .pre_handler = count_pre_b };
	int r1, r2, ret;

	CHECK_EQ(register_kprobe(&a), 0, "retrap_first");
	CHECK(kprobe_method(&a, NULL, 0) == KPROBE_METHOD_JUMP && (a.flags & KPROBE_FLAG_OPTIMIZED),
	      "retrap_first_jump", "%s", kprobe_method_name(kprobe_method(&a, NULL, 0)));
	ret = register_kprobe(&b);
	CHECK_EQ(ret, 0, "retrap_second_inside");
	if (ret) {
		unregister_kprobe(&a);
		return;
	}
	CHECK(kprobe_method(&a, NULL, 0) == KPROBE_METHOD_TRAP && !(a.flags & KPROBE_FLAG_OPTIMIZED),
	      "retrap_first_now_trap", "%s, flags %#x", kprobe_method_name(kprobe_method(&a, NULL, 0)),
	      a.flags);
	hits = hits_b = 0;
	r1 = kp_push(1);
	r2 = kp_push(2);
	CHECK(r1 == 3 && r2 == 4, "retrap_results", "%d %d", r1, r2);
	CHECK(hits == 2 && hits_b == 2, "retrap_both_fire", "%ld and %ld hits", hits, hits_b);
	unregister_kprobe(&b);
	r1 = kp_push(3);
	CHECK(r1 == 5 && hits == 3 && hits_b == 2, "retrap_second_gone", "%d, %ld and %ld hits",
	      r1, hits, hits_b);
	unregister_kprobe(&a);
	r1 = kp_push(4);
	CHECK(r1 == 6 && hits == 3, "retrap_both_gone", "%d, %ld hits", r1, hits);
}

/*
 * A pre_handler that moves the ip of a probe inside a leaf function,
 * whose red zone holds its argument: every register set at once, the red
 * zone left alone.  kp_leaf: mov %edi,-8(%rsp); mov $0,%eax (+4, probed);
 * add -8(%rsp),%eax (+9); add $100,%eax; ret.
 */
static int skip_to_add(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	regs->ax = 1000;
	regs->ip = (unsigned long)kp_leaf + 9;
	return 1;
}

static void case_move_ip_inside(void)
{
	struct kprobe kp = { .symbol_name = "kp_leaf", .offset = 4, .pre_handler = skip_to_add };
	int r1, r2;

	hits = 0;
	CHECK_EQ(register_kprobe(&kp), 0, "move_ip_registered");
	r1 = kp_leaf(7);
	r2 = kp_leaf(8);
	CHECK(r1 == 1107 && r2 == 1108 && hits == 2, "move_ip_red_zone_kept",
	      "%d %d (expected 1107 1108), %ld hits", r1, r2, hits);
	unregister_kprobe(&kp);
	CHECK_EQ(kp_leaf(7), 107, "move_ip_unprobed");
}

static void case_disable(void)
{
	struct kprobe kp = { .symbol_name = "kp_tail", .pre_handler = count_pre };

	hits = 0;
	if (register_kprobe(&kp)) {
		CHECK(0, "disable_registered", "failed");
		return;
	}
	disable_kprobe(&kp);
	kp_tail(1);
	CHECK_EQ(hits, 0, "disable_no_hit");
	enable_kprobe(&kp);
	kp_tail(1);
	CHECK_EQ(hits, 1, "enable_hit");
	unregister_kprobe(&kp);
}

static struct kprobe inner = { .symbol_name = "kp_helper", .pre_handler = count_pre };

static int call_helper(struct kprobe *p, struct pt_regs *regs)
{
	kp_helper(1);
	return 0;
}

/* a handler that reaches a probed function: that probe counts a miss */
static void case_recursion_missed(void)
{
	struct kprobe outer = { .symbol_name = "kp_endbr", .pre_handler = call_helper };
	struct kprobe *kps[] = { &outer, &inner };

	hits = 0;
	if (register_kprobes(kps, 2)) {
		CHECK(0, "recursion_registered", "failed");
		return;
	}
	kp_endbr(1);
	CHECK(hits == 0 && inner.nmissed == 1, "recursion_missed", "hits %ld, nmissed %lu",
	      hits, inner.nmissed);
	unregister_kprobes(kps, 2);
}

static void case_errors(void)
{
	struct kprobe none = { .symbol_name = "kp_no_such_function", .pre_handler = count_pre };
	struct kprobe both = { .symbol_name = "kp_two", .addr = (kprobe_opcode_t *)kp_five,
			       .pre_handler = count_pre };
	struct kprobe ok = { .symbol_name = "kp_two", .pre_handler = count_pre };
	int ret;

	CHECK(register_kprobe(&none) == -ENOENT && errno == ENOENT, "error_no_symbol", "");
	CHECK(register_kprobe(&both) == -EINVAL, "error_symbol_and_addr", "");
	CHECK(register_kprobe(&ok) == 0 && register_kprobe(&ok) == -EEXIST, "error_twice", "");
	unregister_kprobe(&ok);
	/* a second registration after the first is gone finds the same slot */
	ret = register_kprobe(&ok);
	CHECK(ret == 0, "error_again", "%d", ret);
	unregister_kprobe(&ok);
}

/* an offset that is not an instruction's first byte */
static void case_inside_instruction(void)
{
	struct kprobe kp = { .symbol_name = "kp_push", .offset = 2, .pre_handler = count_pre };

	CHECK_EQ(register_kprobe(&kp), -EILSEQ, "inside_instruction_refused");
}

/*
 * Two probes a jump at the first would cover, in one call: the first gets
 * a trap, so that the second still sees its hits.
 */
static void case_neighbours(void)
{
	struct kprobe a = { .symbol_name = "kp_push", .pre_handler = count_pre };
	struct kprobe b = { .symbol_name = "kp_push", .offset = 1, .pre_handler = count_pre };
	char why[128];
	int i, bad = 0;

	if (register_two(&a, &b, "neighbours_registered"))
		return;
	CHECK(kprobe_method(&a, why, sizeof(why)) == KPROBE_METHOD_TRAP &&
	      !strcmp(why, "another probe at +0x1 is inside the bytes a jump would replace"),
	      "neighbours_first_trap", "%s: %s", kprobe_method_name(kprobe_method(&a, NULL, 0)),
	      why);
	CHECK(kprobe_method(&b, NULL, 0) == KPROBE_METHOD_JUMP, "neighbours_second_jump", "%s",
	      kprobe_method_name(kprobe_method(&b, NULL, 0)));
	for (i = 1; i <= 3; i++)
		bad += kp_push(i) != e_plus2(i);
	CHECK(!bad && hits == 6, "neighbours_both_hit", "%d differ, %ld hits", bad, hits);
	unregister_two(&a, &b);
}

/* a loop moved whole, which a branch from outside enters: a trap */
static void case_loop_entered(void)
{
	probe_one("kp_loop_entered", kp_loop_entered, e_max1, KPROBE_METHOD_TRAP);
}

static const struct check_case cases[] = {
	CHECK_CASE(riprel),
	CHECK_CASE(jcc_back),
	CHECK_CASE(jcc_back_call),
	CHECK_CASE(loop_entered),
	CHECK_CASE(two_bytes),
	CHECK_CASE(endbr),
	CHECK_CASE(jump_table),
	CHECK_CASE(jump_table_into),
	CHECK_CASE(tail_call),
	CHECK_CASE(tail_call_first),
	CHECK_CASE(call_first),
	CHECK_CASE(push_sub),
	CHECK_CASE(short_then_padding),
	CHECK_CASE(site),
	CHECK_CASE(five_then_next),
	CHECK_CASE(offset_red_zone),
	CHECK_CASE(regs_and_ip),
	CHECK_CASE(post_handler),
	CHECK_CASE(post_branches),
	CHECK_CASE(retrap),
	CHECK_CASE(move_ip_inside),
	CHECK_CASE(disable),
	CHECK_CASE(recursion_missed),
	CHECK_CASE(errors),
	CHECK_CASE(inside_instruction),
	CHECK_CASE(neighbours),
};

int main(void)
{
	return check_run_cases(cases);
}
