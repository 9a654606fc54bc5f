/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's internals, shared by its files: the events the command
 * compiled, the probes that record them, what a thread keeps of its ring,
 * and the fast path's helpers, static inline here so that every file that
 * writes records inlines them.
 *
 *   record.c          the writer: rings, room, records; the fprobe handlers
 *   record_fetch.c    events with fetched arguments
 *   record_kprobe.c   kprobe events ('p', 'r')
 *   record_desc.c     the event descriptions the command wrote
 *   record_proc.c     the process: objects announced, fork, exec, dlopen
 *   record_shm.c      the trace buffer's memfd, checked and mapped
 *   record_setup.c    a recording started (start-up or attach): its probes
 *   record_attach.c   fhook trace -p / record -p: the attach channel's verbs
 *   record_trigger.c  the flight recorder's duration trigger (record_trigger.h)
 *
 * What the files share is __hidden (libfhook.so exports none of it) and
 * named fhook_rec_*: libfhook.a is linked into programs, whose names it
 * must not take.
 */
#ifndef FHOOK_EV_RECORD_H
#define FHOOK_EV_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <pthread.h>

#include <fhook/fprobe.h>
#include <fhook/kprobes.h>
#include <fhook/internal/events.h>

#include "evdesc.h"
#include "ring.h"
#include "clock.h"
#include "fprobe/rethook.h"
#include "core/core.h"

struct rec_inst;

/* A 'p' or 'r' event's own kprobe (kretprobe), as each is in the kernel. */
struct rec_kprobe {
	struct kretprobe rp;		/* rp.kp alone for a 'p' event */
	struct ev_desc_event *e;
	struct rec_inst *inst;		/* the recording it is of */
	bool registered;
	bool failed;			/* refused: not tried again */
	struct rec_kprobe *many;	/* a glob: one per function (registered each) */
	int nr_many;
};

/*
 * One fprobe per distinct SYM: every event on the same function(s) shares
 * it, so an entry and a return event on one function cost one hook, not a
 * site shared by two ops (which would go through the list function).
 */
struct rec_probe {
	struct fprobe fp;
	struct rec_inst *inst;		/* the recording it is of */
	const char *symbol;
	struct ev_desc_event *first;	/* its targets, if any */
	int nr_entry, nr_ret;
	int nr_saved;			/* entry arguments its return events use */
	int plain_entry, plain_ret;	/* the one event, if it has no arguments; else -1 */
	struct ev_desc_event **entry;	/* entry events */
	struct ev_desc_event **ret;		/* return events */
	size_t *ret_off;		/* where each return event's saved args go */
	bool registered;
};

struct rec_range {
	unsigned long start, end;
};

/*
 * What a thread keeps of its ring; the ring's header holds what the
 * command reads.  It begins with the writer the graph trampolines use
 * (arch/shadow.h: REC_W_*), in that order.
 */
struct rec_thread {
	/*
	 * The bytes written (published as the ring's head with a release
	 * store) are hbase + wptr (rec_head()): the trampolines move only
	 * wptr, the write pointer.
	 */
	uint64_t hbase;
	/*
	 * head may grow to this with plain records and no other check: room
	 * in the ring, before its end, below the mark that wakes the command,
	 * nothing lost to report (fhook_rec_limit()); 0 without a ring.
	 */
	uint64_t limit;
	unsigned char *data;
	uint64_t last_ts;
	struct ev_ring *ring;
	uint32_t last_cpu;
	uint32_t gen;		/* rec_gen when the ring was claimed */
	/*
	 * The trampolines' view of head and limit: wptr is data + head modulo
	 * the ring's size, and a record fits while wptr < wlim, which is
	 * head + 16 <= limit (rec_set_limit()); 0 when none does.
	 */
	uintptr_t wptr;
	uintptr_t wlim;
	uint32_t idx;
	uint64_t tail;		/* last tail seen: refreshed only when room looks short */
	uint64_t lost_pending;	/* dropped since the last record written */
	int no_ring;
	uint32_t no_ring_gen;	/* rings_freed when none was free */
};

_Static_assert(offsetof(struct rec_thread, last_ts) == REC_W_LAST_TS, "REC_W_LAST_TS");
_Static_assert(offsetof(struct rec_thread, ring) == REC_W_RING, "REC_W_RING");
_Static_assert(offsetof(struct rec_thread, last_cpu) == REC_W_LAST_CPU, "REC_W_LAST_CPU");
_Static_assert(offsetof(struct rec_thread, gen) == REC_W_GEN, "REC_W_GEN");
_Static_assert(offsetof(struct rec_thread, wptr) == REC_W_WPTR, "REC_W_WPTR");
_Static_assert(offsetof(struct rec_thread, wlim) == REC_W_WLIM, "REC_W_WLIM");
_Static_assert(offsetof(struct ev_ring, head) == REC_RING_HEAD, "REC_RING_HEAD");
_Static_assert(EV_TS_BITS == REC_TS_BITS, "REC_TS_BITS");

