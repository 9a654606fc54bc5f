// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Getting into a running process with ptrace (docs/attach.md).
 *
 * Every thread is seized and interrupted, one thread stopped at a safe
 * point (in the program's own code, or blocked in a system call such as
 * read() or nanosleep() that holds no lock of libc's) is chosen, and the
 * others are let go again at once.  The chosen thread is made to call a
 * function of the process: its registers, extended state and signal mask
 * are saved, the arguments are written below its stack's red zone, the
 * call returns to address 0 and the fault stops it for us, and everything
 * is put back.  A thread stopped inside a system call restarts it as the
 * kernel would have (cli/attach/arch/: on x86-64 orig_rax and the
 * -ERESTART* value are restored).
 *
 * A process without libfhook first gets it: its gcc pads (five 1-byte
 * nops) are made 5-byte nops while every thread is stopped and none is
 * between two of those nops, then libc's dlopen() loads libfhook on the
 * chosen thread, errno saved around it.  After that, and for a process
 * that had libfhook, each request is one call of fhook_attach_ctl().
 *
 * That first call starts the process's control thread: every later
 * attach goes to its socket instead and stops nothing, the permission
 * proven by seizing that thread (att_ctl_sock_open(), lib/core/ctl_thread.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "att.h"

/*
 * The first request through the kept thread is a "hello", which starts
 * the control thread (fhook_attach_ctl()); then the kept thread is let go
 * and the requests go to the control socket, so that no thread of the
 * process waits for them (the first "patch --list" of a process of 20,000
 * functions kept it 1.3-1.7 ms more).  Without a control thread (a
 * seccomp filter, its name taken), a thread is kept again and the ptrace
 * call stays the channel.
 */
static int hello_then_socket(struct cli_attach *a)
{
	char *reply = NULL;
	int ret = -EOPNOTSUPP;

	/*
	 * On the loader thread, a call with a landing (a command killed in it
	 * leaves the thread to end, not to fault) and no result: the reply is
	 * asked for again on the socket the call's control thread opened.
	 */
	if (a->by_loader && a->hijack && a->land_fn) {
		unsigned long args[1];

		ret = att_call_land(a, a->ctl, args, 1, "hello", sizeof("hello"), 0);
		if (!ret && att_verbose())
			fprintf(stderr, "fhook: %s: request 'hello': %.2f ms in the process (its "
				"landing)\n", a->cmd, a->times.call_ms);
		if (!ret) {
			att_release_hijack(a);
			if (!att_ctl_sock_open(a)) {
				ret = cli_attach_ctl(a, "hello", &reply);
				free(reply);
				return ret < 0 ? ret : 0;
			}
		}
		if (ret && ret != -EOPNOTSUPP)
			return ret;
	}
	if (ret) {
		ret = cli_attach_ctl(a, "hello", &reply);
		free(reply);
		if (ret < 0)
			return ret;
		att_release_hijack(a);
		if (!att_ctl_sock_open(a))
			return 0;
	}
	if (att_verbose())
		fprintf(stderr, "fhook: %s: no control socket in process %d: the ptrace call "
			"stays the channel\n", a->cmd, a->pid);
	return att_stop_one_safe(a);
}

static int attach_open(const char *cmd, pid_t pid, struct cli_attach **out)
{
	struct cli_attach *a;
	const struct att_map *lib;
	sigset_t held;
	int ret;

	*out = NULL;
	ret = att_check_target(cmd, pid);
	if (ret)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	/*
	 * Every stop's SIGCHLD kept for att_wait_for_tracee(); and the signals
	 * that end a command wait until its threads of the process are let go
	 * (the mask is put back at close): a tracer that dies while a call of
	 * its own runs in a thread leaves that thread to return to address 0.
	 * (SIGKILL alone cannot wait.)
	 */
	sigemptyset(&held);
	sigaddset(&held, SIGCHLD);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGTERM);
	sigaddset(&held, SIGHUP);
	sigaddset(&held, SIGQUIT);
	sigaddset(&held, SIGPIPE);
	sigaddset(&held, SIGALRM);
	sigaddset(&held, SIGUSR1);
	sigaddset(&held, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &held, &a->old_mask);
	a->cmd = cmd;
	a->pid = pid;
	a->sock = -1;
	a->pidfd = syscall(SYS_pidfd_open, pid, 0);
	/* attached to before: its control thread answers, and no thread is stopped */
	ret = att_ctl_sock_open(a);
	if (!ret) {
		*out = a;
		return 0;
	}
	/* none yet: the first request starts it (hello_then_socket()) */
	a->ctl_missing = ret == -ENOENT;
	a->th = calloc(ATT_MAX_THREADS, sizeof(*a->th));
	if (!a->th) {
		ret = -ENOMEM;
		goto fail;
	}
	/* what can be learnt with the threads running is learnt first */
	ret = att_read_maps(a);
	if (!ret)
		ret = att_wait_for_libc(a);
	if (!ret)
		a->restorer = att_find_restorer(a);
	if (!ret && att_object_named(a, "libfhook.so") && !att_sigtrap_blocked(pid)) {
		/* nothing needs the world stopped: one thread at a time, until one is safe */
		ret = att_stop_one_safe(a);
		if (ret)
			goto fail;
		goto have_lib;
	}
	if (!ret && !att_object_named(a, "libfhook.so")) {
		ret = att_prep_load(a);
		if (ret)
			goto fail;
	}
	/* every thread stopped together only for the pads and the masks */
	memset(att_stack_words, 0, sizeof(att_stack_words));
	ret = att_world_stop(a);
	if (ret)
		goto fail;
	/* then one thread at a safe point, the others running: dlopen may need their locks */
	ret = att_stop_one_safe(a);
	if (ret)
		goto fail;
	if (!att_object_named(a, "libfhook.so")) {
		ret = a->pads_done ? att_start_loader(a) : -EAGAIN;	/* it went away? */
		if (!ret && !a->hijack)		/* the kept thread let go, the loader lost */
			ret = att_stop_one_safe(a);
		if (ret >= 0)
			ret = att_load_libfhook(a);
		if (ret)
			goto fail;
		att_read_maps(a);
	}
have_lib:
	lib = att_object_named(a, "libfhook.so");
	a->ctl = lib ? att_object_sym(lib, "fhook_attach_ctl") : 0;
	if (!a->ctl) {
		fprintf(stderr, "fhook: %s: the libfhook of process %d has no control channel "
			"(an older libfhook?)\n", cmd, pid);
		ret = -ENOSYS;
		goto fail;
	}
	if (a->ctl_missing) {
		ret = hello_then_socket(a);
		if (ret)
			goto fail;
	}
	*out = a;
	return 0;
fail:
	if (ret == -ESRCH && !cli_attach_alive(pid))
		fprintf(stderr, "fhook: %s: process %d exited\n", cmd, pid);
	cli_attach_close(a);
	return ret;
}

/*
 * While it attaches, the command runs at nice -20, and as a real-time
 * thread while it keeps a thread of the process stopped (fhook_boost_rt(),
 * when it may: CAP_SYS_NICE): every step waits for it,
 * and on a machine whose CPUs the process's busy threads fill, each wake
 * of the command waited for one (5 ms more for a two-call step, measured).
 * Put back once attached: `trace -p` then reads events for as long as it
 * runs.
 */
int cli_attach_open(const char *cmd, pid_t pid, struct cli_attach **out)
{
	struct fhook_sched_attr old;
	bool boosted;
	int ret;

	/*
	 * (nice -20 without SCHED_FLAG_RESET_ON_FORK: the threads the command
	 * starts for the attach, the stopping one and the one that seizes the
	 * control thread, are born with it; at nice 0 each waited up to a
	 * scheduler tick for its first instruction)
	 */
	boosted = fhook_boost_thread(0, 100 * 1000, -20, true, &old);
	ret = attach_open(cmd, pid, out);

	/* (a thread still kept for later requests: the command is put back all the same) */
	if (*out && (*out)->self_boosted) {
		fhook_restore_sched(0, &(*out)->self_sched);
		(*out)->self_boosted = false;
	}
	if (boosted)
		fhook_restore_sched(0, &old);
	/*
	 * Later requests too are waited for by the process: each is served
	 * first when it wakes, though the command gets no more of the CPU than
	 * any thread.
	 */
	fhook_short_slice();
	return ret;
}

int cli_attach_ctl(struct cli_attach *a, const char *req, char **reply)
{
	unsigned long args[1], r = 0;
	int ret;

	*reply = NULL;
	if (a->sock >= 0) {
		ret = att_ctl_sock_request(a, req, reply);
		if (att_verbose())
			fprintf(stderr, "fhook: %s: request '%.*s': %.2f ms in the process\n",
				a->cmd, (int)strcspn(req, "\t"), req, a->times.call_ms);
		if (ret == -ESRCH)
			fprintf(stderr, "fhook: %s: process %d exited\n", a->cmd, a->pid);
		if (ret)
			return ret;
		return strncmp(*reply, "ok\n", 3) ? 1 : 0;
	}
	if (!a->hijack || a->hijack->gone)
		return -ESRCH;
	ret = att_call(a, a->ctl, args, 1, req, strlen(req) + 1, 0, &r);
	if (att_verbose())
		fprintf(stderr, "fhook: %s: request '%.*s': %.2f ms in the process\n", a->cmd,
			(int)strcspn(req, "\t"), req, a->times.call_ms);
	if (ret == -ESRCH)
		fprintf(stderr, "fhook: %s: process %d exited\n", a->cmd, a->pid);
	if (ret)
		return ret;
	*reply = r ? att_mem_string(a, r, 1 << 20) : NULL;
	if (!*reply)
		return -EFAULT;
	return strncmp(*reply, "ok\n", 3) ? 1 : 0;
}

int cli_attach_getfd(struct cli_attach *a, int fd)
{
	int r = a->pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, a->pidfd, fd, 0) : -1;

	return r < 0 ? -errno : r;
}

