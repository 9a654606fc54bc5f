/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a small /proc file whole, with no stdio (from any thread, in
 * any state the caller's code is in).
 */
#ifndef FHOOK_UTIL_PROCFILE_H
#define FHOOK_UTIL_PROCFILE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* @path into @buf (@size bytes, NUL-terminated); its length, or -1. */
static inline ssize_t fhook_read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* When process @pid started, in clock ticks since boot (/proc/PID/stat); 0 if gone. */
static inline unsigned long long fhook_proc_start(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	int i;

	/*
	 * The main thread's task entry: the process's start time, and what
	 * qemu-user, which makes up /proc/self/stat and /proc/PID/stat for the
	 * process it runs, leaves as the kernel wrote it (the command and a
	 * traced process then read the same time).
	 */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, pid);
	if (fhook_read_small_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* after the command name, which may hold anything but ends at the last ')' */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start;
}

#endif /* FHOOK_UTIL_PROCFILE_H */
