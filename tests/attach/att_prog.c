// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The process the attach tests attach to: built traceable, not linked
 * with libfhook.  N worker threads call work() in a loop and check every
 * result (the original's, or a patch's: work_new in att_repl.so adds
 * PATCH_DELTA); the main thread reads commands on stdin:
 *
 *   call X    print "ping X -> Y" (ping() is traceable; so is work())
 *   check     print "bad N" (wrong results so far; past 0, the last one:
 *             "bad N (last: work(X) = Y, thread TID)")
 *   handler   a new thread enters a SIGUSR1 handler and sleeps there
 *   release   it leaves the handler; print "released"
 *   padthread a new thread calls work() in a loop, with a SIGUSR2 handler
 *             that sleeps when its signal frame's pc is between two nops of
 *             work()'s pad ("release" lets it go on); print "padthread TID
 *             LO HI", the pad's bounds (att_park puts the thread there)
 *   padwait   wait for that handler; print "in pad" (or "pad not hit")
 *   masked    a new thread that blocks every signal calls work() in a loop
 *   dlopen P  a new thread dlopens P (att_slow.so: its constructor takes a
 *             second, the loader's lock held); print "dlopen started"
 *   dlwait    wait for it; print "dlopen done"
 *   fork      a child that calls ping() every 10 ms until killed; print
 *             "child PID"
 *   closefds  close every descriptor past stdout and stderr and open
 *             /dev/null in their place, as daemons do; print "closed"
 *   exec      become a new att_prog without worker threads (same pid,
 *             same stdin); it prints "ready PID"
 *   quit/EOF  stop the workers, print "calls ok, bad N", exit 1 if N > 0
 *
 * Usage: att_prog [THREADS]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define noinline __attribute__((noinline, noclone))
#define PATCH_DELTA 1000000L

static volatile int stop;
static unsigned long bad, calls;
/* the last wrong result, for the report: a patch of another function shows itself */
static long bad_x, bad_r;
static int bad_tid;

noinline long work(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2 + 1;
}

noinline long ping(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static int nr_started;

static void *worker(void *arg)
{
	long i = (long)arg, r, n = 0;

	__atomic_fetch_add(&nr_started, 1, __ATOMIC_RELAXED);

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		r = work(i);
		if (r != i * 2 + 1 && r != i * 2 + 1 + PATCH_DELTA) {
			__atomic_store_n(&bad_x, i, __ATOMIC_RELAXED);
			__atomic_store_n(&bad_r, r, __ATOMIC_RELAXED);
			__atomic_store_n(&bad_tid, gettid(), __ATOMIC_RELAXED);
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
		}
		i = (i + 1) & 0xffff;
		n++;
	}
	__atomic_fetch_add(&calls, n, __ATOMIC_RELAXED);
	return NULL;
}

static volatile int in_handler, release;

static void on_usr1(int sig)
{
	struct timespec ts = { 0, 1000000 };

	in_handler = 1;
	while (!release)
		nanosleep(&ts, NULL);
}

static volatile int pad_hit;

/*
 * (work()'s pad: -fpatchable-function-entry=5 puts its five nops at its
 * address; on aarch64 a site is one instruction, so no pc is ever inside one)
 */
static void on_usr2(int sig, siginfo_t *si, void *ctx)
{
#ifdef __x86_64__
	unsigned long pc = ((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
#else
	unsigned long pc = 0;
#endif
	unsigned long w = (unsigned long)work;
	struct timespec ts = { 0, 1000000 };

	if (pad_hit || pc <= w || pc >= w + 5)
		return;
	pad_hit = 1;
	while (!release)
		nanosleep(&ts, NULL);
}

static volatile pid_t pad_tid;

static void *pad_thread(void *arg)
{
	pad_tid = gettid();
	return worker(arg);
}

static void *handler_thread(void *arg)
{
	raise(SIGUSR1);
	return NULL;
}

static void *masked_thread(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return worker(arg);
}

static char dl_path[200];
static volatile int dl_started;

static void *dlopen_thread(void *arg)
{
	dl_started = 1;
	return dlopen(dl_path, RTLD_NOW);
}

int main(int argc, char **argv)
{
	pthread_t dth;
	pthread_t hth, mth, pth;
	bool have_masked = false, have_handler = false, have_pad = false;
	int nr = argc > 1 ? atoi(argv[1]) : 8, i;
	pthread_t th[64];
	char line[256];

	if (nr > 64)
		nr = 64;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < nr; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)(i * 4096));
	/*
	 * Every worker running its own code first: a thread still starting
	 * has every signal blocked (glibc's pthread_create), and the tests
	 * compare the threads' masks before and after an attach.
	 */
	while (__atomic_load_n(&nr_started, __ATOMIC_RELAXED) < nr)
		usleep(1000);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		long x;

		if (sscanf(line, "call %ld", &x) == 1) {
			long r = ping(x);

			printf("ping %ld -> %ld\n", x, r);
		} else if (!strncmp(line, "check", 5)) {
			unsigned long n = __atomic_load_n(&bad, __ATOMIC_RELAXED);

			if (n)
				printf("bad %lu (last: work(%ld) = %ld, thread %d)\n", n, bad_x, bad_r,
				       bad_tid);
			else
				printf("bad 0\n");
		} else if (!strncmp(line, "handler", 7)) {
			signal(SIGUSR1, on_usr1);
			pthread_create(&hth, NULL, handler_thread, NULL);
			have_handler = true;
			while (!in_handler)
				usleep(1000);
			printf("in handler\n");
		} else if (!strncmp(line, "padthread", 9) && !have_pad) {
			struct sigaction sa = { .sa_sigaction = on_usr2, .sa_flags = SA_SIGINFO };

			sigaction(SIGUSR2, &sa, NULL);
			pthread_create(&pth, NULL, pad_thread, (void *)99L);
			have_pad = true;
			while (!pad_tid)
				usleep(1000);
			printf("padthread %d %#lx %#lx\n", (int)pad_tid, (unsigned long)work,
			       (unsigned long)work + 5);
		} else if (!strncmp(line, "padwait", 7)) {
			for (i = 0; i < 2000 && !pad_hit; i++)
				usleep(1000);
			printf("%s\n", pad_hit ? "in pad" : "pad not hit");
		} else if (!strncmp(line, "release", 7)) {
			release = 1;
			if (have_handler)
				pthread_join(hth, NULL);
			printf("released\n");
		} else if (!strncmp(line, "masked", 6) && !have_masked) {
			have_masked = true;
			pthread_create(&mth, NULL, masked_thread, (void *)77L);
			printf("masked\n");
		} else if (sscanf(line, "dlopen %199s", dl_path) == 1) {
			pthread_create(&dth, NULL, dlopen_thread, NULL);
			while (!dl_started)
				usleep(1000);
			usleep(100000);	/* well inside the constructor */
			printf("dlopen started\n");
		} else if (!strncmp(line, "dlwait", 6)) {
			void *h;

			pthread_join(dth, &h);
			printf("dlopen %s\n", h ? "done" : "failed");
		} else if (!strncmp(line, "fork", 4)) {
			pid_t child = fork();

			if (!child) {
				for (;;) {
					ping(1);
					usleep(10000);
				}
			}
			printf("child %d\n", (int)child);
		} else if (!strncmp(line, "closefds", 8)) {
			for (i = 3; i < 64; i++)
				close(i);
			for (i = 3; i < 64; i++)
				open("/dev/null", O_RDONLY);
			printf("closed\n");
		} else if (!strncmp(line, "exec", 4)) {
			execl("/proc/self/exe", argv[0], "0", (char *)NULL);
			printf("exec failed\n");
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	stop = 1;
	for (i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	if (have_masked)
		pthread_join(mth, NULL);
	if (have_pad)
		pthread_join(pth, NULL);
	printf("calls %s, bad %lu\n", calls || !nr ? "ok" : "none", bad);
	return bad ? 1 : 0;
}
