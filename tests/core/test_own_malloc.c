// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook's own calls are never traced: a program that defines its own
 * malloc family (traceable, like the rest of it) under an fprobe on every
 * function, registered by its first constructor.  fhook allocates while it
 * registers probes, patches text, sets up a thread's shadow stack and
 * tears it down, registers and unregisters more probes; none of that may
 * reach a handler or count in nmissed.  The allocator counts every call
 * and its caller, so the test also shows that fhook did call it.
 *
 * Checks: before main, the only events are the program's own constructor's
 * (its malloc and free); in main, every event on an allocator function
 * comes from the program's code or from the C library acting for the
 * program's own calls (pthread_create) or its threads' exits, none from
 * fhook's work; nmissed 0, also over more threads than shadow stacks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

#include "../check.h"

/* ---- the program's own allocator: a bump allocator, free does nothing ---- */

static unsigned long alloc_calls;

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* (the sanitizers bring their own malloc, which these would replace) */
static char arena[64 << 20] __attribute__((aligned(64)));
static unsigned long arena_used;

#define MAX_CALLERS 4096
static unsigned long callers[MAX_CALLERS];
static unsigned long nr_callers;

NOINLINE static void note_caller(unsigned long ra)
{
	unsigned long i = __atomic_fetch_add(&nr_callers, 1, __ATOMIC_RELAXED);

	__atomic_add_fetch(&alloc_calls, 1, __ATOMIC_RELAXED);
	if (i < MAX_CALLERS)
		callers[i] = ra;
}

