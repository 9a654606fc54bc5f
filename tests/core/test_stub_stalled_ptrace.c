// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_stub_stalled's question on every architecture, with the thread held
 * by a tracer instead of the trap flag: a thread stopped between a site's
 * call and its trampoline's count-in, while its ops is unregistered and
 * the ops' memory registered again as another ops, must run into no
 * handler of the second for its own function.
 *
 * Each case forks a process that registers the first ops on f() and
 * starts a thread that will call f(41); this program seizes that thread
 * and single-steps it (PTRACE_SINGLESTEP) until it is on f()'s stub, or
 * at the first instruction after it, then has the process swap the
 * registrations and lets the thread go.  The process checks what it saw.
 * Needs ptrace (not under qemu-user: SKIP); aarch64 runs it in the VM of
 * `make test-aarch64-vm`.  Bounded: 20 s a case at most.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stub_stalled.h"
#include "../thread_pc.h"

#define STUB_BYTES	16	/* a stub's code, on both architectures */

/* ---- the traced process ---- */

struct hello {
	pid_t tid;
	unsigned long stub;
};

static int back_fd, cmd_fd;
static const char *case_name;
static char what[128];

/* a check's name in the traced process: its case's first */
#define NAMED(n)	(snprintf(what, sizeof(what), "%s_%s", case_name, n), what)
static long result;
static pid_t worker_tid;
static int go;

/*
 * It waits with plain loads, no system call: stepped through glibc's
 * cancellation points, an LL/SC loop would never complete (a step clears
 * the exclusive monitor).
 */
static void *worker(void *arg)
{
	(void)arg;
	__atomic_store_n(&worker_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	result = f(41);
	return NULL;
}

static int traced_process(bool ipmodify)
{
	static struct ftrace_ops ops;	/* both registrations' memory */
	static struct want first, second;
	unsigned long f_ip = (unsigned long)f + TEST_SITE_OFF;
	unsigned long g_ip = (unsigned long)g + TEST_SITE_OFF;
	unsigned long flags = ipmodify ? FTRACE_OPS_FL_IPMODIFY : 0;
	struct hello h;
	pthread_t t;
	char c;
	int ret;

	first = (struct want){ f_ip, ipmodify ? (unsigned long)f_new : 0 };
	second = (struct want){ g_ip, ipmodify ? (unsigned long)g_new : 0 };
	ops.func = handler;
	ops.flags = flags;
	ops.private = &first;
	ret = ftrace_set_filter_ip(&ops, f_ip, 0, 1);
	if (!ret)
		ret = register_ftrace_function(&ops);
	CHECK_EQ(ret, 0, NAMED("first_registered"));
	h.stub = test_site_call_target(f_ip);
	CHECK(h.stub != 0, NAMED("site_calls"), "f's site calls nothing");
	pthread_create(&t, NULL, worker, NULL);
	while (!(h.tid = __atomic_load_n(&worker_tid, __ATOMIC_ACQUIRE)))
		usleep(1000);
	if (write(back_fd, &h, sizeof(h)) != sizeof(h))
		return 100;
	/* the tracer has seized the worker: it may go (one step at a time) */
	if (read(cmd_fd, &c, 1) != 1)
		return 100;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	if (write(back_fd, "g", 1) != 1)
		return 100;
	/* the tracer holds the worker; swap the registrations when it says so */
	if (read(cmd_fd, &c, 1) != 1)
		return 100;
	ret = unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
	memset(&ops, 0, sizeof(ops));
	ops.func = handler;
	ops.flags = flags;
	ops.private = &second;
	if (!ret)
		ret = ftrace_set_filter_ip(&ops, g_ip, 0, 1);
	if (!ret)
		ret = register_ftrace_function(&ops);
	CHECK_EQ(ret, 0, NAMED("second_registered"));
	if (write(back_fd, "D", 1) != 1)
		return 100;
	pthread_join(t, NULL);
	CHECK_EQ(wrong_site, 0, NAMED("no_call_for_another_site"));
	CHECK(result == 42 || (ipmodify && result == 141), NAMED("result"), "f(41) = %ld", result);
	CHECK_EQ(g(1), ipmodify ? 201 : 3, NAMED("second_serves"));
	unregister_ftrace_function(&ops);
	return check_exit();
}

/* ---- the tracer ---- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read @n bytes from @fd within 20 s. */
static bool read_within(int fd, void *buf, size_t n)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 20000) == 1 && read(fd, buf, n) == (ssize_t)n;
}

