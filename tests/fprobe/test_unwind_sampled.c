// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unwinding from anywhere on the hooked paths: a profiler's signal lands
 * while a tight loop calls a function with an fprobe's entry and exit
 * handlers (or an ftrace_ops' handler), and libgcc's unwinder, started in
 * the signal handler, must walk from wherever the signal landed (the
 * site, the stub, the trampoline, the dispatcher, the handlers, the
 * return stubs and the return trampoline, the function) up to the loop.
 * An error in any piece's unwind information loses the loop, or crashes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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

static long entries, exits, ops_calls;

static int s_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		   struct ftrace_regs *fregs, void *data)
{
	entries++;
	return 0;
}

static void s_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		   struct ftrace_regs *fregs, void *data)
{
	exits++;
}

static void s_ops(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		  struct ftrace_regs *fregs)
{
	ops_calls++;
}

NOINLINE long work(long x)
{
	return x * 3 + 1;
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

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	unsigned long ip = _Unwind_GetIP(ctx);

	if (ip >= spin_lo && ip < spin_hi) {
		w->found = 1;
		return _URC_END_OF_STACK;
	}
	return ++w->depth > 64 ? _URC_END_OF_STACK : _URC_NO_REASON;
}

static unsigned long uc_pc(void *uc)
{
#if defined(__aarch64__)
	return ((ucontext_t *)uc)->uc_mcontext.pc;
#else
	return ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#endif
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	struct walk w = { 0, 0 };
	int n = nr_samples;

	if (!spinning || n >= MAX_SAMPLES)
		return;
	_Unwind_Backtrace(walk_frame, &w);
	sample_pc[n] = uc_pc(uc);
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

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The words of a function's entry pad after which the compiler's unwind
 * information starts: on aarch64, GCC's -fpatchable-function-entry=4,2
 * opens the function's FDE after "mov x9, x30" and the site, so a sample
 * there is lost to any unwinder, fhook or not.  (x86-64's pad is the
 * first instruction of the FDE.)
 */
#define ENTRY_PAD	(TEST_SITE_OFF ? TEST_SITE_OFF + 4 : 0)

static bool in_entry_pad(unsigned long pc)
{
	unsigned long size, off;

	return kallsyms_lookup_size_offset(pc, &size, &off) && off < ENTRY_PAD;
}

/* not in the program: in libfhook or in code it made */
static bool in_fhook(unsigned long pc)
{
	Dl_info info, self;

	dladdr((void *)spin, &self);
	return !dladdr((void *)pc, &info) || info.dli_fbase != self.dli_fbase;
}

/* 1,000 profiler samples (or 5 s of CPU time) of spin() calling @fn, each unwound to spin() */
static void sample(long (*fn)(long), const char *what)
{
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	unsigned long size = 0, off;
	int i, lost = 0, in_lib = 0, in_pad = 0;
	char name[64];
	double t0;

	if (!kallsyms_lookup_size_offset((unsigned long)spin, &size, &off) || !size) {
		printf("FAIL %s_setup: no symbol for the loop\n", what);
		return;
	}
	spin_lo = (unsigned long)spin;
	spin_hi = spin_lo + size;
	nr_samples = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	for (t0 = cpu_now(); nr_samples < 1000 && cpu_now() - t0 < 5;)
		spin(fn, 200000);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	for (i = 0; i < nr_samples; i++) {
		if (!sample_found[i] && in_entry_pad(sample_pc[i])) {
			in_pad++;
			continue;
		}
		if (!sample_found[i] && lost++ < (getenv("UNWIND_VERBOSE") ? 100 : 5)) {
			Dl_info info;

			if (dladdr((void *)sample_pc[i], &info) && info.dli_fname)
				printf("# %s: lost the loop from %#lx (%s+%#lx)\n", what,
				       sample_pc[i], strrchr(info.dli_fname, '/') ?
				       strrchr(info.dli_fname, '/') + 1 : info.dli_fname,
				       sample_pc[i] - (unsigned long)info.dli_fbase);
			else
				printf("# %s: lost the loop from %#lx\n", what, sample_pc[i]);
		}
		in_lib += in_fhook(sample_pc[i]);
	}
	printf("# %s: %d samples, %d in fhook's code, %d lost in functions' entry pads\n", what,
	       nr_samples, in_lib, in_pad);
	snprintf(name, sizeof(name), "%s_samples", what);
	CHECK(nr_samples >= 100 && in_lib > 0, name, "%d samples, %d in fhook's code",
	      nr_samples, in_lib);
	snprintf(name, sizeof(name), "%s_reaches_the_loop", what);
	CHECK(!lost, name, "%d of %d samples (%d in fhook's code) lost the loop", lost,
	      nr_samples, in_lib);
}

int main(void)
{
	struct fprobe fp = { .entry_handler = s_entry, .exit_handler = s_exit };
	struct ftrace_ops ops = { .func = s_ops };
	struct sigaction sa = { 0 };
	const char *name = "work";

#ifdef __SANITIZE_THREAD__
	/* the unwinder's first look at new unwind tables allocates, in the signal handler */
	printf("SKIP unwind_sampled: ThreadSanitizer forbids malloc in a signal handler\n");
	return check_exit();
#endif
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);

	CHECK_EQ(register_fprobe_syms(&fp, &name, 1), 0, "sampled_fprobe_register");
	sample(work, "sampled_fprobe");
	CHECK(entries == exits && entries > 0, "sampled_fprobe_calls", "%ld entries, %ld exits",
	      entries, exits);
	unregister_fprobe(&fp);

	CHECK_EQ(ftrace_set_filter(&ops, (unsigned char *)"work2", 5, 0), 0, "sampled_ops_filter");
	CHECK_EQ(register_ftrace_function(&ops), 0, "sampled_ops_register");
	sample(work2, "sampled_ops");
	CHECK_EQ(unregister_ftrace_function(&ops), 0, "sampled_ops_unregister");
	ftrace_free_filter(&ops);
	CHECK(ops_calls > 0, "sampled_ops_calls", "%ld calls", ops_calls);
	return check_exit();
}