/*
 * Tracing instances: up to REC_MAX_INST recordings of this process at
 * once, each a command's (fhook record -- PROG, record -p, trace -p) with
 * its own shared memory, events, probes, rings and thread writers.  What
 * was one recording's globals is one struct rec_inst each, in a fixed
 * array: a slot is reused by a later recording, and its generation (in
 * its struct fhook_rec_global) keeps counting, so a thread's writer left
 * from an earlier recording in the slot is noticed.
 *
 * Slot 0's struct fhook_rec_global is fhook_rec_g, which the graph
 * trampolines read rip-relative: only slot 0's probes have their records
 * written by the trampolines (rec_graph()); the others' records are
 * written by the C handlers, which know their slot from the probe.
 *
 * The recorder's code names the recording it works for as it named the
 * globals (fhook_rec_shm, fhook_rec_thr, ...): those are the fields of the
 * thread's current slot, fhook_rec_cur_off (an offset into the array, 0:
 * slot 0 for a thread that set none).  Every way in sets it: the fprobe and
 * kprobe handlers from their probe (rec_enter(), put back as it was on the
 * way out: a signal handler's probe may run inside another's; the fprobe
 * handlers' plain records read the probe's slot without it, and set it
 * only on their slow paths), the control verbs from the request, the
 * process's hooks (fork, exec, dlopen, exit) for each live slot in turn.
 */
#define REC_MAX_INST	4

/* the flight recorder's duration trigger of a recording (record_trigger.c) */
struct rec_trig {
	struct fprobe fp;		/* first: its handlers' fp is the trigger */
	struct ev_shm *shm;
	uint64_t ns;
	bool registered;
};

struct rec_inst {
	struct fhook_rec_global *g;	/* slot 0: fhook_rec_g; else own_g */
	struct fhook_rec_global own_g;
	long thr_off;		/* the slot's struct rec_thread from the thread pointer */
	int slot;
	pid_t tracer;		/* the command recording into it (trace-stop names it) */
	/* record.c */
	struct ev_shm *shm;
	uint64_t ring_size, mark;
	uint32_t clock;
	struct rec_range *callers;
	int nr_callers;
	uint32_t maps_hi;
	char cmd[sizeof(((struct ev_shm *)0)->cmd)];
	/* record_desc.c */
	struct ev_desc_event *events;
	int nr_events;
	int desc_state;		/* descriptions: 0 not read yet, 1 read, -1 bad */
	/* record_kprobe.c */
	struct rec_kprobe *kprobes;
	unsigned long kp_missed_gone;
	/* record_proc.c */
	uint64_t proc_seq;		/* this image's ev_proc */
	/* a forked child announces its objects with its first ring (fhook_rec_get_ring) */
	bool announce_pending;
	int announcing;			/* a thread is: the others wait for its number */
	/*
	 * A forked child's time of birth (0: none pending): the frames it
	 * inherited from the parent's thread get their entries at that time in
	 * its first ring (rec_inherit()), so that their returns pair with them.
	 */
	uint64_t fork_ts;
	bool follow;			/* shm->follow: the shared page costs a child a fault */
	struct rec_thread *forking;	/* the thread inside fork() (record_proc.c) */
	/* record_setup.c */
	struct rec_probe *probes;
	int nr_probes;
	bool deferred;		/* no object had sites at start-up: armed at a dlopen() */
	/* record_shm.c */
	int fd;
	dev_t dev;		/* which file fd must be ... */
	ino_t ino;
	int tracer_fd;		/* ... and where the command holds it (FHOOK_EV_SHM) */
	pid_t tracer_pid;
	struct rec_trig trig;
};

extern struct rec_inst fhook_rec_insts[REC_MAX_INST] __hidden;
/* each slot's mapping of each ring it holds, to unmap in a forked child */
extern struct ev_ring *fhook_rec_mapsv[REC_MAX_INST][EV_MAX_RINGS] __hidden;
extern __thread long fhook_rec_cur_off __hidden;

#define REC_CUR		((struct rec_inst *)((char *)fhook_rec_insts + fhook_rec_cur_off))

