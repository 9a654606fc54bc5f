// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The program fhook record's tests record: known call counts and sleeps,
 * many threads, odd strings, and a long run to stop.  Instrumented, not
 * linked with libfhook (the command preloads it).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE long leaf(long x)
{
	sink += x;
	return x + 1;
}

NOINLINE void inner(void)
{
	usleep(10000);
	leaf(1);
}

NOINLINE void outer(void)
{
	int i;

	for (i = 0; i < 3; i++)
		inner();
}

NOINLINE size_t takes_str(const char *s)
{
	sink += strlen(s);
	return strlen(s);
}

NOINLINE double scale(double v, int k)
{
	sink += k;
	return v * k;
}

/* integers and floating point interleaved: each class counts its own registers */
NOINLINE float mix(int a, float b, long c, double d, char e, double f)
{
	sink += a + c + e;
	return (float)(b + d + f);
}

static jmp_buf jump_env;

/* calls itself @n deep, then longjmp()s out of every frame */
NOINLINE void deep(int n)
{
	if (!n)
		longjmp(jump_env, 1);
	deep(n - 1);
	sink++;
}

NOINLINE int child_work(void)
{
	return (int)leaf(6);
}

static long per_thread;

static void *thread_main(void *arg)
{
	long i, s = 0;

	for (i = 0; i < per_thread; i++)
		s += leaf(i);
	return (void *)s;
}

int main(int argc, char **argv)
{
	int i;

	if (argc > 1 && !strcmp(argv[1], "tree")) {
		for (i = 0; i < 2; i++)
			outer();
		for (i = 0; i < 5; i++)
			leaf(i);
		return 0;
	}
	if (argc > 3 && !strcmp(argv[1], "mt")) {
		int n = atoi(argv[2]);
		pthread_t th[256];

		per_thread = atol(argv[3]);
		if (n < 1 || n > 256)
			return 2;
		for (i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, thread_main, NULL))
				return 1;
		for (i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "strings")) {
		char big[1024];

		/* invalid UTF-8, then 400 bytes of two-byte characters (cut at 255) */
		takes_str("bad \xff\xfe utf8 \xc3\x28 end");
		for (i = 0; i < 400; i += 2)
			memcpy(big + i, "\xc3\xa9", 2);
		big[400] = 0;
		takes_str(big);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "fp")) {
		printf("%g %g\n", scale(1.5, 3), mix(1, 2.5f, 3, 4.25, 'x', -0.5));
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "fds")) {
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		char p[PATH_MAX], t[PATH_MAX];

		while (d && (e = readdir(d))) {
			ssize_t n;

			snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
			n = readlink(p, t, sizeof(t) - 1);
			if (n > 0) {
				t[n] = 0;
				printf("fd %s %s\n", e->d_name, t);
			}
		}
		if (d)
			closedir(d);
		leaf(1);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "jump")) {
		/* frames left by longjmp, then a forked child's returns from them */
		int st;
		pid_t pid;

		for (i = 0; i < 3; i++) {
			if (!setjmp(jump_env))
				deep(4);
			leaf(i);
		}
		pid = fork();
		if (!pid)
			_exit(child_work());
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		leaf(WEXITSTATUS(st));
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "idle")) {
		/* a few calls, then nothing until killed */
		for (i = 0; i < 10; i++)
			leaf(i);
		printf("idle\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (argc > 1 && !strcmp(argv[1], "spin")) {
		/* until killed; says when it started */
		long n = 0;

		printf("spinning\n");
		fflush(stdout);
		for (;;) {
			leaf(n++);
			if (!(n % 1000))
				usleep(100);
		}
	}
	return 2;
}
