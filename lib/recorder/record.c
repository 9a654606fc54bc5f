// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The in-process side of `fhook record` and `fhook trace`: read the
 * compiled events from the shared memory the command created (FHOOK_EV_SHM
 * names its fd), register one fprobe per symbol, and on every hit write a
 * binary record into this thread's ring.  Nothing is decoded or formatted
 * here.
 *
 * An event without fetched arguments is two words written straight into
 * the ring (lib/recorder/ring.h); arguments go through a staging buffer.
 * The handlers allocate nothing and take no lock: a thread's first event
 * claims a ring with a compare-and-swap and maps it.  Memory named by a
 * fetch argument is read with process_vm_readv() so that a bad pointer
 * costs a "(fault)" rather than a crash.  A full ring makes the thread
 * wait for the command (counted), unless the recording is lossy.
 *
 * This file is the writer (a thread's ring, room in it, the records) and
 * the fprobe handlers that call it; record.h lists the recorder's other
 * files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "record.h"

/*
 * The recordings (record.h: tracing instances).  In .data (util/startup.h):
 * the set-up of every recorded process writes or reads them, and the exit
 * path and a forked child too; in .bss they would be a zero page of their
 * own, one more fault for each process of a suite.
 */
#define REC_INST_INIT(i, gp)	[i] = { .g = (gp), .slot = (i), .fd = -1, .tracer_fd = -1, \
					.cmd = "record" }
struct rec_inst fhook_rec_insts[REC_MAX_INST] __fhook_startup_data = {
	REC_INST_INIT(0, &fhook_rec_g),
	REC_INST_INIT(1, &fhook_rec_insts[1].own_g),
	REC_INST_INIT(2, &fhook_rec_insts[2].own_g),
	REC_INST_INIT(3, &fhook_rec_insts[3].own_g),
};
_Static_assert(REC_MAX_INST == 4, "REC_INST_INIT for each slot");

__thread long fhook_rec_cur_off;
/* each slot's writer of this thread; slot 0's is the trampolines' (rec_graph()) */
static __thread struct rec_thread fhook_rec_thrs[REC_MAX_INST];
struct ev_ring *fhook_rec_mapsv[REC_MAX_INST][EV_MAX_RINGS] __fhook_cold_bss;

/* glibc registered an rseq area: its cpu_id is rec_g.cpu_off from the thread pointer */
bool fhook_rec_has_rseq __fhook_startup_data;
/*
 * Without rseq, how many plain records may pass between two looks at the
 * cpu (a vDSO call or a system call each): the cpu a record names may be
 * stale by that many records after a migration.
 */
#define REC_CPU_EVERY	256

pthread_key_t fhook_rec_ring_key __fhook_startup_data;
bool fhook_rec_have_key __fhook_startup_data;