/*
 * FHOOK_ATTACH_VERBOSE: the channel, and how long threads were stopped
 * (every thread together, then the one kept for the calls until it was let go).
 */
static void say_channel(const struct cli_attach *a)
{
	char chan[80], stops[160];
	int kept;

	if (a->sock >= 0)
		snprintf(chan, sizeof(chan), "control socket (thread %d)%s", a->ctl_tid,
			 a->ctl_missing ? " after a ptrace call" : "");
	else
		snprintf(chan, sizeof(chan), "ptrace call");
	/* a thread kept for ptrace calls: whatever the channel became after them */
	kept = a->sock >= 0 ? a->ctl_missing : a->times.threads;
	if (a->world_threads)
		snprintf(stops, sizeof(stops), "%d threads stopped for %.2f ms%s, then 1 for "
			 "%.2f ms%s", a->world_threads, a->world_ms,
			 a->pads_done ? " (pads rewritten)" : "", a->times.stopped_ms,
			 !a->times.loaded ? "" : a->by_loader ? " (it started the loader thread)" :
			 " (libfhook loaded)");
	else if (kept)
		snprintf(stops, sizeof(stops), "%d threads stopped for %.2f ms", a->times.threads,
			 a->times.stopped_ms);
	else if (a->sock >= 0)
		snprintf(stops, sizeof(stops), "0 threads stopped for 0.00 ms");
	else
		return;
	fprintf(stderr, "fhook: %s: channel: %s; %s; last call %.2f ms\n", a->cmd, chan, stops,
		a->times.call_ms);
}

void cli_attach_close(struct cli_attach *a)
{
	int i;

	if (!a)
		return;
	att_release_hijack(a);
	for (i = 0; i < a->nr_th; i++)
		att_release(&a->th[i]);
	if (att_verbose())
		say_channel(a);
	att_free_maps(a);
	att_free_pads(a);
	free(a->th);
	if (a->sock >= 0)
		close(a->sock);
	if (a->pidfd >= 0)
		close(a->pidfd);
	pthread_sigmask(SIG_SETMASK, &a->old_mask, NULL);
	free(a);
}
