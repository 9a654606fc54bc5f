// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Caller-selective redirect: two callers routed to two replacements, a
 * third untouched, replacements that call the original, the catch-all
 * route, -EBUSY, -ENOENT, the tail-call check, and threads calling through
 * all three callers while the redirect is applied and removed 1,000 times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include <fhook/fhook.h>
#include <fhook/livepatch.h>

#include "../check.h"

#define N 8

/* the target: fills a whole record, so a torn result would show */
NOINLINE void t_fill(long *buf, long seed)
{
	int i;

	for (i = 0; i < N; i++)
		buf[i] = seed * 16 + i;
	__asm__ volatile("" ::: "memory");
}

/* replacements: each calls the target, which must reach the original */
NOINLINE void r_neg(long *buf, long seed)
{
	int i;

	t_fill(buf, seed);
	for (i = 0; i < N; i++)
		buf[i] = -buf[i];
}

NOINLINE void r_plus(long *buf, long seed)
{
	int i;

	t_fill(buf, seed);
	for (i = 0; i < N; i++)
		buf[i] += 1000000;
}

/* 0: original, 1: negated, 2: plus, -1: torn or foreign (seed > 0) */
static int classify(const long *buf, long seed)
{
	int i, kind = -2;

	for (i = 0; i < N; i++) {
		long o = seed * 16 + i;
		int k = buf[i] == o ? 0 : buf[i] == -o ? 1 : buf[i] == o + 1000000 ? 2 : -1;

		if (k < 0 || (kind != -2 && k != kind))
			return -1;
		kind = k;
	}
	return kind;
}

NOINLINE int caller_a(long seed)
{
	long buf[N];

	t_fill(buf, seed);
	return classify(buf, seed);
}

NOINLINE int caller_b(long seed)
{
	long buf[N];

	t_fill(buf, seed);
	return classify(buf, seed);
}

NOINLINE int caller_c(long seed)
{
	long buf[N];

	t_fill(buf, seed);
	return classify(buf, seed);
}

/* a tail call: the jump leaves caller_tail's own return address in place */
NOINLINE int t_value(int x)
{
	__asm__ volatile("");
	return x * 3;
}

NOINLINE int caller_tail(int x)
{
	return t_value(x + 1);
}

/* not instrumented although the test is built with the flag */
__attribute__((noinline, patchable_function_entry(0, 0))) int t_plain(int x)
{
	__asm__ volatile("");
	return x + 1;
}

static volatile int stop;
static unsigned long bad[3], calls[3];

static void *worker(void *arg)
{
	long seed = (long)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int a = caller_a(seed), b = caller_b(seed), c = caller_c(seed);

		if (a != 0 && a != 1)
			__atomic_fetch_add(&bad[0], 1, __ATOMIC_RELAXED);
		if (b != 0 && b != 2)
			__atomic_fetch_add(&bad[1], 1, __ATOMIC_RELAXED);
		if (c != 0)
			__atomic_fetch_add(&bad[2], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&calls[0], 1, __ATOMIC_RELAXED);
		seed++;
	}
	return NULL;
}

static struct fhook_lp_opts quiet = { .sz = sizeof(quiet), .flags = FHOOK_LP_QUIET };

/* t_fill routed from caller_a to r_neg and from caller_b to r_plus */
static struct fhook_lp *new_ab(const char *name)
{
	struct fhook_lp *lp = fhook_lp_new("t_fill", NULL);

	if (!lp || fhook_lp_redirect(lp, "caller_a", r_neg) ||
	    fhook_lp_redirect(lp, "caller_b", r_plus)) {
		printf("FAIL %s_setup: errno %d\n", name, errno);
		check_failed++;
		fhook_lp_free(lp);
		return NULL;
	}
	return lp;
}

static void case_routes(void)
{
	struct fhook_lp *lp = fhook_lp_new("t_fill", NULL);

	CHECK(lp != NULL, "new", "errno %d", errno);
	if (!lp)
		return;
	CHECK_EQ(fhook_lp_redirect(lp, "caller_a", r_neg), 0, "redirect_a");
	CHECK_EQ(fhook_lp_redirect(lp, "caller_b", r_plus), 0, "redirect_b");
	CHECK_EQ(fhook_lp_redirect(lp, "caller_a", r_plus), -EEXIST, "redirect_twice");
	fhook_lp_free(lp);
}

