// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The recording's file: where `fhook record` moves the rings' bytes.
 *
 * A whole-program recording writes hundreds of MB a second while the
 * program's own threads want every CPU.  Buffered writes cost the
 * kernel a fresh page-cache page per 4 KiB, a copy into it and the
 * flusher's work later; on a virtual machine whose host takes back the
 * guest's free memory (virtio-balloon free page reporting), a fresh page
 * is also a fault in the host, which made the first of a series of
 * recordings several times dearer than the next.  So a regular file gets
 * direct I/O: the bytes are copied once into an aligned buffer that is
 * used again and again, and written from there to the device, with no
 * page cache at all.  What cannot be written that way (the unaligned
 * tail, or a file system that refuses O_DIRECT) is written plainly; the
 * bytes in the file are the same either way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "rec_file.h"

/*
 * Direct writes are of whole 1 MiB buffers at 1 MiB-aligned offsets:
 * far above any device's block size, few enough syscalls, small beside
 * the rings, and short enough that a blocked write does not leave the
 * rings waiting long.
 */
#define REC_FILE_BUF	(1UL << 20)
#define REC_FILE_ALIGN	4096UL
/* a round ends with the file at most this stale (ns): readers see it grow */
#define REC_FILE_SYNC_NS	(1000UL * 1000 * 1000)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* @n bytes at @off; *@done: how many of them were written, also on an error */
static int write_all(int fd, const void *p, size_t n, off_t off, size_t *done)
{
	*done = 0;
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!w)
			return -ENOSPC;
		p = (const char *)p + w;
		n -= w;
		off += w;
		*done += w;
	}
	return 0;
}

/* From now on plain writes: the file system refused a direct one. */
static int plain_from_now(struct rec_file *f)
{
	int fl = fcntl(f->fd, F_GETFL);

	if (fl < 0 || fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) < 0)
		return -errno;
	f->direct = false;
	return 0;
}

/*
 * Units (the header, blocks) that start at @from or later, and the one
 * that holds @from: only those can still be incomplete in the file.
 */
static void units_from(struct rec_file *f, uint64_t from)
{
	size_t k = 0;

	while (k + 1 < f->nr_units && f->units[k + 1] <= from)
		k++;
	memmove(f->units, f->units + k, (f->nr_units - k) * sizeof(*f->units));
	f->nr_units -= k;
}

/*
 * Write the buffer's first @n bytes (a multiple of REC_FILE_ALIGN) at
 * the direct offset, directly if the file system takes it, and move past
 * them.  On an error the file holds what it holds (f->durable says how
 * much), and the buffer is kept for rec_file_unwritten().
 */
static int put_direct(struct rec_file *f, size_t n)
{
	size_t done;
	int ret = write_all(f->fd, f->buf, n, f->off, &done);

	if (ret == -EINVAL && f->direct && !done) {
		/* (nothing of it was written: alignment is checked first) */
		ret = plain_from_now(f);
		if (!ret)
			ret = write_all(f->fd, f->buf, n, f->off, &done);
	}
	if (ret) {
		f->err = ret;
		f->durable = f->off + done;
		return ret;
	}
	f->off += n;
	f->fill -= n;
	memmove(f->buf, f->buf + n, f->fill);
	units_from(f, f->off);
	return 0;
}

/*
 * The file as long as everything written so far: the aligned part
 * directly, the rest plainly behind it, and kept in the buffer, so that
 * the next direct write starts aligned again and writes it once more
 * (the same bytes).
 */
static int sync_tail(struct rec_file *f)
{
	size_t whole = f->fill & ~(REC_FILE_ALIGN - 1), done;
	int ret = 0;
	int fl;

	if (whole)
		ret = put_direct(f, whole);
	if (ret || !f->fill)
		return ret;
	fl = fcntl(f->fd, F_GETFL);
	if (fl < 0 || fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) < 0)
		return -errno;
	ret = write_all(f->fd, f->buf, f->fill, f->off, &done);
	if (ret) {
		f->err = ret;
		f->durable = f->off + done;
		return ret;
	}
	if (fcntl(f->fd, F_SETFL, fl) < 0)
		return -errno;
	return 0;
}

static int rec_file_open(struct rec_file *f)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
	struct stat st;

	/* not inherited by the traced processes */
	f->fd = open(f->path, flags | (f->want_direct ? O_DIRECT : 0), 0644);
	if (f->fd < 0 && f->want_direct && errno == EINVAL)
		f->fd = open(f->path, flags, 0644);	/* no O_DIRECT here */
	if (f->fd < 0)
		return -errno;
	f->direct = f->want_direct && (fcntl(f->fd, F_GETFL) & O_DIRECT) &&
		    !fstat(f->fd, &st) && S_ISREG(st.st_mode);
	if (f->direct && posix_memalign((void **)&f->buf, REC_FILE_ALIGN, REC_FILE_BUF))
		f->buf = NULL;
	f->seek = f->direct;
	if (!f->buf && f->direct) {
		int ret = plain_from_now(f);

		if (ret)
			return ret;
	}
	f->synced = now_ns();
	return 0;
}

