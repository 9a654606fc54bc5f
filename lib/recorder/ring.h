/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The memory `fhook record` / `fhook trace` shares with the traced
 * processes, and the binary records the traced threads write into it.
 *
 *	+0			struct ev_shm (one page)
 *	+procs_off		EV_MAX_PROCS process mailboxes
 *	+desc_off		the compiled event descriptions (text, desc_len bytes)
 *	+rings_off		EV_MAX_RINGS x (one header page + ring_size bytes)
 *
 * A traced process maps the first three parts at start-up and one ring
 * per thread that records (at its first event), so the address space it
 * pays is what it uses, not the whole buffer.
 *
 * Each ring has one producer (its thread) and one consumer (the command):
 * the producer reads tail (acquire), writes records, and publishes head
 * (release); the consumer reads head (acquire), writes the bytes out and
 * publishes tail (release).  The consumer never decodes records while
 * recording: it moves bytes.  When a ring is full the producer waits for
 * the consumer (a futex on the ring's space_seq), unless the recording is
 * lossy, where the record is dropped and counted.
 */
#ifndef FHOOK_EV_RING_H
#define FHOOK_EV_RING_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/procfile.h"

#define EV_SHM_MAGIC		0x6668657674726333ULL	/* "fhevtrc3" */
#define EV_PAGE			4096UL

/*
 * Threads recording at once.  The memory is sized for all of them but is
 * sparse: a ring costs pages only once its thread writes, and each
 * process maps only its own threads' rings.
 */
#define EV_MAX_RINGS		16384
#define EV_MAX_PROCS		256		/* registrations between two drains */
#define EV_MAX_OBJS		64
#define EV_STR_MAX		256		/* bytes kept of a string */
#define EV_REC_MAX		4096		/* payload bytes of a record */
#define EV_RING_DEFAULT		(2UL << 20)	/* data bytes per ring */
#define EV_RING_MIN		(64UL << 10)
#define EV_RING_MAX		(256UL << 20)

/*
 * A record is 8-byte aligned and starts with two words:
 *
 *	w0 = time (48 bits) | id << 48
 *	w1 = address (48 bits) | depth << 48 | EV_W1_UNWOUND
 *
 * time:    low 48 bits of the clock less the recording's base; the reader
 *          extends it (an EV_ID_TIME record precedes any gap of 2^47).
 * id:      the event's number; EV_ID_EXT set: a third word follows,
 *          w2 = the record's length in bytes, then the payload (the
 *          function's address for an exit event that has no entry event
 *          to pair with, then the fetched arguments).
 * address: entry events: the function's site; exit events: the address
 *          the function returns to.
 * depth:   the return hook's shadow-stack slot (1..), 0 for an event
 *          without one.  An exit at slot d returns from the function whose
 *          entry was last recorded at slot d on that thread, so a plain
 *          exit needs no function address: 16 bytes per entry or exit.
 *
 * Ids from EV_ID_SPECIAL up are the ring's own records.
 */
#define EV_TS_BITS		48
#define EV_TS_MASK		((1ULL << EV_TS_BITS) - 1)
#define EV_ADDR_MASK		((1ULL << 48) - 1)
#define EV_DEPTH_MASK		0x7fffULL
#define EV_W1_UNWOUND		(1ULL << 63)	/* an exit the unwinder caused */
#define EV_ID_EXT		0x8000U
#define EV_ID_MAX		0x7f00U		/* events per recording */
#define EV_MAX_KP_EVENTS	256		/* kprobe events counted (struct ev_shm) */
#define EV_TRIGGER_FUNC_MAX	256		/* a trigger's function name, NUL included */
#define EV_ID_SPECIAL		0xff00U
#define EV_ID_LOST		0xfffcU		/* w1: records dropped just before */
#define EV_ID_CPU		0xfffdU		/* w1: the cpu from now on */
#define EV_ID_TIME		0xfffeU		/* w1: the full time */
#define EV_ID_PAD		0xffffU		/* w0 alone; time field: bytes to skip */
#define EV_W2_IP		1ULL		/* w2 >> 32: the function's address follows */

static inline uint64_t ev_w0(uint64_t ts, uint32_t id)
{
	return (ts & EV_TS_MASK) | (uint64_t)id << EV_TS_BITS;
}

static inline uint32_t ev_w0_id(uint64_t w0)
{
	return (uint32_t)(w0 >> EV_TS_BITS);
}

/* The clocks a recording can use (ev_shm.clock). */
enum {
	EV_CLOCK_MONO,		/* clock_gettime(CLOCK_MONOTONIC), ns */
	EV_CLOCK_TSC,		/* the arch's counter (rdtsc, cntvct_el0); the command calibrates it */
};

/* A ring's or a process mailbox's life: the producer claims a free one. */
enum {
	EV_SLOT_FREE,
	EV_SLOT_CLAIMED,	/* a producer is filling it in */
	EV_SLOT_READY,		/* in use; the command may read it */
};

/* Take a free slot (a ring or a mailbox) for this producer. */
static inline bool ev_slot_claim(uint32_t *state)
{
	uint32_t s = EV_SLOT_FREE;

	return __atomic_load_n(state, __ATOMIC_RELAXED) == EV_SLOT_FREE &&
	       __atomic_compare_exchange_n(state, &s, EV_SLOT_CLAIMED, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

struct ev_obj {
	uint64_t base;
	char path[240];
};

/*
 * A process image announces its objects here; the command copies them out
 * at its next drain and frees the slot, so the table bounds only how many
 * processes may start between two drains, not how many a trace sees.
 */
struct ev_proc {
	uint64_t seq;		/* this image's number: rings carry it */
	uint32_t pid;
	uint32_t state;		/* EV_SLOT_*, written last */
	uint32_t nr_objs;
	uint32_t pad;
	struct ev_obj objs[EV_MAX_OBJS];
};

/* a flight recorder's ring, in segments (struct ev_ring.flight_mark) */
#define EV_FLIGHT_SEGS		32

/*
 * One thread's ring: this header page, then the data.  The command frees
 * it (ev_shm.ring_state) once its thread is gone and its bytes are written
 * out; a new thread then claims it.
 */
struct ev_ring {
	/* written by the producer */
	uint64_t head __attribute__((aligned(64)));
	/*
	 * Event records written: events, and the plain records of 16 bytes
	 * the trampolines wrote in [events_head, head), which the producer
	 * adds to events when it next writes one itself (ev_ring_events()).
	 */
	uint64_t events;
	uint64_t events_head;
	uint64_t lost;		/* event records dropped (lossy, or no consumer) */
	uint64_t waits;		/* times the producer waited for room */
	uint32_t waiting;	/* the producer sleeps on space_seq */
	/* written by the consumer */
	uint64_t tail __attribute__((aligned(64)));
	uint32_t space_seq;	/* bumped (and woken) when tail moves for a waiter */
	uint32_t kicked;	/* the producer woke the consumer; it clears this */
	/* identity, written when claimed */
	uint64_t proc_seq __attribute__((aligned(64)));	/* its process image; 0: none */
	uint32_t pid, tid;
	char comm[16];
	uint32_t exited;	/* its thread wrote its last record (release) */
	/*
	 * A flight recorder's producer frees its oldest records itself.
	 * flight_mark[i] is the first record it wrote that starts in a
	 * segment i (modulo EV_FLIGHT_SEGS) of its ring's bytes, as head
	 * counts them: it frees whole records by moving the tail to one,
	 * without reading what it frees.  The producer's alone.
	 */
	uint64_t flight_mark[EV_FLIGHT_SEGS] __attribute__((aligned(64)));
};
_Static_assert(sizeof(struct ev_ring) <= EV_PAGE, "a ring's header is its first page");

/*
 * A process that runs untraced, or partly (no address space for a ring,
 * a probe it could not place): named in the command's summary at exit,
 * not only in a line on stderr that scrolls away.
 */
#define EV_MAX_UNTRACED		16
struct ev_untraced {
	uint32_t state;		/* EV_SLOT_READY once filled in */
	uint32_t pid;
	char comm[16];
	char why[168];
};

/*
 * Why the command stopped recording (struct ev_shm.stopped).  A producer
 * that then finds no room drops its record; it counts as lost only when the
 * recording failed: after the end the user asked for, a call is outside the
 * recording, not a loss.
 */
enum {
	EV_STOP_NONE,
	EV_STOP_END,	/* the duration, a signal, a detach */
	EV_STOP_ERROR,	/* the output failed */
};

struct ev_shm {
	uint64_t magic;
	uint64_t size;		/* of the whole memory */
	uint64_t ring_size;	/* data bytes per ring, a power of two */
	uint64_t procs_off, desc_off, rings_off;
	uint32_t desc_len;
	uint32_t follow;
	uint32_t lossy;		/* drop records when a ring is full */
	uint32_t clock;		/* EV_CLOCK_* */
	uint64_t clock_base;	/* subtracted from the clock: records' time 0 */
	uint32_t nr_rings;	/* rings [0, nr_rings) have been claimed at least once */
	uint32_t rings_freed;	/* bumped by the command: a thread without a ring may retry */
	uint64_t proc_seq;	/* process images registered so far */
	uint64_t lost_no_ring;	/* events of threads that found no free ring */
	uint64_t nmissed;	/* fprobe nmissed, added by each process at exit */
	uint32_t wake;		/* futex: producers kick the consumer */
	uint32_t stopped;	/* EV_STOP_*: producers drop */
	uint64_t heartbeat;	/* the consumer's rounds: a waiting producer checks it */
	uint32_t tracer_pid;	/* the fhook process, and when it started (/proc/PID/stat) */
	/*
	 * The descriptions hold kprobe events (a "K" line): they need no
	 * site, so a process without any parses them.  Here, so that the
	 * others do not read the descriptions' page to find out.
	 */
	uint32_t desc_kprobes;
	uint64_t tracer_start;
	uint32_t nr_untraced;	/* reports claimed (may exceed EV_MAX_UNTRACED) */
	uint32_t pad2;
	struct ev_untraced untraced[EV_MAX_UNTRACED];
	char cmd[8];		/* the command's name ("record", "trace"), for messages */
	/*
	 * A flight recorder: the command does not read the rings while the
	 * program runs; a producer whose ring is full moves its tail itself,
	 * past whole records, overwriting its oldest (the command copies the
	 * rings when a trigger fires, and at the end).
	 */
	uint32_t flight;
	/* EV_SLOT_* of each ring: here, so that claiming one maps only that ring */
	uint32_t ring_state[EV_MAX_RINGS];
	/*
	 * Kprobe events, by id (the first EV_MAX_KP_EVENTS): how many
	 * processes had the event's object (MOD, SYM) when they resolved it,
	 * and how many probes they placed; the command says at exit which
	 * MOD never loaded and why nothing was probed.
	 */
	uint32_t kp_loaded[EV_MAX_KP_EVENTS];
	uint32_t kp_placed[EV_MAX_KP_EVENTS];
	/*
	 * The flight recorder's duration trigger (--trigger 'FUNC>DURATION',
	 * record_trigger.c): a call of @trigger_func that took @trigger_ns or
	 * longer bumps @trigger_fired, notes how long in @trigger_took_ns,
	 * and kicks the command, which dumps the rings.  "" : none.  The
	 * event trigger's matches do the same.  A producer kicks only when
	 * @trigger_kicked was 0: the command clears it when it looks, so a
	 * filter that matches every call wakes it once per look, not once a
	 * call.  @trigger_off: the command wants no more (its count is done);
	 * filters and durations are no longer looked at.
	 */
	uint64_t trigger_ns;
	uint64_t trigger_took_ns;
	uint32_t trigger_fired;
	uint32_t trigger_kicked;
	uint32_t trigger_off;
	uint32_t pad3;
	char trigger_func[EV_TRIGGER_FUNC_MAX];
};

/*
 * The event records of @r so far.  Exact once its producer is done; while
 * it writes, off by the records it is adding to events.
 */
static inline uint64_t ev_ring_events(struct ev_ring *r)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t from = __atomic_load_n(&r->events_head, __ATOMIC_RELAXED);

	return __atomic_load_n(&r->events, __ATOMIC_RELAXED) + (head > from ? (head - from) / 16 : 0);
}

/*
 * The length of the record at @pos of a ring's data of @size bytes (its
 * producer may be another program: 0 when the length is not one a record
 * can have, or runs past the ring's end); *@event says whether it is an
 * event record (not a filler nor one of the ring's own).
 */
static inline uint64_t ev_rec_len(const unsigned char *data, uint64_t pos, uint64_t size,
				  bool *event)
{
	uint64_t w0, len = 16;
	uint32_t id;

	memcpy(&w0, data + pos, 8);
	id = ev_w0_id(w0);
	*event = id < EV_ID_SPECIAL;
	if (id == EV_ID_PAD)
		len = w0 & EV_TS_MASK;
	else if (*event && (id & EV_ID_EXT) && pos + 24 <= size)
		len = (uint32_t)*(const uint64_t *)(data + pos + 16);
	if (len < 8 || len % 8 || pos + len > size)
		return 0;
	return len;
}

static inline uint64_t ev_ring_stride(uint64_t ring_size)
{
	return EV_PAGE + ring_size;
}

static inline struct ev_ring *ev_shm_ring(struct ev_shm *shm, uint32_t i)
{
	return (struct ev_ring *)((char *)shm + shm->rings_off + i * ev_ring_stride(shm->ring_size));
}

static inline unsigned char *ev_ring_data(struct ev_ring *r)
{
	return (unsigned char *)r + EV_PAGE;
}

static inline struct ev_proc *ev_shm_procs(struct ev_shm *shm)
{
	return (struct ev_proc *)((char *)shm + shm->procs_off);
}

#endif