static void *bump(size_t size, size_t align)
{
	unsigned long old, start, end;

	if (align < 16)
		align = 16;
	old = __atomic_load_n(&arena_used, __ATOMIC_RELAXED);
	do {
		start = (old + 16 + align - 1) & ~(align - 1);
		end = start + size;
		if (end > sizeof(arena))
			return NULL;
	} while (!__atomic_compare_exchange_n(&arena_used, &old, end, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	*(size_t *)(arena + start - 8) = size;
	return arena + start;
}

static size_t size_of(void *p)
{
	return *(size_t *)((char *)p - 8);
}

NOINLINE void *malloc(size_t size)
{
	note_caller((unsigned long)__builtin_return_address(0));
	return bump(size, 16);
}

NOINLINE void free(void *p)
{
	note_caller((unsigned long)__builtin_return_address(0));
}

NOINLINE void *calloc(size_t n, size_t size)
{
	note_caller((unsigned long)__builtin_return_address(0));
	if (size && n > SIZE_MAX / size)
		return NULL;
	/* the arena is never reused: already zero */
	return bump(n * size, 16);
}

NOINLINE void *realloc(void *p, size_t size)
{
	void *n;

	note_caller((unsigned long)__builtin_return_address(0));
	n = bump(size, 16);
	if (p && n)
		memcpy(n, p, size_of(p) < size ? size_of(p) : size);
	return n;
}

NOINLINE void *memalign(size_t align, size_t size)
{
	note_caller((unsigned long)__builtin_return_address(0));
	return bump(size, align);
}

NOINLINE void *aligned_alloc(size_t align, size_t size)
{
	note_caller((unsigned long)__builtin_return_address(0));
	return bump(size, align);
}

NOINLINE int posix_memalign(void **out, size_t align, size_t size)
{
	note_caller((unsigned long)__builtin_return_address(0));
	*out = bump(size, align);
	return *out ? 0 : ENOMEM;
}

NOINLINE size_t malloc_usable_size(void *p)
{
	return p ? size_of(p) : 0;
}
#endif

/* ---- the probe on every function ---- */

struct ev {
	unsigned long ip, parent_ip;
	int phase;
};

#define MAX_EVS 65536
static struct ev evs[MAX_EVS];
static unsigned long nr_evs;
static int phase;
static struct fprobe fp_all, fp_more;

static int h_own_entry(struct fprobe *fp, unsigned long ip, unsigned long parent_ip,
		       struct ftrace_regs *fregs, void *data)
{
	unsigned long i = __atomic_fetch_add(&nr_evs, 1, __ATOMIC_RELAXED);

	if (i < MAX_EVS) {
		evs[i].ip = ip;
		evs[i].parent_ip = parent_ip;
		evs[i].phase = __atomic_load_n(&phase, __ATOMIC_RELAXED);
	}
	return 0;
}

static void h_own_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		       struct ftrace_regs *fregs, void *data)
{
}

static int ctor_register_ret = -1;

__attribute__((constructor(101))) static void register_everything(void)
{
	fp_all.entry_handler = h_own_entry;
	fp_all.exit_handler = h_own_exit;
	ctor_register_ret = register_fprobe(&fp_all, "*", "h_own_*");
}

static void *ctor_block;

NOINLINE void program_ctor_allocates(void)
{
	/* the compiler knows malloc and free: keep the pair from being elided */
	ctor_block = malloc(100);
	__asm__ volatile("" : : "r"(ctor_block) : "memory");
	free(ctor_block);
}

/* DONE: the rest of main, the case runner and the checks, which allocate */
enum { PRE_MAIN, OWN_CTOR, THREADS, REGISTER, DONE };

__attribute__((constructor(200))) static void own_ctor(void)
{
	__atomic_store_n(&phase, OWN_CTOR, __ATOMIC_RELAXED);
	program_ctor_allocates();
	__atomic_store_n(&phase, PRE_MAIN, __ATOMIC_RELAXED);
}

NOINLINE int thread_work(int n)
{
	return n + 1;
}

static void *thread_body(void *arg)
{
	return (void *)(long)thread_work((int)(long)arg);
}

/* ---- classification ---- */

static unsigned long exe_base;

static bool in_exe(unsigned long addr)
{
	Dl_info di;

	return dladdr((void *)addr, &di) && (unsigned long)di.dli_fbase == exe_base;
}

/* in the dynamic loader (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1, ...) */
static bool in_loader(unsigned long addr)
{
	Dl_info di;

	return dladdr((void *)addr, &di) && (unsigned long)di.dli_fbase == getauxval(AT_BASE);
}

static const char *object_of(unsigned long addr)
{
	Dl_info di;

	if (!dladdr((void *)addr, &di) || !di.dli_fname)
		return "?";
	return strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname;
}

static const char *const alloc_names[] = {
	"malloc", "free", "calloc", "realloc", "memalign", "aligned_alloc", "posix_memalign",
};

static const char *alloc_fn(unsigned long ip)
{
	Dl_info di;
	size_t i;

	if (!dladdr((void *)ip, &di) || !di.dli_sname)
		return NULL;
	for (i = 0; i < sizeof(alloc_names) / sizeof(alloc_names[0]); i++)
		if (!strcmp(di.dli_sname, alloc_names[i]))
			return alloc_names[i];
	return NULL;
}

static void explain(char *why, size_t size, const char *what, const struct ev *e)
{
	Dl_info di;
	char line[160];
	const char *fn = alloc_fn(e->ip);
	unsigned long base = dladdr((void *)e->parent_ip, &di) ? (unsigned long)di.dli_fbase : 0;

	snprintf(line, sizeof(line), " %s %s from %s+%#lx;", what, fn ? fn : "?",
		 object_of(e->parent_ip), e->parent_ip - base);
	if (strlen(why) + strlen(line) < size - 1)
		strcat(why, line);
}

int main(void);

/*
 * The events of @which phase: for OWN_CTOR the allocator calls, else the
 * ones that are not the program's (explained in @why).
 */
static unsigned long scan(int which, char *why, size_t size)
{
	unsigned long i, n, count = 0;
	Dl_info di;

	dladdr((void *)main, &di);
	exe_base = (unsigned long)di.dli_fbase;
	n = nr_evs < MAX_EVS ? nr_evs : MAX_EVS;
	for (i = 0; i < n; i++) {
		const struct ev *e = &evs[i];
		const char *fn;

		if (e->phase != which)
			continue;
		fn = alloc_fn(e->ip);
		switch (e->phase) {
		case OWN_CTOR:
			count += fn != NULL;
			break;
		case PRE_MAIN:
			/* main's and the constructor's own entries are the program's */
			if (e->ip - (unsigned long)main < 16 || e->ip - (unsigned long)own_ctor < 16)
				break;
			count++;
			explain(why, size, "before main:", e);
			break;
		case THREADS:
			/*
			 * The program's own calls, the loader's for a new thread's
			 * TLS (pthread_create) and the C library's frees of a
			 * thread's buffers as it exits are the program's; fhook's
			 * set-up and teardown of a thread (which allocate through
			 * pthread_getattr_np, pthread_setspecific) are not.
			 */
			if (!fn || in_exe(e->parent_ip) || in_loader(e->parent_ip) ||
			    !strcmp(fn, "free"))
				break;
			count++;
			explain(why, size, "threads:", e);
			break;
		case REGISTER:
			/* nothing but fhook's work: no event at all */
			count++;
			explain(why, size, "register:", e);
			break;
		}
	}
	return count;
}

/* before main, only the program's own constructor allocated */
static void case_constructor(void)
{
	unsigned long own, pre_bad;
	char why[1024] = "";

	CHECK_EQ(ctor_register_ret, 0, "register_in_constructor");
	own = scan(OWN_CTOR, why, sizeof(why));
	pre_bad = scan(PRE_MAIN, why, sizeof(why));
	CHECK_EQ(own, 2, "program_constructor_events");
	CHECK(!pre_bad, "no_event_before_main", "%lu:%s", pre_bad, why);
}

/* a thread's shadow stack set up and torn down: no event from fhook's side */
static void case_thread_setup(void)
{
	unsigned long i, thr_bad;
	pthread_t th[4];
	char why[1024] = "";

	/* nothing that allocates (stdio) until the checks: only fhook's work */
	__atomic_store_n(&phase, THREADS, __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, thread_body, (void *)i);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&phase, DONE, __ATOMIC_RELAXED);
	thr_bad = scan(THREADS, why, sizeof(why));
	CHECK(!thr_bad, "no_event_from_thread_setup", "%lu:%s", thr_bad, why);
}

