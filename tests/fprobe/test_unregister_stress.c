// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * unregister_fprobe() while many threads enter the probed function: the
 * probe's handlers must never see a NULL or stale fprobe, and calls in
 * flight when it goes must return where and with what they should.
 *
 * Eight threads call work() (a tiny function) continuously, and now and
 * then slow_work(), while the main thread registers an fprobe with entry
 * and exit handlers and entry data on both and unregisters it, up to
 * 20,000 cycles or 20 seconds.  Each cycle's fprobe is allocated before
 * its registration and freed right after unregister_fprobe() returns (the
 * API says it may be), its magic cleared first: a handler that runs late
 * reads a cleared magic, or freed memory under ASan.  Checked: every
 * result the callers get; every handler's fp is the registered probe;
 * every exit finds its own entry's data (the ip, the argument, the cycle)
 * and the return value its argument gives; exits never outnumber entries,
 * and entries without an exit are at most one per thread and cycle (a
 * call in flight at the unregister).  Before the fix of unregister_fprobe's
 * order (the probe cleared before the sites were unhooked) the entry
 * handler was called with fp == NULL within a few hundred cycles.
 *
 * parked_in_flight: a thread parked inside two nested probed frames while
 * their probe is unregistered and freed and another probe is registered
 * on the same functions; released, it returns through both hooked
 * returns to the right places with the right values, and no exit handler
 * runs for those frames.
 *
 * Built twice: plainly (the graph trampolines that build a frame, or the
 * C path), and with `fhook cflags`' assembler front end (_lean: handlers
 * proven, so the frameless paths and their generated copies).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

#include "../check.h"

#define THREADS		8
#define MAX_CYCLES	20000
#define MAX_SECONDS	20
#define PROBE_MAGIC	0x70726f6265UL
#define ENTRY_MAGIC	0x656e747279UL

#ifdef H_LEAN
/* no site of its own, nothing a sanitizer adds: proven at build time */
#define H_NOTRACE __attribute__((noinline, patchable_function_entry(0, 0), \
				 no_sanitize("address", "thread", "undefined")))
#else
#define H_NOTRACE
#endif

/*
 * The accessors, inlined; but GCC does not inline an instrumented inline
 * function into a handler that is not (no_sanitize), and a call is never
 * proven: sanitized builds of the proven handlers read the fields themselves
 */
#if defined(H_LEAN) && defined(__SANITIZE_ADDRESS__)
#define ARG0(fregs)	ftrace_regs_get_argument(fregs, 0)
#define RETVAL(fregs)	ftrace_regs_get_return_value(fregs)
#else
#define ARG0(fregs)	ftrace_regs_get_argument(fregs, 0)
#define RETVAL(fregs)	ftrace_regs_get_return_value(fregs)
#endif

/* a cycle's probe: allocated before it registers, freed after it is unregistered */
struct probe {
	struct fprobe fp;
	unsigned long magic;		/* PROBE_MAGIC while it may be called */
	unsigned long gen;		/* the cycle */
};

/* what the entry handler leaves for its exit */
struct edata {
	unsigned long magic;		/* ENTRY_MAGIC; the exit clears it */
	unsigned long ip, arg, gen;
};

static long entries, exits;
static long bad_fp;		/* a handler called with NULL or a probe not live */
static long bad_data;		/* an exit whose data is not its entry's */
static long bad_retval;		/* an exit whose return value is not its argument's */
static long late;		/* a handler after unregister_fprobe() returned */
static int alive;
/* the sites of work() and slow_work(): the ip the handlers get (ftrace_location()) */
static unsigned long ip_work, ip_slow;