static inline struct rec_thread *rec_thr_of(const struct rec_inst *in)
{
	return (struct rec_thread *)((char *)__builtin_thread_pointer() + in->thr_off);
}

/* Work for @in from here; returns what to give rec_leave() on the way out. */
static inline long rec_enter(const struct rec_inst *in)
{
	long old = fhook_rec_cur_off;

	fhook_rec_cur_off = (const char *)in - (const char *)fhook_rec_insts;
	return old;
}

static inline void rec_leave(long old)
{
	fhook_rec_cur_off = old;
}

/*
 * For each slot recording (a mapped shared memory), as the current one;
 * the current slot is put back as the loop ends (no break out of it).
 */
#define for_each_rec_inst(in, old)					\
	for (old = fhook_rec_cur_off, in = fhook_rec_insts;		\
	     in < fhook_rec_insts + REC_MAX_INST || (rec_leave(old), 0); in++) \
		if (in->shm && (rec_enter(in), 1))

/* the current slot's fields, by the names they had as globals */
#define fhook_rec_shm			(REC_CUR->shm)
#define fhook_rec_ring_size		(REC_CUR->ring_size)
#define fhook_rec_mark			(REC_CUR->mark)
#define fhook_rec_clock			(REC_CUR->clock)
#define fhook_rec_callers		(REC_CUR->callers)
#define fhook_rec_nr_callers		(REC_CUR->nr_callers)
#define fhook_rec_thr			(*rec_thr_of(REC_CUR))
#define fhook_rec_maps			(fhook_rec_mapsv[REC_CUR->slot])
#define fhook_rec_maps_hi		(REC_CUR->maps_hi)
#define fhook_rec_cmd			(REC_CUR->cmd)
#define fhook_rec_events		(REC_CUR->events)
#define fhook_rec_nr_events		(REC_CUR->nr_events)
#define fhook_rec_desc_state		(REC_CUR->desc_state)
#define fhook_rec_kprobes		(REC_CUR->kprobes)
#define rec_kp_missed_gone		(REC_CUR->kp_missed_gone)
#define fhook_rec_proc_seq		(REC_CUR->proc_seq)
#define fhook_rec_announce_pending	(REC_CUR->announce_pending)
#define rec_announcing			(REC_CUR->announcing)
#define fhook_rec_fork_ts		(REC_CUR->fork_ts)
#define fhook_rec_follow		(REC_CUR->follow)
#define fhook_rec_forking		(REC_CUR->forking)
#define fhook_rec_probes		(REC_CUR->probes)
#define fhook_rec_nr_probes		(REC_CUR->nr_probes)
#define fhook_rec_deferred		(REC_CUR->deferred)
#define fhook_rec_fd			(REC_CUR->fd)
#define rec_dev				(REC_CUR->dev)
#define rec_ino				(REC_CUR->ino)
#define fhook_rec_tracer_fd		(REC_CUR->tracer_fd)
#define fhook_rec_tracer_pid		(REC_CUR->tracer_pid)

/*
 * What every writer of the slot compares with (arch/shadow.h: struct
 * fhook_rec_global): its generation is bumped when an attached recording
 * ends (fhook trace -p: the rings that threads still name in their
 * writers are gone, and a thread notices it at its next event; other
 * threads' TLS cannot be reset from ours).
 */
#define rec_g		(*REC_CUR->g)
#define rec_gen		rec_g.gen
#define rec_disabled	rec_g.stopped	/* 0 or REC_G_STOPPED */
#define rec_clock_base	rec_g.clock_base

/* ---- record.c: the writer and the fprobe handlers ---- */

extern bool fhook_rec_has_rseq __hidden;
extern pthread_key_t fhook_rec_ring_key __hidden;
extern bool fhook_rec_have_key __hidden;

struct ev_ring *fhook_rec_get_ring(struct rec_thread *t) __hidden;
void fhook_rec_retire_ring(void *arg) __hidden;
void fhook_rec_thread_exit(void *arg) __hidden;
void fhook_rec_kick(struct ev_ring *r, bool force) __hidden;
void fhook_rec_untraced(const char *fmt, ...) __attribute__((format(printf, 1, 2))) __hidden;
void fhook_rec_drop(struct rec_thread *t) __hidden;
uint64_t *fhook_rec_begin_event(struct rec_thread *t, uint32_t id, uint64_t w1,
				uint32_t ext) __hidden;
uint64_t fhook_rec_limit(struct rec_thread *t) __hidden;
void fhook_rec_plain_slow(uint32_t id, uint64_t w1) __hidden;
bool fhook_rec_caller_ok(unsigned long parent_ip) __hidden;
int fhook_rec_entry(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *entry_data) __hidden;
void fhook_rec_exit(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *entry_data) __hidden;