/* each routed caller reaches its replacement, any other the original */
static void case_apply(void)
{
	struct fhook_lp *lp = new_ab("apply");
	struct fhook_lp_stat st[4];
	long buf[N];
	int n;

	if (!lp)
		return;
	CHECK_EQ(caller_a(1), 0, "before_a");
	CHECK_EQ(caller_b(1), 0, "before_b");
	CHECK_EQ(fhook_lp_apply(lp), 0, "apply");
	CHECK_EQ(caller_a(2), 1, "applied_a_replaced");
	CHECK_EQ(caller_b(2), 2, "applied_b_replaced");
	CHECK_EQ(caller_c(2), 0, "applied_c_original");
	t_fill(buf, 3);
	CHECK_EQ(classify(buf, 3), 0, "applied_main_original");
	n = fhook_lp_stats(lp, st, 4);
	CHECK(n == 3 && st[0].hit == 1 && st[1].hit == 1 && st[2].caller == NULL &&
	      st[2].seen == 4, "stats", "n %d a %lu b %lu other %lu (replacement calls count as other)",
	      n, st[0].hit, st[1].hit, n > 2 ? st[2].seen : 0);
	fhook_lp_free(lp);
}

/* a second IPMODIFY user on the same target: -EBUSY, nothing changes */
static void case_second_ipmodify(void)
{
	struct fhook_lp *lp = new_ab("second_ipmodify"), *lp2;

	if (!lp)
		return;
	fhook_lp_apply(lp);
	lp2 = fhook_lp_new("t_fill", &quiet);
	CHECK(lp2 != NULL, "new_second", "errno %d", errno);
	if (lp2) {
		fhook_lp_redirect(lp2, "caller_c", r_neg);
		CHECK_EQ(fhook_lp_apply(lp2), -EBUSY, "second_ipmodify_ebusy");
		CHECK_EQ(caller_c(4), 0, "ebusy_c_unchanged");
		CHECK_EQ(caller_a(4), 1, "ebusy_a_unchanged");
		fhook_lp_free(lp2);
	}
	fhook_lp_free(lp);
}

static void case_no_routes_while_applied(void)
{
	struct fhook_lp *lp = new_ab("no_routes_while_applied");

	if (!lp)
		return;
	fhook_lp_apply(lp);
	CHECK_EQ(fhook_lp_redirect(lp, "caller_c", r_neg), -EBUSY, "no_routes_while_applied");
	fhook_lp_free(lp);
}

static void case_remove(void)
{
	struct fhook_lp *lp = new_ab("remove");

	if (!lp)
		return;
	fhook_lp_apply(lp);
	CHECK_EQ(fhook_lp_remove(lp), 0, "remove");
	CHECK_EQ(caller_a(5), 0, "removed_a_original");
	CHECK_EQ(caller_b(5), 0, "removed_b_original");
	CHECK_EQ(fhook_lp_remove(lp), -ENODEV, "remove_twice");
	fhook_lp_free(lp);
}

/* threads calling through all three while applied and removed 1,000 times */
static void case_stress_apply_remove(void)
{
	struct fhook_lp *lp = new_ab("stress_apply_remove");
	pthread_t th[4];
	int r, i, fails = 0;

	if (!lp)
		return;
	stop = 0;
	memset(bad, 0, sizeof(bad));
	memset(calls, 0, sizeof(calls));
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)(i * 1000000 + 1));
	for (i = 0; i < 1000; i++) {
		if ((r = fhook_lp_apply(lp)) && !fails++)
			printf("# iteration %d: apply: %d\n", i, r);
		if ((r = caller_a(i + 1)) != 1 && !fails++)
			printf("# iteration %d: caller_a applied: %d\n", i, r);
		if ((r = caller_c(i + 1)) != 0 && !fails++)
			printf("# iteration %d: caller_c applied: %d\n", i, r);
		if ((r = fhook_lp_remove(lp)) && !fails++)
			printf("# iteration %d: remove: %d\n", i, r);
		if ((r = caller_a(i + 1)) != 0 && !fails++)
			printf("# iteration %d: caller_a removed: %d\n", i, r);
		if ((r = caller_b(i + 1)) != 0 && !fails++)
			printf("# iteration %d: caller_b removed: %d\n", i, r);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(fails, 0, "stress_apply_remove_1000");
	CHECK(!bad[0] && !bad[1] && !bad[2], "stress_results_whole",
	      "torn or foreign: a %lu b %lu c %lu", bad[0], bad[1], bad[2]);
	fhook_lp_free(lp);
}

