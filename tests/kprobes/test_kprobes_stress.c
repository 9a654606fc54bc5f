// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Register and unregister kprobes over and over while four threads call
 * the probed functions in a tight loop: jumps placed and removed under
 * running threads (some of them caught inside the bytes a jump replaces,
 * where a thread is left a trap instead), traps, sites and a probe at an
 * offset.  Every result must stay right, and no handler may run for a
 * probe after unregister_kprobes() returned (it marks them dead).
 *
 * Bounded: 300 cycles or 2 seconds, whichever comes first; at least 10
 * cycles must have run.  First, one thread that stays inside the bytes
 * of a jump while it is placed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include <fhook/kprobes.h>

#include "../check.h"

#define THREADS		4
#define CYCLES		300
#define MIN_CYCLES	10
#define SECONDS		2

int kp_riprel(int), kp_jcc_back(int), kp_two(int), kp_push(int), kp_leaf(int);
int kp_tail(int), kp_call_first(int);

static volatile int stop;
static int alive;
static long wrong, after_unregister, hits;

NOINLINE int ks_c_func(int x)
{
	__asm__ __volatile__("");
	return x * 5;
}

static int pre(struct kprobe *p, struct pt_regs *regs)
{
	__atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&after_unregister, 1, __ATOMIC_RELAXED);
	return 0;
}

/* the functions called, their expected results, and wrong results of each */
static const char *const called[] = {
	"kp_riprel", "kp_jcc_back", "kp_two", "kp_push", "kp_leaf", "kp_tail", "kp_call_first",
	"ks_c_func",
};
static long wrong_of[sizeof(called) / sizeof(called[0])];

static void *caller(void *arg)
{
	int i = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int x = (i++ & 7) + 1, k;
		bool bad[] = {
			kp_riprel(x) != 1000 + x,
			kp_jcc_back(x) != x * (x + 1) / 2,
			kp_two(x) != x,
			kp_push(x) != x + 2,
			kp_leaf(x) != x + 100,
			kp_tail(x) != 3 * (x + 1),
			kp_call_first(x) != 3 * x + 1,
			ks_c_func(x) != 5 * x,
		};

		for (k = 0; k < (int)(sizeof(bad) / sizeof(bad[0])); k++)
			if (bad[k]) {
				__atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
				__atomic_add_fetch(&wrong_of[k], 1, __ATOMIC_RELAXED);
			}
	}
	return NULL;
}

/*
 * A thread that stays inside the bytes a jump would cover (a long loop in
 * them): the probe must stay a trap, and the loop's result be right.
 * Placing the jump over it would send it into the middle of the jump.
 */
#ifdef __aarch64__
#define SPIN_N	0x3fffff	/* tested under qemu-user; every probe there is a trap anyway */
#else
#define SPIN_N	0x7fffffff
#endif

static int spin_started;
static int spin_result;

static void *spinner(void *arg)
{
	__atomic_store_n(&spin_started, 1, __ATOMIC_RELEASE);
	spin_result = kp_jcc_back(SPIN_N);
	return NULL;
}

static void case_thread_inside(void)
{
	struct kprobe kp = { .symbol_name = "kp_jcc_back", .pre_handler = pre };
	struct timespec ms5 = { 0, 5 * 1000 * 1000 };
	unsigned int expect = (unsigned int)((unsigned long long)SPIN_N * (SPIN_N + 1ULL) / 2);
	enum kprobe_method m;
	char why[128] = "";
	pthread_t th;
	int ret;

	pthread_create(&th, NULL, spinner, NULL);
	while (!__atomic_load_n(&spin_started, __ATOMIC_ACQUIRE))
		nanosleep(&ms5, NULL);
	nanosleep(&ms5, NULL);
	__atomic_store_n(&alive, 1, __ATOMIC_RELEASE);
	ret = register_kprobe(&kp);
	CHECK(!ret, "inside_registered", "register_kprobe: %d", ret);
	m = kprobe_method(&kp, why, sizeof(why));
	CHECK(m == KPROBE_METHOD_TRAP, "inside_kept_trap", "method %s (%s)",
	      kprobe_method_name(m), why);
	printf("# a thread inside: %s (%s)\n", kprobe_method_name(m), why);
	pthread_join(th, NULL);
	CHECK_EQ((unsigned int)spin_result, expect, "inside_result");
	if (!ret)
		unregister_kprobe(&kp);
	__atomic_store_n(&alive, 0, __ATOMIC_RELEASE);
}

int main(void)
{
	static const char *const names[] = {
		"kp_riprel", "kp_jcc_back", "kp_two", "kp_push", "kp_tail", "kp_call_first",
		"ks_c_func", "kp_leaf",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct kprobe kp[N], *kps[N];
	pthread_t th[THREADS];
	struct timespec t0, t;
	int i, cycles, failed = 0;

	case_thread_inside();
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, caller, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (cycles = 0; cycles < CYCLES; cycles++) {
		for (i = 0; i < N; i++) {
			kp[i] = (struct kprobe){ .symbol_name = names[i], .pre_handler = pre };
			kps[i] = &kp[i];
		}
		kp[N - 1].offset = 4;	/* kp_leaf+4: past a red-zone store */
		__atomic_store_n(&alive, 1, __ATOMIC_RELEASE);
		if (register_kprobes(kps, N)) {
			failed++;
			break;
		}
		unregister_kprobes(kps, N);
		__atomic_store_n(&alive, 0, __ATOMIC_RELEASE);
		clock_gettime(CLOCK_MONOTONIC, &t);
		/* ten cycles however slow the machine (a sanitizer, a loaded CI box) */
		if (cycles + 1 >= MIN_CYCLES && t.tv_sec - t0.tv_sec >= SECONDS) {
			cycles++;
			break;
		}
	}
	/* the callers go on a moment with every probe gone */
	t.tv_sec = 0;
	t.tv_nsec = 20 * 1000 * 1000;
	nanosleep(&t, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK(!failed, "stress_register", "register_kprobes failed in cycle %d", cycles);
	CHECK(cycles >= MIN_CYCLES, "stress_cycles", "%d cycles", cycles);
	CHECK_EQ(wrong, 0, "stress_results_unchanged");
	for (i = 0; i < (int)(sizeof(called) / sizeof(called[0])); i++)
		if (wrong_of[i])
			printf("# %s: %ld wrong results\n", called[i], wrong_of[i]);
	CHECK_EQ(after_unregister, 0, "stress_no_handler_after_unregister");
	CHECK(hits > 0, "stress_probes_hit", "no hit");
	printf("# %d cycles, %ld hits\n", cycles, hits);
	return check_exit();
}