/* ---- record_fetch.c: events with fetched arguments ---- */

unsigned long fhook_rec_fetch_arg(struct ftrace_regs *fregs, unsigned int n) __hidden;
void fhook_rec_fast_prepare(struct ev_desc_event *e) __hidden;
void fhook_rec_record(struct ev_desc_event *e, unsigned long ip, uint64_t w1,
		      struct ftrace_regs *fregs, unsigned long *entry) __hidden;
int fhook_rec_resolve_symbols(struct ev_desc_event *e) __hidden;

/* ---- record_kprobe.c: kprobe events ---- */

struct ev_desc_event *fhook_rec_kretprobe_of(const void *probe) __hidden;
const struct ev_desc_event *fhook_rec_kp_entry_of(const struct ev_desc_event *r) __hidden;
void fhook_rec_kp_arm(FILE *err) __hidden;
bool fhook_rec_kp_pending(void) __hidden;
unsigned long fhook_rec_kp_nmissed(const struct rec_kprobe *k) __hidden;
unsigned long fhook_rec_kp_disarm(void) __hidden;

/* ---- record_desc.c: the event descriptions ---- */

int fhook_rec_read_desc(FILE *err) __hidden;
void fhook_rec_free_events(void) __hidden;

/* ---- record_proc.c: the recorded process ---- */

extern bool fhook_rec_arming __hidden;

void fhook_rec_announce_first(void) __hidden;
void fhook_rec_register_process(void) __hidden;
void fhook_rec_objects_changed(void) __hidden;
void fhook_rec_atfork_prepare(void) __hidden;
void fhook_rec_atfork_parent(void) __hidden;
void fhook_rec_atfork_child(void) __hidden;
void fhook_rec_exec(const char *path, bool search) __hidden;

/* ---- record_shm.c: the trace buffer ---- */

bool fhook_rec_fd_is_shm(int fd) __hidden;
bool fhook_rec_fd_is_trace_memfd(long fd) __hidden;
int fhook_rec_reopen_shm(pid_t tracer, int tracer_fd) __hidden;
int fhook_rec_shm_fd(void) __hidden;
bool fhook_rec_parse_num(const char **s, unsigned long long max, unsigned long long *out) __hidden;
struct ev_shm *fhook_rec_map_shm(const char *v, const char **why) __hidden;

/* ---- record_setup.c: a recording started ---- */

int fhook_rec_arm(FILE *err) __hidden;
int fhook_rec_setup(const char *v, bool attached, FILE *err) __hidden;

/*
 * A gap in time from t->last_ts that takes a record of the full time.
 * The trampolines' records since are less than 2^32 from last_ts (the
 * same high word, arch/shadow.h), so the reader, which extends 48 bits
 * from the record before, sees no gap of 2^47 without that record.
 */
#define REC_GAP		(1ULL << (EV_TS_BITS - 2))

static inline uint64_t rec_head(const struct rec_thread *t)
{
	return t->hbase + t->wptr;
}

static inline void rec_head_add(struct rec_thread *t, uint64_t n)
{
	t->wptr += n;
}

/*
 * Before this thread's C writes: the records the trampolines wrote since
 * its last are plain events (struct ev_ring.events_head).
 */
static inline void rec_count_tramp(struct rec_thread *t)
{
	struct ev_ring *r = t->ring;
	uint64_t head = rec_head(t);

	if (head != r->events_head) {
		__atomic_store_n(&r->events, r->events + (head - r->events_head) / 16,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&r->events_head, head, __ATOMIC_RELAXED);
	}
}

static inline void rec_set_head(struct rec_thread *t, uint64_t head)
{
	t->wptr = (uintptr_t)t->data + (head & (fhook_rec_ring_size - 1));
	t->hbase = head - t->wptr;
}

/*
 * Head may grow to @limit with plain records; the trampolines' bound of
 * wptr for that (a record fits while wptr < wlim), with wptr back in the
 * ring's bytes after a lap.
 */
static inline void rec_set_limit(struct rec_thread *t, uint64_t limit)
{
	uint64_t head = rec_head(t);

	t->limit = limit;
	rec_set_head(t, head);
	t->wlim = limit >= head + 16 ? t->wptr + (limit - head) - 15 : 0;
}

/*
 * After a record C wrote past the trampolines' limit's check: that limit
 * stands while head is still below it and the record did not wrap the
 * ring (wptr past its end), as it then went past no mark of
 * fhook_rec_limit()'s, which is asked otherwise.
 */