/* without a caller: every caller, and the replacement still reaches the original */
static void case_catch_all(void)
{
	struct fhook_lp *lp = fhook_lp_new("t_fill", NULL);

	CHECK(lp && !fhook_lp_redirect(lp, NULL, r_neg) && !fhook_lp_apply(lp), "catch_all_apply",
	      "errno %d", errno);
	CHECK(caller_a(6) == 1 && caller_b(6) == 1 && caller_c(6) == 1, "catch_all_every_caller",
	      "%d %d %d", caller_a(6), caller_b(6), caller_c(6));
	fhook_lp_free(lp);
	CHECK_EQ(caller_c(7), 0, "free_removes");
}

/* named callers win over the catch-all route */
static void case_named_wins_over_all(void)
{
	struct fhook_lp *lp = fhook_lp_new("t_fill", NULL);

	fhook_lp_redirect(lp, NULL, r_neg);
	fhook_lp_redirect(lp, "caller_b", r_plus);
	fhook_lp_apply(lp);
	CHECK(caller_a(8) == 1 && caller_b(8) == 2 && caller_c(8) == 1, "named_wins_over_all",
	      "%d %d %d", caller_a(8), caller_b(8), caller_c(8));
	fhook_lp_free(lp);
}

static void case_bad_names(void)
{
	struct fhook_lp *lp;

	errno = 0;
	CHECK(!fhook_lp_new("no_such_function_xyz", &quiet) && errno == ENOENT,
	      "unknown_target_enoent", "errno %d", errno);
	/* no site: a kprobe on its entry takes the handler's place */
	lp = fhook_lp_new("t_plain", &quiet);
	CHECK(lp && !fhook_lp_fail(lp, NULL, 41) && !fhook_lp_apply(lp) && t_plain(1) == 41 &&
	      !fhook_lp_remove(lp) && t_plain(1) == 2, "uninstrumented_kprobe", "errno %d", errno);
	fhook_lp_free(lp);
	lp = fhook_lp_new("t_fill", &quiet);
	CHECK_EQ(fhook_lp_redirect(lp, "no_such_caller_xyz", r_neg), -ENOENT,
		 "unknown_caller_enoent");
	CHECK_EQ(fhook_lp_apply(lp), -EINVAL, "no_routes_einval");
	fhook_lp_free(lp);
}

/* the tail-call check */
static void case_check_caller(void)
{
	struct fhook_lp *lp = fhook_lp_new("t_fill", &quiet);
	char how[256];
	int r;

	r = fhook_lp_check_caller(lp, "caller_a", how, sizeof(how));
	CHECK(r == 1, "check_caller_calls", "%d: %s", r, how);
	fhook_lp_free(lp);
	lp = fhook_lp_new("t_value", &quiet);
	r = fhook_lp_check_caller(lp, "caller_tail", how, sizeof(how));
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	/* sanitizer instrumentation after the call turns the tail jump into a call */
	printf("SKIP check_caller_tail_call: built with a sanitizer\n");
#else
	CHECK(r == 0 && strstr(how, "tail call"), "check_caller_tail_call", "%d: %s", r, how);
#endif
	r = fhook_lp_check_caller(lp, "caller_c", how, sizeof(how));
	CHECK(r == 0 && strstr(how, "no call"), "check_caller_no_call", "%d: %s", r, how);
	CHECK_EQ(caller_tail(1), 6, "tail_call_works");
	fhook_lp_free(lp);
}

/* the same routes through the handler (FHOOK_LP_NO_DIRECT) and as generated code */
static void case_direct_and_handler(void)
{
	static const struct fhook_lp_opts no_direct = { .sz = sizeof(no_direct),
							.flags = FHOOK_LP_NO_DIRECT };
	int k;

	for (k = 0; k < 2; k++) {
		struct fhook_lp *lp = fhook_lp_new("t_fill", k ? &no_direct : NULL);
		const char *how = k ? "handler" : "direct";
		struct fhook_lp_stat st[4];
		char name[64];
		int i, n, ok = 1;

		fhook_lp_redirect(lp, "caller_a", r_neg);
		fhook_lp_redirect(lp, "caller_b", r_plus);
		snprintf(name, sizeof(name), "%s_apply", how);
		CHECK_EQ(fhook_lp_apply(lp), 0, name);
		for (i = 1; i <= 100; i++)
			ok &= caller_a(i) == 1 && caller_b(i) == 2 && caller_c(i) == 0;
		snprintf(name, sizeof(name), "%s_routes", how);
		CHECK(ok, name, "a caller reached the wrong function");
		n = fhook_lp_stats(lp, st, 4);
		snprintf(name, sizeof(name), "%s_counts", how);
		/* other callers: caller_c, and the replacements calling the original */
		CHECK(n == 3 && st[0].seen == 100 && st[0].hit == 100 && st[1].hit == 100 &&
		      st[2].seen == 300, name, "n %d a %lu/%lu b %lu other %lu", n, st[0].seen,
		      st[0].hit, st[1].hit, n > 2 ? st[2].seen : 0);
		/* removed and applied again: the counts go on from where they were */
		fhook_lp_remove(lp);
		caller_a(1);
		fhook_lp_apply(lp);
		caller_a(1);
		n = fhook_lp_stats(lp, st, 4);
		snprintf(name, sizeof(name), "%s_counts_reapplied", how);
		CHECK(n == 3 && st[0].hit == 101, name, "a %lu", st[0].hit);
		fhook_lp_free(lp);
		snprintf(name, sizeof(name), "%s_removed", how);
		CHECK(caller_a(1) == 0 && caller_b(1) == 0, name, "still redirected");
	}
}

