// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unwinding from anywhere in the frameless paths: a profiler's signal
 * lands while a tight loop calls a function with proven entry and exit
 * handlers, and libgcc's unwinder, started in the signal handler, must
 * walk from wherever the signal landed (the generated copies of the
 * entry and the return, the return stubs, the handlers, the function) up
 * to the loop.  The copies' unwind information is their template's (as
 * registered with libgcc); an error in it loses the loop, or crashes.
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

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	struct walk w = { 0, 0 };
	int n = nr_samples;

	if (!spinning || n >= MAX_SAMPLES)
		return;
	_Unwind_Backtrace(walk_frame, &w);
	sample_pc[n] = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	sample_found[n] = (unsigned char)w.found;
	nr_samples = n + 1;
}

static volatile long sink;

NOINLINE void spin(long n)
{
	long i;

	spinning = 1;
	for (i = 0; i < n; i++)
		sink += work(i);
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

int main(void)
{
	struct fprobe fp = { .entry_handler = lean_entry, .exit_handler = lean_exit };
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct sigaction sa = { 0 };
	const ElfW(Sym) *sym = NULL;
	const char *name = "work";
	int i, lost = 0, in_copies = 0;
	Dl_info info;
	double t0;

	if (!dladdr1((void *)spin, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
		printf("FAIL unwind_setup: no symbol for spin()\n");
		return check_exit();
	}
	spin_lo = (unsigned long)spin;
	spin_hi = spin_lo + sym->st_size;
	CHECK_EQ(register_fprobe_syms(&fp, &name, 1), 0, "unwind_register");
	if (fhook_fprobe_frameless(&fp) != (FHOOK_FPROBE_FRAMELESS_ENTRY |
					    FHOOK_FPROBE_FRAMELESS_EXIT) ||
	    !generated(site_tramp(work))) {
		printf("SKIP unwind_copies: the probe's paths are not the generated frameless ones\n");
		unregister_fprobe(&fp);
		return check_exit();
	}
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	/* until 1,000 samples, or 5 s of CPU time */
	for (t0 = cpu_now(); nr_samples < 1000 && cpu_now() - t0 < 5;)
		spin(200000);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	unregister_fprobe(&fp);
	for (i = 0; i < nr_samples; i++) {
		if (!sample_found[i] && lost++ < 5)
			printf("# lost the loop from %#lx\n", sample_pc[i]);
		in_copies += generated(sample_pc[i]);
	}
	CHECK(entries == exits && entries > 0, "unwind_calls", "%ld entries, %ld exits",
	      entries, exits);
	CHECK(nr_samples >= 100 && in_copies > 0, "unwind_samples",
	      "%d samples, %d in the copies", nr_samples, in_copies);
	CHECK(!lost, "unwind_reaches_the_loop", "%d of %d samples (%d in the copies)", lost,
	      nr_samples, in_copies);
	printf("# %d samples, %d in the copies\n", nr_samples, in_copies);
	return check_exit();
}
