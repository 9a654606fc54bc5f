// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A stranger to a process's control socket (lib/core/ctl_thread.c), for
 * tests/attach/test_ctl.sh:
 *
 *   att_ctl_client connect PID REQUEST   connect without seizing the control
 *                                        thread, send REQUEST, print "pid N"
 *                                        (ours) and every message until the end
 *   att_ctl_client squat PID             bind the socket's name first, print
 *                                        "bound", hold it until stdin ends
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static socklen_t ctl_addr(struct sockaddr_un *addr, const char *pid)
{
	int n;

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "fhook-ctl-%s", pid);
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

int main(int argc, char **argv)
{
	struct sockaddr_un addr;
	socklen_t len;
	char buf[4096];
	ssize_t n;
	int s;

	if (argc < 3 || ((strcmp(argv[1], "connect") || argc != 4) && strcmp(argv[1], "squat"))) {
		fprintf(stderr, "usage: att_ctl_client connect PID REQUEST | squat PID\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	len = ctl_addr(&addr, argv[2]);
	if (!strcmp(argv[1], "squat")) {
		if (bind(s, (struct sockaddr *)&addr, len) || listen(s, 1)) {
			perror("bind");
			return 1;
		}
		printf("bound\n");
		while (read(0, buf, sizeof(buf)) > 0)
			;
		return 0;
	}
	if (connect(s, (struct sockaddr *)&addr, len)) {
		perror("connect");
		return 1;
	}
	printf("pid %d\n", (int)getpid());
	/* the refusal may have come first: then the request is not even read */
	send(s, argv[3], strlen(argv[3]) + 1, MSG_NOSIGNAL);
	/* messages end with a NUL: one per line here */
	while ((n = recv(s, buf, sizeof(buf), 0)) > 0)
		for (ssize_t i = 0; i < n; i++)
			putchar(buf[i] ? buf[i] : '\n');
	return 0;
}