static inline void rec_limit_after(struct rec_thread *t)
{
	if (rec_head(t) + 16 > t->limit ||
	    t->wptr + 16 > (uintptr_t)t->data + fhook_rec_ring_size)
		rec_set_limit(t, fhook_rec_limit(t));
}

/* Publish what reserve() gave and was written: @len bytes. */
static inline void commit(struct rec_thread *t, uint32_t len)
{
	struct ev_ring *r = t->ring;

	rec_head_add(t, len);
	__atomic_store_n(&r->events, r->events + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->events_head, rec_head(t), __ATOMIC_RELAXED);
	__atomic_store_n(&r->head, rec_head(t), __ATOMIC_RELEASE);
	if (__builtin_expect(rec_head(t) - t->tail >= fhook_rec_mark, 0)) {
		t->tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (rec_head(t) - t->tail >= fhook_rec_mark)
			fhook_rec_kick(r, false);
	}
}

static inline struct rec_thread *rec_thread(void)
{
	struct rec_thread *t = &fhook_rec_thr;
	uint32_t gen = __atomic_load_n(&rec_gen, __ATOMIC_ACQUIRE);

	if (__builtin_expect(t->gen != gen, 0)) {
		/* its ring went with an earlier attached recording */
		memset(t, 0, sizeof(*t));
		t->gen = gen;
	}
	if (__builtin_expect(!t->ring, 0) && !fhook_rec_get_ring(t)) {
		__atomic_fetch_add(&fhook_rec_shm->lost_no_ring, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return t;
}

/* The thread's rseq cpu_id, when fhook_rec_has_rseq. */
static inline int32_t rec_rseq_cpu(void)
{
	return *(volatile int32_t *)((char *)__builtin_thread_pointer() + rec_g.cpu_off);
}

static inline uint64_t ev_w1(unsigned long addr, unsigned long depth)
{
	return (addr & EV_ADDR_MASK) | (uint64_t)(depth & EV_DEPTH_MASK) << 48;
}

void fhook_rec_plain_slow_in(const struct rec_inst *in, uint32_t id, uint64_t w1) __hidden;

/*
 * An event without fetched arguments of recording @in: 16 bytes.  The
 * common case (the ring has room before its end and its mark, same cpu,
 * no gap in time, nothing lost, the TSC for a clock) is rdtsc, two stores
 * and a release, with no call and no stack frame.  Everything is read from
 * @in, which the handlers have from their probe: the current slot is set
 * only for the slow path.
 */
static inline void record_plain_in(const struct rec_inst *in, uint32_t id, uint64_t w1)
{
	struct rec_thread *t = rec_thr_of(in);
	const struct fhook_rec_global *g = in->g;
	uint64_t head = rec_head(t), now, *p;

	/*
	 * CLOCK_MONOTONIC is a call (the vDSO's): that clock takes the slow
	 * path.  The thread must still be on the cpu of its last record: from
	 * the rseq area where glibc registered one; else sched_getcpu() costs a
	 * system call or a vDSO call, and is asked only when the limit
	 * (fhook_rec_limit()) sends a record to the slow path, every
	 * REC_CPU_EVERY records.
	 */
	if (__builtin_expect(head + 16 > t->limit || t->gen != g->gen ||
			     __atomic_load_n(&g->stopped, __ATOMIC_RELAXED) ||
			     in->clock != EV_CLOCK_TSC ||
			     (fhook_rec_has_rseq &&
			      *(volatile int32_t *)((char *)__builtin_thread_pointer() + g->cpu_off) !=
			      (int32_t)t->last_cpu), 0))
		goto slow;
	now = ev_clock_tsc() - g->clock_base;
	if (__builtin_expect(now - t->last_ts >= REC_GAP, 0))
		goto slow;
	p = (uint64_t *)(t->data + (head & (in->ring_size - 1)));
	p[0] = ev_w0(now, id);
	p[1] = w1;
	t->last_ts = now;
	rec_count_tramp(t);
	rec_head_add(t, 16);
	__atomic_store_n(&t->ring->events, t->ring->events + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring->events_head, head + 16, __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring->head, head + 16, __ATOMIC_RELEASE);
	return;
slow:
	fhook_rec_plain_slow_in(in, id, w1);
}

/* The same, of the current recording (REC_CUR). */
static inline void record_plain(uint32_t id, uint64_t w1)
{
	record_plain_in(REC_CUR, id, w1);
}

#endif /* FHOOK_EV_RECORD_H */
