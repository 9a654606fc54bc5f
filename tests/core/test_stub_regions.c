// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every registration takes stubs of its own (a stub never serves the
 * next one): one ops registered, called and unregistered over and over
 * fills region after region of stubs near the program (255 each on
 * x86-64, 256 regions at most), then its site calls the list stub; each
 * call of each registration still reaches its handler with its site's
 * ip, through a stub in reach of the site (a call out of reach would jump
 * anywhere).  Bounded: 70,000 cycles (past the last region) or 15 s; the
 * end of the regions is checked only when reached.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>

#include <fhook/fhook.h>

#include "../check.h"

#define CYCLES	70000
#define STUBS_MAX	(256 * 255)	/* x86-64 stubs.c: REGIONS_MAX, less slot 0 each */
#define SECONDS	15

NOINLINE long f(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static long calls, wrong_ip;
static unsigned long f_ip;

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	calls++;
	if (ip != f_ip)
		wrong_ip++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	static struct ftrace_ops ops = { .func = handler };
	unsigned long stub, first_stub = 0, last_stub = 0, far = 0;
	double end = now() + SECONDS;
	int i, bad = 0, fresh = 0, same = 0;
	long r = 0;

	f_ip = (unsigned long)f + TEST_SITE_OFF;
	if (ftrace_set_filter_ip(&ops, f_ip, 0, 1))
		bad++;
	for (i = 0; i < CYCLES && now() < end && !bad; i++) {
		if (register_ftrace_function(&ops)) {
			bad++;
			break;
		}
		stub = test_site_call_target(f_ip);
		if (!first_stub)
			first_stub = stub;
		if (stub != last_stub)
			fresh++;
		else
			same++;
		last_stub = stub;
		if (stub && (stub > first_stub ? stub - first_stub : first_stub - stub) > far)
			far = stub > first_stub ? stub - first_stub : first_stub - stub;
		r += f(i) - i;
		if (unregister_ftrace_function(&ops))
			bad++;
	}
	CHECK_EQ(bad, 0, "cycles_succeed");
	CHECK(i >= 1000, "cycles_enough", "%d cycles", i);
	CHECK_EQ(calls, i, "every_call_handled");
	CHECK_EQ(wrong_ip, 0, "handler_ip");
	CHECK_EQ(r, i, "results");
#if defined(__x86_64__)
	/* a stub per registration, then the list stub's for all */
	CHECK_EQ(fresh, i < STUBS_MAX ? i : STUBS_MAX + 1, "stub_per_registration");
	if (i == CYCLES)
		CHECK_EQ(same, CYCLES - STUBS_MAX - 1, "list_stub_past_the_regions");
#endif
	printf("# %d cycles; %d stubs, up to %lu KiB from the first\n", i, fresh,
	       far / 1024);
	return check_exit();
}
