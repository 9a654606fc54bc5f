// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unwinding from anywhere in the frameless paths: a profiler's signal
 * lands while a tight loop calls a function with proven entry and exit
 * handlers, and libgcc's unwinder, started in the signal handler, must
 * walk from wherever the signal landed (the generated copies of the
 * entry and the return, the return stubs, the handlers, the function) up
 * to the loop; then the same through an ftrace_ops' frameless per-ops
 * copy.  The copies' unwind information is registered with libgcc (their
 * template's own, or written for them); an error in it loses the loop,
 * or crashes.  The program does not link libgcc_s: like glibc's
 * backtrace(), it opens it when it needs it, after libfhook was loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unwind.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

#include "../check.h"
#include "../argregs.h"

#define NOTRACE __attribute__((noinline, patchable_function_entry(0, 0), \
			       no_sanitize("address", "thread", "undefined")))

static long entries, exits;

NOTRACE static int lean_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	entries++;
	return 0;
}

NOTRACE static void lean_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	exits++;
}

NOINLINE long work(long x)
{
	return x * 3 + 1;
}

/* the same through a per-ops frameless copy: an ftrace_ops with a proven handler */
static long ops_calls;

NOTRACE static void ops_handler(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	ops_calls++;
}

NOINLINE long work2(long x)
{
	return x * 5 + 2;
}

#define MAX_SAMPLES 4096
static unsigned long spin_lo, spin_hi;
static volatile int spinning;
static unsigned long sample_pc[MAX_SAMPLES];
static unsigned char sample_found[MAX_SAMPLES];
static volatile int nr_samples;

struct walk {
	int depth, found;
};

static _Unwind_Reason_Code (*backtrace_fn)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*get_ip_fn)(struct _Unwind_Context *);

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	unsigned long ip = get_ip_fn(ctx);

	if (ip >= spin_lo && ip < spin_hi) {
		w->found = 1;
		return _URC_END_OF_STACK;
	}
	return ++w->depth > 64 ? _URC_END_OF_STACK : _URC_NO_REASON;
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	struct walk w = { 0, 0 };
	int n = nr_samples;

	if (!spinning || n >= MAX_SAMPLES)
		return;
	backtrace_fn(walk_frame, &w);
	sample_pc[n] = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	sample_found[n] = (unsigned char)w.found;
	nr_samples = n + 1;
}

static volatile long sink;

/* the loop each sample must be unwound to, calling @fn */
NOINLINE void spin(long (*fn)(long), long n)
{
	long i;

	spinning = 1;
	for (i = 0; i < n; i++)
		sink += fn(i);
	spinning = 0;
}

static bool generated(unsigned long addr)
{
	Dl_info info;

	return addr && !dladdr((void *)addr, &info);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1,000 profiler samples (or 5 s of CPU time) of spin() calling @fn, each unwound to spin() */
static void sample(long (*fn)(long), const char *what)
{
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	const ElfW(Sym) *sym = NULL;
	int i, lost = 0, in_copies = 0;
	char name[64];
	Dl_info info;
	double t0;

	if (!dladdr1((void *)spin, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
		printf("FAIL %s_setup: no symbol for the loop\n", what);
		return;
	}
	spin_lo = (unsigned long)spin;
	spin_hi = spin_lo + sym->st_size;
	nr_samples = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	for (t0 = cpu_now(); nr_samples < 1000 && cpu_now() - t0 < 5;)
		spin(fn, 200000);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	for (i = 0; i < nr_samples; i++) {
		if (!sample_found[i] && lost++ < 5)
			printf("# %s: lost the loop from %#lx\n", what, sample_pc[i]);
		in_copies += generated(sample_pc[i]);
	}
	printf("# %s: %d samples, %d in the copies\n", what, nr_samples, in_copies);
	snprintf(name, sizeof(name), "%s_samples", what);
	CHECK(nr_samples >= 100 && in_copies > 0, name, "%d samples, %d in the copies",
	      nr_samples, in_copies);
	snprintf(name, sizeof(name), "%s_reaches_the_loop", what);
	CHECK(!lost, name, "%d of %d samples (%d in the copies) lost the loop", lost,
	      nr_samples, in_copies);
}

int main(void)
{
	struct fprobe fp = { .entry_handler = lean_entry, .exit_handler = lean_exit };
	struct ftrace_ops ops = { .func = ops_handler };
	struct sigaction sa = { 0 };
	const char *name = "work";
	bool sampled;
	void *libgcc = dlopen("libgcc_s.so.1", RTLD_NOW);

	*(void **)&backtrace_fn = libgcc ? dlsym(libgcc, "_Unwind_Backtrace") : NULL;
	*(void **)&get_ip_fn = libgcc ? dlsym(libgcc, "_Unwind_GetIP") : NULL;
	if (!backtrace_fn || !get_ip_fn) {
		printf("SKIP unwind: no libgcc_s.so.1\n");
		return check_exit();
	}
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);

	CHECK_EQ(register_fprobe_syms(&fp, &name, 1), 0, "unwind_fprobe_register");
	if (fhook_fprobe_frameless(&fp) != (FHOOK_FPROBE_FRAMELESS_ENTRY |
					    FHOOK_FPROBE_FRAMELESS_EXIT) ||
	    !generated(site_tramp(work))) {
		printf("SKIP unwind_fprobe: the probe's paths are not the generated frameless ones\n");
	} else {
		sample(work, "unwind_fprobe");
		CHECK(entries == exits && entries > 0, "unwind_fprobe_calls",
		      "%ld entries, %ld exits", entries, exits);
	}
	unregister_fprobe(&fp);

	CHECK_EQ(ftrace_set_filter(&ops, (unsigned char *)"work2", 5, 0), 0, "unwind_ops_filter");
	CHECK_EQ(register_ftrace_function(&ops), 0, "unwind_ops_register");
	sampled = generated(site_tramp(work2));
	if (!sampled)
		printf("SKIP unwind_ops: the site's trampoline is not a generated copy\n");
	else
		sample(work2, "unwind_ops");
	CHECK_EQ(unregister_ftrace_function(&ops), 0, "unwind_ops_unregister");
	ftrace_free_filter(&ops);
	/* (a sampled loop only: ThreadSanitizer's builds make no copies) */
	CHECK(ops_calls > 0 || !sampled, "unwind_ops_calls", "%ld calls", ops_calls);
	return check_exit();
}
