/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clock and the cpu number a record carries, read the cheapest way
 * the machine allows: the TSC when the command found it invariant (it
 * calibrates it against CLOCK_MONOTONIC for the reader), else the vDSO's
 * CLOCK_MONOTONIC; the cpu from the rseq area glibc registers for each
 * thread (record.c), else sched_getcpu().
 */
#ifndef FHOOK_EV_CLOCK_H
#define FHOOK_EV_CLOCK_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "arch_insn.h"
#include "ring.h"

static inline uint64_t ev_clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* the arch's counter (x86-64's TSC, aarch64's generic timer: arch_insn.h) */
static inline uint64_t ev_clock_tsc(void)
{
	return fhook_arch_counter();
}

static inline uint64_t ev_clock_read(uint32_t clock)
{
	return clock == EV_CLOCK_TSC ? ev_clock_tsc() : ev_clock_mono_ns();
}

/*
 * glibc >= 2.35 exports where each thread's struct rseq lies (its cpu_id
 * at +4; negative while not registered): the recorder reads the cpu there.
 */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

#endif