enum hold_at { AT_STUB, AT_TRAMPOLINE };

/* Step @tid until it is where @at says; its pc there, 0 if it never got there. */
static unsigned long hold(pid_t tid, unsigned long stub, enum hold_at at, long *steps)
{
	double end = now() + 20;
	bool was_in = false;
	int st, sig = 0;

	for (*steps = 0; now() < end; ++*steps) {
		unsigned long pc = test_thread_pc(tid);
		bool in = pc - stub < STUB_BYTES;

		if (at == AT_STUB ? in : (was_in && !in))
			return pc;
		was_in |= in;
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, (void *)(long)sig))
			return 0;
		if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st))
			return 0;
		/* a signal for the thread goes on with the next step */
		sig = WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st);
	}
	return 0;
}

static void one_case(const char *name, enum hold_at at, bool ipmodify)
{
	int back[2], cmd[2], st;
	unsigned long held;
	struct hello h;
	char c;
	long steps;
	pid_t pid;

	if (pipe(back) || pipe(cmd))
		return;
	printf("# case %s\n", name);
	fflush(stdout);
	case_name = name;
	pid = fork();
	if (pid == 0) {
		check_failed = 0;	/* its own checks only */
		back_fd = back[1];
		cmd_fd = cmd[0];
		_exit(traced_process(ipmodify));
	}
	close(back[1]);
	close(cmd[0]);
	snprintf(what, sizeof(what), "%s_process_ready", name);
	CHECK(read_within(back[0], &h, sizeof(h)), what, "no word from the process");
	if (ptrace(PTRACE_SEIZE, h.tid, 0, 0) && errno == EPERM) {
		/* Yama's ptrace_scope 3, or no CAP_SYS_PTRACE where it asks for one */
		printf("SKIP %s: ptrace refused (EPERM)\n", name);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		goto close;
	}
	if (ptrace(PTRACE_INTERRUPT, h.tid, 0, 0) || waitpid(h.tid, &st, __WALL) != h.tid) {
		snprintf(what, sizeof(what), "%s_seized", name);
		CHECK(0, what, "thread %d: %s", h.tid, strerror(errno));
		kill(pid, SIGKILL);
		goto out;
	}
	if (write(cmd[1], "G", 1) != 1 || !read_within(back[0], &c, 1))
		goto out;
	held = hold(h.tid, h.stub, at, &steps);
	snprintf(what, sizeof(what), "%s_thread_held", name);
	CHECK(held != 0, what, "not held after %ld steps", steps);
	if (write(cmd[1], "R", 1) == 1) {
		snprintf(what, sizeof(what), "%s_swapped", name);
		CHECK(read_within(back[0], &c, 1), what, "the process did not answer");
	}
	ptrace(PTRACE_DETACH, h.tid, 0, 0);
out:
	waitpid(pid, &st, 0);
	snprintf(what, sizeof(what), "%s_process_checks", name);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, what, "status %#x", st);
close:
	close(back[0]);
	close(cmd[1]);
}

int main(void)
{
	/* ptrace at all? (qemu-user has none) */
	if (ptrace(PTRACE_PEEKDATA, getppid(), 0, 0) == -1 && errno == ENOSYS) {
		printf("SKIP stub_stalled_ptrace: no ptrace here\n");
		return 0;
	}
	one_case("stub", AT_STUB, false);
	one_case("trampoline", AT_TRAMPOLINE, false);
	one_case("ipmod_stub", AT_STUB, true);
	one_case("ipmod_trampoline", AT_TRAMPOLINE, true);
	return check_exit();
}
