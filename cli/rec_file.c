// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The recording's file: where `fhook record` moves the rings' bytes.
 *
 * A whole-program recording writes hundreds of MB a second while the
 * program's own threads want every CPU.  Buffered writes cost the
 * kernel a fresh page-cache page per 4 KiB, a copy into it and the
 * flusher's work later; on a virtual machine whose host takes back the
 * guest's free memory (virtio-balloon free page reporting), a fresh page
 * is also a fault in the host.  So a regular file gets direct I/O: the
 * bytes are copied once into buffers that are used again and again, and
 * a writer thread writes each full one to the device, with no page
 * cache, while the drain fills the next.  When the device is slower than
 * the program (every buffer waits for it), the drain writes the waiting
 * buffers through the page cache itself, in order (next_buf()), rather
 * than make the rings wait: memory takes the burst.  What cannot be
 * written directly (a partial buffer, a file system that refuses
 * O_DIRECT) is written plainly; the bytes in the file are the same
 * either way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rec_file.h"

/*
 * Direct writes are of whole 4 MiB buffers at 4 MiB-aligned offsets: far
 * above any device's block size, and few syscalls and completions (1 MiB
 * ones made a program that records 1.2 GB/s wait for its rings more
 * often than the page cache did; 4 MiB ones, no more often).  Eight of
 * them hold tens of milliseconds of such a program's records while the
 * device is busy; only those filled are ever touched.
 */
#define REC_FILE_BUF	(4UL << 20)
/* a round ends with the file at most this stale (ns): readers see it grow */
#define REC_FILE_SYNC_NS	(1000UL * 1000 * 1000)

enum { RB_FREE, RB_FILLING, RB_QUEUED, RB_WRITING, RB_FAILED };

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

/* The first write error: what the file holds below its offset is whole. Under the lock. */
static void failed_at(struct rec_file *f, int err, uint64_t at)
{
	if (!f->err || at < f->durable)
		f->durable = at;
	if (!f->err)
		__atomic_store_n(&f->err, err, __ATOMIC_RELAXED);	/* (read without the lock) */
}

/*
 * Write buffer @b where it goes: directly while the file system takes
 * it, else plainly.  Not under the lock: the buffer is the caller's.
 */
static int put_buf(struct rec_file *f, struct rec_buf *b, bool direct, size_t *done)
{
	size_t more = 0;
	int ret;

	*done = 0;
	if (direct && __atomic_load_n(&f->direct_ok, __ATOMIC_RELAXED)) {
		ret = write_all(f->fd, b->data, b->fill, b->off, done);
		if (ret != -EINVAL)
			return ret;
		/*
		 * Refused: nothing was written (alignment is checked first), or
		 * a short write left the rest unaligned.  Plain writes from now on.
		 */
		__atomic_store_n(&f->direct_ok, false, __ATOMIC_RELAXED);
	}
	ret = write_all(f->plain_fd, b->data + *done, b->fill - *done, b->off + *done, &more);
	*done += more;
	return ret;
}