NOINLINE long work(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* longer: more calls in flight when the probe goes */
NOINLINE long slow_work(long x)
{
	int i;

	for (i = 0; i < 200; i++)
		__asm__ volatile("" ::: "memory");
	return x * 5 + 2;
}

static inline unsigned long expected(unsigned long ip, unsigned long arg)
{
	return ip == ip_slow ? arg * 5 + 2 : arg * 3 + 1;
}

H_NOTRACE static int s_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			     struct ftrace_regs *fregs, void *data)
{
	struct probe *p = (struct probe *)fp;
	struct edata *d = data;

	/* compared, not dereferenced first: the old order passed NULL here */
	if (!p || __atomic_load_n(&p->magic, __ATOMIC_RELAXED) != PROBE_MAGIC) {
		__atomic_add_fetch(&bad_fp, 1, __ATOMIC_RELAXED);
		return 1;
	}
	if (!__atomic_load_n(&alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&late, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
	d->magic = ENTRY_MAGIC;
	d->ip = ip;
	d->arg = ARG0(fregs);
	d->gen = p->gen;
	return 0;
}

H_NOTRACE static void s_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			     struct ftrace_regs *fregs, void *data)
{
	struct probe *p = (struct probe *)fp;
	struct edata *d = data;

	if (!p || __atomic_load_n(&p->magic, __ATOMIC_RELAXED) != PROBE_MAGIC) {
		__atomic_add_fetch(&bad_fp, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!__atomic_load_n(&alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&late, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED);
	if (d->magic != ENTRY_MAGIC || d->ip != ip || d->gen != p->gen)
		__atomic_add_fetch(&bad_data, 1, __ATOMIC_RELAXED);
	else if (RETVAL(fregs) != expected(ip, d->arg))
		__atomic_add_fetch(&bad_retval, 1, __ATOMIC_RELAXED);
	d->magic = 0;	/* a second exit on these data is one without its entry */
}

static volatile int stop;
static int started;

struct caller {
	pthread_t t;
	long seed, calls, wrong;
};

static void *caller_run(void *arg)
{
	struct caller *c = arg;
	long x = c->seed;

	__atomic_add_fetch(&started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		long r;

		x = (x + 1) & 0xfffff;
		if (x & 255) {
			r = work(x);
			c->wrong += r != x * 3 + 1;
		} else {
			r = slow_work(x);
			c->wrong += r != x * 5 + 2;
		}
		c->calls++;
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct probe *probe_new(unsigned long gen)
{
	struct probe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->fp.entry_handler = s_entry;
	p->fp.exit_handler = s_exit;
	p->fp.entry_data_size = sizeof(struct edata);
	p->gen = gen;
	__atomic_store_n(&p->magic, PROBE_MAGIC, __ATOMIC_RELEASE);
	return p;
}

/* After unregister_fprobe(): no handler may see it again, so it may go. */
static void probe_free(struct probe *p)
{
	__atomic_store_n(&p->magic, 0, __ATOMIC_RELEASE);
	free(p);
}

static void case_stress(void)
{
	unsigned long addrs[2] = { (unsigned long)work, (unsigned long)slow_work };
	static struct caller c[THREADS];
	double start = now(), end = start + MAX_SECONDS;
	long calls = 0, wrong = 0;
	int i, cycles, failed = 0, frameless = -1, first_bad = 0;

	ip_work = ftrace_location(addrs[0]);
	ip_slow = ftrace_location(addrs[1]);
	entries = exits = bad_fp = bad_data = bad_retval = late = 0;
	for (i = 0; i < THREADS; i++) {
		c[i].seed = i * 100003L;
		pthread_create(&c[i].t, NULL, caller_run, &c[i]);
	}
	/* a thread glibc is still starting has every signal blocked: patching waits for it */
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < THREADS)
		sched_yield();
	for (cycles = 0; cycles < MAX_CYCLES && now() < end; cycles++) {
		struct probe *p = probe_new(cycles + 1);

		if (!p) {
			failed = 1;
			break;
		}
		__atomic_store_n(&alive, 1, __ATOMIC_RELEASE);
		if (register_fprobe_ips(&p->fp, addrs, 2)) {
			free(p);
			failed = 1;
			break;
		}
		if (frameless < 0)
			frameless = fhook_fprobe_frameless(&p->fp);
		/* a few calls through it; some cycles none at all */
		if (cycles & 1)
			sched_yield();
		if (unregister_fprobe(&p->fp)) {
			failed = 1;
			break;
		}
		__atomic_store_n(&alive, 0, __ATOMIC_RELEASE);
		probe_free(p);
		if (!first_bad && __atomic_load_n(&bad_fp, __ATOMIC_RELAXED))
			first_bad = cycles + 1;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++) {
		pthread_join(c[i].t, NULL);
		calls += c[i].calls;
		wrong += c[i].wrong;
	}
	printf("# %d cycles in %.1f s, %ld calls, %ld entries, %ld exits, frameless %d\n", cycles,
	       now() - start, calls, entries, exits, frameless);
	if (first_bad)
		printf("# a handler got a NULL or dead fprobe first in cycle %d\n", first_bad);
	CHECK(!failed, "stress_register_unregister", "cycle %d failed", cycles);
	CHECK(cycles >= 100, "stress_cycles", "only %d cycles", cycles);
	CHECK_EQ(wrong, 0, "stress_results_right");
	CHECK_EQ(bad_fp, 0, "stress_handlers_get_their_probe");
	CHECK_EQ(late, 0, "stress_no_handler_after_unregister");
	CHECK(entries > 0 && exits > 0, "stress_handlers_ran", "%ld entries, %ld exits", entries,
	      exits);
	CHECK_EQ(bad_data, 0, "stress_every_exit_has_its_entry");
	CHECK_EQ(bad_retval, 0, "stress_exit_sees_return_value");
	CHECK(exits <= entries && entries - exits <= (long)cycles * THREADS,
	      "stress_counts_consistent", "%ld entries, %ld exits, %d cycles", entries, exits,
	      cycles);
}

/* ---- a thread parked in probed frames while their probe goes ---- */

static int parked_in, parked_go;

NOINLINE long parked(long x)
{
	__atomic_store_n(&parked_in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&parked_go, __ATOMIC_ACQUIRE))
		sched_yield();
	return x * 7 + 3;
}

NOINLINE long parked_outer(long x)
{
	long r = parked(x + 1);

	__asm__ volatile("" ::: "memory");
	return r * 2;
}

static void *parked_run(void *arg)
{
	long *r = arg;

	r[0] = parked_outer(5);		/* (6 * 7 + 3) * 2 */
	r[1] = work(4);			/* through the second probe */
	return NULL;
}

static void case_parked_in_flight(void)
{
	unsigned long addrs[3] = { (unsigned long)parked_outer, (unsigned long)parked,
				   (unsigned long)work };
	struct probe *first = probe_new(1), *second = probe_new(2);
	long r[2] = { 0, 0 }, e, x;
	pthread_t t;

	ip_work = ftrace_location((unsigned long)work);
	ip_slow = 0;
	entries = exits = bad_fp = bad_data = bad_retval = late = 0;
	parked_in = parked_go = 0;
	__atomic_store_n(&alive, 1, __ATOMIC_RELEASE);
	CHECK(first && second && !register_fprobe_ips(&first->fp, addrs, 3), "parked_register",
	      "no memory or register failed");
	pthread_create(&t, NULL, parked_run, r);
	while (!__atomic_load_n(&parked_in, __ATOMIC_ACQUIRE))
		sched_yield();
	/* both entries ran; their returns are hooked */
	CHECK_EQ(entries, 2, "parked_entries");
	CHECK_EQ(unregister_fprobe(&first->fp), 0, "parked_unregister");
	probe_free(first);
	/* another probe on the same functions while the old returns are pending */
	CHECK_EQ(register_fprobe_ips(&second->fp, addrs, 3), 0, "parked_register_again");
	x = work(10);
	CHECK(x == 31 && entries == 3 && exits == 1, "parked_second_probe_works",
	      "work(10) = %ld, %ld entries, %ld exits", x, entries, exits);
	e = exits;
	__atomic_store_n(&parked_go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK_EQ(r[0], 90, "parked_returns_right");
	CHECK_EQ(r[1], 13, "parked_then_calls_right");
	/* the parked frames' exits ran no handler; work(4)'s ran the second probe's */
	CHECK(exits == e + 1 && entries == 4, "parked_no_exit_for_old_frames",
	      "%ld entries, %ld exits (%ld before the release)", entries, exits, e);
	CHECK(bad_fp == 0 && bad_data == 0 && bad_retval == 0 && late == 0, "parked_handlers_sane",
	      "bad fp %ld, bad data %ld, bad return value %ld, late %ld", bad_fp, bad_data,
	      bad_retval, late);
	CHECK_EQ(unregister_fprobe(&second->fp), 0, "parked_unregister_second");
	__atomic_store_n(&alive, 0, __ATOMIC_RELEASE);
	probe_free(second);
}

static const struct check_case cases[] = {
	CHECK_CASE(parked_in_flight),
	CHECK_CASE(stress),
};

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return check_run_cases(cases);
}
