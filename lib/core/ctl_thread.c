// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The control thread: once a process has been attached to (its first
 * fhook_attach_ctl() call), later requests of the fhook command come on a
 * Unix socket in the abstract namespace named after the pid, and are
 * served by a thread of libfhook's, so that no thread of the program is
 * stopped for them (docs/attach.md).
 *
 * Who may use the socket is still decided by the kernel's ptrace rule.
 * The command PTRACE_SEIZEs this thread (which stops nothing) from one of
 * its threads before it connects; a connection is served only when this
 * thread's tracer belongs to the connecting process (SO_PEERCRED).  Any
 * other connection gets an error reply and is closed, nothing done.
 *
 * The thread blocks every signal but those a thread raises itself (an
 * int3 of fhook's on its way, a fault): a seized thread would stop at the
 * delivery of any other, and a blocked synchronous one kills the process.
 * It holds no lock while it waits, and is in no read-side section, so
 * the requests that wait for a grace period (unpatch) are fine here.  It
 * asks for a short time slice, to be served soon when woken among busy
 * threads.
 * A fork child has no thread (its first attach starts its own); an exec
 * closes the socket.  If the name is taken, there is no thread, and the
 * command keeps using its ptrace call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <fhook/internal/attach.h>

#include "core.h"
#include "util/procfile.h"
#include "util/sched_slice.h"
#include "util/sync_signals.h"

#define CTL_BACKLOG		8
#define CTL_RECV_TIMEOUT_S	30	/* a command that stops talking mid-request */

static pthread_mutex_t ctl_thread_lock = PTHREAD_MUTEX_INITIALIZER;
static int ctl_lfd = -1;		/* the listening socket; >= 0 while the thread runs */
static pid_t ctl_tid;			/* the thread's id, once it runs */
static unsigned int ctl_restarts;	/* threads started for watches since a command was served */
#define CTL_RESTARTS		4
static dev_t ctl_dev;			/* and which file it is */
static ino_t ctl_ino;
static bool ctl_atfork_done;

/*
 * The tracers this process serves (each recording's fhook command, one
 * per tracing instance): a pidfd turns readable when its command exits,
 * and the thread then serves that watch's request itself, as the command
 * would have (trace-stop: that recording's probes removed).  Changed
 * under ctl_thread_lock.  While a watch is set the
 * thread's accept() times out every CTL_WATCH_MS to look at them: a
 * blocked accept() keeps serving the socket it started on, even when a
 * daemon closes the descriptor under it, which a poll() would not.  A
 * watch set on another thread (a request that came by the ptrace call
 * while this thread waited for CTL_IDLE_S) wakes it: ctl_wake(); one
 * that cannot (no descriptor left, a seccomp filter on that thread) is
 * seen within CTL_IDLE_S.
 */
#define CTL_WATCH_MS		200
#define CTL_IDLE_S		10	/* with none: a wake that could not be made costs this */
#define CTL_WATCHES		8
static struct ctl_watch {
	bool used;		/* a tracer watched, by a pidfd (fd >= 0) or not yet */
	int fd;
	pid_t pid;
	unsigned long long start;	/* the tracer's start time (/proc): 0 if unknown */
	unsigned long long set_at;	/* when the watch was set, in the same ticks */
	unsigned int gen;	/* a new one at each watch set in the slot */
	char req[32];
	dev_t dev;		/* which file the pidfd is */
	ino_t ino;
	bool held;		/* the program holds the number, no pidfd to spare: not polled */
} ctl_watches[CTL_WATCHES] = { [0 ... CTL_WATCHES - 1] = { .fd = -1 } };

/*
 * Is @w's descriptor still the pidfd we opened?  A program that closes
 * every descriptor it did not open and opens files under the same numbers
 * makes it a file, always readable: that is no tracer gone, and the
 * descriptor is the program's, never to be closed by us.
 */
static bool ctl_watch_ours(const struct ctl_watch *w)
{
	char path[40], buf[1024], *p;
	struct stat st;
	long pid;

	if (w->fd < 0 || fstat(w->fd, &st) || st.st_dev != w->dev || st.st_ino != w->ino)
		return false;
	/*
	 * Before Linux 6.9 every pidfd is the one anonymous inode that
	 * eventfds, epolls and timerfds share too: its fdinfo says whose it
	 * is ("Pid:", 0 or -1 once that process is gone).  Without /proc the
	 * inode's word stands.
	 */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", w->fd);
	if (fhook_read_small_file(path, buf, sizeof(buf)) <= 0)
		return true;
	for (p = buf; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, "Pid:", 4)) {
			pid = strtol(p + 4, NULL, 10);
			return pid <= 0 || pid == w->pid;
		}
	}
	return false;
}

