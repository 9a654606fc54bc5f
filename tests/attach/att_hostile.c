// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A traced program that attacks the memory it shares with the fhook
 * command: it finds the memfd in its own descriptors, maps it and writes
 * into it while two threads make events.  The command must neither crash
 * nor be steered; this program may break its own recording.
 *
 *	att_hostile MODE [SEED]
 *
 *	header		rewrite the layout words of the header (procs_off, ...)
 *	scribble	random 1-8 byte stores into the first 64 KiB and the
 *			first rings' header pages, every millisecond
 *	head		move the first ring's head backwards
 *	truncate	try to shrink the memory (prints the result)
 *
 * It prints "ready PID" at once, waits up to 20 s for the memory to show
 * (at start under `fhook record --`, after an attach under -p), attacks,
 * runs on for a while and exits 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile int stop, pause_work, paused;
static volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static void *worker(void *arg)
{
	unsigned long i = 0;

	while (!stop) {
		if (pause_work) {
			__atomic_add_fetch(&paused, 1, __ATOMIC_SEQ_CST);
			while (pause_work && !stop)
				usleep(1000);
			__atomic_sub_fetch(&paused, 1, __ATOMIC_SEQ_CST);
		}
		sink += work(i++);
		if (!(i & 63))
			usleep(100);
	}
	return arg;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The fhook memfd among this process's descriptors, or -1. */
static int find_shm(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char link[300], target[256];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strncmp(target, "/memfd:fhook-trace", 18)) {
			fd = atoi(e->d_name);
			break;
		}
	}
	closedir(d);
	return fd;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "scribble";
	unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
	pthread_t th[2];
	unsigned char *m;
	struct stat st;
	uint64_t rings_off, stride, ring_size;
	size_t len;
	int fd = -1, i;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < 2000 && (fd = find_shm()) < 0; i++)
		msleep(10);
	if (fd < 0) {
		printf("no shared memory found\n");
		goto out;
	}
	msleep(200);	/* events flow, rings are claimed */
	if (fstat(fd, &st) || st.st_size < 65536) {
		printf("shared memory too small\n");
		goto out;
	}
	len = st.st_size;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		goto out;
	}
	/* the layout as the command wrote it: struct ev_shm's first words */
	memcpy(&ring_size, m + 16, 8);
	memcpy(&rings_off, m + 40, 8);
	stride = 4096 + ring_size;
	srand(seed);
	if (!strcmp(mode, "header")) {
		uint64_t bad = 0x7ffffffff000ULL;

		memcpy(m + 24, &bad, 8);	/* procs_off */
		memcpy(m + 40, &bad, 8);	/* rings_off */
		bad = 3;
		memcpy(m + 16, &bad, 8);	/* ring_size */
	} else if (!strcmp(mode, "head")) {
		uint64_t head;

		/* with the producers still, the command is sure to read it */
		pause_work = 1;
		while (__atomic_load_n(&paused, __ATOMIC_SEQ_CST) < 2)
			msleep(1);
		msleep(100);
		if (rings_off + stride <= len) {
			memcpy(&head, m + rings_off, 8);
			head = head > 4096 ? head - 4096 : ~0ULL;
			__atomic_store_n((uint64_t *)(m + rings_off), head, __ATOMIC_RELEASE);
		}
		msleep(300);
		pause_work = 0;
	} else if (!strcmp(mode, "truncate")) {
		if (ftruncate(fd, 4096))
			printf("truncate: %s\n", strerror(errno));
		else
			printf("truncate: done\n");
	} else {
		for (i = 0; i < 300; i++) {
			uint64_t v = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ rand();
			size_t at, n = 1 + rand() % 8;

			if (rand() % 2 || rings_off >= len)
				at = rand() % (65536 - 8);
			else
				at = rings_off + (rand() % 4) * stride + rand() % (4096 - 8);
			if (at + n <= len)
				memcpy(m + at, &v, n);
			msleep(1);
		}
	}
	msleep(300);
out:
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("done\n");
	fflush(stdout);
	return 0;
}
