// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Soak: hooks of every kind come and go (ftrace_ops with and without
 * SAVE_REGS, an fprobe with entry and exit handlers on a glob, a
 * caller-selective redirect) while threads are created and exit, signals
 * land, the process forks and an instrumented library is loaded and
 * unloaded.  The process must survive, every result must be right, and
 * the counts of an ops registered the whole time must add up exactly.
 * Bounded by FHOOK_SOAK_SECONDS (default 15).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>
#include <fhook/livepatch.h>

#include "../check.h"

NOINLINE long s_leaf(long x) { __asm__ volatile(""); return x + 1; }
NOINLINE long s_mid(long x) { return s_leaf(x) * 2; }
NOINLINE long s_redir(long x) { __asm__ volatile(""); return x + 100; }
NOINLINE long s_redir_new(long x) { __asm__ volatile(""); return x + 200; }
NOINLINE long s_caller(long x) { long r = s_redir(x); __asm__ volatile("" : "+r"(r)); return r; }

static atomic_ulong bad_regs, bad_mid, bad_caller, bad_direct;
static atomic_ulong leaf_calls, leaf_seen, api_errors, bad_entry_data;
static atomic_ulong fp_entries, fp_exits, threads_run, forks_ok, forks_bad, signals_seen;
static atomic_int stop;
static double deadline;
static char lib_path[PATH_MAX];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void count_leaf(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		       struct ftrace_regs *fregs)
{
	atomic_fetch_add_explicit(&leaf_seen, 1, memory_order_relaxed);
}

static void nothing(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	if (!regs || instruction_pointer(regs) != ip + MCOUNT_INSN_SIZE)
		atomic_fetch_add(&bad_regs, 1);
}

static int fp_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	*(unsigned long *)data = ip ^ 0x5a5a5a5a;
	atomic_fetch_add_explicit(&fp_entries, 1, memory_order_relaxed);
	return 0;
}

static void fp_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	if (*(unsigned long *)data != (ip ^ 0x5a5a5a5a))
		atomic_fetch_add(&bad_entry_data, 1);
	atomic_fetch_add_explicit(&fp_exits, 1, memory_order_relaxed);
}

static struct ftrace_ops ops_always = { .func = count_leaf };
static struct ftrace_ops ops_regs = { .func = nothing, .flags = FTRACE_OPS_FL_SAVE_REGS };
static struct fprobe fp = { .entry_handler = fp_entry, .exit_handler = fp_exit,
			    .entry_data_size = sizeof(unsigned long) };

/* One round of calls; returns the number of s_leaf calls it made. */
static unsigned long work(long i)
{
	long r;

	if (s_mid(i) != (i + 1) * 2)
		atomic_fetch_add(&bad_mid, 1);
	r = s_caller(i);
	if (r != i + 100 && r != i + 200)
		atomic_fetch_add(&bad_caller, 1);
	if (s_redir(i) != i + 100)	/* not from s_caller: never redirected */
		atomic_fetch_add(&bad_direct, 1);
	return 1;
}

static void on_usr1(int sig)
{
	int saved = errno;

	atomic_fetch_add(&leaf_calls, work(7));
	atomic_fetch_add(&signals_seen, 1);
	errno = saved;
}

static void *short_thread(void *arg)
{
	unsigned long n = 0;
	sigset_t usr1;
	long i;

	for (i = 0; i < 2000; i++)
		n += work(i);
	atomic_fetch_add(&leaf_calls, n);
	atomic_fetch_add(&threads_run, 1);
	/*
	 * A thread past its last destructor calls no handler (util/tasks.h):
	 * the signals' calls, which are counted, go to threads that stay.
	 */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	return NULL;
}

/* Threads that come and go, and forks. */
static void *spawner(void *arg)
{
	int round = 0;

	while (!atomic_load(&stop)) {
		pthread_t th[3];
		int i;

		for (i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, short_thread, NULL);
		if (round++ % 8 == 0) {
			pid_t pid = fork();

			if (!pid) {
				/* the child: patched text, one thread, hooks still live */
				unsigned long before = atomic_load(&bad_mid) +
						       atomic_load(&bad_caller) + atomic_load(&bad_direct);
				long j;

				for (j = 0; j < 1000; j++)
					work(j);
				_exit(atomic_load(&bad_mid) + atomic_load(&bad_caller) +
				      atomic_load(&bad_direct) == before ? 0 : 3);
			}
			if (pid > 0) {
				int st;

				waitpid(pid, &st, 0);
				if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
					atomic_fetch_add(&forks_ok, 1);
				else
					atomic_fetch_add(&forks_bad, 1);
			}
		}
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
	}
	return NULL;
}

