/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The memory `fhook trace` shares with the traced processes: a header,
 * the event descriptions, a table of processes and their loaded objects
 * (for symbolizing in the command), and per-thread rings.
 *
 * Each ring has one producer (its thread) and one consumer (the command):
 * the producer reads tail (acquire), writes a record, and publishes head
 * (release); the consumer reads head (acquire), reads records and
 * publishes tail (release).  A record that does not fit is dropped and
 * counted in the ring's lost counter: the traced thread never waits.
 */
#ifndef FHOOK_EV_RING_H
#define FHOOK_EV_RING_H

#include <stdbool.h>
#include <stdint.h>

#define EV_SHM_MAGIC		0x6668657674726331ULL	/* "fhevtrc1" */
#define EV_RING_SIZE		(8U << 20)		/* data bytes per ring (sparse: only what is used is memory) */
#define EV_MAX_RINGS		256
#define EV_MAX_PROCS		256			/* registrations between two drains */
#define EV_MAX_OBJS		64
#define EV_DESC_SIZE		(256 * 1024)
#define EV_STR_MAX		256			/* bytes kept of a string */
#define EV_REC_MAX		4096			/* payload bytes of a record */
#define EV_REC_PAD		0xffffffffU		/* event id of a wrap filler */

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

/*
 * One thread's ring.  The command frees it once its thread is gone and its
 * records are copied out; a new thread then claims it.
 */
struct ev_ring {
	uint64_t head __attribute__((aligned(64)));
	uint64_t tail __attribute__((aligned(64)));
	uint64_t lost __attribute__((aligned(64)));
	uint64_t proc_seq;	/* the ev_proc of the thread's process image; 0: none */
	uint32_t pid, tid;
	char comm[16];
	uint32_t state;		/* EV_SLOT_* */
	uint32_t exited;	/* its thread wrote its last record (release) */
	unsigned char data[EV_RING_SIZE] __attribute__((aligned(64)));
};

struct ev_shm {
	uint64_t magic;
	uint64_t size;
	uint32_t nr_rings;	/* rings [0, nr_rings) have been claimed at least once */
	uint32_t rings_freed;	/* bumped by the command: a thread without a ring may retry */
	uint64_t proc_seq;	/* process images registered so far */
	uint64_t lost_no_ring;	/* events of threads that found no free ring */
	uint64_t nmissed;	/* fprobe nmissed, added by each process at exit */
	uint32_t follow;
	uint32_t desc_len;
	char desc[EV_DESC_SIZE];
	struct ev_proc procs[EV_MAX_PROCS];
	struct ev_ring rings[];
};

/* One record: this header, then the arguments' bytes; len is 8-aligned. */
struct ev_rec {
	uint32_t len;
	uint32_t id;
	uint64_t ts;		/* CLOCK_MONOTONIC, ns */
	uint64_t ip;		/* the probed function's site */
	uint64_t ret_ip;	/* where it returns to */
	uint32_t cpu;
	uint32_t pad;
};

static inline uint64_t ev_shm_size(void)
{
	return sizeof(struct ev_shm) + (uint64_t)EV_MAX_RINGS * sizeof(struct ev_ring);
}

#endif
