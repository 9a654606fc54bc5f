// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The known program of the events tests: functions with integer, pointer,
 * string and struct parameters, a void function, recursion, a global, and
 * a child process.  Built with DWARF and the instrumentation flags, not
 * linked with libfhook (fhook trace preloads it).
 *
 *   prog            one pass, single-threaded (the checked trace)
 *   prog child      fork and exec itself once more ("prog" in the child)
 *   prog loop N     N calls of add(), for lost-event and speed checks
 *   prog threads N  N threads one after another, each calling add() once
 *   prog forks N    N children one after another, each calling add() once
 *                   and leaving with _exit (no destructor runs)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

struct path {
	void *mnt;
	const char *dentry;
};

struct file {
	int flags;
	struct path f_path;
	char name[16];
	unsigned int mode:3, kind:5;
};

int counter = 7;
const char *greeting = "hello";

NOINLINE long vfs_read(struct file *file, char *buf, unsigned long count, long *pos)
{
	memset(buf, 'x', count);
	*pos += count;
	__asm__ volatile("" ::: "memory");
	return count + file->flags;
}

NOINLINE int add(int a, int b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

NOINLINE void note(const char *msg)
{
	__asm__ volatile("" : : "r"(msg) : "memory");
	counter++;
}

NOINLINE int fact(int n)
{
	int r = n <= 1 ? 1 : n * fact(n - 1);

	__asm__ volatile("" ::: "memory");
	return r;
}

NOINLINE int run(void)
{
	struct file f = { .flags = 3, .f_path = { NULL, "etc" }, .name = "passwd",
			  .mode = 5, .kind = 17 };
	char buf[8];
	long pos = 0;
	int r;

	r = (int)vfs_read(&f, buf, 4, &pos);
	note("hi there");
	r += add(2, 40);
	r += fact(3);
	return r;
}

static void *thread_main(void *arg)
{
	return (void *)(long)add((int)(long)arg, 1);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "threads")) {
		long i, n = atol(argv[2]), s = 0;
		pthread_t th;
		void *r;

		for (i = 0; i < n; i++) {
			if (pthread_create(&th, NULL, thread_main, (void *)i))
				return 1;
			pthread_join(th, &r);
			s += (long)r;
		}
		printf("sum %ld\n", s);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "forks")) {
		long i, n = atol(argv[2]), bad = 0;
		int st;

		for (i = 0; i < n; i++) {
			pid_t pid = fork();

			if (!pid)
				_exit(add((int)i, 1) == i + 1 ? 0 : 1);
			if (pid < 0 || waitpid(pid, &st, 0) != pid || st)
				bad++;
		}
		printf("forks %ld bad %ld\n", n, bad);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "loop")) {
		long i, n = atol(argv[2]), s = 0;

		for (i = 0; i < n; i++)
			s += add((int)i, 1);
		printf("sum %ld\n", s);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "child")) {
		pid_t pid = fork();
		int st;

		if (!pid) {
			execl("/proc/self/exe", argv[0], (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		printf("child %d\n", WEXITSTATUS(st));
	}
	printf("run %d\n", run());
	return 0;
}