/* registering and unregistering another probe allocates, traced by none */
static void case_register_more(void)
{
	unsigned long calls_before, calls_reg, calls_after, reg_bad;
	int reg_more, unreg_more;
	char why[1024] = "";

	__atomic_store_n(&phase, REGISTER, __ATOMIC_RELAXED);
	calls_before = calls_reg = __atomic_load_n(&alloc_calls, __ATOMIC_RELAXED);
	memset(&fp_more, 0, sizeof(fp_more));
	fp_more.entry_handler = h_own_entry;
	reg_more = register_fprobe(&fp_more, "thread_work", NULL);
	unreg_more = unregister_fprobe(&fp_more);
	/* read before stdio allocates: the calls are fhook's alone */
	calls_after = __atomic_load_n(&alloc_calls, __ATOMIC_RELAXED);
	__atomic_store_n(&phase, DONE, __ATOMIC_RELAXED);

	CHECK_EQ(reg_more, 0, "register_more");
	CHECK_EQ(unreg_more, 0, "unregister_more");
	CHECK(calls_after > calls_before && calls_after > calls_reg, "fhook_allocated",
	      "no allocator call from fhook's work: the test shows nothing");
	/* over the constructor, the threads (run before) and this registration */
	CHECK_EQ(fprobe_nmissed(&fp_all), 0, "nmissed");
	reg_bad = scan(REGISTER, why, sizeof(why));
	CHECK(!reg_bad, "no_event_from_register", "%lu:%s", reg_bad, why);
}

/*
 * More threads, one after the other, than there are shadow-stack
 * regions: the region of an exited thread is taken over once the
 * thread is gone, and the C library's frees after its exit still
 * have their returns hooked.
 */
static void case_many_threads(void)
{
	unsigned long i;

	for (i = 0; i < 1100; i++) {
		pthread_t t;

		pthread_create(&t, NULL, thread_body, (void *)i);
		pthread_join(t, NULL);
	}
	CHECK_EQ(fprobe_nmissed(&fp_all), 0, "nmissed_many_threads");
}

static const struct check_case cases[] = {
	CHECK_CASE(constructor),
	CHECK_CASE(thread_setup),
	CHECK_CASE(register_more),
	CHECK_CASE(many_threads),
};

int main(void)
{
	int ret;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("SKIP own_malloc: sanitizer build\n");
	return 0;
#endif
	/* the runner's stdio allocates: the program's own, outside the phases */
	__atomic_store_n(&phase, DONE, __ATOMIC_RELAXED);
	ret = check_run_cases(cases);
	unregister_fprobe(&fp_all);
	return ret;
}
