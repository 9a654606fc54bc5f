// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * toggle.so: preloaded after libfhook.so into every process of a test suite.
 *
 * FHOOK_REAL_MODE=toggle (default): a background thread registers an fprobe
 * (entry and exit handler) on every function ("*"), keeps it a random 0-500 us,
 * disables and re-enables it in between, unregisters it, waits a random
 * 0-500 us, and starts again, until the process exits.  A process with no
 * patchable site (sh, make) gets -ENOENT and the thread stops at once.  After a
 * fork() the child starts its own thread (pthread_atfork).
 *
 * FHOOK_REAL_MODE=count: the fprobe is registered once, in the constructor,
 * and stays: the entry and exit handlers count every call (the independent
 * count that `fhook trace`'s events + nmissed + lost are compared with).
 *
 * Every handler checks that the exit handler gets its own call's entry data
 * (the entry ip).  At exit each process appends one line to FHOOK_REAL_LOG:
 *   pid=N comm=NAME mode=M cycles=N entries=N exits=N bad=N nmissed=N errors=N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fhook/fprobe.h>

static unsigned long n_entries, n_exits, n_bad, n_cycles, n_errors, n_missed_sum;
static int count_mode;
static volatile int stop;
static int registered, no_sites;
static pthread_t thr;
static int thr_running;
static pthread_mutex_t op_lock = PTHREAD_MUTEX_INITIALIZER;

static int on_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	__atomic_fetch_add(&n_entries, 1, __ATOMIC_RELAXED);
	*(unsigned long *)data = ip;
	return 0;
}

static void on_exit_(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		     struct ftrace_regs *fregs, void *data)
{
	__atomic_fetch_add(&n_exits, 1, __ATOMIC_RELAXED);
	if (*(unsigned long *)data != ip)
		__atomic_fetch_add(&n_bad, 1, __ATOMIC_RELAXED);
}

static struct fprobe fp = {
	.entry_handler = on_entry,
	.exit_handler = on_exit_,
	.entry_data_size = sizeof(unsigned long),
};

static void pause_us(unsigned int *seed)
{
	struct timespec ts = { 0, (long)(rand_r(seed) % 500) * 1000 };

	nanosleep(&ts, NULL);
}

static void *toggler(void *arg)
{
	unsigned int seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
	int r;

	while (!stop) {
		pthread_mutex_lock(&op_lock);
		r = register_fprobe(&fp, "*", NULL);
		if (r == 0)
			registered = 1;
		pthread_mutex_unlock(&op_lock);
		if (r == -ENOENT) {
			no_sites = 1;
			break;
		}
		if (r) {
			n_errors++;
			pause_us(&seed);
			continue;
		}
		pause_us(&seed);
		disable_fprobe(&fp);
		pause_us(&seed);
		enable_fprobe(&fp);
		pause_us(&seed);
		pthread_mutex_lock(&op_lock);
		n_missed_sum += fprobe_nmissed(&fp);
		if (unregister_fprobe(&fp))
			n_errors++;
		registered = 0;
		pthread_mutex_unlock(&op_lock);
		n_cycles++;
		pause_us(&seed);
	}
	return NULL;
}

static void start_thread(void)
{
	sigset_t all, old;

	/* the thread takes no signal meant for the program */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	thr_running = !pthread_create(&thr, NULL, toggler, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&op_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&op_lock);
}

static void atfork_child(void)
{
	pthread_mutex_unlock(&op_lock);
	n_entries = n_exits = n_bad = n_cycles = n_errors = n_missed_sum = 0;
	thr_running = 0;
	if (!count_mode && !no_sites && !stop)
		start_thread();
}

__attribute__((constructor(65535))) static void toggle_init(void)
{
	const char *m = getenv("FHOOK_REAL_MODE");

	count_mode = m && !strcmp(m, "count");
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (count_mode) {
		int r = register_fprobe(&fp, "*", NULL);

		if (r == 0)
			registered = 1;
		else if (r == -ENOENT)
			no_sites = 1;
		else
			n_errors++;
		return;
	}
	start_thread();
}

__attribute__((destructor(101))) static void toggle_exit(void)
{
	const char *log = getenv("FHOOK_REAL_LOG");
	char comm[64] = "?", line[512];
	int fd, n;

	stop = 1;
	if (thr_running) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 5;
		if (pthread_timedjoin_np(thr, NULL, &ts))
			n_errors += 1000;	/* the toggler hung */
		thr_running = 0;
	}
	if (no_sites || !log)
		return;
	if (registered)
		n_missed_sum += fprobe_nmissed(&fp);
	fd = open("/proc/self/comm", O_RDONLY);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		comm[n > 0 ? n - 1 : 0] = 0;
		close(fd);
	}
	n = snprintf(line, sizeof(line),
		     "pid=%d comm=%s mode=%s cycles=%lu entries=%lu exits=%lu bad=%lu nmissed=%lu errors=%lu\n",
		     getpid(), comm, count_mode ? "count" : "toggle", n_cycles,
		     __atomic_load_n(&n_entries, __ATOMIC_RELAXED),
		     __atomic_load_n(&n_exits, __ATOMIC_RELAXED),
		     __atomic_load_n(&n_bad, __ATOMIC_RELAXED), n_missed_sum, n_errors);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0) {
		if (write(fd, line, n) != n)
			n_errors++;
		close(fd);
	}
}
