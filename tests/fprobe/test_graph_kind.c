// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A thread stalled inside a frameless entry trampoline, before it counted
 * itself in, is not waited for by an unregister: when it resumes it may
 * read the fgraph of the next registration of the same fprobe, which can
 * be of another kind (here: with entry data, where the trampoline it is
 * in passes none).  It must then take the C path, which knows the new
 * kind, and never call the new handler as the old trampoline would.
 *
 * Made deterministic with ptrace: a child process's worker thread calls a
 * traced function in a loop; the parent stops that thread and steps it
 * instruction by instruction from the traced function's site, through the
 * stub, to the first instruction of the trampoline; the child's main
 * thread then unregisters the probe and registers it again with entry
 * data; the worker goes on.  Its new entry handler writes through the
 * data it is given: called with none, the child dies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

#include "../check.h"

#define NOTRACE __attribute__((noinline, patchable_function_entry(0, 0), \
			       no_sanitize("address", "thread", "undefined")))

#ifdef __SANITIZE_THREAD__
#define FRAMELESS 0	/* ThreadSanitizer's builds of libfhook take the C path */
#else
#define FRAMELESS (FHOOK_FPROBE_FRAMELESS_ENTRY | FHOOK_FPROBE_FRAMELESS_EXIT)
#endif

static int stop;
static volatile long with_data, without_data, exits;

NOINLINE int traced(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

NOTRACE static int plain_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			       struct ftrace_regs *fregs, void *data)
{
	without_data++;
	return 0;
}

/* the next registration's: its data is always there */
NOTRACE static int data_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *data)
{
	*(volatile long *)data = 7;
	with_data++;
	return 0;
}

NOTRACE static void count_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			       struct ftrace_regs *fregs, void *data)
{
	exits++;
}

static int tid_pipe[2], cmd_pipe[2], ack_pipe[2];

static void *worker(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	long s = 0;
	int i;

	/* calls of the first registration's kind, before the parent stops one */
	for (i = 0; i < 1000; i++)
		s += traced(1);
	if (write(tid_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		s += traced(1);
	return (void *)s;
}

/* The child: exits 0 when the worker survived and every call was counted right. */
static int child(void)
{
	struct fprobe fp = { .entry_handler = plain_entry, .exit_handler = count_exit };
	const char *sym = "traced";
	pthread_t t;
	char c;

	if (register_fprobe_syms(&fp, &sym, 1) || fhook_fprobe_frameless(&fp) != FRAMELESS)
		return 10;
	if (pthread_create(&t, NULL, worker, NULL))
		return 11;
	if (read(cmd_pipe[0], &c, 1) != 1)
		return 12;
	/* the worker is stopped inside the trampoline: another kind of probe */
	unregister_fprobe(&fp);
	fp.entry_handler = data_entry;
	fp.entry_data_size = sizeof(long);
	if (register_fprobe_syms(&fp, &sym, 1))
		return 13;
	if (write(ack_pipe[1], "d", 1) != 1 || read(cmd_pipe[0], &c, 1) != 1)
		return 14;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	unregister_fprobe(&fp);
	if (with_data > 0 && without_data > 0 && exits == with_data + without_data)
		return 0;
	fprintf(stderr, "child: %ld entries with data, %ld without, %ld exits\n", with_data,
		without_data, exits);
	return 15;
}

static unsigned long rip_of(pid_t tid)
{
	struct user_regs_struct r;

	return ptrace(PTRACE_GETREGS, tid, NULL, &r) ? 0 : r.rip;
}

static int step(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) || waitpid(tid, &st, __WALL) != tid)
		return -1;
	return WIFSTOPPED(st) ? 0 : -1;
}

int main(void)
{
	unsigned long site = (unsigned long)traced, rip = 0;
	pid_t pid, tid;
	int st, n, ok = 0;
	char c;

	if (pipe(tid_pipe) || pipe(cmd_pipe) || pipe(ack_pipe))
		return 2;
	pid = fork();
	if (pid == 0)
		_exit(child());
	if (read(tid_pipe[0], &tid, sizeof(tid)) != sizeof(tid)) {
		CHECK(0, "kind_child_started", "no worker");
		return check_exit();
	}
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) ||
	    waitpid(tid, &st, __WALL) != tid) {
		printf("SKIP kind: ptrace refused (%s)\n", strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return 0;
	}
	/* to the site, then its call, the stub's two instructions: the trampoline */
	for (n = 0; n < 1000000 && (rip = rip_of(tid)) != site; n++)
		if (step(tid))
			break;
	if (rip == site) {
		ok = 1;
		for (n = 0; n < 3 && ok; n++)
			ok = !step(tid);
		rip = rip_of(tid);
	}
	CHECK(ok && rip && (rip < site || rip >= site + 64), "kind_stopped_in_trampoline",
	      "stepped to %#lx", rip);
	/* the child's main thread swaps the probe meanwhile */
	CHECK(write(cmd_pipe[1], "s", 1) == 1 && read(ack_pipe[0], &c, 1) == 1,
	      "kind_reregistered", "the child did not answer");
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	usleep(20000);
	CHECK(write(cmd_pipe[1], "e", 1) == 1, "kind_told_to_end", "write");
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kind_other_kind_takes_c",
	      "child %s %d", WIFEXITED(st) ? "exited" : "killed by signal",
	      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return check_exit();
}