static int rec_file_write(struct ev_sink *sink, const struct iovec *iov, int n)
{
	struct rec_file *f = (struct rec_file *)sink;
	struct iovec v[8];
	int i = 0, ret;

	if (n > 8)
		return -EINVAL;
	if (f->fd < 0 && (ret = rec_file_open(f)))
		return ret;
	if (f->err)
		return f->err;
	if (f->direct) {
		if (f->nr_units == f->cap_units) {
			size_t cap = f->cap_units ? 2 * f->cap_units : 64;
			uint64_t *u = realloc(f->units, cap * sizeof(*u));

			if (!u)
				return -ENOMEM;
			f->units = u;
			f->cap_units = cap;
		}
		f->units[f->nr_units++] = f->bytes;
		for (i = 0; i < n; i++) {
			const char *p = iov[i].iov_base;
			size_t len = iov[i].iov_len;

			f->bytes += len;
			while (len) {
				size_t k = REC_FILE_BUF - f->fill;

				if (k > len)
					k = len;
				memcpy(f->buf + f->fill, p, k);
				f->fill += k;
				p += k;
				len -= k;
				if (f->fill == REC_FILE_BUF && (ret = put_direct(f, REC_FILE_BUF)))
					return ret;
			}
		}
		return 0;
	}
	if (f->fill) {
		/* direct writes stopped with bytes buffered: they go first */
		size_t done;

		ret = write_all(f->fd, f->buf, f->fill, f->off, &done);
		if (ret) {
			f->err = ret;
			f->durable = f->off + done;
			return ret;
		}
		f->off += f->fill;
		f->fill = 0;
		f->nr_units = 0;	/* the plain writes' own errors keep their bytes in the rings */
	}
	if (f->seek) {
		/* direct writes went by offset: the plain ones go on from there */
		if (lseek(f->fd, f->off, SEEK_SET) < 0)
			return -errno;
		f->seek = false;
	}
	memcpy(v, iov, n * sizeof(*v));
	while (i < n) {
		ssize_t w = writev(f->fd, v + i, n - i);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		f->bytes += w;
		f->off += w;
		/* a short write: go on from where it stopped */
		while (i < n && (size_t)w >= v[i].iov_len)
			w -= v[i++].iov_len;
		if (i < n) {
			v[i].iov_base = (char *)v[i].iov_base + w;
			v[i].iov_len -= w;
		}
	}
	return 0;
}

/*
 * After a write error: the units not whole in the file, from the file's
 * bytes (a unit that began before the buffer) and the buffer's; the file
 * is cut where the first of them begins, so that it ends with a whole
 * block, as a plain write's error leaves it but for that block.
 */
static long rec_file_unwritten(struct ev_sink *sink, unsigned char **bytes, uint64_t *at)
{
	struct rec_file *f = (struct rec_file *)sink;
	uint64_t from, back;
	unsigned char *b;
	char self[64];
	int rfd;

	if (!f->err || !f->nr_units)
		return 0;
	units_from(f, f->durable);
	from = f->units[0];
	if (from > (uint64_t)f->off)
		from = f->off;	/* (cannot be: the buffer starts inside a unit) */
	back = f->off - from;
	b = malloc(back + f->fill ? back + f->fill : 1);
	if (!b)
		return -ENOMEM;
	if (back) {
		ssize_t r;

		snprintf(self, sizeof(self), "/proc/self/fd/%d", f->fd);
		rfd = open(self, O_RDONLY | O_CLOEXEC);
		r = rfd < 0 ? -1 : pread(rfd, b, back, from);
		if (rfd >= 0)
			close(rfd);
		if (r != (ssize_t)back) {
			free(b);
			return rfd < 0 || r < 0 ? -errno : -EIO;
		}
	}
	memcpy(b + back, f->buf, f->fill);
	if (ftruncate(f->fd, from) < 0) {
		/* a longer file ends in a partial block: readers stop before it */
	}
	*bytes = b;
	*at = from;
	return back + f->fill;
}

/* after each round of the drain: a reader of the file sees it at most a second late */
static int rec_file_round(struct ev_sink *sink)
{
	struct rec_file *f = (struct rec_file *)sink;
	uint64_t now;

	if (!f->direct || !f->fill || f->err)
		return 0;
	now = now_ns();
	if (now - f->synced < REC_FILE_SYNC_NS)
		return 0;
	f->synced = now;
	return sync_tail(f);
}

void rec_file_init(struct rec_file *f, const char *path, int fd, bool direct)
{
	memset(f, 0, sizeof(*f));
	f->s.write = rec_file_write;
	f->s.round = rec_file_round;
	f->s.unwritten = rec_file_unwritten;
	f->path = path;
	f->fd = fd;
	f->want_direct = direct && path;
}

int rec_file_close(struct rec_file *f)
{
	int ret = 0;

	if (f->fd < 0)
		return 0;
	if (f->err)
		ret = f->err;
	else if (f->direct)
		ret = sync_tail(f);
	if (close(f->fd) && !ret)
		ret = -errno;
	f->fd = -1;
	free(f->buf);
	f->buf = NULL;
	free(f->units);
	f->units = NULL;
	return ret;
}
