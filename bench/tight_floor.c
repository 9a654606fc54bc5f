// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The floor of a recorded call, for bench/run.sh: -finstrument-functions
 * hooks (built without instrumentation) that do only what fhook's records
 * do at least: each event one 16-byte record, the TSC's 48 bits and an
 * event id in the first word, the function's address in the second, into
 * the thread's ring reached with one TLS load, the ring's end out of line.
 * No return hooked (the compiler calls the exit hook), no recursion lock,
 * no cpu, no consumer: what is left when all of that is taken away.
 */
#include <stdint.h>
#include <x86intrin.h>

#define NOTRACE		__attribute__((no_instrument_function))
#define FLOOR_RECS	4096

struct floor_rec {
	uint64_t w0, w1;
};

static __thread struct floor_rec floor_ring[FLOOR_RECS]
	__attribute__((tls_model("initial-exec")));
static __thread struct {
	struct floor_rec *wptr, *wlim;
} floor_w __attribute__((tls_model("initial-exec")));

void __cyg_profile_func_enter(void *fn, void *site) NOTRACE;
void __cyg_profile_func_exit(void *fn, void *site) NOTRACE;

/* the ring's end (a consumer's business): back to its start */
NOTRACE __attribute__((noinline)) static struct floor_rec *floor_wrap(void)
{
	floor_w.wlim = floor_ring + FLOOR_RECS;
	return floor_ring;
}

static inline NOTRACE __attribute__((always_inline)) void floor_put(uint64_t id, void *fn)
{
	struct floor_rec *r = floor_w.wptr;

	if (__builtin_expect(r >= floor_w.wlim, 0))
		r = floor_wrap();
	r->w0 = (__rdtsc() & ((1ULL << 48) - 1)) | id << 48;
	r->w1 = (uint64_t)fn;
	floor_w.wptr = r + 1;
}

void __cyg_profile_func_enter(void *fn, void *site)
{
	floor_put(1, fn);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	floor_put(2, fn);
}