static void *writer_main(void *arg)
{
	struct rec_file *f = arg;

	pthread_setname_np(pthread_self(), "fhook-write");

	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct rec_buf *b;
		size_t done;
		int ret;

		while ((f->q_head == f->q_tail || f->hold) && !f->stop)
			pthread_cond_wait(&f->cond, &f->lock);
		if (f->q_head == f->q_tail)
			break;
		b = &f->bufs[f->queue[f->q_head++ % REC_FILE_NBUF]];
		if (f->err) {
			/* after an error nothing more is written: the rest is unwritten */
			failed_at(f, f->err, b->off);
			b->state = RB_FAILED;
			pthread_cond_broadcast(&f->cond);
			continue;
		}
		b->state = RB_WRITING;
		f->writing = true;
		pthread_mutex_unlock(&f->lock);
		ret = put_buf(f, b, true, &done);
		pthread_mutex_lock(&f->lock);
		f->writing = false;
		if (ret) {
			failed_at(f, ret, b->off + done);
			b->state = RB_FAILED;
		} else {
			b->state = RB_FREE;
			b->fill = 0;
		}
		pthread_cond_broadcast(&f->cond);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* Wait until the writer has written every queued buffer. */
static void wait_queue(struct rec_file *f)
{
	pthread_mutex_lock(&f->lock);
	while (f->q_head != f->q_tail || f->writing)
		pthread_cond_wait(&f->cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
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

/* The first byte that is not surely in the file yet.  Under the lock. */
static uint64_t first_unwritten(struct rec_file *f)
{
	uint64_t low = f->bufs[f->cur].off;
	int i;

	for (i = 0; i < REC_FILE_NBUF; i++)
		if (f->bufs[i].state != RB_FREE && f->bufs[i].off < low)
			low = f->bufs[i].off;
	return low;
}

/*
 * The current buffer is full: to the writer, with another to fill.
 * When every other one still waits for the device, the drain waits for
 * the one being written, takes back the others and writes them and this
 * one through the page cache itself, in the file's order, rather than
 * make the rings wait for all of them: memory takes the burst.  Every
 * write is of the bytes right after those written before it, so the file
 * never has a hole (a killed fhook leaves a file that just ends early).
 */
static int next_buf(struct rec_file *f)
{
	struct rec_buf *cur = &f->bufs[f->cur];
	int i, free_i = -1, nr_back = 0, back[REC_FILE_NBUF], ret;
	uint64_t low;
	size_t done;

	pthread_mutex_lock(&f->lock);
	ret = f->err;
	for (i = 0; i < REC_FILE_NBUF && !ret && free_i < 0; i++)
		if (f->bufs[i].state == RB_FREE)
			free_i = i;
	if (!ret && free_i >= 0) {
		cur->state = RB_QUEUED;
		f->queue[f->q_tail++ % REC_FILE_NBUF] = f->cur;
		pthread_cond_broadcast(&f->cond);
		f->cur = free_i;
		f->bufs[free_i].state = RB_FILLING;
		f->bufs[free_i].off = cur->off + cur->fill;
		f->bufs[free_i].fill = 0;
	} else if (!ret) {
		/*
		 * Only after the write on its way: the file stays whole up to
		 * what is written (a killed fhook leaves no hole of zeros).
		 */
		f->hold = true;
		while (f->writing)
			pthread_cond_wait(&f->cond, &f->lock);
		f->hold = false;
		ret = f->err;
		while (f->q_head != f->q_tail && !ret) {
			i = f->queue[f->q_head++ % REC_FILE_NBUF];
			f->bufs[i].state = RB_WRITING;
			back[nr_back++] = i;
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (ret)
		return ret;
	if (free_i < 0) {
		back[nr_back++] = f->cur;	/* (the writer waits for them: the queue is empty) */
		for (i = 0; i < nr_back; i++) {
			struct rec_buf *b = &f->bufs[back[i]];

			ret = put_buf(f, b, false, &done);
			pthread_mutex_lock(&f->lock);
			if (ret) {
				/* this one and the rest are unwritten: kept for rec_file_unwritten() */
				failed_at(f, ret, b->off + done);
				for (; i < nr_back; i++)
					if (back[i] != f->cur)
						f->bufs[back[i]].state = RB_FAILED;
			} else if (back[i] != f->cur) {
				b->state = RB_FREE;
				b->fill = 0;
			}
			pthread_mutex_unlock(&f->lock);
			if (ret)
				return ret;
		}
		cur->off += cur->fill;
		cur->fill = 0;
	}
	/* the units below the first byte not surely in the file are whole there */
	pthread_mutex_lock(&f->lock);
	low = first_unwritten(f);
	pthread_mutex_unlock(&f->lock);
	units_from(f, low);
	return 0;
}

/*
 * The file as long as everything written so far: the current buffer's
 * bytes plainly, kept in the buffer, which a direct write puts there
 * once more when it is full (the same bytes).
 */
static int sync_tail(struct rec_file *f)
{
	struct rec_buf *cur = &f->bufs[f->cur];
	size_t done;
	int ret;

	if (!cur->fill)
		return 0;
	ret = write_all(f->plain_fd, cur->data, cur->fill, cur->off, &done);
	if (ret) {
		pthread_mutex_lock(&f->lock);
		failed_at(f, ret, cur->off + done);
		pthread_mutex_unlock(&f->lock);
	}
	return ret;
}

/* The same file, without O_DIRECT: a descriptor of its own, whose flags are its own. */
static int reopen_plain(int fd, int flags)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return open(self, flags | O_CLOEXEC);
}

static bool direct_setup(struct rec_file *f)
{
	int i;

	f->plain_fd = reopen_plain(f->fd, O_WRONLY);
	if (f->plain_fd < 0)
		return false;
	for (i = 0; i < REC_FILE_NBUF; i++)
		if (posix_memalign((void **)&f->bufs[i].data, 4096, REC_FILE_BUF))
			return false;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	if (cli_helper_thread(&f->writer, writer_main, f)) {
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		return false;
	}
	f->bufs[0].state = RB_FILLING;
	f->direct_ok = true;
	f->threaded = true;
	return true;
}

static void direct_free(struct rec_file *f)
{
	int i;

	for (i = 0; i < REC_FILE_NBUF; i++) {
		free(f->bufs[i].data);
		f->bufs[i].data = NULL;
	}
	if (f->plain_fd >= 0)
		close(f->plain_fd);
	f->plain_fd = -1;
}

static int rec_file_open(struct rec_file *f)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
	struct stat st;
	int fl;

	/* not inherited by the traced processes */
	f->fd = open(f->path, flags | (f->want_direct ? O_DIRECT : 0), 0644);
	if (f->fd < 0 && f->want_direct && errno == EINVAL)
		f->fd = open(f->path, flags, 0644);	/* no O_DIRECT here */
	if (f->fd < 0)
		return -errno;
	fl = fcntl(f->fd, F_GETFL);
	if (fl < 0 || !(fl & O_DIRECT))
		return 0;
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode) || !direct_setup(f)) {
		/* plain writes after all */
		direct_free(f);
		if (fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) < 0)
			return -errno;
	}
	f->synced = now_ns();
	return 0;
}

