/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a small /proc file whole, with no stdio (from any thread, in
 * any state the caller's code is in).
 */
#ifndef FHOOK_UTIL_PROCFILE_H
#define FHOOK_UTIL_PROCFILE_H

#include <fcntl.h>
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

#endif /* FHOOK_UTIL_PROCFILE_H */