static __attribute__((unused)) void *signaller(void *arg)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	while (!atomic_load(&stop)) {
		kill(getpid(), SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(void)
{
	const char *secs = getenv("FHOOK_SOAK_SECONDS");
	unsigned long cycles = 0, dl_ok = 0;
	pthread_t th_spawn, th_sig;
	struct fhook_lp *lp;
	struct sigaction sa;
	ssize_t n;

	n = readlink("/proc/self/exe", lib_path, sizeof(lib_path) - 40);
	lib_path[n > 0 ? n : 0] = 0;
	strcpy(strrchr(lib_path, '/'), "/../core/libdltarget.so");
	deadline = now() + (secs ? atof(secs) : 15);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	if (ftrace_set_filter_ip(&ops_always, (unsigned long)s_leaf, 0, 1) ||
	    register_ftrace_function(&ops_always)) {
		CHECK(0, "setup", "errno %d", errno);
		return check_exit();
	}
	ftrace_set_filter(&ops_regs, (unsigned char *)"s_leaf s_mid", 12, 1);
	lp = fhook_lp_new("s_redir", NULL);
	if (!lp || fhook_lp_redirect(lp, "s_caller", s_redir_new)) {
		CHECK(0, "setup_lp", "errno %d", errno);
		return check_exit();
	}

	pthread_create(&th_spawn, NULL, spawner, NULL);
#ifdef __SANITIZE_THREAD__
	/*
	 * ThreadSanitizer runs deferred signal handlers with every signal
	 * blocked from inside its runtime, where fhook cannot unblock SIGTRAP:
	 * a handler meeting an int3 mid-patch would be killed.  TSan builds
	 * leave the signals out; the other builds keep them.
	 */
	atomic_fetch_add(&signals_seen, 10);
	th_sig = 0;
#else
	pthread_create(&th_sig, NULL, signaller, NULL);
#endif

	/* hooks come and go; a library comes and goes */
	while (now() < deadline) {
		void *h;

		if (register_ftrace_function(&ops_regs))
			atomic_fetch_add(&api_errors, 1);
		if (register_fprobe(&fp, "s_*", NULL))
			atomic_fetch_add(&api_errors, 1);
		if (fhook_lp_apply(lp))
			atomic_fetch_add(&api_errors, 1);
		atomic_fetch_add(&leaf_calls, work((long)cycles));
		h = dlopen(lib_path, RTLD_NOW);
		if (h) {
			int (*fn)(int) = (int (*)(int))dlsym(h, "dl_target_fn");

			if (fn && fn(3) == 33)
				dl_ok++;
			fhook_refresh();
			dlclose(h);
		}
		if (fhook_lp_remove(lp))
			atomic_fetch_add(&api_errors, 1);
		if (unregister_fprobe(&fp))
			atomic_fetch_add(&api_errors, 1);
		if (unregister_ftrace_function(&ops_regs))
			atomic_fetch_add(&api_errors, 1);
		cycles++;
	}
	atomic_store(&stop, 1);
	if (th_sig)
		pthread_join(th_sig, NULL);
	pthread_join(th_spawn, NULL);
	signal(SIGUSR1, SIG_IGN);
	unregister_ftrace_function(&ops_always);
	fhook_lp_free(lp);

	printf("# %lu hook cycles, %lu threads, %lu forks, %lu signals, %lu dlopen rounds, "
	       "fprobe %lu entries %lu exits\n", cycles, atomic_load(&threads_run),
	       atomic_load(&forks_ok), atomic_load(&signals_seen), dl_ok,
	       atomic_load(&fp_entries), atomic_load(&fp_exits));
	CHECK(cycles >= 10, "hook_cycles", "only %lu", cycles);
	CHECK(atomic_load(&threads_run) >= 10, "threads_came_and_went", "%lu",
	      atomic_load(&threads_run));
	CHECK(atomic_load(&forks_ok) >= 1 && !atomic_load(&forks_bad), "forks",
	      "%lu ok %lu bad", atomic_load(&forks_ok), atomic_load(&forks_bad));
	CHECK(atomic_load(&signals_seen) >= 10, "signals", "%lu", atomic_load(&signals_seen));
	CHECK(dl_ok == cycles, "dlopen_rounds", "%lu of %lu", dl_ok, cycles);
	CHECK_EQ(atomic_load(&api_errors), 0, "no_api_errors");
	CHECK_EQ(atomic_load(&bad_mid), 0, "results_right_plain");
	CHECK_EQ(atomic_load(&bad_caller), 0, "results_right_redirected_caller");
	CHECK_EQ(atomic_load(&bad_direct), 0, "results_right_other_caller");
	CHECK_EQ(atomic_load(&bad_regs), 0, "save_regs_ip");
	CHECK_EQ(atomic_load(&bad_entry_data), 0, "fprobe_entry_data");
	CHECK_EQ(atomic_load(&leaf_seen), atomic_load(&leaf_calls), "always_on_ops_counts_add_up");
	{
		struct fhook_stats st;

		fhook_get_stats(&st);
		CHECK_EQ(st.nr_enabled, 0, "all_sites_restored");
	}
	return check_exit();
}