static int plain_write(struct rec_file *f, const struct iovec *iov, int n)
{
	struct iovec v[8];
	int i = 0;

	if (n > 8)
		return -EINVAL;
	memcpy(v, iov, n * sizeof(*v));
	while (i < n) {
		ssize_t w = writev(f->fd, v + i, n - i);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		f->bytes += w;
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

static int rec_file_write(struct ev_sink *sink, const struct iovec *iov, int n)
{
	struct rec_file *f = (struct rec_file *)sink;
	uint64_t start;
	int i, ret;

	if (f->fd < 0 && (ret = rec_file_open(f)))
		return ret;
	if (!f->threaded)
		return plain_write(f, iov, n);
	ret = __atomic_load_n(&f->err, __ATOMIC_RELAXED);
	if (ret)
		return ret;
	if (f->nr_units == f->cap_units) {
		size_t cap = f->cap_units ? 2 * f->cap_units : 64;
		uint64_t *u = realloc(f->units, cap * sizeof(*u));

		if (!u)
			return -ENOMEM;
		f->units = u;
		f->cap_units = cap;
	}
	start = f->bytes;
	f->units[f->nr_units++] = start;
	for (i = 0; i < n; i++) {
		const char *p = iov[i].iov_base;
		size_t len = iov[i].iov_len;

		f->bytes += len;
		while (len) {
			struct rec_buf *cur = &f->bufs[f->cur];
			size_t k = REC_FILE_BUF - cur->fill;

			if (k > len)
				k = len;
			memcpy(cur->data + cur->fill, p, k);
			cur->fill += k;
			p += k;
			len -= k;
			if (cur->fill == REC_FILE_BUF && (ret = next_buf(f))) {
				/* not taken: the unit's events are still the rings' */
				f->bytes = start;
				f->nr_units--;
				return ret;
			}
		}
	}
	return 0;
}

/*
 * After a write error: the units not whole in the file, from the file's
 * bytes and the buffers that were not written; the file is cut where the
 * first of them begins, so that it ends with a whole block.
 */
static long rec_file_unwritten(struct ev_sink *sink, unsigned char **bytes, uint64_t *at)
{
	struct rec_file *f = (struct rec_file *)sink;
	uint64_t from, len;
	unsigned char *b;
	int i, rfd;

	if (!f->threaded || !__atomic_load_n(&f->err, __ATOMIC_RELAXED))
		return 0;
	wait_queue(f);
	/* (a unit a failed write left half copied is not the stream's) */
	from = f->durable < f->bytes ? f->durable : f->bytes;
	units_from(f, from);
	if (f->nr_units && f->units[0] < from)
		from = f->units[0];
	len = f->bytes - from;
	b = calloc(1, len ? len : 1);
	if (!b)
		return -ENOMEM;
	/* what reached the file (a read short of it leaves zeros), then what did not */
	rfd = reopen_plain(f->fd, O_RDONLY);
	if (rfd >= 0) {
		uint64_t got = 0;

		while (got < len) {
			ssize_t r = pread(rfd, b + got, len - got, from + got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += r;
		}
		close(rfd);
	}
	for (i = 0; i < REC_FILE_NBUF; i++) {
		struct rec_buf *rb = &f->bufs[i];
		uint64_t lo, hi;

		if (rb->state != RB_FAILED && i != f->cur)
			continue;
		/* (a unit a failed write left half copied is not the stream's) */
		lo = rb->off > from ? rb->off : from;
		hi = rb->off + rb->fill < f->bytes ? rb->off + rb->fill : f->bytes;
		if (lo < hi)
			memcpy(b + (lo - from), rb->data + (lo - rb->off), hi - lo);
	}
	if (ftruncate(f->fd, from) < 0) {
		/* a longer file ends in a partial block: readers stop before it */
	}
	*bytes = b;
	*at = from;
	return len;
}

/*
 * After each round of the drain: a failed write of the writer's reaches
 * the session now, and a reader of the file sees it at most a second
 * late.  The tail is written only when every buffer before it is: never
 * past one still on its way, which would leave a hole if fhook were killed.
 */
static int rec_file_round(struct ev_sink *sink)
{
	struct rec_file *f = (struct rec_file *)sink;
	uint64_t now;
	bool idle;
	int ret;

	if (!f->threaded)
		return 0;
	ret = __atomic_load_n(&f->err, __ATOMIC_RELAXED);
	if (ret || !f->bufs[f->cur].fill)
		return ret;
	now = now_ns();
	if (now - f->synced < REC_FILE_SYNC_NS)
		return 0;
	pthread_mutex_lock(&f->lock);
	idle = f->q_head == f->q_tail && !f->writing;
	pthread_mutex_unlock(&f->lock);
	if (!idle)
		return 0;
	f->synced = now;
	return sync_tail(f);
}

/* Everything taken so far in the file (the session's end): 0 or the write's error. */
static int rec_file_flush(struct ev_sink *sink)
{
	struct rec_file *f = (struct rec_file *)sink;
	int ret;

	if (!f->threaded)
		return 0;
	wait_queue(f);
	ret = __atomic_load_n(&f->err, __ATOMIC_RELAXED);
	if (!ret)
		ret = sync_tail(f);
	return ret;
}

void rec_file_init(struct rec_file *f, const char *path, int fd, bool direct)
{
	memset(f, 0, sizeof(*f));
	f->s.write = rec_file_write;
	f->s.round = rec_file_round;
	f->s.unwritten = rec_file_unwritten;
	f->s.flush = rec_file_flush;
	f->path = path;
	f->fd = fd;
	f->plain_fd = -1;
	f->want_direct = direct && path;
}

int rec_file_close(struct rec_file *f)
{
	int ret = 0;

	if (f->fd < 0)
		return 0;
	if (f->threaded) {
		rec_file_flush(&f->s);		/* (its error is f->err's) */
		pthread_mutex_lock(&f->lock);
		f->stop = true;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->writer, NULL);
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		f->threaded = false;
		ret = __atomic_load_n(&f->err, __ATOMIC_RELAXED);
		direct_free(f);
	}
	if (close(f->fd) && !ret)
		ret = -errno;
	f->fd = -1;
	free(f->units);
	f->units = NULL;
	return ret;
}