/* Close @w's descriptor if it is still ours; the watch is free either way. */
static void ctl_watch_drop(struct ctl_watch *w)
{
	if (ctl_watch_ours(w))
		close(w->fd);
	w->fd = -1;
	w->used = false;
}

/* Now, in /proc/PID/stat's start-time ticks (since boot); 0 if unknown. */
static unsigned long long ctl_now_ticks(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;

	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts))
		return 0;
	return (unsigned long long)ts.tv_sec * hz +
	       (unsigned long long)ts.tv_nsec * hz / 1000000000;
}

/*
 * A new pidfd for watch @w's tracer, and which file it is: the descriptor,
 * or a negative errno.  A tracer whose pid is now another process's (it
 * ended, was reaped, and the number came round again: a start time other
 * than the one seen, or after the watch was set) is gone: -ESRCH.
 */
static int ctl_pidfd_open(struct ctl_watch *w)
{
	unsigned long long start;
	struct stat st;
	int fd = syscall(SYS_pidfd_open, w->pid, 0);

	if (fd < 0)
		return -errno;
	start = fhook_proc_start(w->pid);
	if (start && ((w->start && start != w->start) ||
		      (!w->start && w->set_at && start > w->set_at + 1))) {
		close(fd);
		return -ESRCH;
	}
	if (fstat(fd, &st)) {
		close(fd);
		return -EBADF;
	}
	if (start)
		w->start = start;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	return fd;
}

/*
 * Is @fd still our socket?  A daemon may close every descriptor it did not
 * open, and open its own under the same number: then the thread leaves
 * (the next attach starts another), and neither it nor a fork child
 * touches the program's descriptor.
 */
static bool ctl_fd_ours(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_dev == ctl_dev && st.st_ino == ctl_ino;
}

/* A number from a "Name:\tvalue" line of a /proc status file; -1 if none. */
static long status_number(const char *path, const char *name)
{
	char buf[4096], *p;
	size_t n = strlen(name);

	if (fhook_read_small_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, name, n) && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
	}
	return -1;
}

/*
 * The ptrace rule, proven for this connection: the thread tracing this
 * one is a thread of the connecting process.  0, or -EPERM with @why set.
 */
static int ctl_peer_allowed(int c, char *why, size_t size)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char path[64];
	long tracer, tgid;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len)) {
		snprintf(why, size, "its credentials are unknown (%s)", strerror(errno));
		return -EPERM;
	}
	tracer = status_number("/proc/thread-self/status", "TracerPid");
	if (tracer <= 0) {
		snprintf(why, size, "process %d has not seized the control thread "
			 "(PTRACE_SEIZE first: the kernel's ptrace rule decides)", (int)cr.pid);
		return -EPERM;
	}
	snprintf(path, sizeof(path), "/proc/%ld/status", tracer);
	tgid = status_number(path, "Tgid");
	if (tgid != cr.pid) {
		snprintf(why, size, "the control thread is traced by process %ld, not by "
			 "the connecting process %d", tgid, (int)cr.pid);
		return -EPERM;
	}
	return 0;
}

