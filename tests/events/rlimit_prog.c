// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_rlimit.sh's program, run under an address-space limit.
 *   rlimit_prog malloc N   allocate and touch N MiB, call work() from 2 threads
 *   rlimit_prog fill       take every MiB of address space left but one, then
 *                          call work(): no room for a trace ring
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
	pthread_t th[2];
	size_t mb;
	char *p;
	int i;

	if (argc > 2 && !strcmp(argv[1], "malloc")) {
		mb = strtoul(argv[2], NULL, 0);
		p = malloc(mb << 20);
		if (!p) {
			printf("malloc %zu MiB failed\n", mb);
			return 1;
		}
		memset(p, 1, mb << 20);
		for (i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, thread, NULL)) {
				printf("no thread\n");
				return 1;
			}
		for (i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		printf("ok %d\n", work(1));
		free(p);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "fill")) {
		void *last = NULL;

		printf("filling\n");
		fflush(stdout);
		while ((p = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0)) != MAP_FAILED)
			last = p;
		if (last)
			munmap(last, 1 << 20);
		printf("filled %d\n", work(1));
		return 0;
	}
	return 2;
}
