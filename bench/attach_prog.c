// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench/attach.sh's target: the generated functions (gen_funcs.sh, 20,000
 * by default) and THREADS threads (8 by default) calling them in a loop,
 * started without fhook.   attach_prog [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern int gen_n;
extern int (*const gen_tab[])(int);

static void *busy(void *arg)
{
	unsigned int i = (unsigned long)arg;
	volatile int sink = 0;

	for (;;) {
		sink += gen_tab[i % gen_n](i);
		i += 7;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 8;
	pthread_t th;

	for (i = 0; i < n; i++)
		pthread_create(&th, NULL, busy, (void *)i);
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
