// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_fd_reuse.sh's program: a daemon-like start.  It closes every
 * descriptor it did not open (fhook's trace buffer among them), opens
 * files read-write that take their numbers, then forks and execs itself
 * and starts a thread: none of them may map those files as the trace
 * buffer (SIGBUS past their end, or records written into them).
 *   fdreuse_prog DIR [drop]  the parent; with "drop", run as root, it
 *                            becomes user nobody before it forks (as a
 *                            daemon drops its privileges): neither it nor
 *                            its child can reopen the buffer from the
 *                            command (root's) any more
 *   fdreuse_prog child       the child
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x)
{
	__asm__ volatile("");
	return x + 1;
}

static void *thread(void *arg)
{
	return (void *)(long)work(2);
}

int main(int argc, char **argv)
{
	int fds[16], i, n = 0, status;
	char path[4096];
	pthread_t th;
	DIR *d;
	struct dirent *e;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		printf("child %d\n", work(3));
		return 0;
	}
	if (argc < 2)
		return 2;
	work(1);
	/* close what we did not open, as a daemon does */
	d = opendir("/proc/self/fd");
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (fd > 2 && fd != dirfd(d))
			fds[n < 16 ? n++ : n] = fd;
	}
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		close(fds[i]);
	/* files that take the numbers: small, read-write */
	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/f%d", argv[1], i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fds[i] < 0 || write(fds[i], "data\n", 5) != 5)
			return 3;
	}
	if (argc > 2 && !strcmp(argv[2], "drop") && (setgid(65534) || setuid(65534)))
		return 4;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	pthread_create(&th, NULL, thread, NULL);
	pthread_join(th, NULL);
	printf("parent %d, child status %d\n", work(1), status);
	return 0;
}
