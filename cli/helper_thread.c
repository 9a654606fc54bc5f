// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The command's own threads (a trace's printer, a recording's drain and
 * writer) never take a signal sent to the command: those go to its main
 * thread, whose handlers stop it in order, and which blocks them while an
 * attach has a thread of another process in a call of ours (attach.c).  A
 * helper thread taking SIGUSR1 or SIGALRM there would end the command by
 * the default action with that call on its way.  SIGPIPE stays: it is a
 * thread's own, for its own write.
 */
#include <pthread.h>
#include <signal.h>

#include "cli.h"

int cli_helper_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1,
				    SIGUSR2, SIGCHLD };
	sigset_t set, old;
	unsigned int i;
	int ret;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	ret = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}
