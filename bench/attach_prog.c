// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench/attach.sh's target: the generated functions (gen_funcs.sh, 20,000
 * by default) and 8 threads calling them in a loop, started without fhook.
 */
#include <pthread.h>
#include <stdio.h>
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

int main(void)
{
	pthread_t th;
	long i;

	for (i = 0; i < 8; i++)
		pthread_create(&th, NULL, busy, (void *)i);
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
