// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rethook: swap a function's return address for a trampoline and keep the
 * real one on a per-thread shadow stack (see rethook.h for the layout).
 *
 * The hot path (rethook_try_get, rethook_hook, the trampoline) takes no
 * lock and allocates nothing: a thread's region is mapped on its first
 * hook, with mmap only (async-signal-safe), and given back when it exits.
 *
 * Entries are a stack per thread, but returns need not come in its order:
 * a thread that switches between stacks (ucontext, coroutine libraries,
 * sigaltstack) returns from one stack's frames while another stack's
 * entries sit above.  A return leaves a hole; holes at the top are popped.
 *
 * Stale entries.  A frame left by longjmp, siglongjmp or an exception
 * never returns through its stub.  When a new hook finds an entry at the
 * top whose slot is deeper than its own, that entry is either such a
 * frame (on this stack, then dead) or a live frame on another stack; it is
 * dropped only if its slot no longer holds its stub, read safely (the
 * other stack may be gone).  An abandoned frame whose slot was never
 * overwritten stays until it is: it costs a shadow-stack entry, never a
 * wrong return.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/core.h"
#include "util/rcu.h"
#include "util/tasks.h"
#include <limits.h>

#include <fhook/fprobe.h>
#include "rethook.h"

unsigned long rethook_trampoline_handler(unsigned long stub, struct ftrace_regs *fregs) __hidden;

static int rethook_nr_regions = RETHOOK_MAX_THREADS;	/* threads with return hooks at once */
static unsigned long rethook_slots[RETHOOK_MAX_THREADS / 64];
/* regions ever mapped (never unmapped): what sweep_dead() may read */
static unsigned long rethook_mapped[RETHOOK_MAX_THREADS / 64];
/* regions whose thread ran its exit: taken, until that thread is gone */
static unsigned long rethook_exiting[RETHOOK_MAX_THREADS / 64];
static pthread_mutex_t rethook_setup_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t rethook_key;
static unsigned char rethook_eh_frame[128] __attribute__((aligned(8)));

static __thread int rethook_gone __attribute__((tls_model("initial-exec")));
static pid_t rethook_pid;		/* for process_vm_readv; 0 after a fork */

#define region_of rethook_region_of
#define thread_of rethook_thread_of
#define ret_of rethook_ret_of
#define node_of rethook_node_of
#define stub_of rethook_stub_of
#define is_stub rethook_is_stub

/*
 * A node of @rh is done.  Only a rethook with a pool counts its nodes:
 * that count is shared by every thread, and the hot path of every other
 * rethook touches nothing shared.  The hot path never frees (it may run
 * in a signal handler): a detached rethook waits on the dead list, which
 * registration and unregistration sweep.
 */
static inline void rethook_put(struct rethook *rh)
{
	if (rh->capped)
		__atomic_sub_fetch(&rh->ref, 1, __ATOMIC_RELEASE);
}

/*
 * Does the stack slot at @addr still lead to the stub @want: hold it, or
 * hold the stub of a hook placed on the same return after it (another
 * fprobe), whose entry goes on to @want?  The slot is read with a system
 * call: it may be on a stack that has since been unmapped.  The stubs'
 * entries are in the reservation, which stays mapped.
 */
static bool slot_holds(unsigned long addr, unsigned long want)
{
	unsigned long v = 0;
	struct iovec local = { &v, sizeof(v) }, remote = { (void *)addr, sizeof(v) };
	int n;

	/* a return address kept in a register and frames: nothing to read, kept */
	if (!FHOOK_RET_IN_SLOT)
		return true;
	if (!rethook_pid)
		rethook_pid = getpid();
	if (process_vm_readv(rethook_pid, &local, 1, &remote, 1, 0) != sizeof(v))
		return false;
	for (n = 0; rethook_stub_canon(v) != want && n < 64 && is_stub(v); n++) {
		unsigned long base = region_of(v);

		v = __atomic_load_n(&node_of(base, (v - base) / RETHOOK_STUB_SIZE)->next,
				    __ATOMIC_RELAXED);
	}
	return rethook_stub_canon(v) == want;
}

/*
 * Take entry @i out: false if it is being returned through (a coroutine
 * that moved to another thread may be doing so right now).  Its frame is
 * gone: if its rethook reports such frames, that happens here, with the
 * entry marked returning so that nobody else takes or reuses it meanwhile.
 * @locked: the caller holds the recursion lock (a hook, in fprobe's entry).
 */
