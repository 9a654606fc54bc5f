// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Two threads call hooked functions as fast as they can while a third
 * registers and unregisters ops and changes filters thousands of times.
 *
 *   - ops A is registered on f_always the whole time: it must see every
 *     call (its site moves between A's own stub and the list stub as B
 *     comes and goes, so this also proves the stalled-thread fallback);
 *   - ops B must never run after unregister_ftrace_function() returned;
 *   - ops C's filter alternates: its handler may only ever see functions
 *     in the old or the new filter.
 * Bounded by a cycle count and a time limit; never by timing assertions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE long f_always(long x) { __asm__ volatile(""); return x + 1; }
NOINLINE long f_toggle(long x) { __asm__ volatile(""); return x + 2; }
NOINLINE long f_other(long x) { __asm__ volatile(""); return x + 3; }
NOINLINE double f_float(double x, long n) { __asm__ volatile(""); return x * 2 + n; }

static atomic_ulong a_count, b_count, b_late, c_count, c_bad, wrong_result;
static atomic_int b_unregistered = 1;
static atomic_ulong c_allowed;		/* bit 0: f_always, bit 1: f_other */
static atomic_int stop;
static unsigned long site_always, site_other;

static void handler_a(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		      struct ftrace_regs *fregs)
{
	atomic_fetch_add_explicit(&a_count, 1, memory_order_relaxed);
}

static void handler_b(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		      struct ftrace_regs *fregs)
{
	atomic_fetch_add_explicit(&b_count, 1, memory_order_relaxed);
	if (atomic_load(&b_unregistered))
		atomic_fetch_add(&b_late, 1);
}

static void handler_c(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		      struct ftrace_regs *fregs)
{
	unsigned long allowed = atomic_load(&c_allowed);
	unsigned long bit = ip == site_always ? 1 : ip == site_other ? 2 : 4;

	atomic_fetch_add_explicit(&c_count, 1, memory_order_relaxed);
	if (!(allowed & bit))
		atomic_fetch_add(&c_bad, 1);
}

static struct ftrace_ops ops_a = { .func = handler_a };
static struct ftrace_ops ops_b = { .func = handler_b, .flags = FTRACE_OPS_FL_SAVE_REGS };
static struct ftrace_ops ops_c = { .func = handler_c, .flags = FTRACE_OPS_FL_RECURSION };

static void *worker(void *arg)
{
	unsigned long *calls = arg;
	long i = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (f_always(i) != i + 1 || f_toggle(i) != i + 2 || f_other(i) != i + 3 ||
		    f_float(1.5, i) != 3.0 + i)
			atomic_fetch_add(&wrong_result, 1);
		(*calls)++;
		i++;
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 2000, i, done = 0, errs = 0;
	unsigned long calls[2] = { 0, 0 };
	unsigned long ips_b[2], ip_c1[1], ip_c2[2];
	double t0 = now();
	pthread_t th[2];

	site_always = ftrace_location((unsigned long)f_always);
	site_other = ftrace_location((unsigned long)f_other);
	ips_b[0] = site_always;
	ips_b[1] = ftrace_location((unsigned long)f_toggle);
	ip_c1[0] = site_other;
	ip_c2[0] = site_always;
	ip_c2[1] = site_other;

	if (ftrace_set_filter_ip(&ops_a, site_always, 0, 1) || register_ftrace_function(&ops_a) ||
	    ftrace_set_filter_ips(&ops_b, ips_b, 2, 0, 1) ||
	    ftrace_set_filter_ips(&ops_c, ip_c1, 1, 0, 1)) {
		CHECK(0, "setup", "errno %d", errno);
		return check_exit();
	}
	atomic_store(&c_allowed, 2);
	if (register_ftrace_function(&ops_c))
		errs++;

	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, &calls[i]);

	for (i = 0; i < cycles && now() - t0 < 60; i++) {
		atomic_store(&b_unregistered, 0);
		if (register_ftrace_function(&ops_b))
			errs++;
		if (i % 2) {
			atomic_store(&c_allowed, 3);
			if (ftrace_set_filter_ips(&ops_c, ip_c2, 2, 0, 1))
				errs++;
			atomic_store(&c_allowed, 3);
		} else {
			atomic_store(&c_allowed, 3);
			if (ftrace_set_filter_ips(&ops_c, ip_c1, 1, 0, 1))
				errs++;
			atomic_store(&c_allowed, 2);
		}
		if (unregister_ftrace_function(&ops_b))
			errs++;
		atomic_store(&b_unregistered, 1);
		done++;
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	unregister_ftrace_function(&ops_c);
	unregister_ftrace_function(&ops_a);

	printf("# %d cycles, %lu calls per function, B ran %lu times, C %lu times\n", done,
	       calls[0] + calls[1], atomic_load(&b_count), atomic_load(&c_count));
	CHECK(done >= 100, "cycles_done", "only %d cycles", done);
	CHECK_EQ(errs, 0, "no_api_errors");
	CHECK_EQ(atomic_load(&wrong_result), 0, "results_correct");
	CHECK_EQ(atomic_load(&a_count), calls[0] + calls[1], "no_call_lost");
	CHECK_EQ(atomic_load(&b_late), 0, "no_handler_after_unregister");
	CHECK_EQ(atomic_load(&c_bad), 0, "filter_change_no_stray");
	{
		struct fhook_stats st;

		fhook_get_stats(&st);
		CHECK_EQ(st.nr_enabled, 0, "all_sites_restored");
		printf("# traps emulated %lu rewound %lu, batches %lu\n", st.traps_emulated,
		       st.traps_rewound, st.batches);
	}
	return check_exit();
}
