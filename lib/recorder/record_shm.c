// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The recorder's trace buffer: the memfd FHOOK_EV_SHM names, checked to be
 * fhook's and mapped up to its rings, and found again (reopened from the
 * command) when the program closed its descriptor or reused the number.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"

/* which file fhook_rec_fd must be, and where the command holds it (FHOOK_EV_SHM) */

bool fhook_rec_fd_is_shm(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && st.st_dev == rec_dev && st.st_ino == rec_ino;
}

/* @v in decimal at @p; the end of it */
static char *__fhook_startup put_decimal(char *p, unsigned long v)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = digits[--n];
	return p;
}

/*
 * "/proc/PID/fd/FD" in @buf (64 bytes; PID 0 is "self"), without
 * snprintf(): its pages would be faulted in by every recorded process,
 * and a vfork child about to exec may build it (async-signal-safe).
 */
static void __fhook_startup proc_fd_path(char *buf, unsigned long pid, unsigned long fd)
{
	char *p = buf + 6;

	memcpy(buf, "/proc/", 6);
	if (pid) {
		p = put_decimal(p, pid);
	} else {
		memcpy(p, "self", 4);
		p += 4;
	}
	memcpy(p, "/fd/", 4);
	p = put_decimal(p + 4, fd);
	*p = 0;
}

/* Is @fd (of this process) a memfd fhook made for a recording? */
bool __fhook_startup fhook_rec_fd_is_trace_memfd(long fd)
{
	char link[64], target[64];
	ssize_t n;

	if (fd < 0)
		return false;
	proc_fd_path(link, 0, (unsigned long)fd);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = 0;
	return n > 0 && !strncmp(target, "/memfd:fhook-trace", 18);
}

/*
 * The trace buffer's memfd, by a descriptor that still is it.  A program
 * may close descriptors it did not open (closefrom(3) before it execs a
 * daemon) and open files that get the number: mapping those instead of
 * the rings would write the trace into its files, or die of SIGBUS past
 * their end.  The command holds the memfd open under the same number; it
 * is reopened from there (/proc/PID/fd/N, which the kernel allows only to
 * a process that could ptrace the command: its own user's).  -1 if not.
 */
int fhook_rec_reopen_shm(pid_t tracer, int tracer_fd)
{
	char path[64];
	int fd;

	if (tracer <= 0 || tracer_fd < 0)
		return -1;
	proc_fd_path(path, (unsigned long)tracer, (unsigned long)tracer_fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && !fhook_rec_fd_is_shm(fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int fhook_rec_shm_fd(void)
{
	int fd;

	if (fhook_rec_fd_is_shm(fhook_rec_fd))
		return fhook_rec_fd;
	fd = fhook_rec_reopen_shm(fhook_rec_tracer_pid, fhook_rec_tracer_fd);
	if (fd >= 0)
		fhook_rec_fd = fd;
	return fd;
}

/*
 * The decimal number at *@s, *@s moved past it; false if there is none or
 * it exceeds @max.  Not strtoul(): in every recorded process, its code and
 * the locale's table would be two more libc pages to fault in.
 */
bool __fhook_startup fhook_rec_parse_num(const char **s, unsigned long long max,
					 unsigned long long *out)
{
	const char *p = *s;
	unsigned long long v = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (unsigned long long)(*p - '0')) / 10)
			return false;
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	*s = p;
	*out = v;
	return true;
}

/*
 * The shared memory named by FHOOK_EV_SHM ("FD:INODE:PID": the memfd's
 * descriptor, its inode, the command's pid), mapped up to the rings.  The
 * descriptor is inherited, and a program may have closed it and opened
 * something else under its number: only that memfd is taken (fstat: a
 * memfd, the inode, a size the header agrees with), reopened from the
 * command if the number now is another file.
 */
struct ev_shm *__fhook_startup fhook_rec_map_shm(const char *v, const char **why)
{
	char link[64];
	struct ev_shm hdr, *shm;
	unsigned long long nfd, ino = 0, npid = 0;
	const char *end = v;
	struct stat st;
	long fd, pid;

	*why = "is malformed";
	if (!fhook_rec_parse_num(&end, INT_MAX, &nfd) ||
	    (*end == ':' && (end++, !fhook_rec_parse_num(&end, ~0ULL, &ino) ||
			     (*end == ':' && (end++, !fhook_rec_parse_num(&end, INT_MAX, &npid))))) ||
	    *end)
		return NULL;
	fd = (long)nfd;
	pid = (long)npid;
	fhook_rec_tracer_fd = (int)fd;
	fhook_rec_tracer_pid = (pid_t)pid;
	*why = "is not fhook's trace buffer";
	if (!fhook_rec_fd_is_trace_memfd(fd) || fstat((int)fd, &st) ||
	    (ino && st.st_ino != (ino_t)ino)) {
		/* closed, or its number reused: the command's copy */
		if (!ino || !pid)
			goto not_ours;
		rec_ino = (ino_t)ino;
		rec_dev = 0;
		proc_fd_path(link, (unsigned long)pid, (unsigned long)fd);
		fd = open(link, O_RDWR | O_CLOEXEC);
		if (fd < 0 || fstat((int)fd, &st) || st.st_ino != (ino_t)ino) {
			if (fd >= 0)
				close((int)fd);
			*why = "names a descriptor the program reused, and the command's "
			       "copy cannot be opened";
			return NULL;
		}
	}
	rec_dev = st.st_dev;
	rec_ino = st.st_ino;
	*why = "is not fhook's trace buffer";
	if ((uint64_t)st.st_size < sizeof(struct ev_shm))
		goto not_ours;
	/* the fields checked, read: no mapping of their own to fault in */
	if (pread((int)fd, &hdr, offsetof(struct ev_shm, untraced), 0) !=
	    (ssize_t)offsetof(struct ev_shm, untraced))
		goto not_ours;
	if (hdr.magic != EV_SHM_MAGIC || hdr.size != (uint64_t)st.st_size ||
	    hdr.rings_off > hdr.size || hdr.desc_off + hdr.desc_len > hdr.rings_off ||
	    hdr.procs_off + EV_MAX_PROCS * sizeof(struct ev_proc) > hdr.desc_off ||
	    hdr.ring_size < EV_RING_MIN || hdr.ring_size > EV_RING_MAX ||
	    (hdr.ring_size & (hdr.ring_size - 1)) ||
	    hdr.rings_off + EV_MAX_RINGS * ev_ring_stride(hdr.ring_size) > hdr.size ||
	    (pid && hdr.tracer_pid != (uint32_t)pid))
		goto not_ours;
	shm = mmap(NULL, hdr.rings_off, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (shm == MAP_FAILED) {
		*why = "cannot be mapped (address space)";
		goto not_ours;
	}
	fhook_rec_fd = (int)fd;
	return shm;
not_ours:
	if ((int)fd != fhook_rec_tracer_fd)
		close((int)fd);
	return NULL;
}