bool rethook_drop_entry(unsigned long base, unsigned long i, bool locked)
{
	struct rethook_ret *r = ret_of(base, i);
	struct rethook_node *node = node_of(base, i);
	unsigned long v = __atomic_load_n(&r->sp, __ATOMIC_ACQUIRE);

	do {
		if (!v)
			return true;
		if (v & RETHOOK_RETURNING)
			return false;
	} while (!__atomic_compare_exchange_n(&r->sp, &v, v | RETHOOK_RETURNING, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (node->rethook->unwind)
		rethook_report_unwound(node, locked);
	rethook_put(node->rethook);
	/* the last use of the rethook: see sweep_dead() */
	__atomic_store_n(&r->sp, 0, __ATOMIC_RELEASE);
	return true;
}

#define drop_entry rethook_drop_entry

/* Drop the entries above @keep: their frames are gone.  Under the recursion lock. */
static void drop_above(unsigned long base, struct rethook_thread *t, unsigned long keep)
{
	unsigned long top;

	for (top = rethook_top(t, __ATOMIC_RELAXED); top > keep; top--)
		if (!drop_entry(base, top, true))
			break;		/* not below an entry still in use */
	rethook_top_set(t, top, __ATOMIC_RELEASE);
}

/*
 * The libgcc_s every unwinder in the process uses (glibc's backtrace()
 * and pthread_cancel() dlopen the same one), not a static copy that might
 * be linked into us; NULL if there is none.
 */
static void *libgcc_open(void)
{
	return dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
}

static void register_eh_frame(void *h, unsigned long start, unsigned long len)
{
	void (*reg)(void *);

	fhook_rethook_eh_frame(rethook_eh_frame, sizeof(rethook_eh_frame), start, len,
			       rethook_personality_addr(),
			       RETHOOK_NODE_OFF + offsetof(struct rethook_node, ret_ip));
	reg = h ? (void (*)(void *))dlsym(h, "__register_frame") : NULL;
	if (h)
		rethook_unwind_init(h);
	if (reg)
		reg(rethook_eh_frame);
	else
		fprintf(stderr, "fhook: rethook: libgcc_s not found, unwinding through "
			"hooked frames will fail\n");
}

/* ---- per-thread regions ---- */

static void rethook_thread_exit(void *arg)
{
	struct rethook_thread *t = arg;
	unsigned long base = region_of((unsigned long)t), lo = 0, hi = 0, i, v;
	int slot = t->slot;
	bool elsewhere = false;
	pthread_attr_t attr;

	/* fhook's own calls (they allocate): no handler sees them */
	unsigned int internal = fhook_internal_enter();

	if (!pthread_getattr_np(pthread_self(), &attr)) {
		void *addr;
		size_t size;

		if (!pthread_attr_getstack(&attr, &addr, &size)) {
			lo = (unsigned long)addr;
			hi = lo + size;
		}
		pthread_attr_destroy(&attr);
	}
	fhook_internal_leave(internal);
	/*
	 * The frames on this thread's stack are gone: give back what their
	 * entries held.  An entry of a coroutine that runs on another stack
	 * (and will be resumed by another thread) is alive: then the region
	 * is left as it is, never reused, for those returns to find.
	 */
	for (i = rethook_top(t, __ATOMIC_RELAXED); i > 0; i--) {
		v = __atomic_load_n(&ret_of(base, i)->sp, __ATOMIC_ACQUIRE);
		if (!v)
			continue;
		if (!(v & RETHOOK_RETURNING) &&
		    (v - lo < hi - lo || !slot_holds(v, stub_of(base, i))) &&
		    drop_entry(base, i, false))
			continue;
		elsewhere = true;
	}
	if (elsewhere) {
		rethook_self_set(NULL);
		rethook_gone = 1;
		return;
	}
	/* release: sweep_dead() reads top to know which entries to look at */
	rethook_top_set(t, 0, __ATOMIC_RELEASE);
	t->kept_idx = t->kept_sp = 0;
	t->holes = 0;
	/* the entry data only: the header says the code is prepared */
	madvise((void *)(base + RETHOOK_DATA_OFF), RETHOOK_REGION_SIZE - RETHOOK_DATA_OFF,
		MADV_DONTNEED);
	/*
	 * The C library still runs code of the program after the key
	 * destructors (freeing the thread's buffers and TLS, into the
	 * program's own free()): keep the region for those calls' returns,
	 * and let a new thread take it once this one is gone (claim_slot).
	 */
	__atomic_or_fetch(&rethook_exiting[slot / 64], 1UL << (slot % 64), __ATOMIC_RELEASE);
}

static void rethook_atfork_child(void)
{
	struct rethook_thread *t = rethook_self;

	/* only this thread survives the fork */
	rethook_pid = 0;
	memset(rethook_slots, 0, sizeof(rethook_slots));
	memset(rethook_exiting, 0, sizeof(rethook_exiting));
	if (t)
		rethook_slots[t->slot / 64] |= 1UL << (t->slot % 64);
}

/*
 * Every region is taken: take over one whose thread has exited.  Its
 * thread id is gone once the kernel has released the thread (a recycled
 * id only delays this).  errno is the program's: kept.
 */
static int reclaim_exited(void)
{
	int w, b, err = errno;
	pid_t pid = getpid();

	for (w = 0; w < (rethook_nr_regions + 63) / 64; w++) {
		unsigned long bits = __atomic_load_n(&rethook_exiting[w], __ATOMIC_ACQUIRE);

		for (; bits; bits &= bits - 1) {
			int slot;
			struct rethook_thread *t;

			b = __builtin_ctzl(bits);
			slot = w * 64 + b;
			t = thread_of(rethook_base + (unsigned long)slot * RETHOOK_REGION_SIZE);
			/*
			 * Atomic: another thread that reclaimed this slot a
			 * moment ago may be writing its own id (rethook_thread_
			 * get_slow()); either id gives the right answer here.
			 */
			if (syscall(SYS_tgkill, pid, __atomic_load_n(&t->tid, __ATOMIC_RELAXED), 0) == 0 ||
			    errno != ESRCH)
				continue;
			if (__atomic_fetch_and(&rethook_exiting[w], ~(1UL << b), __ATOMIC_ACQ_REL) &
			    (1UL << b)) {
				errno = err;
				return slot;
			}
		}
	}
	errno = err;
	return -1;
}

static int claim_slot(void)
{
	int w, b;

	for (w = 0; w < (rethook_nr_regions + 63) / 64; w++) {
		unsigned long old = __atomic_load_n(&rethook_slots[w], __ATOMIC_RELAXED);

		while (~old) {
			b = __builtin_ctzl(~old);
			if (w * 64 + b >= rethook_nr_regions)
				break;	/* beyond what the address-space limit let us reserve */
			if (__atomic_compare_exchange_n(&rethook_slots[w], &old, old | (1UL << b),
							false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return w * 64 + b;
		}
	}
	return reclaim_exited();
}

/*
 * The stubs, made once (rethook_setup()): they are position-independent,
 * so every region maps these same pages, not a copy of its own.
 */
static void *rethook_stubs;

static void *make_stubs(void *at, int flags)
{
	void *code = mmap(at, RETHOOK_CODE_SIZE, PROT_READ | PROT_WRITE,
			  flags | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED)
		return NULL;
	/* stub 0 is never used: see fhook_rethook_stubs_write() */
	fhook_rethook_stubs_write(code, RETHOOK_DEPTH);
	if (mprotect(code, RETHOOK_CODE_SIZE, PROT_READ | PROT_EXEC)) {
		munmap(code, RETHOOK_CODE_SIZE);
		return NULL;
	}
	return code;
}

/*
 * The stubs at @base: the shared pages, or a private copy if they cannot
 * be.  The first page, all that a shallow stack uses, is a private copy
 * all the same: a forked child gets the parent's private pages mapped,
 * but takes a fault at its first touch of a shared one.
 */
static int map_stubs(unsigned long base)
{
	const size_t first = 4096;
	unsigned char *code;

	if (rethook_stubs &&
	    mremap(rethook_stubs, 0, RETHOOK_CODE_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)base) != MAP_FAILED) {
		code = mmap((void *)base, first, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (code != MAP_FAILED) {
			memcpy(code, rethook_stubs, first);
			if (!mprotect(code, first, PROT_READ | PROT_EXEC))
				return 0;
		}
	}
	return make_stubs((void *)base, MAP_PRIVATE | MAP_FIXED) ? 0 : -1;
}

/*
 * Map this thread's region.  May run in a signal handler (the first hook
 * of a thread can be there), so only atomics and system calls here.
 */
static struct rethook_thread *rethook_thread_get_slow(void)
{
	struct rethook_thread *t;
	unsigned long base;
	unsigned int internal;
	int slot;

	if (rethook_gone || !rethook_base)
		return NULL;
	slot = claim_slot();
	if (slot < 0)
		return NULL;
	base = rethook_base + (unsigned long)slot * RETHOOK_REGION_SIZE;
	t = thread_of(base);
	/* a region keeps its mappings when its thread exits */
	if (mprotect((void *)(base + RETHOOK_CODE_SIZE), RETHOOK_REGION_SIZE - RETHOOK_CODE_SIZE,
		     PROT_READ | PROT_WRITE))
		goto fail;
	__atomic_or_fetch(&rethook_mapped[slot / 64], 1UL << (slot % 64), __ATOMIC_RELEASE);
	if (!t->prepared) {
		if (map_stubs(base))
			goto fail;
		t->prepared = 1;
	}
	t->slot = slot;
	__atomic_store_n(&t->tid, gettid(), __ATOMIC_RELAXED);	/* read by reclaim_exited() */
	rethook_top_set(t, 0, __ATOMIC_RELAXED);
	/* line 0 holds no entry: above every slot, for the trampolines' push */
	ret_of(base, 0)->sp = ~0UL;
	t->kept_idx = t->kept_sp = 0;
	t->holes = 0;
	t->full = 0;
	t->scan_every = 0;
	t->stack_lo = t->stack_hi = 0;
	rethook_self_set(t);
	/* may allocate the key's second-level block: fhook's own call */
	internal = fhook_internal_enter();
	pthread_setspecific(rethook_key, t);
	fhook_internal_leave(internal);
	return t;
fail:
	__atomic_and_fetch(&rethook_slots[slot / 64], ~(1UL << (slot % 64)), __ATOMIC_RELEASE);
	return NULL;
}

static inline struct rethook_thread *rethook_thread_get(void)
{
	struct rethook_thread *t = rethook_self;

	return __builtin_expect(t != NULL, 1) ? t : rethook_thread_get_slow();
}

/**
 * rethook_setup - reserve the regions and describe them to the unwinder
 *
 * Once per process, from ordinary thread context (register_fprobe*).
 * Returns 0 or -ENOMEM.
 */
/*
 * How many threads may hold return hooks at once.  The reservation is
 * address space only (PROT_NONE, no memory behind it until a thread takes
 * its region), but RLIMIT_AS (`ulimit -v`) counts it all the same: 2 GiB
 * would leave a program under a 512 MiB limit unable to allocate what it
 * does untraced.  Under a limit, take at most a sixteenth of it; a thread
 * beyond the regions gets no return hook (counted in nmissed).
 */
static int regions_for_limit(void)
{
	struct rlimit rl;
	unsigned long n;

	if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return RETHOOK_MAX_THREADS;
	n = (unsigned long)rl.rlim_cur / 16 / RETHOOK_REGION_SIZE;
	if (n > 1)
		n--;	/* the alignment slack */
	if (n < 1)
		n = 1;
	return n < RETHOOK_MAX_THREADS ? (int)n : RETHOOK_MAX_THREADS;
}

int rethook_setup(void)
{
	unsigned long size;
	void *p, *libgcc;
	int ret = 0;

	if (__atomic_load_n(&rethook_base, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&rethook_setup_lock);
	if (rethook_base)
		goto out;
	rethook_nr_regions = regions_for_limit();
	size = (unsigned long)rethook_nr_regions * RETHOOK_REGION_SIZE;
	p = mmap(NULL, size + RETHOOK_REGION_SIZE, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		ret = -ENOMEM;
		goto out;
	}
	if (pthread_key_create(&rethook_key, rethook_thread_exit)) {
		munmap(p, size + RETHOOK_REGION_SIZE);
		ret = -ENOMEM;
		goto out;
	}
	pthread_atfork(NULL, NULL, rethook_atfork_child);
	/* before the stubs: where they go may be generated code, whose FDE needs libgcc */
	libgcc = libgcc_open();
	fhook_arch_rethook_init(rethook_trampoline_handler, libgcc);
	rethook_stubs = make_stubs(NULL, MAP_SHARED);
	register_eh_frame(libgcc, (region_of((unsigned long)p) + RETHOOK_REGION_SIZE), size);
	__atomic_store_n(&rethook_size, size, __ATOMIC_RELAXED);
	__atomic_store_n(&rethook_base, region_of((unsigned long)p) + RETHOOK_REGION_SIZE,
			 __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&rethook_setup_lock);
	return ret;
}

/* ---- pools ---- */

static struct rethook *dead_list;
static pthread_mutex_t dead_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Does an entry of any thread's shadow stack still use @rh?  Entries in
 * use, or being returned through, have a non-zero sp; an exit clears it
 * only after its last use of the rethook, inside a tasks section, so
 * after fhook_tasks_synchronize() a zero sp means done.
 */
static bool rethook_in_use(struct rethook *rh)
{
	int slot;

	for (slot = 0; slot < RETHOOK_MAX_THREADS; slot++) {
		unsigned long base, i, top;

		if (!(__atomic_load_n(&rethook_mapped[slot / 64], __ATOMIC_ACQUIRE) &
		      (1UL << (slot % 64))))
			continue;
		base = rethook_base + (unsigned long)slot * RETHOOK_REGION_SIZE;
		/* no entry for @rh can be pushed any more: its ops is gone */
		top = rethook_top(thread_of(base), __ATOMIC_ACQUIRE);
		for (i = 1; i <= top; i++)
			if (__atomic_load_n(&ret_of(base, i)->sp, __ATOMIC_ACQUIRE) &&
			    __atomic_load_n(&node_of(base, i)->rethook, __ATOMIC_RELAXED) == rh)
				return true;
	}
	return false;
}

/*
 * Free the detached rethooks whose last node has returned.  @synced: the
 * caller waited for a grace period after the last one was detached.
 */
static void sweep_dead(bool synced)
{
	struct rethook **pp, *rh;

	pthread_mutex_lock(&dead_lock);
	for (pp = &dead_list; (rh = *pp);) {
		bool busy;

		if (rh->capped) {
			busy = __atomic_load_n(&rh->ref, __ATOMIC_ACQUIRE) != 0;
		} else {
			if (!synced) {
				/* exits under way finish; later ones see data NULL */
				fhook_tasks_synchronize();
				synced = true;
			}
			busy = rethook_in_use(rh);
		}
		if (!busy) {
			*pp = rh->next_dead;
			free(rh);
		} else {
			pp = &rh->next_dead;
		}
	}
	pthread_mutex_unlock(&dead_lock);
}

/*
 * @unwind: also call @handler, with NULL regs, for the frames removed
 * without a return (rethook_unwind.c).
 */
struct rethook *rethook_alloc(void *data, rethook_handler_t handler, long pool_size,
			      bool unwind)
{
	struct rethook *rh;

	sweep_dead(false);
	rh = calloc(1, sizeof(*rh));

	if (!rh)
		return NULL;
	rh->fgraph.probe = data;
	fhook_fgraph_tramps_init(&rh->fgraph);	/* bound to no kind of trampoline yet */
	rh->handler = handler;
	rh->ref = 1;
	rh->pool_size = pool_size;
	rh->capped = pool_size > 0 && pool_size < LONG_MAX / 2;
	rh->unwind = unwind;
	if (unwind)
		__atomic_add_fetch(&rethook_unwind_users, 1, __ATOMIC_RELAXED);
	return rh;
}

/* What a going rethook's flags word becomes: every "disabled" bit set. */
static const unsigned int rethook_gone_word = ~0U;

/**
 * rethook_going - exits in flight through @rh's nodes see no owner from
 * here on: its probe NULL, and to the trampolines, which test only the
 * flags word on the path of graph records, disabled (its owner's flags
 * may be freed after the grace period, the word stays).
 *
 * Only once no entry can take a node of @rh any more (the owner's sites
 * unhooked and a grace period over): the graph entries test the flags
 * word before they load the probe, so a thread between the two would
 * call the entry handler with a NULL probe.  The returns load the probe
 * first, then test the word (rethook_tramp.S), which is why the word
 * changes first here.
 */
static void rethook_going(struct rethook *rh)
{
	fhook_fgraph_set_flags_word(&rh->fgraph, (unsigned int *)&rethook_gone_word);
	__atomic_store_n(&rh->fgraph.probe, NULL, __ATOMIC_RELEASE);
}

/**
 * rethook_free - detach @rh from its owner
 *
 * The rethook's teardown, as the kernel's rethook_free() after
 * unregister_ftrace_function(): call it only once no entry can take a
 * node of @rh any more (the owner's sites unhooked, the grace period that
 * unregister_ftrace_function() or unregister_kprobe() waits for over).
 * Returns still pending through its nodes see no owner from here on and
 * run no handler; this waits for the exit handlers that read the owner
 * before, so the owner may be freed when it returns.  The rethook itself
 * stays until the last pending return has passed (sweep_dead), so each
 * still finds where to go back to.  From ordinary thread context, inside
 * no section (it waits for a grace period).
 */
void rethook_free(struct rethook *rh)
{
	if (rh->unwind)
		__atomic_sub_fetch(&rethook_unwind_users, 1, __ATOMIC_RELAXED);
	rethook_going(rh);
	/* exit handlers that read the owner before it was cleared end */
	fhook_synchronize();
	if (rh->capped && __atomic_sub_fetch(&rh->ref, 1, __ATOMIC_ACQ_REL) == 0) {
		free(rh);
	} else {
		pthread_mutex_lock(&dead_lock);
		rh->next_dead = dead_list;
		dead_list = rh;
		pthread_mutex_unlock(&dead_lock);
	}
	sweep_dead(true);
}

/*
 * The shadow stack is full.  Out-of-order returns (coroutines) leave holes
 * under entries that are still alive, and abandoned frames leave entries
 * that are dead but were never at the top when looked at: find a hole, or
 * make one of a dead entry.  Rare (8191 entries in use), so it may scan
 * and read slots.  Returns an index, or 0.
 */
static unsigned long reclaim_hole(unsigned long base, struct rethook_thread *t, unsigned long sp)
{
	unsigned long i, r_sp;

	if (t->holes) {
		for (i = rethook_top(t, __ATOMIC_RELAXED); i > 0; i--)
			if (!__atomic_load_n(&ret_of(base, i)->sp, __ATOMIC_ACQUIRE))
				return i;
		t->holes = 0;
	}
	/*
	 * Reading every slot costs a system call each.  A recursion deeper
	 * than the shadow stack is the usual cause of a full one, and has
	 * nothing to reclaim: scan on the first full hook, then less and less
	 * often while scans find nothing.
	 */
	if (t->full++ % (t->scan_every ? t->scan_every : 1))
		return 0;
	t->full = 1;
	for (i = rethook_top(t, __ATOMIC_RELAXED); i > 0; i--) {
		struct rethook_ret *r = ret_of(base, i);

		r_sp = __atomic_load_n(&r->sp, __ATOMIC_ACQUIRE);
		/* above us: a caller (a deep recursion), or another stack's: kept */
		if (!r_sp || r_sp > sp || (r_sp & RETHOOK_RETURNING) ||
		    slot_holds(r_sp, stub_of(base, i)))
			continue;
		if (!drop_entry(base, i, true))
			continue;	/* being returned through, after all */
		t->scan_every = 1024;
		return i;
	}
	if (!t->scan_every)
		t->scan_every = 1024;
	else if (t->scan_every < (1U << 24))
		t->scan_every *= 2;
	return 0;
}

/**
 * rethook_try_get - a node for hooking the return whose slot is at @sp
 * @ret:	the return address the hook finds (in the slot, or in the
 *		link register where the call keeps it there)
 *
 * Called with the recursion lock held.  Returns NULL when the pool of @rh
 * is used up, this thread's shadow stack is full, or it has none.
 */
struct rethook_node *rethook_try_get(struct rethook *rh, unsigned long sp, unsigned long ret)
{
	struct rethook_thread *t;
	struct rethook_node *node;
	unsigned long base, top, idx;

	if (rh->capped && __atomic_fetch_add(&rh->ref, 1, __ATOMIC_RELAXED) > rh->pool_size)
		goto miss;
	t = rethook_thread_get();
	if (!t)
		goto miss;
	base = region_of((unsigned long)t);
	/*
	 * Entries below this call on the same stack are dead (left by
	 * longjmp or an exception); one at this very slot is alive only if
	 * the return address still leads to its stub (a tail call, or
	 * another fprobe on the same function).  Where the return address
	 * is in a register, the slot is the stack pointer of the entry,
	 * which every call from the same frame shares: a sibling called
	 * after a longjmp finds its predecessor's entry at its own slot.
	 * An entry below may also be alive on another stack: see the
	 * comment at the top of this file.
	 */
	for (top = rethook_top(t, __ATOMIC_RELAXED); top; top--) {
		struct rethook_ret *r = ret_of(base, top);
		unsigned long r_sp = __atomic_load_n(&r->sp, __ATOMIC_ACQUIRE);

		if (!r_sp)
			continue;		/* a hole */
		if (r_sp > sp || (r_sp & RETHOOK_RETURNING))
			break;			/* a caller's frame, another stack's, or returning */
		if (r_sp == sp) {
			/* our own slot: a tail call, or another fprobe's hook */
			if (rethook_stub_canon(ret) == stub_of(base, top))
				break;
			continue;
		}
		/*
		 * Deeper than us: dead here, or alive on another stack.  Without
		 * a slot to read (the return address in a register), the stack
		 * is all that tells them apart.
		 */
		if ((!FHOOK_RET_IN_SLOT ||
		     __atomic_load_n(&rethook_unwind_users, __ATOMIC_RELAXED)) &&
		    rethook_on_own_stack(t, sp, r_sp))
			continue;	/* both on the thread's own stack: dead */
		if (t->kept_idx == top && t->kept_sp == r_sp)
			break;
		if (slot_holds(r_sp, stub_of(base, top))) {
			t->kept_idx = top;
			t->kept_sp = r_sp;
			break;
		}
	}
	if (top != rethook_top(t, __ATOMIC_RELAXED))
		drop_above(base, t, top);
	/* drop_above stops under an entry another thread has begun returning */
	idx = rethook_top(t, __ATOMIC_RELAXED) + 1;
	if (__builtin_expect(idx >= RETHOOK_DEPTH, 0)) {
		idx = reclaim_hole(base, t, sp);
		if (!idx)
			goto miss;
	}
	node = node_of(base, idx);
	node->rethook = rh;
	return node;
miss:
	rethook_put(rh);
	return NULL;
}

/* rethook_recycle - give back a node that rethook_try_get() returned, unused. */
void rethook_recycle(struct rethook_node *node)
{
	rethook_put(node->rethook);
}

/**
 * rethook_hook - make the function entered with stack pointer @sp, whose
 * return address is at @where (fhook_fregs_ret_ptr()), return through
 * @node's stub.  Called with the recursion lock held, right after
 * rethook_try_get().
 */
void rethook_hook(struct rethook_node *node, unsigned long sp, unsigned long *where)
{
	unsigned long base = region_of((unsigned long)node);
	unsigned long idx = ((unsigned long)node - (unsigned long)node_of(base, 0)) / RETHOOK_LINE;
	struct rethook_thread *t = thread_of(base);
	struct rethook_ret *r = ret_of(base, idx);
	unsigned long ret = *where;
	unsigned long real = is_stub(ret) ? rethook_stub_ret_ip(ret) : ret;

	/*
	 * Another fprobe hooked this return first: our return goes on to its
	 * stub, but what we report, and what unwinders read through the FDE,
	 * is the real address.  An unwinder given the other stub would find
	 * the same slot, hence our stub, again: it looped forever on a C++
	 * exception thrown through a function two fprobes watch.
	 */
	node->next = ret;
	node->ret_ip = real;
	node->unwound = 0;
	r->sp = sp;
	/* the entry is complete before the slot points at it */
	__asm__ __volatile__("" ::: "memory");
	if (idx > rethook_top(t, __ATOMIC_RELAXED))	/* else a hole reused below the top */
		rethook_top_set(t, idx, __ATOMIC_RELAXED);
	__asm__ __volatile__("" ::: "memory");
	*where = stub_of(base, idx);
}

static void __attribute__((noreturn)) rethook_corrupt(unsigned long stub, unsigned long slot,
						       unsigned long want)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "fhook: rethook: return through %#lx from slot "
			 "%#lx, but its entry is for %#lx\n", stub, slot, want);

	if (write(2, msg, n) < 0)
		abort();
	abort();
}

/*
 * Called by rethook_trampoline when a hooked function returned through
 * @stub; @fregs holds its return values and the stack pointer after the
 * return.  Puts the real return address back in the slot (so that from
 * here on the stack is plain again for any unwinder), runs the handler,
 * pops the entry and returns the address to go on to.
 */
static unsigned long rethook_trampoline_slow(unsigned long stub, struct ftrace_regs *fregs);

/*
 * The common return, in one pass: our own thread's top entry, returned
 * through in order, not nested, no pool to count.
 * Every other case is rethook_trampoline_slow()'s.
 */
unsigned long rethook_trampoline_handler(unsigned long stub, struct ftrace_regs *fregs)
{
	unsigned long base = region_of(stub);
	unsigned long idx = (stub - base) / RETHOOK_STUB_SIZE;
	struct rethook_thread *t = thread_of(base);
	struct rethook_ret *r = ret_of(base, idx);
	struct rethook_node *node = node_of(base, idx);
	unsigned long slot = fhook_ret_key_at_return(ftrace_regs_get_stack_pointer(fregs));
	struct rethook *rh = node->rethook;
	unsigned long ret = node->next;
	int tasks = fhook_tasks_state;
	void *data;

	/* the top entry: no frame above it to report as unwound */
	if (__builtin_expect(t != rethook_self || idx != rethook_top(t, __ATOMIC_RELAXED) ||
			     r->sp != slot || fhook_recursion_bits || tasks <= 0 || rh->capped, 0))
		return rethook_trampoline_slow(stub, fregs);
	/* as in the slow path: returning, then the slot plain again */
	__atomic_store_n(&r->sp, slot | RETHOOK_RETURNING, __ATOMIC_RELAXED);
	__asm__ __volatile__("" ::: "memory");
	fhook_ret_slot_restore(slot, ret);
	instruction_pointer_set(&fregs->regs, node->ret_ip);
	fhook_recursion_bits = 1;
	__atomic_store_n(&fhook_tasks_state, tasks + 1, __ATOMIC_RELAXED);
	__asm__ __volatile__("" ::: "memory");
	data = __atomic_load_n(&rh->fgraph.probe, __ATOMIC_ACQUIRE);
	if (data)
		rh->handler(node, data, node->ret_ip, fregs);
	fhook_tasks_leave();
	fhook_recursion_unlock(0);
	__atomic_store_n(&r->sp, 0, __ATOMIC_RELEASE);
	/* a signal handler's hooks above ours are gone by now: top is idx */
	rethook_top_set(t, idx - 1, __ATOMIC_RELEASE);
	return ret;
}

static unsigned long rethook_trampoline_slow(unsigned long stub, struct ftrace_regs *fregs)
{
	unsigned long base = region_of(stub);
	unsigned long idx = (stub - base) / RETHOOK_STUB_SIZE;
	struct rethook_thread *t = thread_of(base);
	struct rethook_ret *r = ret_of(base, idx);
	struct rethook_node *node = node_of(base, idx);
	unsigned long slot = fhook_ret_key_at_return(ftrace_regs_get_stack_pointer(fregs));
	struct rethook *rh = node->rethook;
	unsigned long ret = node->next;
	int bit;

	/* a coroutine may return on another thread than the one it entered on */
	bool own = t == rethook_self;

	if (__builtin_expect(r->sp != slot || (own && idx > rethook_top(t, __ATOMIC_RELAXED)), 0))
		rethook_corrupt(stub, slot, r->sp);
	/*
	 * Returning: from here the slot no longer holds the stub, and a
	 * hook must not take the entry for a dead one (it would give it back
	 * twice and reuse the node under our handler).  On our own thread
	 * only a signal handler can look, so a plain store does; on another
	 * thread's entry, that thread may be scanning: claim it.
	 */
	if (__builtin_expect(own, 1)) {
		__atomic_store_n(&r->sp, slot | RETHOOK_RETURNING, __ATOMIC_RELAXED);
	} else {
		unsigned long v = slot;

		if (!__atomic_compare_exchange_n(&r->sp, &v, slot | RETHOOK_RETURNING, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			rethook_corrupt(stub, slot, v);
	}
	__asm__ __volatile__("" ::: "memory");
	fhook_ret_slot_restore(slot, ret);

	/* frames above ours that were removed without a return exit first */
	if (own && idx != rethook_top(t, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&rethook_unwind_users, __ATOMIC_RELAXED))
		rethook_reap_deeper(slot, false);
	instruction_pointer_set(&fregs->regs, node->ret_ip);
	/*
	 * The owner (data) is read and used inside a tasks section, which
	 * its unregistration waits for; the rethook itself stays allocated
	 * while this entry's sp is non-zero (sweep_dead).
	 */
	bit = fhook_recursion_trylock();
	if (fhook_tasks_enter()) {
		void *data = __atomic_load_n(&rh->fgraph.probe, __ATOMIC_ACQUIRE);

		if (data && bit >= 0)
			rh->handler(node, data, node->ret_ip, fregs);
		else if (data && !fhook_recursion_internal())
			__atomic_add_fetch(&((struct fprobe *)data)->nmissed, 1, __ATOMIC_RELAXED);
		fhook_tasks_leave();
	}
	if (bit >= 0)
		fhook_recursion_unlock(bit);
	rethook_put(rh);
	/* a hole; entries above it may be another stack's, alive */
	__atomic_store_n(&r->sp, 0, __ATOMIC_RELEASE);
	if (own) {
		/*
		 * Pop our own entry only; holes it uncovers are skipped and
		 * popped by the next hook.  One read and one write of top: a
		 * signal handler that runs in between leaves top at or below
		 * idx - 1 with only holes above, which this store cannot undo.
		 */
		if (idx == rethook_top(t, __ATOMIC_RELAXED))
			rethook_top_set(t, idx - 1, __ATOMIC_RELEASE);
		else
			t->holes = 1;
	}
	return ret;
}

/**
 * rethook_for_each_pending - the returns still hooked on this thread's
 * shadow stack, outermost first: @fn(probe, entry_ip, slot, @arg) for
 * each, the one being returned through included.  For a forked child,
 * whose shadow stack holds the frames it inherited: their entries were
 * recorded by the parent's thread, their returns will be the child's.
 * @probe is the owner (an fprobe), NULL once it is going away.  Any
 * context; reads only this thread's own region.
 */
void rethook_for_each_pending(void (*fn)(void *probe, unsigned long entry_ip,
					 unsigned long slot, void *arg), void *arg)
{
	struct rethook_thread *t = rethook_self;
	unsigned long base, i, top;

	if (!t)
		return;
	base = region_of((unsigned long)t);
	top = rethook_top(t, __ATOMIC_ACQUIRE);
	for (i = 1; i <= top; i++) {
		struct rethook_node *node = node_of(base, i);
		struct rethook *rh;

		if (!__atomic_load_n(&ret_of(base, i)->sp, __ATOMIC_ACQUIRE))
			continue;	/* a hole */
		rh = __atomic_load_n(&node->rethook, __ATOMIC_RELAXED);
		fn(rh ? __atomic_load_n(&rh->fgraph.probe, __ATOMIC_ACQUIRE) : NULL,
		   node->entry_ip, i, arg);
	}
}

unsigned long rethook_find_ret_addr(unsigned long addr)
{
	if (!is_stub(addr))
		return addr;
	return rethook_stub_ret_ip(addr);
}

/*
 * backtrace() walks through our stubs correctly (the FDE above), but each
 * hooked frame adds the pseudo-frame of its stub.  Leave those out, and
 * our own frame, so that the result is what it would be untraced.
 */
int backtrace(void **buffer, int size)
{
	static int (*real)(void **, int);
	void *small[256], **tmp = small;
	int n, i, out = 0, want;

	if (!real)
		real = (int (*)(void **, int))fhook_libc_sym("backtrace");
	if (!real || size <= 0)
		return 0;
	want = size * 2 + 1;
	if (want > 256) {
		unsigned int internal = fhook_internal_enter();

		tmp = malloc(want * sizeof(void *));
		fhook_internal_leave(internal);
		if (!tmp)
			return real(buffer, size);
	}
	n = real(tmp, want);
	for (i = 1; i < n && out < size; i++)
		if (!is_stub((unsigned long)tmp[i]))
			buffer[out++] = tmp[i];
	if (tmp != small) {
		unsigned int internal = fhook_internal_enter();

		free(tmp);
		fhook_internal_leave(internal);
	}
	return out;
}
