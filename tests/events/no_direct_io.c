// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Preloaded into `fhook record` by test_rec_file.sh: a file system as
 * fhook may meet one.  FHOOK_TEST_DIRECT_IO says how:
 *   open   open() with O_DIRECT fails with EINVAL (a file system without it)
 *   write  a write to a descriptor with O_DIRECT fails with EINVAL (one that
 *          takes the flag but not the writes), from file offset
 *          FHOOK_TEST_DIRECT_IO_AT on (default 0)
 *   slow   each direct write first sleeps 50 ms (a device slower than the
 *          program: the buffers fill and go through the page cache)
 *   eio    slow, and a plain write at or past FHOOK_TEST_DIRECT_IO_AT fails
 *          with EIO (an error while direct writes are still on their way)
 *   count  nothing changes
 * In every mode, the bytes written with O_DIRECT go at exit to the file
 * FHOOK_TEST_DIRECT_IO_LOG names, if any.
 * The traced program inherits it too and opens nothing with O_DIRECT.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static unsigned long long direct_bytes;

static const char *mode(void)
{
	const char *m = getenv("FHOOK_TEST_DIRECT_IO");

	return m ? m : "";
}

static int open_as(const char *sym, int dirfd, const char *path, int flags, mode_t m)
{
	if ((flags & O_DIRECT) && !strcmp(mode(), "open")) {
		errno = EINVAL;
		return -1;
	}
	if (dirfd == -1) {
		int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, sym);

		return real(path, flags, m);
	} else {
		int (*real)(int, const char *, int, ...) =
			(int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, sym);

		return real(dirfd, path, flags, m);
	}
}

#define OPEN_WRAP(name)							\
int name(const char *path, int flags, ...)				\
{									\
	mode_t m = 0;							\
	va_list ap;							\
									\
	va_start(ap, flags);						\
	if (flags & (O_CREAT | __O_TMPFILE))				\
		m = va_arg(ap, mode_t);					\
	va_end(ap);							\
	return open_as(#name, -1, path, flags, m);			\
}
#define OPENAT_WRAP(name)						\
int name(int dirfd, const char *path, int flags, ...)			\
{									\
	mode_t m = 0;							\
	va_list ap;							\
									\
	va_start(ap, flags);						\
	if (flags & (O_CREAT | __O_TMPFILE))				\
		m = va_arg(ap, mode_t);					\
	va_end(ap);							\
	return open_as(#name, dirfd, path, flags, m);			\
}
OPEN_WRAP(open)
OPEN_WRAP(open64)
OPENAT_WRAP(openat)
OPENAT_WRAP(openat64)

static ssize_t pwrite_as(const char *sym, int fd, const void *buf, size_t n, off_t off)
{
	ssize_t (*real)(int, const void *, size_t, off_t) =
		(ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, sym);
	int fl = fcntl(fd, F_GETFL);
	ssize_t w;

	const char *at_s = getenv("FHOOK_TEST_DIRECT_IO_AT");
	long long at = at_s ? atoll(at_s) : 0;

	if (fl >= 0 && (fl & O_DIRECT) && !strcmp(mode(), "write") && off >= at) {
		errno = EINVAL;
		return -1;
	}
	if (fl >= 0 && (fl & O_DIRECT) && (!strcmp(mode(), "slow") || !strcmp(mode(), "eio")))
		usleep(50000);
	if (fl >= 0 && !(fl & O_DIRECT) && !strcmp(mode(), "eio") && off + (off_t)n > at) {
		errno = EIO;
		return -1;
	}
	w = real(fd, buf, n, off);
	if (w > 0 && fl >= 0 && (fl & O_DIRECT))
		direct_bytes += w;
	return w;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite_as("pwrite", fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite_as("pwrite64", fd, buf, n, off);
}

__attribute__((destructor)) static void say_count(void)
{
	const char *log = getenv("FHOOK_TEST_DIRECT_IO_LOG");
	FILE *f;

	if (!log || !direct_bytes)
		return;
	f = fopen(log, "a");
	if (f) {
		fprintf(f, "%llu\n", direct_bytes);
		fclose(f);
	}
}