/* variadic target and replacement: %al (the vector count) and xmm0-7 reach it */
NOINLINE double t_vsum(int n, ...)
{
	va_list ap;
	double s = 0;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		s += va_arg(ap, double);
	va_end(ap);
	return s;
}

NOINLINE double r_vsum(int n, ...)
{
	va_list ap;
	double s = 0;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		s += 2 * va_arg(ap, double);
	va_end(ap);
	return s;
}

NOINLINE double caller_v(void)
{
	/* not a tail call: the return address must be ours */
	return t_vsum(8, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.5) + 1.0;
}

NOINLINE double caller_w(void)
{
	return t_vsum(3, 0.5, 0.25, 0.125) + 1.0;
}

static void case_varargs(void)
{
	struct fhook_lp *lp = fhook_lp_new("t_vsum", NULL);

	CHECK(lp && !fhook_lp_redirect(lp, "caller_v", r_vsum) && !fhook_lp_apply(lp),
	      "varargs_apply", "errno %d", errno);
	CHECK(caller_v() == 74.0, "varargs_redirected", "%g, expected 74", caller_v());
	CHECK(caller_w() == 1.875, "varargs_other_original", "%g, expected 1.875", caller_w());
	fhook_lp_free(lp);
}

/*
 * Removal while threads are inside the replacement: it returns, they
 * finish their calls in it, and every later call reaches the original.
 */
static volatile int inside, release_them;

NOINLINE void r_wait(long *buf, long seed)
{
	int i;

	__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&release_them, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < N; i++)
		buf[i] = -(seed * 16 + i);
}

static void *inside_worker(void *arg)
{
	long seed = (long)arg;
	int *res = calloc(2, sizeof(int));

	res[0] = caller_a(seed);	/* into r_wait */
	res[1] = caller_a(seed + 1);	/* after the removal: the original */
	return res;
}

static void case_remove_while_inside(void)
{
	struct fhook_lp *lp = fhook_lp_new("t_fill", NULL);
	pthread_t th[4];
	int i, wrong = 0, spins = 0;

	inside = release_them = 0;
	CHECK(lp && !fhook_lp_redirect(lp, "caller_a", r_wait) && !fhook_lp_apply(lp),
	      "inside_apply", "errno %d", errno);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, inside_worker, (void *)(long)(i * 100 + 1));
	while (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) < 4 && spins++ < 20000)
		usleep(100);
	CHECK_EQ(inside, 4, "inside_all_four");
	CHECK_EQ(fhook_lp_remove(lp), 0, "inside_remove_returns");
	CHECK_EQ(caller_a(9), 0, "inside_removed_original");
	__atomic_store_n(&release_them, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++) {
		int *res;

		pthread_join(th[i], (void **)&res);
		wrong += res[0] != 1 || res[1] != 0;
		free(res);
	}
	CHECK_EQ(wrong, 0, "inside_threads_finish_then_original");
	fhook_lp_free(lp);
}

static const struct check_case cases[] = {
	CHECK_CASE(direct_and_handler),
	CHECK_CASE(varargs),
	CHECK_CASE(remove_while_inside),
	CHECK_CASE(routes),
	CHECK_CASE(apply),
	CHECK_CASE(second_ipmodify),
	CHECK_CASE(no_routes_while_applied),
	CHECK_CASE(remove),
	CHECK_CASE(stress_apply_remove),
	CHECK_CASE(catch_all),
	CHECK_CASE(named_wins_over_all),
	CHECK_CASE(bad_names),
	CHECK_CASE(check_caller),
};

int main(void)
{
	return check_run_cases(cases);
}
