// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook_assert_held() (lib/util/lockdep.h), compiled in as the sanitizer
 * builds compile it: silent while this thread holds the mutex; aborts,
 * naming the lock, when nobody holds it, when it was just unlocked and
 * when another thread holds it; fhook_assert_not_held() the other way
 * round.  Each case runs in a child, whose standard error and wait status
 * are checked.
 */
#define _GNU_SOURCE
#define FHOOK_DEBUG_LOCKS 1
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "../../lib/util/lockdep.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;

/* Run @fn in a child, its standard error into @buf; its wait status, or -1. */
static int in_child(void (*fn)(void), char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		dup2(p[1], 2);
		alarm(10);	/* bounded, whatever the case does */
		fn();
		_exit(0);
	}
	close(p[1]);
	while (len + 1 < size && (n = read(p[0], buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static void held_here(void)
{
	pthread_mutex_lock(&m);
	fhook_assert_held(&m);
	pthread_mutex_unlock(&m);
}

static void never_locked(void)
{
	fhook_assert_held(&m);
}

static void after_unlock(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	fhook_assert_held(&m);
}

static void *locker(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_barrier_wait(&barrier);
	pause();	/* holds @m until the process ends */
	return arg;
}

static void other_thread(void)
{
	pthread_t t;

	pthread_barrier_init(&barrier, NULL, 2);
	if (pthread_create(&t, NULL, locker, NULL))
		_exit(3);
	pthread_barrier_wait(&barrier);
	fhook_assert_held(&m);
}

static bool aborted(int status)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void case_held(void)
{
	char err[512];
	int st = in_child(held_here, err, sizeof(err));

	CHECK(st == 0 && !err[0], "lockdep_held_silent", "status %#x, stderr '%s'", st, err);
}

static void case_not_held(void)
{
	static const char want[] = "&m not held by this thread (owner 0)\n";
	char err[512];
	int st;

	st = in_child(never_locked, err, sizeof(err));
	CHECK(aborted(st) && !strncmp(err, "fhook: lockdep: ", 16) && strstr(err, want),
	      "lockdep_never_locked_aborts", "status %#x, stderr '%s'", st, err);
	st = in_child(after_unlock, err, sizeof(err));
	CHECK(aborted(st) && !strncmp(err, "fhook: lockdep: ", 16) && strstr(err, want),
	      "lockdep_after_unlock_aborts", "status %#x, stderr '%s'", st, err);
}

static void case_other_thread(void)
{
	char err[512];
	int st = in_child(other_thread, err, sizeof(err));

	CHECK(aborted(st) && strstr(err, "&m not held by this thread (owner ") &&
	      !strstr(err, "(owner 0)"), "lockdep_other_thread_aborts",
	      "status %#x, stderr '%s'", st, err);
}

static void free_here(void)
{
	fhook_assert_not_held(&m);
}

static void held_but_should_not(void)
{
	pthread_mutex_lock(&m);
	fhook_assert_not_held(&m);
}

/* fhook_assert_not_held(): silent when the mutex is free, aborts when this thread holds it */
static void case_not_held_check(void)
{
	char err[512];
	int st;

	st = in_child(free_here, err, sizeof(err));
	CHECK(st == 0 && !err[0], "lockdep_not_held_silent", "status %#x, stderr '%s'", st, err);
	st = in_child(held_but_should_not, err, sizeof(err));
	CHECK(aborted(st) && !strncmp(err, "fhook: lockdep: ", 16) &&
	      strstr(err, "&m held by this thread\n"), "lockdep_not_held_aborts",
	      "status %#x, stderr '%s'", st, err);
}

static const struct check_case cases[] = {
	CHECK_CASE(held),
	CHECK_CASE(not_held),
	CHECK_CASE(other_thread),
	CHECK_CASE(not_held_check),
};

int main(void)
{
	return check_run_cases(cases);
}