static int ctl_send(int c, const char *s)
{
	size_t len = strlen(s) + 1, off = 0;

	while (off < len) {
		ssize_t n = send(c, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		off += n;
	}
	return 0;
}

/* One NUL-terminated request into @buf; 0 at the connection's end, < 0 on error. */
static ssize_t ctl_recv(int c, char *buf, size_t size)
{
	size_t len = 0;

	while (len < size) {
		ssize_t n = recv(c, buf + len, size - len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return len ? -EPROTO : n;
		if (memchr(buf + len, 0, n))
			return len + n;
		len += n;
	}
	return -E2BIG;
}

static void ctl_connection(int c, char *buf)
{
	struct timeval tv = { CTL_RECV_TIMEOUT_S, 0 };
	char why[256], *reply;
	struct ucred cr;
	socklen_t len = sizeof(cr);

	/* ctl_wake()'s: nothing to serve */
	if (!getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) && cr.pid == getpid())
		return;
	if (ctl_peer_allowed(c, why, sizeof(why))) {
		snprintf(buf, FHOOK_CTL_REQ_MAX, "error\nfhook: control connection refused: %s\n",
			 why);
		ctl_send(c, buf);
		return;
	}
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	pthread_mutex_lock(&ctl_thread_lock);
	ctl_restarts = 0;
	pthread_mutex_unlock(&ctl_thread_lock);
	if (ctl_send(c, "ok\n"))
		return;
	/* requests end with their NUL: one at a time, the command waits for each reply */
	while (ctl_recv(c, buf, FHOOK_CTL_REQ_MAX) > 0) {
		reply = fhook_ctl_serve(buf);
		if (ctl_send(c, reply ? reply : "error\nfhook: out of memory\n")) {
			free(reply);
			return;
		}
		free(reply);
	}
}

/* The socket's name (the abstract namespace: sun_path[0] is 0, no NUL at its end); its length. */
static socklen_t ctl_sock_addr(struct sockaddr_un *addr)
{
	int n;

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, FHOOK_CTL_SOCK_PREFIX "%d",
		     (int)getpid());
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

/*
 * A connection of this process's own, which the thread closes unanswered:
 * it wakes from an accept() that began before a watch was set, and so
 * waits CTL_IDLE_S, to look at the watches.  Not needed on the thread
 * itself, which looks at them before it waits again; not made under a
 * seccomp filter (this thread's may kill the process for a socket() the
 * program never makes).
 */
static void ctl_wake(void)
{
	struct sockaddr_un addr;
	socklen_t len;
	int fd;

	pthread_mutex_lock(&ctl_thread_lock);
	if (ctl_lfd < 0 || (pid_t)syscall(SYS_gettid) == ctl_tid) {
		pthread_mutex_unlock(&ctl_thread_lock);
		return;
	}
	pthread_mutex_unlock(&ctl_thread_lock);
	if (status_number("/proc/thread-self/status", "Seccomp") != 0)
		return;
	len = ctl_sock_addr(&addr);
	/* (a full backlog: the thread has connections to serve, and looks after each) */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	connect(fd, (struct sockaddr *)&addr, len);
	close(fd);
}

/*
 * Watch tracer @pid: when it ends, @req is served for it.  A pidfd that
 * cannot be had now (the program has every descriptor it may open) is
 * tried again at each look of the thread; a tracer gone already (it died
 * before its request was served) is served at the thread's next look.
 * So the watch is set whenever there is room for it.
 */
int fhook_ctl_watch(pid_t pid, const char *req)
{
	struct ctl_watch *w = NULL;
	int i;

	if (strlen(req) >= sizeof(w->req))
		return -EINVAL;
	/* (a thread started later, or the one serving this request, picks it up) */
	pthread_mutex_lock(&ctl_thread_lock);
	for (i = 0; i < CTL_WATCHES; i++) {
		if (ctl_watches[i].used && ctl_watches[i].pid == pid) {
			w = &ctl_watches[i];	/* the same command again: its new request */
			break;
		}
		if (!ctl_watches[i].used && !w)
			w = &ctl_watches[i];
	}
	if (!w) {
		pthread_mutex_unlock(&ctl_thread_lock);
		return -ENOSPC;
	}
	ctl_watch_drop(w);
	w->pid = pid;
	w->start = 0;
	w->set_at = ctl_now_ticks();
	w->fd = ctl_pidfd_open(w);
	if (w->fd == -ENOSYS) {
		/* a kernel without pidfds (before 5.3): nothing to watch with */
		w->fd = -1;
		pthread_mutex_unlock(&ctl_thread_lock);
		return -ENOSYS;
	}
	if (w->fd < 0)
		w->fd = -1;	/* the thread's ctl_watches_retake() tries again */
	w->used = true;
	w->gen++;
	strcpy(w->req, req);
	pthread_mutex_unlock(&ctl_thread_lock);
	ctl_wake();
	return 0;
}

void fhook_ctl_unwatch(pid_t pid)
{
	int i;

	pthread_mutex_lock(&ctl_thread_lock);
	for (i = 0; i < CTL_WATCHES; i++) {
		if (ctl_watches[i].used && ctl_watches[i].pid == pid)
			ctl_watch_drop(&ctl_watches[i]);
	}
	pthread_mutex_unlock(&ctl_thread_lock);
}

/* Tracer @pid is gone: serve its watch's request @req, as it did not. */
static void ctl_serve_gone(pid_t pid, const char *req)
{
	static const char left_is[] = "\nrecordings left: ";
	char *reply = fhook_ctl_serve(req), *left;
	int n;

	/* the recorder says how many recordings of other commands go on */
	left = reply ? strstr(reply, left_is) : NULL;
	n = left ? atoi(left + sizeof(left_is) - 1) : 0;
	if (!reply || strncmp(reply, "ok", 2))
		fprintf(stderr, "fhook: process %d: the fhook process that traced it (%d) ended "
			"without detaching; its probes could not all be removed\n", (int)getpid(),
			(int)pid);
	else if (n > 0)
		fprintf(stderr, "fhook: process %d: the fhook process that traced it (%d) ended "
			"without detaching; its probes removed, %d other recording%s go%s on\n",
			(int)getpid(), (int)pid, n, n > 1 ? "s" : "", n > 1 ? "" : "es");
	else
		fprintf(stderr, "fhook: process %d: the fhook process that traced it (%d) ended "
			"without detaching; every probe removed, it runs untraced\n", (int)getpid(),
			(int)pid);
	free(reply);
}

/* The tracer of watch @i (generation @gen, pidfd @fd) is gone: do for it what it did not do. */
static void ctl_tracer_gone(int i, int fd, unsigned int gen)
{
	char req[sizeof(ctl_watches[0].req)];
	pid_t pid;

	pthread_mutex_lock(&ctl_thread_lock);
	/*
	 * A request served meanwhile may have ended that watch and set
	 * another in its slot, whose pidfd may have the same number.
	 */
	if (!ctl_watches[i].used || ctl_watches[i].gen != gen || ctl_watches[i].fd != fd) {
		pthread_mutex_unlock(&ctl_thread_lock);
		return;
	}
	/*
	 * The program may have made the number its own file (readable)
	 * between ctl_wait()'s look and its poll: the next look reopens the
	 * watch, or finds the tracer gone.
	 */
	if (!ctl_watch_ours(&ctl_watches[i])) {
		pthread_mutex_unlock(&ctl_thread_lock);
		return;
	}
	ctl_watch_drop(&ctl_watches[i]);
	pid = ctl_watches[i].pid;
	memcpy(req, ctl_watches[i].req, sizeof(req));
	pthread_mutex_unlock(&ctl_thread_lock);
	ctl_serve_gone(pid, req);
}

/*
 * The watches whose numbers the program took (closed, then reused for its
 * own files), or that had no pidfd yet, watch their tracers through new
 * pidfds; one whose tracer is gone meanwhile is served at once.  Called
 * with ctl_thread_lock held, which it drops to serve (true then).
 */
static bool ctl_watches_retake(void)
{
	char req[sizeof(ctl_watches[0].req)];
	int i, fd;
	pid_t pid;

	for (i = 0; i < CTL_WATCHES; i++) {
		struct ctl_watch *w = &ctl_watches[i];

		w->held = false;
		if (!w->used || ctl_watch_ours(w))
			continue;
		fd = ctl_pidfd_open(w);
		if (fd >= 0) {
			w->fd = fd;	/* (the old number is the program's: not closed) */
			continue;
		}
		if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM) {
			w->held = true;	/* no descriptor left: looked at again later */
			continue;
		}
		/*
		 * Else the pid is no process's (ESRCH), or a thread's of
		 * another process (EINVAL): the tracer is gone.
		 */
		w->fd = -1;
		w->used = false;
		pid = w->pid;
		memcpy(req, w->req, sizeof(req));
		pthread_mutex_unlock(&ctl_thread_lock);
		ctl_serve_gone(pid, req);
		return true;
	}
	return false;
}

