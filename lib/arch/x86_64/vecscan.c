// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Does a handler leave the vector registers alone (lib/arch/arch.h)?
 *
 * A trampoline saves xmm0-7 around its handler only because the handler
 * may change them: at a function's entry they hold its floating-point
 * arguments.  The flags FHOOK_OPS_FL_GENERAL_REGS_ONLY and
 * FPROBE_FL_GENERAL_REGS_ONLY are the user's promise; this is the proof
 * for the handlers that need none (vecfree.h: small leaves that name no
 * vector register).  A handler with a site of its own does not qualify
 * (ops.c): what a redirect of it would run is not known.
 *
 * Two ways to the proof, tried when an ops is registered, before its
 * locks are taken (the trampoline is chosen under them, from what was
 * remembered here): the handler's object was built with fhook's flags
 * and its notes list the handler's bytes as proven when it was assembled
 * (vecnote.h), or libcapstone is loaded in the process already and the
 * handler is decoded now.  Loading libcapstone only for this would cost
 * about 10 ms of CPU and 380 page faults, more than the save it spares
 * costs most programs, and a process that registers an ops at start-up
 * would pay it every time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "vecfree.h"

#define SCAN_CACHE	256		/* handlers remembered */

static struct {
	unsigned long func;
	size_t len;		/* the bytes proven from func; 0: not proven */
	unsigned int fregs;	/* what of its fregs it reads (vecfree.h) */
} scanned[SCAN_CACHE] __fhook_cold_bss;
static size_t nr_scanned;
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Where kprobes have been placed (fhook_arch_handler_unprove()): a probe
 * can move the ip anywhere, so no handler with one among its bytes is
 * proven again.  Past PROBED_MAX of them, none is.
 */
#define PROBED_MAX	64
static unsigned long probed[PROBED_MAX] __fhook_cold_bss;
static size_t nr_probed;
static bool probed_many;

static bool probed_within(unsigned long f, size_t len)
{
	size_t i;

	if (probed_many)
		return true;
	for (i = 0; i < nr_probed; i++)
		if (probed[i] < f + len && probed[i] + FHOOK_KPROBE_MAX_BYTES > f)
			return true;
	return false;
}

/*
 * Our own handlers (the recorder's, kprobes') are not scanned: their
 * flags say what they do, and a traced process that only records must not
 * open libcapstone.
 */
static bool ours(unsigned long f)
{
	Dl_info self, other;

	return dladdr((void *)fhook_arch_handler_scan, &self) && dladdr((void *)f, &other) &&
	       self.dli_fbase == other.dli_fbase;
}

/* The process's text, for the decoder: as much of 16 bytes as is there. */
static size_t text_read(void *ctx, unsigned long addr, void *buf, size_t len)
{
	while (len && fhook_text_read(addr, buf, len))
		len--;
	return len;
}

/*
 * Only code after the entry, within a page's worth: the bytes proven are
 * then one range from @func, in which ops.c looks for sites (a tail jump
 * back to a function with a site of its own would escape that look).
 */
static size_t scan(unsigned long func, unsigned int *fregs, bool decode)
{
	const struct fhook_vecfree_src src = {
		.read = text_read, .lo = func, .hi = func + VECFREE_MAX_BYTES,
	};
	unsigned long end;

	if (decode)
		fhook_cs_load();
	if (!fhook_cs_loaded() || !fhook_vec_free(func, &src, &end, fregs))
		return 0;
	return end - func;
}

