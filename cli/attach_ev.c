// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook trace -p PID and fhook record -p PID: record a running process
 * until Ctrl-C, --duration or its exit, then remove every probe and leave.
 *
 * The process makes the shared memory itself (a memfd, so that no file
 * and no descriptor of ours has to reach it), fhook takes a copy of the
 * descriptor with pidfd_getfd() and sets the memory up as for a program it
 * starts; the process then maps it and registers its probes
 * (lib/recorder/record_attach.c, "trace-start").  While recording, the process is
 * not under ptrace at all: fhook attaches again only to stop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "attach.h"
#include "evcli.h"

static struct cli_attach *ev_att;
static char *ev_exe_argv[2];

int cli_ev_attach_name(struct cli_ev *c)
{
	char link[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", c->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0) {
		if (errno == ENOENT)
			fprintf(stderr, "fhook: %s: no process %d\n", c->cmd, c->pid);
		else if (errno == EACCES || errno == EPERM) {
			struct cli_attach *a;

			/* the attach says which rule refused, before anything is changed */
			if (!cli_attach_open(c->cmd, c->pid, &a))
				cli_attach_close(a);
			return -1;
		} else
			fprintf(stderr, "fhook: %s: process %d: %s\n", c->cmd, c->pid,
				strerror(errno));
		if (n <= 0)
			return -1;
	}
	exe[n] = 0;
	ev_exe_argv[0] = strdup(exe);
	c->argv = ev_exe_argv;
	/* the processes it starts are not followed: they did not ask for it */
	c->follow = false;
	return 0;
}

static int ctl_or_say(struct cli_ev *c, const char *req, char **reply)
{
	int ret = cli_attach_ctl(ev_att, req, reply);

	if (ret > 0) {
		const char *body = strchr(*reply, '\n');

		fputs(body && body[1] ? body + 1 : "fhook: the process refused the request\n",
		      stderr);
	}
	return ret;
}

int cli_ev_attach_begin(struct cli_ev *c, struct ev_session_opts *so)
{
	char *reply = NULL, req[32];
	int fd, i;

	for (i = 0; i < c->nr_evs; i++)
		if (c->evs[i].kprobe)
			cli_attach_no_sites_ok = true;
	if (cli_attach_open(c->cmd, c->pid, &ev_att))
		return 1;
	/* our pid names our recording among the process's (tracing instances) */
	snprintf(req, sizeof(req), "memfd\t%s\t%d", c->cmd, (int)getpid());
	if (ctl_or_say(c, req, &reply)) {
		free(reply);
		cli_attach_close(ev_att);
		ev_att = NULL;
		return 1;
	}
	c->target_fd = atoi(reply + 3);
	free(reply);
	fd = cli_attach_getfd(ev_att, c->target_fd);
	if (fd < 0) {
		fprintf(stderr, "fhook: %s: cannot share memory with process %d (pidfd_getfd: %s)\n",
			c->cmd, c->pid, strerror(-fd));
		cli_ev_attach_abort(c);
		return 1;
	}
	so->use_fd = true;
	so->fd = fd;
	so->follow = false;
	return 0;
}

void cli_ev_attach_abort(struct cli_ev *c)
{
	char req[64], *reply = NULL;

	if (!ev_att)
		return;
	/* the memory the process made for us is not left open in it */
	snprintf(req, sizeof(req), "memfd-close\t%d", c->target_fd);
	cli_attach_ctl(ev_att, req, &reply);
	free(reply);
	cli_attach_close(ev_att);
	ev_att = NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int cli_ev_attach_wait(struct cli_ev *c, volatile sig_atomic_t *stop_sig)
{
	char req[64], *reply = NULL;
	double end = c->duration ? now_s() + c->duration : 0, t_stop;
	int pidfd, ret;

	snprintf(req, sizeof(req), "trace-start\t%d\t%s", c->target_fd, c->cmd);
	ret = ctl_or_say(c, req, &reply);
	free(reply);
	cli_attach_close(ev_att);
	ev_att = NULL;
	if (ret) {
		if (ret < 0 && !cli_attach_alive(c->pid))
			return 0;
		return 1;
	}
	fprintf(stderr, "fhook: %s: attached to process %d (%s); %s\n", c->cmd, c->pid,
		c->argv[0], c->duration ? "recording for the duration given" :
		"Ctrl-C detaches");
	/* the process's exit makes its pidfd readable */
	pidfd = syscall(SYS_pidfd_open, c->pid, 0);
	for (;;) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		int ms = 100;

		if (*stop_sig)
			break;
		if (end) {
			double left = end - now_s();

			if (left <= 0)
				break;
			if (left * 1000 < ms)
				ms = (int)(left * 1000) + 1;
		}
		if (pidfd >= 0 ? poll(&pfd, 1, ms) > 0 : !cli_attach_alive(c->pid)) {
			fprintf(stderr, "fhook: %s: process %d exited while attached\n", c->cmd,
				c->pid);
			close(pidfd);
			return 0;
		}
		if (pidfd < 0)
			usleep(ms * 1000);
	}
	if (pidfd >= 0)
		close(pidfd);
	t_stop = now_s();
	/* every probe off: the process is as it was before, but for libfhook */
	if (cli_attach_open(c->cmd, c->pid, &ev_att)) {
		if (!cli_attach_alive(c->pid))
			fprintf(stderr, "fhook: %s: process %d exited while attached\n", c->cmd,
				c->pid);
		return cli_attach_alive(c->pid) ? 1 : 0;
	}
	snprintf(req, sizeof(req), "trace-stop\t%d", (int)getpid());
	ret = ctl_or_say(c, req, &reply);
	free(reply);
	cli_attach_close(ev_att);
	ev_att = NULL;
	if (ret < 0)
		return cli_attach_alive(c->pid) ? 1 : 0;
	if (!ret)
		fprintf(stderr, "fhook: %s: detached from process %d: every probe removed\n",
			c->cmd, c->pid);
	if (getenv("FHOOK_ATTACH_VERBOSE"))
		fprintf(stderr, "fhook: %s: detach took %.2f ms\n", c->cmd,
			(now_s() - t_stop) * 1e3);
	return ret ? 1 : 0;
}
