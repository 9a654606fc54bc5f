// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The control thread's socket (lib/core/ctl_thread.c): once a process has
 * libfhook, an attach connects there and stops no thread, the ptrace
 * permission proven by seizing the control thread meanwhile.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fhook/internal/attach.h>

#include "att.h"

#define ATT_CTL_BUSY_MS		5000	/* another command's proof on the control thread */

/* The thread of @pid that serves the control socket, by its name; 0 if none. */
static pid_t find_ctl_thread(pid_t pid)
{
	char path[64], comm[32];
	struct dirent *de;
	pid_t found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strcmp(comm, FHOOK_CTL_THREAD_NAME "\n"))
			found = tid;
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * The proof of the ptrace permission: a thread of ours seizes the control
 * thread (which stops nothing) and holds it until the server has checked
 * the connection; then it exits, which lets the thread go without a stop
 * (PTRACE_DETACH would need one).  Meanwhile a signal the thread meets is
 * passed on, and a stop of its group only noted: it stays stopped.
 */
struct ctl_seizer {
	pid_t tid;
	pid_t tracer;		/* the seizing thread */
	int ret;
	int ready[2];		/* written once the seize is done or refused */
	int done[2];		/* closed when the proof is over */
	volatile bool stopped;	/* stopped with its group (SIGSTOP): it cannot answer */
};

static void *ctl_seize(void *arg)
{
	struct ctl_seizer *s = arg;
	double deadline = att_now_ms() + ATT_CTL_BUSY_MS;
	struct pollfd pfd = { .fd = s->done[0], .events = POLLIN };
	int st, untraced = 0;
	char buf[32];

	s->tracer = (pid_t)syscall(SYS_gettid);
	for (;;) {
		if (!ptrace(PTRACE_SEIZE, s->tid, NULL, NULL)) {
			s->ret = 0;
			break;
		}
		s->ret = -errno;
		/*
		 * A thread has one tracer: another command's proof, which is
		 * brief.  No tracer when we look: it may have let go between
		 * the seize and the look, so a few more tries before the
		 * refusal is taken as ours.
		 */
		if (s->ret != -EPERM || !att_status_field(s->tid, "TracerPid", buf, sizeof(buf)) ||
		    (atoi(buf) <= 0 && ++untraced > 3) || att_now_ms() > deadline)
			break;
		att_sleep_ms(1);
	}
	if (write(s->ready[1], "", 1) != 1 || s->ret)
		return NULL;
	while (poll(&pfd, 1, 1) == 0) {
		if (waitpid(s->tid, &st, __WALL | WNOHANG) <= 0 || !WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP)
			s->stopped = true;
		else
			ptrace(PTRACE_CONT, s->tid, NULL, (void *)(long)WSTOPSIG(st));
	}
	return NULL;
}

/*
 * One NUL-terminated message from the control thread (malloc'd), waiting
 * at most ATT_CALL_TIMEOUT_MS; -ETIMEDOUT, -EAGAIN when @s says the thread
 * was stopped, -ESRCH when the process is gone, -EPIPE at the end.
 */
static int ctl_sock_recv(struct cli_attach *a, struct ctl_seizer *s, char **msg)
{
	double deadline = att_now_ms() + ATT_CALL_TIMEOUT_MS;
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int ret;

	*msg = NULL;
	for (;;) {
		struct pollfd pfd = { .fd = a->sock, .events = POLLIN };
		ssize_t n;

		if (s && s->stopped) {
			ret = -EAGAIN;
			break;
		}
		if (att_now_ms() > deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, 10) <= 0) {
			if (!s && !cli_attach_alive(a->pid)) {
				ret = -ESRCH;
				break;
			}
			continue;
		}
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap = (len + 4096) * 2);

			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
		}
		n = recv(a->sock, buf + len, cap - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = cli_attach_alive(a->pid) ? -EPIPE : -ESRCH;
			break;
		}
		len += n;
		if (buf[len - 1] == 0) {
			*msg = buf;
			return 0;
		}
	}
	free(buf);
	return ret;
}