static void handler_scan(void *func, bool decode)
{
	unsigned long f = (unsigned long)func;
	unsigned int fregs = 0;
	size_t i, len;

	if (ours(f))
		return;
	pthread_mutex_lock(&scan_lock);
	for (i = 0; i < nr_scanned; i++)
		if (scanned[i].func == f)
			break;
	if (i == nr_scanned && nr_scanned == SCAN_CACHE) {
		pthread_mutex_unlock(&scan_lock);
		return;
	}
	/*
	 * Proven again at every registration: the object of a handler seen
	 * before may have been unloaded and another function loaded at its
	 * address since (while an ops is registered, its handler stays).
	 */
	len = fhook_vecnote_proven(f, &fregs);
	if (!len)
		len = scan(f, &fregs, decode);
	if (len && probed_within(f, len))
		len = 0;
	/* (both read under ftrace_lock, after the scan: no torn pair) */
	__atomic_store_n(&scanned[i].fregs, fregs, __ATOMIC_RELAXED);
	__atomic_store_n(&scanned[i].len, len, __ATOMIC_RELAXED);
	if (i == nr_scanned) {
		scanned[i].func = f;
		__atomic_store_n(&nr_scanned, nr_scanned + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&scan_lock);
}

void fhook_arch_handler_scan(void *func)
{
	handler_scan(func, false);
}

void fhook_arch_handler_scan_decode(void *func)
{
	handler_scan(func, true);
}

bool fhook_arch_handler_unprove(unsigned long addr)
{
	bool any = false;
	size_t i;

	pthread_mutex_lock(&scan_lock);
	for (i = 0; i < nr_probed && probed[i] != addr; i++)
		;
	if (i < nr_probed)
		;	/* known (a probe placed there again) */
	else if (nr_probed < PROBED_MAX)
		probed[nr_probed++] = addr;
	else
		probed_many = true;
	for (i = 0; i < nr_scanned; i++)
		if (scanned[i].len && probed_within(scanned[i].func, scanned[i].len)) {
			__atomic_store_n(&scanned[i].len, 0, __ATOMIC_RELAXED);
			any = true;
		}
	pthread_mutex_unlock(&scan_lock);
	return any;
}

/*
 * The words of struct ftrace_regs each kind of trampoline gives a proven
 * handler ([lo, hi), vecfree.h): one that saves no vector register all
 * but the vector part; the frameless fprobe entries push the argument
 * registers, %r10 to %rdi in pt_regs' order, and point %rcx where those
 * words are (trampoline.S GRAPH_LEAN); the frameless returns put %rax
 * and %rdx at theirs, the word between them unused (rethook_tramp.S).
 */
static const struct {
	unsigned int lo, hi;
} fregs_given[] = {
	[FHOOK_FREGS_NOSSE] = { 0, offsetof(struct ftrace_regs, fhook_vregs) / 8 },
	[FHOOK_FREGS_ARGS] = { offsetof(struct pt_regs, r10) / 8, offsetof(struct pt_regs, di) / 8 + 1 },
	[FHOOK_FREGS_RETVAL] = { offsetof(struct pt_regs, ax) / 8, offsetof(struct pt_regs, dx) / 8 + 1 },
	/* the IPMODIFY copies (gen.c) fill in any word of pt_regs, and fhook_full */
	[FHOOK_FREGS_IPMOD] = { 0, offsetof(struct ftrace_regs, fhook_full) / 8 + 1 },
};

_Static_assert(sizeof(struct ftrace_regs) == VECFREE_FREGS_SLOTS * 8, "VECFREE_FREGS_SLOTS");

static size_t find(unsigned long func)
{
	size_t i, n = __atomic_load_n(&nr_scanned, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (scanned[i].func == func)
			return i;
	return SCAN_CACHE;
}

size_t fhook_arch_handler_vec_free(void *func, enum fhook_fregs_kind kind)
{
	size_t i = find((unsigned long)func);
	unsigned int fregs;

	if (i == SCAN_CACHE)
		return 0;
	fregs = __atomic_load_n(&scanned[i].fregs, __ATOMIC_RELAXED);
	/* a store to the ip only where the trampoline reads it back, or ignores it */
	if ((fregs & VECFREE_FREGS_STORES_IP) && kind != FHOOK_FREGS_NOSSE &&
	    kind != FHOOK_FREGS_IPMOD)
		return 0;
	fregs = VECFREE_FREGS_LOADS(fregs);
	if (fregs && (VECFREE_FREGS_LO(fregs) < fregs_given[kind].lo ||
		      VECFREE_FREGS_HI(fregs) > fregs_given[kind].hi))
		return 0;
	return __atomic_load_n(&scanned[i].len, __ATOMIC_RELAXED);
}

bool fhook_arch_handler_reads_fregs(void *func)
{
	size_t i = find((unsigned long)func);

	return i < SCAN_CACHE && __atomic_load_n(&scanned[i].fregs, __ATOMIC_RELAXED);
}

unsigned int fhook_arch_handler_fregs(void *func)
{
	size_t i = find((unsigned long)func);

	return i < SCAN_CACHE ? __atomic_load_n(&scanned[i].fregs, __ATOMIC_RELAXED) : 0;
}
