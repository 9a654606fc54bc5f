// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * unregister_kretprobe() while four threads call the probed function in a
 * tight loop, with and without maxactive (a pool, whose rethook was freed
 * at once when no return was in flight): each cycle's kretprobe is
 * allocated before it registers and freed when unregister_kretprobe()
 * returns, its magic cleared first.  Every result must stay right, every
 * handler see a live kretprobe, every return handler its own entry's data
 * and the return value of its argument, and no handler run after
 * unregister_kretprobe() returned.  Unregistering freed the rethook
 * before the kprobe was removed, so an entry meanwhile hooked a return on
 * a rethook already freed (ASan: heap-use-after-free).
 *
 * Bounded: 3,000 cycles or 5 seconds, whichever comes first.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <fhook/kprobes.h>

#include "../check.h"

#define THREADS		4
#define CYCLES		3000
#define SECONDS		5
#define RP_MAGIC	0x6b726574UL
#define DATA_MAGIC	0x64617461UL

struct probe {
	struct kretprobe rp;
	unsigned long magic;		/* RP_MAGIC while it may be called */
};

struct call_data {
	unsigned long magic, arg;
};

static long entries, returns, bad_rp, bad_data, bad_ret, late;
static int alive;
static volatile int stop;
static int started;

/*
 * On aarch64 without a site (no pads): its kretprobe's entry is a brk,
 * whose handler hooks the return in the SIGTRAP handler.
 */
#ifdef __aarch64__
__attribute__((patchable_function_entry(0, 0)))
#endif
NOINLINE int krs_func(int x)
{
	__asm__ __volatile__("" ::: "memory");
	return x * 5 + 1;
}

static struct probe *live(struct kretprobe_instance *ri)
{
	struct probe *p = (struct probe *)get_kretprobe(ri);

	if (!p || __atomic_load_n(&p->magic, __ATOMIC_RELAXED) != RP_MAGIC) {
		__atomic_add_fetch(&bad_rp, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (!__atomic_load_n(&alive, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&late, 1, __ATOMIC_RELAXED);
	return p;
}

static int on_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *d = (struct call_data *)ri->data;

	if (!live(ri))
		return 1;
	__atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
	d->magic = DATA_MAGIC;
	d->arg = regs_get_kernel_argument(regs, 0);
	return 0;
}

static int on_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *d = (struct call_data *)ri->data;

	if (!live(ri))
		return 0;
	__atomic_add_fetch(&returns, 1, __ATOMIC_RELAXED);
	if (d->magic != DATA_MAGIC)
		__atomic_add_fetch(&bad_data, 1, __ATOMIC_RELAXED);
	else if ((int)regs_return_value(regs) != (int)d->arg * 5 + 1)
		__atomic_add_fetch(&bad_ret, 1, __ATOMIC_RELAXED);
	d->magic = 0;
	return 0;
}

struct caller {
	pthread_t t;
	int seed;
	long wrong;
};

static void *caller_run(void *arg)
{
	struct caller *c = arg;
	int x = c->seed;

	__atomic_add_fetch(&started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		x = (x + 1) & 0xffff;
		c->wrong += krs_func(x) != x * 5 + 1;
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void case_stress(void)
{
	static struct caller c[THREADS];
	double start = now(), end = start + SECONDS;
	int i, cycles, failed = 0;
	long wrong = 0;

	for (i = 0; i < THREADS; i++) {
		c[i].seed = i * 1009;
		pthread_create(&c[i].t, NULL, caller_run, &c[i]);
	}
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < THREADS)
		sched_yield();
	for (cycles = 0; cycles < CYCLES && now() < end; cycles++) {
		struct probe *p = calloc(1, sizeof(*p));

		if (!p) {
			failed = 1;
			break;
		}
		p->rp.kp.symbol_name = "krs_func";
		p->rp.entry_handler = on_entry;
		p->rp.handler = on_return;
		p->rp.data_size = sizeof(struct call_data);
		p->rp.maxactive = (cycles & 1) ? 64 : 0;	/* a pool every other cycle */
		__atomic_store_n(&p->magic, RP_MAGIC, __ATOMIC_RELEASE);
		__atomic_store_n(&alive, 1, __ATOMIC_RELEASE);
		if (register_kretprobe(&p->rp)) {
			free(p);
			failed = 1;
			break;
		}
		if (cycles & 2)
			sched_yield();
		unregister_kretprobe(&p->rp);
		__atomic_store_n(&alive, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&p->magic, 0, __ATOMIC_RELEASE);
		free(p);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++) {
		pthread_join(c[i].t, NULL);
		wrong += c[i].wrong;
	}
	printf("# %d cycles in %.1f s, %ld entries, %ld returns\n", cycles, now() - start,
	       entries, returns);
	CHECK(!failed, "kr_stress_register", "cycle %d failed", cycles);
	CHECK(cycles >= 20, "kr_stress_cycles", "only %d cycles", cycles);
	CHECK_EQ(wrong, 0, "kr_stress_results_right");
	CHECK_EQ(bad_rp, 0, "kr_stress_handlers_get_their_kretprobe");
	CHECK_EQ(late, 0, "kr_stress_no_handler_after_unregister");
	CHECK(entries > 0 && returns > 0, "kr_stress_handlers_ran", "%ld entries, %ld returns",
	      entries, returns);
	CHECK_EQ(bad_data, 0, "kr_stress_every_return_has_its_entry");
	CHECK_EQ(bad_ret, 0, "kr_stress_return_value");
	CHECK(returns <= entries && entries - returns <= (long)cycles * THREADS,
	      "kr_stress_counts_consistent", "%ld entries, %ld returns, %d cycles", entries,
	      returns, cycles);
}

static const struct check_case cases[] = {
	CHECK_CASE(stress),
};

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return check_run_cases(cases);
}