/*
 * Wait for a connection, CTL_WATCH_MS at most while a tracer is watched,
 * else CTL_IDLE_S; the connection, or -1 (errno EAGAIN: the time is up,
 * or a tracer gone).
 */
static int ctl_wait(int lfd, int *timed)
{
	struct pollfd p[CTL_WATCHES];
	unsigned int gen = 0;
	bool watch = false;
	int i, gone = -1;

	pthread_mutex_lock(&ctl_thread_lock);
	if (ctl_watches_retake()) {
		errno = EAGAIN;
		return -1;
	}
	for (i = 0; i < CTL_WATCHES; i++) {
		/* (ctl_watches_retake() just looked at each) */
		p[i].fd = ctl_watches[i].held ? -1 : ctl_watches[i].fd;
		p[i].events = POLLIN;
		p[i].revents = 0;
		watch |= ctl_watches[i].used;
	}
	if (watch && poll(p, CTL_WATCHES, 0) > 0) {
		for (i = 0; i < CTL_WATCHES && gone < 0; i++)
			if (p[i].fd >= 0 && p[i].revents)
				gone = i;
	}
	if (gone >= 0)
		gen = ctl_watches[gone].gen;
	pthread_mutex_unlock(&ctl_thread_lock);
	if (gone >= 0) {
		ctl_tracer_gone(gone, p[gone].fd, gen);
		errno = EAGAIN;
		return -1;
	}
	if ((int)watch != *timed) {
		struct timeval tv = { watch ? 0 : CTL_IDLE_S, watch ? CTL_WATCH_MS * 1000 : 0 };

		setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		*timed = watch;
	}
	return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

static void *ctl_thread_main(void *arg)
{
	int lfd = (int)(long)arg;
	int timed = -1;		/* the socket's timeout: none yet */
	bool watched = false;
	char *buf;
	int i;

	/* none of its calls are the program's: no handler sees them, ever */
	fhook_internal_enter();
	pthread_mutex_lock(&ctl_thread_lock);
	ctl_tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_unlock(&ctl_thread_lock);
	/* how the command finds the thread to seize */
	prctl(PR_SET_NAME, FHOOK_CTL_THREAD_NAME);
	fhook_short_slice();
	/*
	 * Not malloc: a thread's first malloc makes it an arena of its own
	 * (64 MiB of address space), which a process that only has this
	 * thread watching its tracer would pay for nothing.
	 */
	buf = mmap(NULL, FHOOK_CTL_REQ_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	while (buf != MAP_FAILED && ctl_fd_ours(lfd)) {
		int c = ctl_wait(lfd, &timed);

		if (c < 0) {
			if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN)
				usleep(10000);	/* out of descriptors: not a busy loop */
			continue;
		}
		ctl_connection(c, buf);
		close(c);
	}
	if (buf != MAP_FAILED)
		munmap(buf, FHOOK_CTL_REQ_MAX);
	pthread_mutex_lock(&ctl_thread_lock);
	/* (after a failed mmap the socket is ours still, and holds the name a new thread binds) */
	if (ctl_fd_ours(lfd))
		close(lfd);
	if (ctl_lfd == lfd)
		ctl_lfd = -1;
	ctl_tid = 0;
	for (i = 0; i < CTL_WATCHES && !watched; i++)
		watched = ctl_watches[i].used;
	watched = watched && ctl_restarts++ < CTL_RESTARTS;
	pthread_mutex_unlock(&ctl_thread_lock);
	/*
	 * The program took the socket's number (a daemon that closes every
	 * descriptor): a command that records it is still watched, by a new
	 * thread on a new socket (the name is free, its socket closed).  A
	 * few times only, until a command is served again: a program that
	 * closes our descriptors in a loop gets no thread after thread.
	 */
	if (watched)
		fhook_ctl_thread_start();
	return NULL;
}

/* The child of a fork has none of the parent's threads: its first attach starts its own. */
static void ctl_atfork_child(void)
{
	int i;

	pthread_mutex_init(&ctl_thread_lock, NULL);
	if (ctl_lfd >= 0 && ctl_fd_ours(ctl_lfd))
		close(ctl_lfd);
	ctl_lfd = -1;
	ctl_tid = 0;
	/* the parent's tracers are not the child's business until they attach themselves */
	for (i = 0; i < CTL_WATCHES; i++)
		ctl_watch_drop(&ctl_watches[i]);
}

void fhook_ctl_thread_start(void)
{
	struct sockaddr_un addr;
	sigset_t all, old;
	pthread_attr_t attr;
	struct stat st;
	pthread_t th;
	socklen_t len;
	int lfd, n;

	pthread_mutex_lock(&ctl_thread_lock);
	/*
	 * Under a seccomp filter (a sandboxed service), system calls the
	 * program never makes (socket, listen, sched_setattr) may be what the
	 * filter kills it for: no thread, the ptrace call stays the channel.
	 */
	if (ctl_lfd >= 0 || status_number("/proc/thread-self/status", "Seccomp") > 0)
		goto out;
	if (!ctl_atfork_done && !fhook_atfork(NULL, NULL, ctl_atfork_child))
		ctl_atfork_done = true;
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		goto out;
	len = ctl_sock_addr(&addr);
	/* the name taken (by another process): no thread, the ptrace call goes on */
	if (bind(lfd, (struct sockaddr *)&addr, len) || listen(lfd, CTL_BACKLOG) || fstat(lfd, &st))
		goto fail;
	ctl_dev = st.st_dev;
	ctl_ino = st.st_ino;
	/* the thread inherits this mask: every signal but those a thread raises itself */
	fhook_sigfill_async(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ctl_lfd = lfd;
	n = pthread_create(&th, &attr, ctl_thread_main, (void *)(long)lfd);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!n) {
		/* named at once: the command looks for it as soon as this returns */
		pthread_setname_np(th, FHOOK_CTL_THREAD_NAME);
		goto out;
	}
	ctl_lfd = -1;
fail:
	close(lfd);
out:
	pthread_mutex_unlock(&ctl_thread_lock);
}
