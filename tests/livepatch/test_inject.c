// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fault injection by caller from the library API: the error path runs
 * only for the named caller, and times / interval / probability (with a
 * fixed seed) fail exactly the calls the kernel's should_fail() would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <fhook/fhook.h>
#include <fhook/livepatch.h>

#include "../check.h"

static int body_runs;

/* the target: 0 on success, a negative errno on failure */
NOINLINE long t_open(int x)
{
	__asm__ volatile("");
	body_runs++;
	return x < 0 ? -EINVAL : 0;
}

static int errors_config, errors_log;
static long last_err;
static unsigned int fail_mask;		/* bit k: the k-th call of this round failed */

NOINLINE int open_config(int k)
{
	long ret = t_open(k);

	if (ret) {			/* the error path under test */
		errors_config++;
		last_err = ret;
		if (k < 32)
			fail_mask |= 1u << k;
		return -1;
	}
	return 0;
}

NOINLINE int open_log(int k)
{
	long ret = t_open(k);

	if (ret) {
		errors_log++;
		return -1;
	}
	return 0;
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Run 20 calls from each caller with @attr; return the patch for stats. */
static struct fhook_lp *round_(const struct fhook_fault_attr *attr)
{
	struct fhook_lp *lp = fhook_lp_new("t_open", NULL);
	int k;

	errors_config = errors_log = 0;
	last_err = 0;
	fail_mask = 0;
	body_runs = 0;
	if (!lp || fhook_lp_fail(lp, "open_config", (unsigned long)-ENOMEM) ||
	    fhook_lp_set_fault_attr(lp, attr) || fhook_lp_apply(lp)) {
		printf("FAIL setup: errno %d\n", errno);
		exit(1);
	}
	for (k = 0; k < 20; k++) {
		open_config(k);
		open_log(k);
	}
	fhook_lp_remove(lp);
	return lp;
}

/* default attribute: every call from the named caller fails */
static void case_default_attr(void)
{
	struct fhook_lp_stat st[4];
	struct fhook_lp *lp;
	int n;

	lp = round_(NULL);
	CHECK_EQ(errors_config, 20, "default_all_fail");
	CHECK_EQ(errors_log, 0, "other_caller_never_fails");
	CHECK_EQ(last_err, -ENOMEM, "retval_seen_by_caller");
	CHECK_EQ(body_runs, 20, "body_skipped_when_failed");
	n = fhook_lp_stats(lp, st, 4);
	CHECK(n == 2 && !strcmp(st[0].caller, "open_config") && st[0].seen == 20 &&
	      st[0].hit == 20 && !st[1].caller && st[1].seen == 20 && st[1].hit == 0,
	      "stats_per_caller", "n %d", n);
	fhook_lp_print_summary(lp, stdout);
	fhook_lp_free(lp);
}

/* times: the first 3 */
static void case_times(void)
{
	struct fhook_fault_attr a = { .sz = sizeof(a), .probability = 100, .interval = 1,
				      .times = 3 };
	struct fhook_lp *lp = round_(&a);

	CHECK(errors_config == 3 && fail_mask == 0x7, "times_3", "%d failed, mask %#x",
	      errors_config, fail_mask);
	fhook_lp_free(lp);
}

/* interval: every 4th eligible call (the 4th, 8th, ...: k = 3, 7, 11, 15, 19) */
static void case_interval(void)
{
	struct fhook_fault_attr a = { .sz = sizeof(a), .probability = 100, .interval = 4,
				      .times = -1 };
	struct fhook_lp *lp = round_(&a);

	CHECK(errors_config == 5 && fail_mask == 0x88888, "interval_4", "%d failed, mask %#x",
	      errors_config, fail_mask);
	fhook_lp_free(lp);
}

/* interval and times: every 2nd, at most 3 times */
static void case_interval_times(void)
{
	struct fhook_fault_attr a = { .sz = sizeof(a), .probability = 100, .interval = 2,
				      .times = 3 };
	struct fhook_lp *lp = round_(&a);

	CHECK(errors_config == 3 && fail_mask == 0x2a, "interval_2_times_3", "%d failed, mask %#x",
	      errors_config, fail_mask);
	fhook_lp_free(lp);
}

/* probability with a fixed seed: the documented sequence, exactly, twice */
static void case_probability_seed(void)
{
	struct fhook_fault_attr a = { .sz = sizeof(a), .probability = 30, .interval = 1,
				      .times = -1, .seed = 42 };
	unsigned int want_mask = 0;
	struct fhook_lp *lp;
	uint64_t s = 42;
	int k, want = 0;

	for (k = 0; k < 20; k++)
		if (!(30 <= splitmix64(&s) % 100)) {
			want++;
			want_mask |= 1u << k;
		}
	lp = round_(&a);
	CHECK(errors_config == want && fail_mask == want_mask, "probability_30_seed_42",
	      "%d failed (mask %#x), expected %d (mask %#x)", errors_config, fail_mask, want,
	      want_mask);
	CHECK(want > 0 && want < 20, "probability_not_trivial", "%d", want);
	fhook_lp_free(lp);
	lp = round_(&a);
	CHECK(errors_config == want && fail_mask == want_mask, "probability_repeatable",
	      "%d vs %d", errors_config, want);
	fhook_lp_free(lp);
}

/* probability 0 fails nothing */
static void case_probability_0(void)
{
	struct fhook_fault_attr a = { .sz = sizeof(a), .probability = 0, .interval = 1,
				      .times = -1, .seed = 42 };
	struct fhook_lp *lp = round_(&a);

	CHECK_EQ(errors_config, 0, "probability_0");
	fhook_lp_free(lp);
}

/* after removal the function runs normally for everyone */
static void case_removed(void)
{
	fhook_lp_free(round_(NULL));
	errors_config = 0;
	open_config(1);
	CHECK_EQ(errors_config, 0, "removed");
}

static void case_bad_probability(void)
{
	/* valid but for the probability, so that only it is refused */
	struct fhook_fault_attr a = { .sz = sizeof(a), .probability = 101, .interval = 1,
				      .times = -1, .seed = 42 };
	struct fhook_lp *lp = fhook_lp_new("t_open", NULL);

	CHECK_EQ(fhook_lp_set_fault_attr(lp, &a), -EINVAL, "bad_probability");
	fhook_lp_free(lp);
}

static const struct check_case cases[] = {
	CHECK_CASE(default_attr),
	CHECK_CASE(times),
	CHECK_CASE(interval),
	CHECK_CASE(interval_times),
	CHECK_CASE(probability_seed),
	CHECK_CASE(probability_0),
	CHECK_CASE(removed),
	CHECK_CASE(bad_probability),
};

int main(void)
{
	return check_run_cases(cases);
}