static int ctl_sock_send(struct cli_attach *a, const char *req)
{
	size_t len = strlen(req) + 1, off = 0;

	while (off < len) {
		ssize_t n = send(a->sock, req + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cli_attach_alive(a->pid) ? -EPIPE : -ESRCH;
		off += n;
	}
	return 0;
}

/* Connect to the control socket of a->pid and check that the process itself answers. */
static int ctl_sock_connect(struct cli_attach *a)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int n;

	a->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->sock < 0)
		return -errno;
	n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, FHOOK_CTL_SOCK_PREFIX "%d",
		     a->pid);
	if (connect(a->sock, (struct sockaddr *)&addr,
		    offsetof(struct sockaddr_un, sun_path) + 1 + n))
		return -errno;
	/* a squatter on the name must not pass for the process */
	if (getsockopt(a->sock, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return -errno;
	if (cr.pid != a->pid) {
		if (att_verbose())
			fprintf(stderr, "fhook: %s: the control socket's name is held by process "
				"%d, not %d\n", a->cmd, (int)cr.pid, a->pid);
		return -EPERM;
	}
	return 0;
}

/*
 * Reach the process through its control thread: seize it, connect, get
 * the server's word that the permission is proven, let the thread go.
 * 0 with a->sock connected; otherwise the ptrace call is the channel.
 */
int att_ctl_sock_open(struct cli_attach *a)
{
	struct ctl_seizer s = { .ready = { -1, -1 }, .done = { -1, -1 } };
	char st[64], *greeting = NULL, c;
	pthread_t th;
	int ret;

	s.tid = find_ctl_thread(a->pid);
	if (!s.tid)
		return -ENOENT;
	a->ctl_tid = s.tid;
	/* stopped with the process (SIGSTOP): it cannot answer */
	if (!att_status_field(s.tid, "State", st, sizeof(st)) || st[0] == 'T' || st[0] == 't') {
		if (att_verbose())
			fprintf(stderr, "fhook: %s: the control thread %d is stopped\n", a->cmd,
				s.tid);
		return -EAGAIN;
	}
	if (pipe2(s.ready, O_CLOEXEC))
		return -errno;
	if (pipe2(s.done, O_CLOEXEC)) {
		ret = -errno;
		goto out_ready;
	}
	if (pthread_create(&th, NULL, ctl_seize, &s)) {
		ret = -EAGAIN;
		goto out_done;
	}
	ret = read(s.ready[0], &c, 1) == 1 ? s.ret : -EIO;
	if (ret && att_verbose())
		fprintf(stderr, "fhook: %s: cannot seize the control thread %d: %s\n", a->cmd,
			s.tid, strerror(-ret));
	if (!ret)
		ret = ctl_sock_connect(a);
	if (!ret)
		ret = ctl_sock_recv(a, &s, &greeting);
	if (!ret && strncmp(greeting, "ok\n", 3)) {
		if (att_verbose())
			fprintf(stderr, "fhook: %s: %s", a->cmd, greeting);
		ret = -EPERM;
	}
	free(greeting);
	close(s.done[1]);
	s.done[1] = -1;
	pthread_join(th, NULL);
	/*
	 * Joined once its stack is free; the thread is let go a little later.
	 * A ptrace call that follows must not find it still ours.
	 */
	for (int n = 0; ret && !s.ret && n < 2000; n++) {
		if (!att_status_field(s.tid, "TracerPid", st, sizeof(st)) || atoi(st) != s.tracer)
			break;
		att_sleep_ms(0.05);
	}
out_done:
	if (s.done[1] >= 0)
		close(s.done[1]);
	close(s.done[0]);
out_ready:
	close(s.ready[0]);
	close(s.ready[1]);
	if (ret && a->sock >= 0) {
		close(a->sock);
		a->sock = -1;
	}
	return ret;
}

int att_ctl_sock_request(struct cli_attach *a, const char *req, char **reply)
{
	double t0 = att_now_ms();
	int ret;

	ret = ctl_sock_send(a, req);
	if (!ret)
		ret = ctl_sock_recv(a, NULL, reply);
	a->times.call_ms = att_now_ms() - t0;
	if (ret == -ETIMEDOUT)
		fprintf(stderr, "fhook: %s: process %d did not answer in %d s\n", a->cmd, a->pid,
			ATT_CALL_TIMEOUT_MS / 1000);
	return ret;
}