/* The writers' offsets: the same in every thread (initial-exec TLS). */
__attribute__((constructor(201))) static void rec_insts_init(void)
{
	int i;

	for (i = 0; i < REC_MAX_INST; i++)
		fhook_rec_insts[i].thr_off = (long)((char *)&fhook_rec_thrs[i] -
						    (char *)__builtin_thread_pointer());
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/* A ring claimed, by this thread or another before: no segment has its first record. */
static void flight_marks_reset(struct ev_ring *r)
{
	memset(r->flight_mark, 0xff, sizeof(r->flight_mark));
}

static void detach(const char *why);

static void rec_inherit(struct rec_thread *t);

/*
 * A free ring for this thread, mapped.  When none is free, the thread
 * retries only after the command has freed one (rings_freed moved), not
 * on every event.
 */
struct ev_ring *fhook_rec_get_ring(struct rec_thread *t)
{
	struct ev_ring *r;
	uint32_t freed, idx, hw, nr = EV_MAX_RINGS;
	void *map;
	int fd;

	freed = __atomic_load_n(&fhook_rec_shm->rings_freed, __ATOMIC_ACQUIRE);
	if (t->no_ring && freed == t->no_ring_gen)
		return NULL;
	map = NULL;
	fd = fhook_rec_shm_fd();
	if (fd < 0) {
		detach("the program closed the trace buffer's descriptor and fhook's copy "
		       "cannot be reopened");
		return NULL;
	}
	for (idx = 0; idx < nr; idx++) {
		if (!ev_slot_claim(&fhook_rec_shm->ring_state[idx]))
			continue;
		map = mmap(NULL, ev_ring_stride(fhook_rec_ring_size), PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, fhook_rec_shm->rings_off + (off_t)idx * ev_ring_stride(fhook_rec_ring_size));
		if (map == MAP_FAILED) {
			/* no address space left: give the ring back */
			__atomic_store_n(&fhook_rec_shm->ring_state[idx], EV_SLOT_FREE, __ATOMIC_RELEASE);
			map = NULL;
		}
		break;
	}
	if (!map) {
		static int said;

		/* its events are counted lost; the summary says whose, why and what to change */
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
			struct rlimit rl;

			if (idx == nr)
				fhook_rec_untraced("threads untraced: all %u trace rings in use (threads "
						   "recording at once)", nr);
			else if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY)
				fhook_rec_untraced("threads untraced: no address space for a %lu KiB trace "
						   "ring under RLIMIT_AS %lu MiB: record with a smaller "
						   "--buffer-size, or raise ulimit -v",
						   (unsigned long)(ev_ring_stride(fhook_rec_ring_size) >> 10),
						   (unsigned long)(rl.rlim_cur >> 20));
			else
				fhook_rec_untraced("threads untraced: no memory for a %lu KiB trace ring: "
						   "record with a smaller --buffer-size",
						   (unsigned long)(ev_ring_stride(fhook_rec_ring_size) >> 10));
		}
		t->no_ring = 1;
		t->no_ring_gen = freed;
		return NULL;
	}
	r = map;
	t->no_ring = 0;
	hw = __atomic_load_n(&fhook_rec_shm->nr_rings, __ATOMIC_RELAXED);
	while (hw < idx + 1 &&
	       !__atomic_compare_exchange_n(&fhook_rec_shm->nr_rings, &hw, idx + 1, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	if (__atomic_load_n(&fhook_rec_announce_pending, __ATOMIC_ACQUIRE))
		fhook_rec_announce_first();
	r->pid = getpid();
	r->tid = syscall(SYS_gettid);
	r->proc_seq = __atomic_load_n(&fhook_rec_proc_seq, __ATOMIC_ACQUIRE);
	prctl(PR_GET_NAME, r->comm);
	flight_marks_reset(r);
	t->ring = r;
	t->data = ev_ring_data(r);
	rec_set_head(t, r->head);
	t->tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	t->last_ts = 1ULL << 63;	/* the ring's first record says the full time */
	t->last_cpu = ~0U;
	t->idx = idx;
	fhook_rec_maps[idx] = r;
	hw = __atomic_load_n(&fhook_rec_maps_hi, __ATOMIC_RELAXED);
	while (hw < idx + 1 &&
	       !__atomic_compare_exchange_n(&fhook_rec_maps_hi, &hw, idx + 1, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	__atomic_store_n(&fhook_rec_shm->ring_state[idx], EV_SLOT_READY, __ATOMIC_RELEASE);
	/* the key was made first thing in the process: a slot of the static block */
	if (fhook_rec_have_key)
		pthread_setspecific(fhook_rec_ring_key, fhook_rec_insts);
	/* a forked child's thread (its only one at the fork: tid == pid) */
	if (__builtin_expect(fhook_rec_fork_ts != 0, 0) && r->tid == r->pid)
		rec_inherit(t);
	return r;
}

/*
 * This thread will not write @r again (a later record claims a new ring):
 * the command may free it as soon as it has written it out.
 */
void fhook_rec_retire_ring(void *arg)
{
	struct rec_thread *t = &fhook_rec_thr;
	struct ev_ring *r = arg;

	if (!r || r != t->ring || t->gen != __atomic_load_n(&rec_gen, __ATOMIC_ACQUIRE))
		return;
	t->ring = NULL;
	rec_set_limit(t, 0);
	fhook_rec_maps[t->idx] = NULL;
	__atomic_store_n(&r->exited, 1, __ATOMIC_RELEASE);
	munmap(r, ev_ring_stride(fhook_rec_ring_size));
}

/* A thread's end (its key's destructor): its ring in each recording retired. */
void fhook_rec_thread_exit(void *arg)
{
	struct rec_inst *in;
	long old;

	for_each_rec_inst(in, old)
		if (fhook_rec_thr.ring)
			fhook_rec_retire_ring(fhook_rec_thr.ring);
}

/* Wake the command: this ring is filling up. */
void fhook_rec_kick(struct ev_ring *r, bool force)
{
	if (!force && __atomic_load_n(&r->kicked, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&r->kicked, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&fhook_rec_shm->wake, 1, __ATOMIC_RELEASE);
	futex(&fhook_rec_shm->wake, FUTEX_WAKE, 1, NULL);
}

/* Name this process in the command's summary: it runs untraced, or partly. */
void fhook_rec_untraced(const char *fmt, ...)
{
	struct ev_untraced *u;
	va_list ap;
	uint32_t i;

	if (!fhook_rec_shm)
		return;
	i = __atomic_fetch_add(&fhook_rec_shm->nr_untraced, 1, __ATOMIC_RELAXED);
	if (i >= EV_MAX_UNTRACED)
		return;
	u = &fhook_rec_shm->untraced[i];
	u->pid = (uint32_t)getpid();
	prctl(PR_GET_NAME, u->comm);
	va_start(ap, fmt);
	vsnprintf(u->why, sizeof(u->why), fmt, ap);
	va_end(ap);
	__atomic_store_n(&u->state, EV_SLOT_READY, __ATOMIC_RELEASE);
}

static void detach(const char *why)
{
	if (__atomic_exchange_n(&rec_disabled, REC_G_STOPPED, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "fhook: %s: %s: process %d continues untraced\n", fhook_rec_cmd, why,
		getpid());
	fhook_rec_untraced("%s", why);
}

/* A flight recorder's segments (struct ev_ring.flight_mark), and what it frees at once. */
#define FLIGHT_SEG	(fhook_rec_ring_size / EV_FLIGHT_SEGS)
#define FLIGHT_STEP	(fhook_rec_ring_size / 8)

/*
 * @head is the start of the record this thread writes next: the first
 * of its segment, unless one was noted.  The fast path's limit @lim is
 * bound to the segment's end, so that its slow path (here) comes round in
 * each segment.
 */
static uint64_t flight_mark(struct ev_ring *r, uint64_t head, uint64_t lim)
{
	uint64_t seg = head / FLIGHT_SEG, *m = &r->flight_mark[seg % EV_FLIGHT_SEGS];

	if (*m / FLIGHT_SEG != seg)
		*m = head;
	return (seg + 1) * FLIGHT_SEG < lim ? (seg + 1) * FLIGHT_SEG : lim;
}

/*
 * A flight recorder's full ring: free the oldest whole records, so that
 * the ring always holds the newest, about an eighth of the ring beyond
 * @need at once (the fast path runs on until the next): the tail moves to
 * the first record of a segment, less than a segment before what an
 * eighth would free; where no such record was noted, it walks the records
 * from the tail.  The tail is published before the bytes behind it are
 * overwritten (the command, copying meanwhile, reads the tail again after
 * its copy and keeps only what is still behind it).
 */
static bool flight_room(struct rec_thread *t, uint64_t need)
{
	struct ev_ring *r = t->ring;
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED), head = rec_head(t), want;
	unsigned int i;

	if (tail > head || head - tail > fhook_rec_ring_size) {
		tail = head;	/* not what this thread wrote: start over */
		flight_marks_reset(r);
		goto out;
	}
	/* the tail's goal: what must be freed, and an eighth more, less a segment */
	want = head + need - fhook_rec_ring_size + FLIGHT_STEP - FLIGHT_SEG;
	for (i = 0; i < 2; i++) {
		uint64_t seg = want / FLIGHT_SEG + i, m = r->flight_mark[seg % EV_FLIGHT_SEGS];

		/* (a mark is trusted only inside what this thread wrote) */
		if (m / FLIGHT_SEG != seg || m < tail || m > head)
			continue;
		tail = m;	/* the first record of the goal's segment, or of the next */
		if (m >= want)
			goto out;
	}
	while (tail < want) {	/* (from the goal's segment's first record, if noted) */
		bool event;
		uint64_t len = ev_rec_len(t->data, tail & (fhook_rec_ring_size - 1), fhook_rec_ring_size,
					  &event);

		if (!len || tail + len > head) {
			tail = head;
			flight_marks_reset(r);
			break;
		}
		tail += len;
	}
out:
	t->tail = tail;
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	/* the new tail is seen before any byte behind it changes */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return true;
}

/*
 * The ring has no room for @need bytes: wait for the command to write
 * some out.  False when the record must be dropped: a lossy recording,
 * a stopped one, or a command that is gone (its drain rounds stopped
 * for two seconds while records wait, and its process is no more).  A
 * command that is alive but slow (its output is a slow pipe) is waited
 * for: nothing is lost.
 */
static bool wait_room(struct rec_thread *t, uint64_t need)
{
	struct ev_ring *r = t->ring;
	const struct timespec slice = { 0, 20 * 1000 * 1000 };
	uint64_t beat = __atomic_load_n(&fhook_rec_shm->heartbeat, __ATOMIC_RELAXED);
	int still = 0;

	bool counted = false;

	if (fhook_rec_shm->flight)
		return flight_room(t, need);
	if (fhook_rec_shm->lossy)
		return false;
	for (;;) {
		uint32_t seq = __atomic_load_n(&r->space_seq, __ATOMIC_ACQUIRE);
		uint64_t now_beat;

		/* a detach (rec_teardown) waits for this thread to leave its handler */
		if (__atomic_load_n(&fhook_rec_shm->stopped, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
			return false;
		/* pairs with the command's store of tail, then load of waiting */
		__atomic_store_n(&r->waiting, 1, __ATOMIC_SEQ_CST);
		t->tail = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);
		if (rec_head(t) + need - t->tail <= fhook_rec_ring_size)
			break;
		/*
		 * A tail no consumer can have written (past the head, or more
		 * than a ring behind it): the shared memory was written over.
		 * Waiting would be forever; this record is dropped.
		 */
		if (t->tail > rec_head(t) || rec_head(t) - t->tail > fhook_rec_ring_size)
			return false;
		/* a wait, not a drop: counted once it sleeps */
		if (!counted) {
			counted = true;
			__atomic_store_n(&r->waits, r->waits + 1, __ATOMIC_RELAXED);
		}
		fhook_rec_kick(r, true);
		futex(&r->space_seq, FUTEX_WAIT, seq, &slice);
		t->tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (rec_head(t) + need - t->tail <= fhook_rec_ring_size)
			break;
		now_beat = __atomic_load_n(&fhook_rec_shm->heartbeat, __ATOMIC_RELAXED);
		if (now_beat != beat) {
			beat = now_beat;
			still = 0;
		} else if (++still >= 100) {
			still = 0;
			if (fhook_proc_start((int)fhook_rec_shm->tracer_pid) != fhook_rec_shm->tracer_start) {
				detach("the fhook process stopped reading the trace");
				return false;
			}
		}
	}
	__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	return true;
}

/*
 * Make room for @len bytes of records at the head (records never wrap: a
 * filler takes the ring's end).  Returns where they go, or NULL: dropped.
 */
static inline uint64_t *reserve(struct rec_thread *t, uint32_t len)
{
	uint64_t pos = rec_head(t) & (fhook_rec_ring_size - 1), need = len;

	if (pos + len > fhook_rec_ring_size)
		need += fhook_rec_ring_size - pos;
	if (__builtin_expect(rec_head(t) + need - t->tail > fhook_rec_ring_size, 0)) {
		t->tail = __atomic_load_n(&t->ring->tail, __ATOMIC_ACQUIRE);
		if (rec_head(t) + need - t->tail > fhook_rec_ring_size && !wait_room(t, need))
			return NULL;
	}
	if (__builtin_expect(pos + len > fhook_rec_ring_size, 0)) {
		*(uint64_t *)(t->data + pos) = ev_w0(fhook_rec_ring_size - pos, EV_ID_PAD);
		rec_head_add(t, fhook_rec_ring_size - pos);
		pos = 0;
	}
	return (uint64_t *)(t->data + pos);
}

/*
 * A record that found no room.  It is lost, unless the recording ended while
 * its thread waited for room (a detach, the command's --duration or its
 * SIGINT): the reader makes no more room then, and a call that reaches the
 * ring after the end is outside the recording, as perf leaves out what comes
 * after a disable, not a loss.
 */
void fhook_rec_drop(struct rec_thread *t)
{
	rec_set_limit(t, 0);
	if (__atomic_load_n(&fhook_rec_shm->stopped, __ATOMIC_RELAXED) == EV_STOP_END ||
	    __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
		return;
	t->lost_pending++;
	__atomic_store_n(&t->ring->lost, t->ring->lost + 1, __ATOMIC_RELAXED);
}

static inline uint32_t rec_cpu(void)
{
	if (__builtin_expect(fhook_rec_has_rseq, 1)) {
		int32_t cpu = rec_rseq_cpu();

		if (cpu >= 0)
			return (uint32_t)cpu;
	}
	return (uint32_t)sched_getcpu();
}

/*
 * Write the ring's own records an event needs first (records lost just
 * before it, the full time after a long gap, a new cpu) and the event's
 * two words; @ext more bytes follow the header (filled in by the caller
 * before commit).  Returns the header, or NULL: dropped.
 */
uint64_t *fhook_rec_begin_event(struct rec_thread *t, uint32_t id, uint64_t w1, uint32_t ext)
{
	uint64_t now = ev_clock_read(fhook_rec_clock) - rec_clock_base;
	uint32_t cpu = rec_cpu(), len = 16 + ext, pre = 0;
	bool new_time = now - t->last_ts >= REC_GAP;
	uint64_t *p;

	rec_count_tramp(t);
	if (__builtin_expect(new_time, 0))
		pre += 16;
	if (__builtin_expect(cpu != t->last_cpu, 0))
		pre += 16;
	if (__builtin_expect(t->lost_pending != 0, 0))
		pre += 16;
	p = reserve(t, len + pre);
	if (!p) {
		fhook_rec_drop(t);
		return NULL;
	}
	if (__builtin_expect(pre != 0, 0)) {
		if (t->lost_pending) {
			p[0] = ev_w0(now, EV_ID_LOST);
			p[1] = t->lost_pending;
			t->lost_pending = 0;
			p += 2;
		}
		if (new_time) {
			p[0] = ev_w0(now, EV_ID_TIME);
			p[1] = now;
			p += 2;
		}
		if (cpu != t->last_cpu) {
			p[0] = ev_w0(now, EV_ID_CPU);
			p[1] = cpu;
			t->last_cpu = cpu;
			p += 2;
		}
		rec_head_add(t, pre);
	}
	t->last_ts = now;
	p[0] = ev_w0(now, id);
	p[1] = w1;
	return p;
}

/* past the mark, how far apart the slow path looks at the reader's progress */
#define REC_MARK_STEP	(fhook_rec_mark / 8)

/* How far the fast path of record_plain() may take head (struct rec_thread.limit). */
uint64_t fhook_rec_limit(struct rec_thread *t)
{
	uint64_t lap_end, room, mark;

	if (!t->ring || t->lost_pending)
		return 0;
	lap_end = (rec_head(t) & ~(fhook_rec_ring_size - 1)) + fhook_rec_ring_size;
	room = t->tail + fhook_rec_ring_size;
	mark = t->tail + fhook_rec_mark;
	/*
	 * Past the mark the command has been woken (commit()): the slow path
	 * looks at its progress again a step on, not at every record, which
	 * made a writer whose reader lags (text formatted on one cpu of two)
	 * pay the slow path for half the ring.
	 */
	if (mark <= rec_head(t))
		mark = rec_head(t) + REC_MARK_STEP;
	if (room < lap_end)
		lap_end = room;
	if (mark < lap_end)
		lap_end = mark;
	/* without rseq, the slow path looks at the cpu every REC_CPU_EVERY records */
	if (!fhook_rec_has_rseq && rec_head(t) + REC_CPU_EVERY * 16 < lap_end)
		lap_end = rec_head(t) + REC_CPU_EVERY * 16;
	if (fhook_rec_shm->flight)
		lap_end = flight_mark(t->ring, rec_head(t), lap_end);
	return lap_end;
}

/* Everything else of record_plain(): the ring's own records first, waits, drops. */
void __attribute__((noinline)) fhook_rec_plain_slow(uint32_t id, uint64_t w1)
{
	struct rec_thread *t = &fhook_rec_thr;
	uint64_t now, pos, *p;
	uint32_t cpu;

	if (__builtin_expect(!t->ring || t->gen != rec_gen, 0)) {
		if (__atomic_load_n(&rec_disabled, __ATOMIC_RELAXED) || !rec_thread())
			return;
	}
	rec_count_tramp(t);
	now = ev_clock_read(fhook_rec_clock) - rec_clock_base;
	cpu = rec_cpu();
	pos = rec_head(t) & (fhook_rec_ring_size - 1);
	if (__builtin_expect(now - t->last_ts >= REC_GAP || cpu != t->last_cpu ||
			     t->lost_pending || rec_head(t) + 16 - t->tail > fhook_rec_ring_size ||
			     pos + 16 > fhook_rec_ring_size ||
			     __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED), 0)) {
		if (__atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
			return;
		if (fhook_rec_begin_event(t, id, w1, 0))
			commit(t, 16);
		rec_set_limit(t, fhook_rec_limit(t));
		return;
	}
	p = (uint64_t *)(t->data + pos);
	p[0] = ev_w0(now, id);
	p[1] = w1;
	t->last_ts = now;
	commit(t, 16);
	rec_set_limit(t, fhook_rec_limit(t));
}

/* record_plain_in()'s slow path: the rest works for the current recording */
void __attribute__((noinline)) fhook_rec_plain_slow_in(const struct rec_inst *in, uint32_t id,
							uint64_t w1)
{
	long old = rec_enter(in);

	fhook_rec_plain_slow(id, w1);
	rec_leave(old);
}

bool fhook_rec_caller_ok(unsigned long parent_ip)
{
	int i;

	if (!fhook_rec_nr_callers)
		return true;
	parent_ip = rethook_find_ret_addr(parent_ip);
	for (i = 0; i < fhook_rec_nr_callers; i++)
		if (parent_ip >= fhook_rec_callers[i].start && parent_ip < fhook_rec_callers[i].end)
			return true;
	return false;
}

static void entry_events(struct rec_probe *p, unsigned long entry_ip, uint64_t w1,
			 struct ftrace_regs *fregs)
{
	int i;

	/*
	 * In the kernel each event is its own fprobe, and ftrace calls the
	 * newest ops first: entry events print newest first.  Their return
	 * hooks stack the other way, so return events print oldest first.
	 */
	for (i = p->nr_entry - 1; i >= 0; i--) {
		struct ev_desc_event *e = p->entry[i];

		if (!e->nr_args)
			record_plain(e->id, w1);
		else
			fhook_rec_record(e, 0, w1, fregs, NULL);
	}
}

/*
 * A plain record at time @ts, earlier than now: only into a ring nothing
 * was written to since @ts (rec_inherit(), a fresh ring).
 */
static void record_plain_at(struct rec_thread *t, uint32_t id, uint64_t w1, uint64_t ts)
{
	uint32_t cpu = rec_cpu(), pre = 0;
	uint64_t *p;

	if (ts - t->last_ts >= REC_GAP)
		pre += 16;
	if (cpu != t->last_cpu)
		pre += 16;
	p = reserve(t, 16 + pre);
	if (!p) {
		fhook_rec_drop(t);
		return;
	}
	if (ts - t->last_ts >= REC_GAP) {
		p[0] = ev_w0(ts, EV_ID_TIME);
		p[1] = ts;
		p += 2;
	}
	if (cpu != t->last_cpu) {
		p[0] = ev_w0(ts, EV_ID_CPU);
		p[1] = cpu;
		t->last_cpu = cpu;
		p += 2;
	}
	rec_head_add(t, pre);
	t->last_ts = ts;
	p[0] = ev_w0(ts, id);
	p[1] = w1;
	commit(t, 16);
}

static struct rec_probe *rec_probe_of(void *probe)
{
	int i;

	for (i = 0; probe && i < fhook_rec_nr_probes; i++)
		if (probe == (void *)&fhook_rec_probes[i].fp)
			return &fhook_rec_probes[i];
	return NULL;
}

/* what rec_inherit() writes: plain entries at the fork's time until one is not */
struct rec_inherit_ctx {
	struct rec_thread *t;
	bool now;
};

static void rec_inherit_one(void *probe, unsigned long entry_ip, unsigned long slot, void *arg)
{
	struct rec_inherit_ctx *c = arg;
	struct rec_probe *p = rec_probe_of(probe);
	uint64_t w1 = ev_w1(entry_ip, slot);

	/* a kprobe event's: its entry, if it has one to pair with (no arguments) */
	if (!p && probe) {
		const struct ev_desc_event *r = fhook_rec_kretprobe_of(probe), *e;

		if (r && (e = fhook_rec_kp_entry_of(r)) && !c->now)
			record_plain_at(c->t, e->id, ev_w1(entry_ip, 0), fhook_rec_fork_ts);
		return;
	}
	/* without an entry event, its exit carries the address: nothing to pair */
	if (!p || !p->nr_entry || !p->nr_ret)
		return;
	if (p->plain_entry >= 0 && !c->now) {
		record_plain_at(c->t, p->plain_entry, w1, fhook_rec_fork_ts);
		return;
	}
	/* arguments are not known here (faults); later ones now, in order */
	c->now = true;
	if (p->plain_entry >= 0)
		record_plain(p->plain_entry, w1);
	else
		entry_events(p, entry_ip, w1, NULL);
}

/*
 * The first ring of a forked child's thread: the frames it inherited
 * (main, and whatever called fork()) were entered by the parent, whose
 * ring has their entries; their returns are this thread's.  Their entries
 * go first, at the fork's time and at their shadow-stack slots, so the
 * child's own records pair with them: its calls are a tree under them, as
 * the parent's are, and a return from main is main's exit.
 */
static void rec_inherit(struct rec_thread *t)
{
	struct rec_inherit_ctx c = { t, false };

	rethook_for_each_pending(rec_inherit_one, &c);
	fhook_rec_fork_ts = 0;
	rec_set_limit(t, fhook_rec_limit(t));
}

static int __attribute__((noinline)) rec_entry_slow(struct fprobe *fp, unsigned long entry_ip,
						     unsigned long ret_ip,
						     struct ftrace_regs *fregs, void *entry_data);

/* The entry of `fhook record`'s every function: one plain event, no caller filter. */
int fhook_rec_entry(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;

	/* the common case reads its recording from the probe; the rest sets it current */
	if (__builtin_expect(p->plain_entry < 0 || p->nr_saved || p->inst->nr_callers, 0))
		return rec_entry_slow(fp, entry_ip, ret_ip, fregs, entry_data);
	record_plain_in(p->inst, p->plain_entry,
			ev_w1(entry_ip, p->nr_ret ? rethook_data_index(entry_data) : 0));
	return 0;
}

static int rec_entry_slow_cur(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *entry_data);

static int rec_entry_slow(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
			  struct ftrace_regs *fregs, void *entry_data)
{
	long old = rec_enter(((struct rec_probe *)fp)->inst);
	int ret = rec_entry_slow_cur(fp, entry_ip, ret_ip, fregs, entry_data);

	rec_leave(old);
	return ret;
}

static int rec_entry_slow_cur(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
			      struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;
	unsigned long depth = p->nr_ret ? rethook_data_index(entry_data) : 0;
	uint64_t w1 = ev_w1(entry_ip, depth);
	int i, k;

	if (__builtin_expect(fhook_rec_nr_callers != 0, 0) && !fhook_rec_caller_ok(ret_ip))
		return 1;	/* and no exit event either */
	if (p->plain_entry >= 0) {
		/* one entry event without arguments: `fhook record`'s every function */
		record_plain(p->plain_entry, w1);
		if (!p->nr_saved)
			return 0;
	} else {
		entry_events(p, entry_ip, w1, fregs);
	}
	for (i = 0; i < p->nr_ret; i++) {
		struct ev_desc_event *e = p->ret[i];
		unsigned long *saved = (unsigned long *)((char *)entry_data + p->ret_off[i]);

		for (k = 0; k < e->nr_entry; k++)
			saved[k] = fhook_rec_fetch_arg(fregs, e->entry_args[k]);
	}
	return 0;
}

/*
 * @fregs is NULL for a frame that an exception, longjmp or cancellation
 * removed (FPROBE_FL_EXIT_ON_UNWIND): the exit is recorded where the
 * unwinder left it, marked as such.
 */
static void __attribute__((noinline)) rec_exit_slow(struct rec_probe *p, unsigned long entry_ip,
						     struct ftrace_regs *fregs, void *entry_data,
						     uint64_t w1);

void fhook_rec_exit(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;
	uint64_t w1 = ev_w1(ret_ip, rethook_data_index(entry_data));

	if (!fregs)
		w1 |= EV_W1_UNWOUND;
	if (__builtin_expect(p->plain_ret >= 0 && p->nr_entry, 1) &&
	    __builtin_expect(!fregs || rethook_data_pairs(entry_data), 1))
		record_plain_in(p->inst, p->plain_ret, w1);
	else
		rec_exit_slow(p, entry_ip, fregs, entry_data, w1);
}

static void rec_exit_slow_cur(struct rec_probe *p, unsigned long entry_ip,
			      struct ftrace_regs *fregs, void *entry_data, uint64_t w1);

static void rec_exit_slow(struct rec_probe *p, unsigned long entry_ip,
			  struct ftrace_regs *fregs, void *entry_data, uint64_t w1)
{
	long old = rec_enter(p->inst);

	rec_exit_slow_cur(p, entry_ip, fregs, entry_data, w1);
	rec_leave(old);
}

static void rec_exit_slow_cur(struct rec_probe *p, unsigned long entry_ip,
			      struct ftrace_regs *fregs, void *entry_data, uint64_t w1)
{
	/*
	 * Without an entry event the reader cannot pair: the address goes
	 * along; nor for an entry the reader no longer has open (a thread
	 * that switched stacks: rethook_data_pairs()).
	 */
	bool pair = p->nr_entry && (!fregs || rethook_data_pairs(entry_data));
	int i;

	for (i = 0; i < p->nr_ret; i++) {
		struct ev_desc_event *e = p->ret[i];

		if (!e->nr_args && pair)
			record_plain(e->id, w1);
		else
			fhook_rec_record(e, pair ? 0 : entry_ip, w1, fregs,
					 (unsigned long *)((char *)entry_data + p->ret_off[i]));
	}
}
