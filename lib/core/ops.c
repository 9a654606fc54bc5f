// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ftrace_ops: registration, filters, and bringing every site in line with
 * them (the kernel's ftrace_replace_code).
 *
 * A site no ops wants is a nop; a site exactly one ops wants calls that
 * ops' stub, which reaches its handler with no lookup; a site several ops
 * want calls the list stub.  All changes of one operation go out as one
 * text-patching batch.
 *
 * Locking: ftrace_lock serializes every operation here; site updates run
 * inside fhook_loader_locked() so that no object is unmapped under us; the
 * grace-period wait happens after that lock is dropped, with ftrace_lock
 * still held (as the kernel holds ftrace_lock).  A handler must therefore
 * not register or unregister ops itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/errno.h"
#include "util/alloc.h"
#include "util/bsearch.h"
#include "util/rcu.h"
#include "util/tasks.h"
#include "util/lockdep.h"

#include "core.h"
#include "arch/shadow.h"
#include "arch/arch.h"
#include "kallsyms/objects.h"

struct ftrace_ops *ftrace_ops_list;
pthread_mutex_t ftrace_lock __fhook_startup_data = PTHREAD_MUTEX_INITIALIZER;
static bool ftrace_enabled = true;

void fhook_synchronize(void)
{
	/*
	 * Register ourselves first: a signal handler on this thread that
	 * meets a hook during the wait must not have to register while the
	 * registry's lock is held by this very thread.
	 */
	fhook_tasks_register();
	/* the trampolines' sections, and everything read under fhook_rcu_read_lock() */
	fhook_rcu_synchronize();
}

static inline __attribute__((always_inline)) bool
hash_test(const struct ftrace_hash *filter, const struct ftrace_hash *notrace, unsigned long ip)
{
	if (!fhook_hash_empty(filter) && !fhook_hash_contains(filter, ip))
		return false;
	/* (most ops have no notrace: no call for it, site after site) */
	return !notrace || !notrace->count || !fhook_hash_contains(notrace, ip);
}

int ftrace_ops_test(struct ftrace_ops *ops, unsigned long ip)
{
	return hash_test(__atomic_load_n(&ops->filter_hash, __ATOMIC_ACQUIRE),
			 __atomic_load_n(&ops->notrace_hash, __ATOMIC_ACQUIRE), ip);
}

/* ---- bringing sites in line ---- */

/*
 * Is any usable site in [@func, @func + @len)?  A handler with one may be
 * redirected to anything once it is enabled.  ftrace_lock held.
 */
static bool sites_within(unsigned long func, size_t len)
{
	struct fhook_object *obj = fhook_object_of(func);
	size_t i;

	fhook_assert_held(&ftrace_lock);
	if (!obj)
		return false;
	fhook_object_load_sites(obj);
	for (i = fhook_lower_bound(obj->nr_recs, k, obj->recs[k].ip, func);
	     i < obj->nr_recs && obj->recs[i].ip < func + len; i++)
		if (!(obj->recs[i].flags & FTRACE_FL_DISABLED))
			return true;
	return false;
}

/*
 * The handler at @func leaves xmm0-7 alone, known for sure, and reads no
 * more of its fregs than a trampoline of @kind gives it.  ftrace_lock held.
 */
static bool handler_vec_free(void *func, enum fhook_fregs_kind kind)
{
	size_t len;

	fhook_assert_held(&ftrace_lock);
	len = fhook_arch_handler_vec_free(func, kind);
	return len && !sites_within((unsigned long)func, len);
}

/*
 * handler_vec_free() of the ops last asked about: stub_bind() asks for
 * every site it binds, 20,000 times for an ops on every function.  Valid
 * until the objects change, an ops is registered (its handler scanned) or
 * a proof is taken back (fhook_ops_probe_check()).
 */
static struct {
	const struct ftrace_ops *ops;
	void *handler;
	bool valid, vec_free, args_only, reads_fregs, ipmod;
} vec_memo;

/* The handler an ops' trampoline calls: an fprobe's entry handler for the graph ones. */
static void *ops_handler(const struct ftrace_ops *ops)
{
	if (ops->flags & FHOOK_OPS_FL_FGRAPH)
		return ((const struct fhook_fgraph *)ops->private)->entry;
	return (void *)ops->func;
}

/* vec_memo for @ops' handler (not NULL) */
static void vec_memo_of(const struct ftrace_ops *ops, void *handler)
{
	if (vec_memo.valid && vec_memo.ops == ops && vec_memo.handler == handler)
		return;
	vec_memo.ops = ops;
	vec_memo.handler = handler;
	vec_memo.vec_free = handler_vec_free(handler, FHOOK_FREGS_NOSSE);
	vec_memo.args_only = handler_vec_free(handler, FHOOK_FREGS_ARGS);
	vec_memo.reads_fregs = fhook_arch_handler_reads_fregs(handler);
	vec_memo.ipmod = handler_vec_free(handler, FHOOK_FREGS_IPMOD);
	vec_memo.valid = true;
}

/*
 * @args: for a frameless trampoline, which gives the handler only the
 * argument registers; else for one that saves no vector register.
 */
static bool ops_vec_free(const struct ftrace_ops *ops, bool args)
{
	void *handler = ops_handler(ops);

	if (!handler)
		return false;
	vec_memo_of(ops, handler);
	return args ? vec_memo.args_only : vec_memo.vec_free;
}

static unsigned int tramp_flags(const struct ftrace_ops *ops);

/* Would a kprobe at @addr land in the proven handler at @h? */
static bool probe_in(unsigned long addr, unsigned long h)
{
	size_t len = fhook_arch_handler_vec_free((void *)h, FHOOK_FREGS_NOSSE);

	return addr + FHOOK_KPROBE_MAX_BYTES > h && addr < h + (len ? len : 1);
}

/**
 * fhook_ops_probe_check - may a kprobe be placed at @addr?
 *
 * A probe can send the code it is in anywhere.  Inside the handler of a
 * registered ops whose trampoline saves no xmm register (proven, or at the
 * entry of one promised), that could be vector code: -EBUSY.  Otherwise
 * no handler with the probe among its bytes is proven from now on, so no
 * ops registered later gets that trampoline for it (rebinding a live ops
 * instead would race with threads that jumped into the old trampoline and
 * have not yet counted themselves in).
 */
int fhook_ops_probe_check(unsigned long addr)
{
	struct ftrace_ops *op;
	int ret = 0;

	pthread_mutex_lock(&ftrace_lock);
	for (op = ftrace_ops_list; op && !ret; op = op->next) {
		const struct fhook_fgraph *fg = op->private;
		unsigned long h = (unsigned long)ops_handler(op);

		if (!(op->flags & FTRACE_OPS_FL_ENABLED))
			continue;
		if (h && (tramp_flags(op) & FHOOK_TRAMP_NOSSE) && probe_in(addr, h))
			ret = -EBUSY;
		/* an exit handler the return calls with no frame: the same */
		if ((op->flags & FHOOK_OPS_FL_FGRAPH) && (fg->flags & FGRAPH_FL_LEAN_EXIT) &&
		    probe_in(addr, (unsigned long)fg->exit))
			ret = -EBUSY;
	}
	if (!ret && fhook_arch_handler_unprove(addr))
		vec_memo.valid = false;
	pthread_mutex_unlock(&ftrace_lock);
	return ret;
}

/*
 * Which trampoline an ops' stubs use: the C dispatcher only when asked
 * (FHOOK_SLOW_DISPATCH=1, for tests); xmm0-7 left unsaved when the
 * handler promises not to touch them, or is proven not to.
 */
static unsigned int tramp_flags(const struct ftrace_ops *ops)
{
	static int slow = -1;
	unsigned int flags = 0;

	if (slow < 0)
		slow = !!secure_getenv("FHOOK_SLOW_DISPATCH");
	if (slow)
		flags |= FHOOK_TRAMP_C;
	if ((ops->flags & FHOOK_OPS_FL_GENERAL_REGS_ONLY) || ops_vec_free(ops, false))
		flags |= FHOOK_TRAMP_NOSSE;
	/*
	 * one moving the ip gets a copy made for what its handler reads and
	 * changes, when that is proven (the kernel's redirect by caller)
	 */
	if ((ops->flags & FTRACE_OPS_FL_IPMODIFY) && !(ops->flags & FHOOK_OPS_FL_FGRAPH) &&
	    !(flags & FHOOK_TRAMP_C) && ops->func && (vec_memo_of(ops, (void *)ops->func),
						      vec_memo.ipmod))
		flags |= FHOOK_TRAMP_IPMOD;
	/* its own trampoline, unless its handler may move the ip */
	if (!(ops->flags & FTRACE_OPS_FL_IPMODIFY)) {
		flags |= FHOOK_TRAMP_GEN;
		/* ... with no frame for a proven handler that reads no fregs */
		if (!(ops->flags & (FHOOK_OPS_FL_FGRAPH | FTRACE_OPS_FL_SAVE_REGS)) &&
		    fhook_ops_func((struct ftrace_ops *)ops) == ops->func &&
		    ops_vec_free(ops, false) && !vec_memo.reads_fregs)
			flags |= FHOOK_TRAMP_OPS_LEAN;
	}
	if (ops->flags & FHOOK_OPS_FL_FGRAPH) {
		const struct fhook_fgraph *fg = ops->private;

		flags |= FHOOK_TRAMP_FGRAPH;
		if (__atomic_load_n(&fg->flags, __ATOMIC_ACQUIRE) & FGRAPH_FL_REC)
			flags |= FHOOK_TRAMP_GRAPH_REC;
		if (fg->flags & FGRAPH_FL_EXIT)
			flags |= FHOOK_TRAMP_GRAPH_EXIT;
		if (fg->flags & FGRAPH_FL_DATA)
			flags |= FHOOK_TRAMP_GRAPH_DATA;
		/*
		 * no frame: the entry handler proven (a promise says nothing of
		 * fregs), unless C or the records' trampolines take the calls
		 */
		if (!(flags & (FHOOK_TRAMP_C | FHOOK_TRAMP_GRAPH_REC)) &&
		    !(fg->flags & FGRAPH_FL_SLOW) && ops_vec_free(ops, true)) {
			flags |= FHOOK_TRAMP_LEAN;
			if (vec_memo.reads_fregs)	/* (of fg->entry: ops_vec_free() filled it) */
				flags |= FHOOK_TRAMP_LEAN_FREGS;
			else if (__atomic_load_n(&fg->bare, __ATOMIC_RELAXED))
				flags |= FHOOK_TRAMP_LEAN_BARE;
		}
	}
	return flags;
}

static enum fhook_tramp_kind tramp_kind(const struct ftrace_ops *ops)
{
	return (ops->flags & FTRACE_OPS_FL_SAVE_REGS) ? FHOOK_TRAMP_REGS : FHOOK_TRAMP_ARGS;
}

/*
 * The owner of @ops' stubs: a cookie new at each registration, which no
 * object's address can equal (above the user half of the address space).
 * An ops' own address will not do: an ops freed and another allocated
 * where it was would take over its stubs, and a thread preempted between
 * a site of the first and the stub's trampoline would resume into the
 * second's handler, for a function it never asked for (a patch's
 * replacement run in place of another function).  ftrace_lock held.
 */
static unsigned long stub_owner_next;

static void stub_owner_new(struct ftrace_ops *ops)
{
	ops->stub_owner = (0xffffUL << 48) | ++stub_owner_next;
}

static inline const void *stub_owner(const struct ftrace_ops *ops)
{
	return (const void *)ops->stub_owner;
}

/* A stub of @ops calls its handler directly (a site only @ops wants). */
static void stub_bind(struct fhook_stub *s, struct ftrace_ops *ops)
{
	unsigned int flags = tramp_flags(ops);

	/* generated code, unless every call is to take the C path */
	if (ops->direct && !(flags & FHOOK_TRAMP_C))
		fhook_stub_set_direct(s, ops->direct, fhook_ops_func(ops), ops);
	else
		fhook_stub_set(s, tramp_kind(ops), flags, fhook_ops_func(ops), ops);
}

/*
 * Every stub of @ops calls its handler, or (unbinding) goes through the
 * list function, which no longer finds the ops.
 */
static void stubs_bind(struct ftrace_ops *ops, bool bind)
{
	unsigned int flags = tramp_flags(ops);

	fhook_stubs_set(stub_owner(ops), tramp_kind(ops), flags, bind ? fhook_ops_func(ops) : NULL, ops,
			(flags & FHOOK_TRAMP_C) ? NULL : ops->direct);
}

/**
 * fhook_ops_retramp - @ops' stubs take the trampoline its flags now ask for
 *
 * For a registered ops whose private data changed what it needs (an
 * fprobe whose records the trampolines now write).  A thread on the old
 * trampoline finishes there: both serve the ops.
 */
void fhook_ops_retramp(struct ftrace_ops *ops)
{
	pthread_mutex_lock(&ftrace_lock);
	if (ops->flags & FTRACE_OPS_FL_ENABLED)
		stubs_bind(ops, true);
	pthread_mutex_unlock(&ftrace_lock);
}

/*
 * Map the stubs of @obj's sites when one is first enabled.  Without memory
 * within a call's reach, every site of the object stays disabled.
 */
static int object_region(struct fhook_object *obj)
{
	size_t i;

	obj->region = fhook_region_near(obj->text_lo, obj->text_hi);
	if (obj->region)
		return 0;
	fprintf(stderr, "fhook: %s: no memory for stubs within reach of its code; "
		"its %zu sites stay disabled\n", obj->path, obj->nr_recs);
	for (i = 0; i < obj->nr_recs; i++)
		if (!(obj->recs[i].flags & FTRACE_FL_ENABLED))
			obj->recs[i].flags |= FTRACE_FL_DISABLED;
	return -ENOMEM;
}

/*
 * While the writes of an update are built, a record's flags once they are
 * applied wait in the upper half of its flags word (the count and every
 * FTRACE_FL_* bit live in the lower half), marked by REC_NEXT: no plan
 * the size of every site, a fresh page per 256 sites.
 */
#define REC_NOW_MASK	0xffffffffUL
#define REC_NEXT_SHIFT	32
#define REC_NEXT	(1UL << 29)	/* no FTRACE_FL_* bit */

_Static_assert(!((FTRACE_FL_ENABLED | FTRACE_FL_REGS | FTRACE_FL_IPMODIFY | FTRACE_FL_PAD6 |
		  FTRACE_FL_DISABLED | FTRACE_FL_MCOUNT | FTRACE_REF_MAX) &
		 (REC_NEXT | ~REC_NOW_MASK)), "a record's flags fit in its lower half");

/*
 * The writes of an update, applied as one batch while they fit: every
 * batch makes its pages writable and serializes every thread three
 * times, which costs a TLB shootdown and IPIs, slow in a virtual machine
 * whose other CPUs are busy (20 batches of 1,000 sites took 3-10 ms more
 * than one of 20,000 there).  Kept: the pages an update touched are there
 * for the next one.  Beyond its first page, made present 64 KiB at a
 * time, which costs a fraction of a fault per page.
 */
#define UPDATE_VEC	32768
static struct text_poke_loc *update_vec;	/* mapped at the first update, kept */
/* entries whose pages are present, or a page of them: a small update faults its way */
static size_t update_vec_ready = 4096 / sizeof(struct text_poke_loc);

/* Where the records not yet applied start: (object, index). */
struct rec_pos {
	struct fhook_object *obj;
	size_t i;
};

/*
 * The records from @from up to @to (exclusive; obj NULL: the end) take
 * their waiting flags (@apply), or drop them; @from moves to @to.
 */
static void recs_settle(struct rec_pos *from, struct rec_pos to, bool apply)
{
	struct fhook_object *obj = from->obj;
	size_t i = from->i;

	for (; obj; obj = obj->next, i = 0) {
		size_t end = obj == to.obj ? to.i : obj->nr_recs;

		if (!__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
			end = 0;
		for (; i < end; i++) {
			struct dyn_ftrace *rec = &obj->recs[i];
			unsigned long next = rec->flags >> REC_NEXT_SHIFT;

			if (!next)
				continue;
			if (apply && (next & REC_NEXT))
				rec->flags = next & ~REC_NEXT;
			else
				rec->flags &= REC_NOW_MASK;
		}
		if (obj == to.obj)
			break;
	}
	*from = to;
}

/*
 * A site that holds a call to none of our stubs was changed by someone
 * else: it is reported and disabled.  Returns how many there are.
 */
static int foreign_sites(void)
{
	struct fhook_object *obj;
	int foreign = 0;
	size_t i;

	for (obj = fhook_objects; obj; obj = obj->next) {
		if (!__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
			continue;
		for (i = 0; i < obj->nr_recs; i++) {
			struct dyn_ftrace *rec = &obj->recs[i];
			const unsigned char *b = (const unsigned char *)rec->ip;
			unsigned long target;

			if ((rec->flags & FTRACE_FL_DISABLED) || fhook_site_is_nop(b))
				continue;
			target = fhook_site_call_target(b, rec->ip);
			if (target && fhook_stub_of_code(target))
				continue;
			fhook_ftrace_bug(-EINVAL, rec->ip, NULL, b, FHOOK_SITE_LEN);
			rec->flags |= FTRACE_FL_DISABLED;
			rec->flags &= ~(FTRACE_FL_ENABLED | FTRACE_REF_MAX);
			foreign++;
		}
	}
	return foreign;
}

/* Apply the @nr writes of update_vec. */
static int update_flush(size_t nr)
{
	int ret;

	if (!nr)
		return 0;
	fhook_text_lock();
	ret = fhook_text_poke_batch(update_vec, nr);
	fhook_text_unlock();
	return ret;
}

/*
 * What the function of site @i of @obj reads of the registers a
 * trampoline saves (fhook_arch_site_class()), asked once per site: for
 * the sites of a frameless fprobe entry, which then saves only those.
 * 0 (anything) when it cannot be kept.
 */
static bool site_classes_wanted(void)
{
	static int all = -1;

	if (all < 0)
		all = !!secure_getenv("FHOOK_SAVE_ALL_ARGS");
	return !all;
}

/* Is there a site at @addr?  Anywhere not known: maybe. */
static bool is_site(unsigned long addr)
{
	struct fhook_object *obj = fhook_object_of(addr);

	if (!obj || !__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
		return true;
	return fhook_object_rec(obj, addr) != NULL;
}

/*
 * Sites decoded per update at most (5-10 us each): past them, sites save
 * everything until a later update finds them (an ops on every one of
 * 20,000 functions would take 0.15 s more to register).
 */
#define SITE_CLASSES_PER_UPDATE	2048
static unsigned int site_classes_left;

/*
 * Are @ops' sites worth decoding?  Those of an ops on a few functions
 * (as many as an update decodes at most): one on every function, or on
 * thousands, keeps its start-up light (and libcapstone unloaded).
 */
static bool site_classes_for(const struct ftrace_ops *ops)
{
	const struct ftrace_hash *h = ops->filter_hash;

	return site_classes_wanted() && h && h->count && h->count <= SITE_CLASSES_PER_UPDATE;
}

static unsigned int site_class(struct fhook_object *obj, size_t i)
{
	if (!fhook_arch_site_class_ready() || !site_classes_wanted())
		return 0;
	if (!obj->site_cls) {
		obj->site_cls = calloc(obj->nr_recs, 1);
		if (!obj->site_cls)
			return 0;
	}
	if (!obj->site_cls[i]) {
		if (!site_classes_left)
			return 0;
		site_classes_left--;
		obj->site_cls[i] = 1 + fhook_arch_site_class(obj->recs[i].ip, is_site);
	}
	return obj->site_cls[i] - 1;
}

/*
 * What the last site was given, kept for the next one: neighbouring sites
 * mostly have the same one ops, and so the same stub.
 */
struct site_choice {
	const struct site_tally *tally;	/* what the ops with filters want; NULL: ask each */
	struct fhook_stub_region *region;
	struct ftrace_ops *ops;
	struct fhook_stub *stub;
	unsigned int cls;
	struct ftrace_ops *lean_ops;	/* whose trampoline @lean is about */
	bool lean;
};

/* Does @op want site @ip?  Then it is counted there (ftrace_lock held: hashes stay). */
static inline void site_ask(struct ftrace_ops *op, unsigned long ip, unsigned int *count,
			    struct ftrace_ops **last, unsigned long *flags)
{
	if (!hash_test(op->filter_hash, op->notrace_hash, ip))
		return;
	(*count)++;
	op->nr_sites++;
	*last = op;
	*flags |= fhook_ops_site_flags(op);
}

/*
 * Decide what site @i of @obj is to call (*@want): the stub of its one
 * ops, the list stub when several ops (or an ops without a stub) want it,
 * NULL for a nop when none does; the flags it is to have are noted in its
 * record as the next ones, and each ops counts its sites.  -ENOMEM when
 * the object has no stub region and none can be made (object_region()
 * disabled its sites).
 */
static int site_decide(struct fhook_object *obj, size_t i, struct site_choice *c,
		       struct fhook_stub **want)
{
	struct dyn_ftrace *rec = &obj->recs[i];
	struct ftrace_ops *op, *last = NULL;
	unsigned long flags = 0, next;
	unsigned int count = 0;

	*want = NULL;
	if (ftrace_enabled && c->tally) {
		/* the tally has the filtered ops; the ops on every function are asked here */
		struct ftrace_ops *const *every = c->tally->every;
		const struct site_want *w = c->tally->slots ?
					    fhook_site_tally_find(c->tally, rec->ip) : NULL;

		if (w) {
			count = w->count;
			last = w->last;
			flags = w->flags;
		}
		for (; (op = *every); every++)
			site_ask(op, rec->ip, &count, &last, &flags);
	} else if (ftrace_enabled) {
		for (op = ftrace_ops_list; op; op = op->next)
			site_ask(op, rec->ip, &count, &last, &flags);
	}
	if (count && !obj->region && object_region(obj))
		return -ENOMEM;
	if (count == 1) {
		unsigned int cls = 0;

		if (last != c->lean_ops) {
			unsigned int tf = tramp_flags(last);

			c->lean_ops = last;
			c->lean = (((tf & FHOOK_TRAMP_LEAN) && !(tf & FHOOK_TRAMP_LEAN_FREGS)) ||
				   ((tf & FHOOK_TRAMP_OPS_LEAN) && !(tf & FHOOK_TRAMP_C))) &&
				  site_classes_for(last);
		}
		if (c->lean)
			cls = site_class(obj, i);
		if (obj->region != c->region || last != c->ops || cls != c->cls) {
			c->stub = fhook_stub_get(obj->region, stub_owner(last), cls);
			if (c->stub && __atomic_load_n(&c->stub->data, __ATOMIC_RELAXED) != last)
				stub_bind(c->stub, last);
			c->region = obj->region;
			c->ops = last;
			c->cls = cls;
		}
		*want = c->stub;
	}
	if (count > 1 || (count && !*want)) {
		*want = fhook_stub_list(obj->region);
		flags |= FTRACE_FL_REGS;
	}
	next = (rec->flags & ~(FTRACE_REF_MAX | FTRACE_FL_ENABLED |
			       FTRACE_FL_REGS | FTRACE_FL_IPMODIFY)) |
	       count | flags | (count ? FTRACE_FL_ENABLED : 0);
	rec->flags = (rec->flags & REC_NOW_MASK) | (next | REC_NEXT) << REC_NEXT_SHIFT;
	return 0;
}

/*
 * Queue the write that makes @rec's site call @want (a nop when NULL) as
 * update_vec[*@nr], unless it calls that already.  True when queued.
 */
static bool site_queue(const struct dyn_ftrace *rec, const struct fhook_stub *want, size_t *nr)
{
	const unsigned char *b = (const unsigned char *)rec->ip;
	struct fhook_stub *cur = NULL;
	unsigned long target;
	size_t n = *nr;

	/* every call here is to a stub of ours (foreign_sites()) */
	if (!fhook_site_is_nop(b)) {
		target = fhook_site_call_target(b, rec->ip);
		cur = target ? fhook_stub_of_code(target) : NULL;
	}
	if (cur == want)
		return false;
	if (n == update_vec_ready)
		update_vec_ready += fhook_populate(&update_vec[n], UPDATE_VEC - n,
						   sizeof(update_vec[0]));
	memset(&update_vec[n], 0, sizeof(update_vec[n]));
	update_vec[n].addr = rec->ip;
	update_vec[n].len = FHOOK_SITE_LEN;
	update_vec[n].emu_len = (rec->flags & FTRACE_FL_PAD6) ? 6 : FHOOK_SITE_LEN;
	if (want)
		fhook_site_encode_call(update_vec[n].new, rec->ip, want->code);
	else
		memcpy(update_vec[n].new, fhook_site_nop, FHOOK_SITE_LEN);
	*nr = n + 1;
	return true;
}

/*
 * Bring every site in line with the registered ops, in batches: each site
 * is decided (site_decide()) and, if its bytes must change, queued
 * (site_queue()); a full batch is written.  If any site holds bytes we
 * did not put there, nothing is written at all: the site is reported and
 * disabled, and the operation fails with -EINVAL.  If a batch cannot be
 * written, the sites of the batches before it are in line and the others
 * as they were (their records say which); the caller puts things back
 * with another update.
 */
static int update_sites(void)
{
	struct site_choice choice = { 0 };
	struct rec_pos settled = { fhook_objects, 0 };
	struct fhook_object *obj;
	struct site_tally tally;
	struct ftrace_ops *op;
	size_t nr = 0, i;
	int ret = 0;

	fhook_assert_held(&ftrace_lock);
	/*
	 * Sites not read yet are nops that no filter names (a filter is made
	 * of sites read): only an ops on every function needs them all.
	 */
	if (ftrace_enabled)
		for (op = ftrace_ops_list; op; op = op->next)
			if (fhook_hash_empty(op->filter_hash)) {
				fhook_objects_load_all_sites();
				break;
			}
	for (op = ftrace_ops_list; op; op = op->next)
		op->nr_sites = 0;
	site_classes_left = SITE_CLASSES_PER_UPDATE;
	if (foreign_sites())
		return -EINVAL;
	if (!update_vec) {
		void *p = mmap(NULL, UPDATE_VEC * sizeof(*update_vec), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -ENOMEM;
		update_vec = p;
	}
	/* (out of memory: every ops asked at every site, as it always could be) */
	if (ftrace_enabled && !fhook_site_tally_build(&tally))
		choice.tally = &tally;

	for (obj = fhook_objects; obj; obj = obj->next) {
		if (!__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
			continue;
		for (i = 0; i < obj->nr_recs; i++) {
			struct fhook_stub *want;

			if (obj->recs[i].flags & FTRACE_FL_DISABLED)
				continue;
			/* no memory for stubs near the object: its sites are disabled */
			if (site_decide(obj, i, &choice, &want))
				break;
			if (!site_queue(&obj->recs[i], want, &nr) || nr < UPDATE_VEC)
				continue;
			ret = update_flush(nr);
			nr = 0;
			if (ret)
				goto out;
			recs_settle(&settled, (struct rec_pos){ obj, i + 1 }, true);
		}
	}
	ret = update_flush(nr);
out:
	recs_settle(&settled, (struct rec_pos){ NULL, 0 }, !ret);
	if (choice.tally)
		fhook_site_tally_free(&tally);
	return ret;
}

/* Would @ops with these hashes share a site with another IPMODIFY ops? */
static int check_ipmodify(struct ftrace_ops *ops, const struct ftrace_hash *filter,
			  const struct ftrace_hash *notrace)
{
	struct ftrace_ops *op;

	if (!(ops->flags & FTRACE_OPS_FL_IPMODIFY))
		return 0;
	if (fhook_hash_empty(filter))
		return -EINVAL;		/* redirecting every function is never meant */
	for (op = ftrace_ops_list; op; op = op->next) {
		size_t i;

		if (op == ops || !(op->flags & FTRACE_OPS_FL_IPMODIFY))
			continue;
		for (i = 0; i < filter->count; i++)
			if (hash_test(filter, notrace, filter->ips[i]) &&
			    ftrace_ops_test(op, filter->ips[i]))
				return -EBUSY;
	}
	return 0;
}

static void list_add(struct ftrace_ops *ops)
{
	__atomic_store_n(&ops->next, ftrace_ops_list, __ATOMIC_RELAXED);
	__atomic_store_n(&ftrace_ops_list, ops, __ATOMIC_RELEASE);
}

static void list_del(struct ftrace_ops *ops)
{
	struct ftrace_ops **pp;

	for (pp = &ftrace_ops_list; *pp; pp = &(*pp)->next)
		if (*pp == ops) {
			__atomic_store_n(pp, ops->next, __ATOMIC_RELEASE);
			return;
		}
}

static int sync_objects(void *arg)
{
	(void)arg;
	fhook_objects_sync();
	vec_memo.valid = false;
	return 0;
}

/* Hashes replaced by a refresh, freed after the next grace period. */
static struct ftrace_hash **retired;
static size_t nr_retired, cap_retired;

static void retire_hash(struct ftrace_hash *h)
{
	if (!h)
		return;
	if (nr_retired == cap_retired) {
		size_t cap = cap_retired ? cap_retired * 2 : 16;
		struct ftrace_hash **n = realloc(retired, cap * sizeof(*n));

		if (!n)
			return;		/* no memory: it is leaked, never freed early */
		retired = n;
		cap_retired = cap;
	}
	retired[nr_retired++] = h;
}

/* Free what a sync unlinked and what a refresh replaced; ftrace_lock held. */
static void reap_objects(bool synced)
{
	struct fhook_object *list;
	size_t i;

	fhook_assert_held(&ftrace_lock);
	list = fhook_objects_detach_reaped();
	if (!list && !nr_retired)
		return;
	if (!synced)
		fhook_synchronize();
	fhook_objects_free_list(list);
	for (i = 0; i < nr_retired; i++)
		fhook_hash_free(retired[i]);
	nr_retired = 0;
}

/*
 * Bring @op's hashes up to date with the object list (filter.c).  The
 * hashes replaced are retired: a handler may still be reading them.
 * Returns true if one changed.
 */
static bool refresh_ops(struct ftrace_ops *op)
{
	struct ftrace_hash *f, *n;
	int err;

	f = fhook_hash_refresh(op->filter_hash, &err);
	n = fhook_hash_refresh(op->notrace_hash, &err);
	if (!f && !n)
		return false;
	if (check_ipmodify(op, f ? f : op->filter_hash, n ? n : op->notrace_hash)) {
		/* a new object's function is another IPMODIFY ops': leave it out */
		fhook_hash_free(f);
		fhook_hash_free(n);
		return false;
	}
	if (f) {
		retire_hash(op->filter_hash);
		__atomic_store_n(&op->filter_hash, f, __ATOMIC_RELEASE);
	}
	if (n) {
		retire_hash(op->notrace_hash);
		__atomic_store_n(&op->notrace_hash, n, __ATOMIC_RELEASE);
	}
	return true;
}

static bool refresh_registered(void)
{
	struct ftrace_ops *op;
	bool changed = false;

	for (op = ftrace_ops_list; op; op = op->next)
		changed |= refresh_ops(op);
	return changed;
}

/*
 * Sync, and bring @arg's hashes up to date before they are edited: an
 * edit is stamped with the objects known now, so the objects loaded since
 * the old hash was made must have been matched first.
 */
static int sync_ops(void *arg)
{
	fhook_objects_sync();
	refresh_ops(arg);
	return 0;
}

/*
 * An fprobe's exit handler proven (arch/shadow.h FGRAPH_FL_LEAN_EXIT):
 * asked once, as it registers; fhook_ops_probe_check() keeps kprobes out
 * of it while it stays registered.
 */
static void fgraph_prove_exit(struct ftrace_ops *ops)
{
	struct fhook_fgraph *fg = ops->private;

	if (!(ops->flags & FHOOK_OPS_FL_FGRAPH))
		return;
	if (fg->exit && (fg->flags & FGRAPH_FL_EXIT) && !(fg->flags & FGRAPH_FL_SLOW) &&
	    handler_vec_free(fg->exit, FHOOK_FREGS_RETVAL)) {
		/*
		 * first the fregs its reads need, then the path; never taken
		 * back (a return in flight may have read the first)
		 */
		if (fhook_arch_handler_reads_fregs(fg->exit))
			__atomic_or_fetch(&fg->flags, FGRAPH_FL_LEAN_FREGS, __ATOMIC_RELEASE);
		__atomic_or_fetch(&fg->flags, FGRAPH_FL_LEAN_EXIT, __ATOMIC_RELEASE);
		/*
		 * bare (arch/shadow.h FGRAPH_TRAMP_LEAN_BARE): no entry data, and
		 * handlers that read none of their arguments but the entry's
		 * ip and parent_ip (%rsi, %rdx: in the entry anyway); the return
		 * then calls its handler with nothing loaded
		 */
		__atomic_store_n(&fg->bare,
				 !(fg->flags & (FGRAPH_FL_DATA | FGRAPH_FL_LEAN_FREGS)) && fg->entry &&
				 !fhook_arch_handler_reads_args(fg->entry, 1u << 0 | 1u << 3 | 1u << 4) &&
				 !fhook_arch_handler_reads_args(fg->exit, 0x3f),
				 __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&fg->bare, 0, __ATOMIC_RELAXED);	/* never bare unproven */
		__atomic_and_fetch(&fg->flags, ~(unsigned long)FGRAPH_FL_LEAN_EXIT,
				   __ATOMIC_RELEASE);
	}
}

static int register_locked(void *arg)
{
	struct ftrace_ops *ops = arg;
	int ret;

	fhook_objects_sync();
	refresh_registered();
	refresh_ops(ops);
	ret = check_ipmodify(ops, ops->filter_hash, ops->notrace_hash);
	if (ret)
		return ret;
	fgraph_prove_exit(ops);
	stub_owner_new(ops);
	list_add(ops);
	ret = update_sites();
	if (ret) {
		list_del(ops);
		stubs_bind(ops, false);
		update_sites();
	}
	return ret;
}

int register_ftrace_function(struct ftrace_ops *ops)
{
	fhook_internal_guard();
	int ret;

	if (!ops || !ops->func)
		return fhook_ret_errno(-EINVAL);
	/* before any trampoline can run: its set-up may take milliseconds */
	fhook_tasks_init();
	/* a leaf handler that touches no vector register needs none saved */
	if ((ops->flags & (FTRACE_OPS_FL_IPMODIFY | FHOOK_OPS_FL_FGRAPH)) == FTRACE_OPS_FL_IPMODIFY)
		fhook_arch_handler_scan_decode((void *)ops->func);
	else if (!(ops->flags & (FHOOK_OPS_FL_GENERAL_REGS_ONLY | FHOOK_OPS_FL_FGRAPH)))
		fhook_arch_handler_scan((void *)ops->func);
	/* ... and one that reads no fregs saves what each site's function reads */
	if (site_classes_for(ops) && ops_handler(ops) &&
	    fhook_arch_handler_vec_free(ops_handler(ops), (ops->flags & FHOOK_OPS_FL_FGRAPH) ?
				       FHOOK_FREGS_ARGS : FHOOK_FREGS_NOSSE) &&
	    !fhook_arch_handler_reads_fregs(ops_handler(ops)))
		fhook_arch_site_class_prepare();
	pthread_mutex_lock(&ftrace_lock);
	vec_memo.valid = false;		/* its handler was scanned again */
	if (ops->flags & FTRACE_OPS_FL_ENABLED)
		ret = -EBUSY;
	else if ((ops->flags & FTRACE_OPS_FL_PERMANENT) && !ftrace_enabled)
		ret = -EBUSY;
	else if ((ops->flags & FTRACE_OPS_FL_IPMODIFY) && fhook_hash_empty(ops->filter_hash))
		ret = -EINVAL;
	else
		ret = fhook_loader_locked(register_locked, ops);
	if (!ret) {
		__atomic_fetch_or(&ops->flags, FTRACE_OPS_FL_ENABLED | FTRACE_OPS_FL_INITIALIZED,
				  __ATOMIC_RELAXED);
		reap_objects(false);
	} else {
		/* other threads may have run the handler through the list */
		fhook_synchronize();
		reap_objects(true);
	}
	pthread_mutex_unlock(&ftrace_lock);
	return fhook_ret_errno(ret);
}

static int unregister_locked(void *arg)
{
	struct ftrace_ops *ops = arg;

	fhook_objects_sync();
	refresh_registered();
	list_del(ops);
	/* from here a thread that still reaches one of its stubs finds no ops */
	stubs_bind(ops, false);
	return update_sites();
}

int unregister_ftrace_function(struct ftrace_ops *ops)
{
	fhook_internal_guard();
	int ret;

	if (!ops)
		return fhook_ret_errno(-EINVAL);
	pthread_mutex_lock(&ftrace_lock);
	if (!(ops->flags & FTRACE_OPS_FL_ENABLED)) {
		pthread_mutex_unlock(&ftrace_lock);
		return fhook_ret_errno(-ENODEV);
	}
	ret = fhook_loader_locked(unregister_locked, ops);
	/*
	 * Even if a site could not be written back, the ops is off the list
	 * and off its stubs, so no new call reaches it: the ops is gone.
	 */
	fhook_synchronize();
	__atomic_fetch_and(&ops->flags, ~(unsigned long)FTRACE_OPS_FL_ENABLED, __ATOMIC_RELAXED);
	ops->nr_sites = 0;
	reap_objects(true);
	pthread_mutex_unlock(&ftrace_lock);
	return fhook_ret_errno(ret);
}

/* ---- filters ---- */

static int update_fn(void *arg)
{
	(void)arg;
	fhook_objects_sync();
	refresh_registered();
	return update_sites();
}

static int loader_event_fn(void *arg)
{
	bool changed = fhook_objects_sync() != 0;

	/* the objects that reach the filters: no sync can run while we hold the lock */
	*(unsigned long *)arg = __atomic_load_n(&fhook_objects_epoch, __ATOMIC_SEQ_CST);
	changed |= refresh_registered();
	/* objects synced with no ops registered only had their pads rewritten */
	return changed && ftrace_ops_list ? update_sites() : 0;
}

void fhook_ops_loader_event(void)
{
	static unsigned long refreshed_epoch;
	unsigned long e1, e2;
	bool changed;

	/*
	 * Nothing to do only if the loader has changed nothing since the last
	 * sync, no sync is under way, and the last one's objects reached the
	 * filters: the epoch read on both sides of the loader check brackets
	 * a sync that ran in between.
	 */
	e1 = __atomic_load_n(&fhook_objects_epoch, __ATOMIC_SEQ_CST);
	changed = fhook_objects_loader_changed();
	e2 = __atomic_load_n(&fhook_objects_epoch, __ATOMIC_SEQ_CST);
	if (!changed && e1 == e2 && e2 == __atomic_load_n(&refreshed_epoch, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&ftrace_lock);
	fhook_loader_locked(loader_event_fn, &e1);
	__atomic_store_n(&refreshed_epoch, e1, __ATOMIC_SEQ_CST);
	reap_objects(false);
	pthread_mutex_unlock(&ftrace_lock);
}

/*
 * Replace one of @ops' hashes with @new (consumed).  While @ops is
 * registered, no site outside both the old and the new set reaches it at
 * any moment: the list function reads one set or the other, and a stub
 * is only called from sites in the old or the new set.
 */
static int set_hash(struct ftrace_ops *ops, bool notrace, struct ftrace_hash *new)
{
	struct ftrace_hash **slot = notrace ? &ops->notrace_hash : &ops->filter_hash;
	struct ftrace_hash *old = *slot;
	int ret;

	if (!(ops->flags & FTRACE_OPS_FL_ENABLED)) {
		*slot = new;
		fhook_hash_free(old);
		return 0;
	}
	ret = check_ipmodify(ops, notrace ? ops->filter_hash : new,
			     notrace ? new : ops->notrace_hash);
	if (ret) {
		fhook_hash_free(new);
		return ret;
	}
	__atomic_store_n(slot, new, __ATOMIC_RELEASE);
	ret = fhook_loader_locked(update_fn, NULL);
	if (ret) {
		/* @new, or what a refresh for objects loaded meanwhile made of it */
		struct ftrace_hash *cur = *slot;

		__atomic_store_n(slot, old, __ATOMIC_RELEASE);
		fhook_loader_locked(update_fn, NULL);
		fhook_synchronize();
		fhook_hash_free(cur);
		reap_objects(true);
		return ret;
	}
	fhook_synchronize();
	fhook_hash_free(old);
	reap_objects(true);
	return 0;
}

/* Site of the function at @ip, as the kernel's ftrace_location(); objects synced. */
static unsigned long location_locked(unsigned long ip)
{
	struct fhook_object *obj = fhook_object_of(ip);
	const struct fhook_sym *sym;
	struct dyn_ftrace *rec;
	size_t lo;

	if (!obj)
		return 0;
	fhook_object_load_sites(obj);
	rec = fhook_object_rec(obj, ip);
	if (rec)
		return (rec->flags & FTRACE_FL_DISABLED) ? 0 : ip;
	sym = fhook_object_sym_at(obj, ip);
	if (!sym || sym->addr != ip)
		return 0;
	/* the first site inside the function: after the arch's entry instructions, if any */
	lo = fhook_lower_bound(obj->nr_recs, k, obj->recs[k].ip, ip);
	if (lo < obj->nr_recs && obj->recs[lo].ip < sym->addr + sym->size &&
	    obj->recs[lo].ip - sym->addr <= 16 && !(obj->recs[lo].flags & FTRACE_FL_DISABLED))
		return obj->recs[lo].ip;
	return 0;
}

unsigned long ftrace_location(unsigned long ip)
{
	fhook_internal_guard();
	unsigned long ret;

	pthread_mutex_lock(&ftrace_lock);
	fhook_loader_locked(sync_objects, NULL);
	ret = location_locked(ip);
	pthread_mutex_unlock(&ftrace_lock);
	return ret;
}

int ftrace_set_filter_ips(struct ftrace_ops *ops, unsigned long *ips, unsigned int cnt,
			  int remove, int reset)
{
	fhook_internal_guard();
	struct ftrace_hash *new;
	unsigned long *sites = NULL;
	unsigned int i;
	int ret = 0;

	if (!ops || (cnt && !ips))
		return fhook_ret_errno(-EINVAL);
	if (cnt) {
		sites = malloc(cnt * sizeof(*sites));
		if (!sites)
			return fhook_ret_errno(-ENOMEM);
	}
	pthread_mutex_lock(&ftrace_lock);
	fhook_loader_locked(sync_ops, ops);
	for (i = 0; i < cnt; i++) {
		sites[i] = location_locked(ips[i]);
		if (!sites[i]) {
			ret = -ENOENT;
			goto out;
		}
	}
	if (remove)
		new = fhook_hash_edit(reset ? NULL : ops->filter_hash, NULL, 0, sites, cnt);
	else
		new = fhook_hash_edit(reset ? NULL : ops->filter_hash, sites, cnt, NULL, 0);
	if (new)
		fhook_hash_stamp(new);
	ret = new ? set_hash(ops, false, new) : -ENOMEM;
out:
	pthread_mutex_unlock(&ftrace_lock);
	free(sites);
	return fhook_ret_errno(ret);
}

int ftrace_set_filter_ip(struct ftrace_ops *ops, unsigned long ip, int remove, int reset)
{
	fhook_internal_guard();
	return ftrace_set_filter_ips(ops, &ip, 1, remove, reset);
}

/*
 * The kernel's set_ftrace_filter syntax: space- or comma-separated globs;
 * "!glob" takes functions out.  A glob that matches no traceable function
 * is -EINVAL, as in the kernel.
 */
static int set_regex(struct ftrace_ops *ops, bool notrace, unsigned char *buf, int len,
		     int reset)
{
	struct fhook_ipvec add = { 0 }, del = { 0 };
	struct ftrace_hash *new, *base, *globs, *negs;
	char *text, *tok, *save;
	int ret = 0;

	if (!ops || len < 0 || (len && !buf))
		return fhook_ret_errno(-EINVAL);
	text = strndup(buf ? (const char *)buf : "", (size_t)len);
	/* only their lists of globs are used */
	globs = fhook_hash_new(NULL, 0);
	negs = fhook_hash_new(NULL, 0);
	if (!text || !globs || !negs) {
		free(text);
		fhook_hash_free(globs);
		fhook_hash_free(negs);
		return fhook_ret_errno(-ENOMEM);
	}
	pthread_mutex_lock(&ftrace_lock);
	fhook_loader_locked(sync_ops, ops);
	for (tok = strtok_r(text, " \t\n,", &save); tok; tok = strtok_r(NULL, " \t\n,", &save)) {
		bool neg = tok[0] == '!';
		int n = fhook_match_glob(tok + neg, 0, neg ? &del : &add);

		/* one call removes after it adds: keep that order for later objects */
		if (n >= 0 && fhook_hash_add_glob(neg ? negs : globs, tok))
			n = -ENOMEM;
		if (n < 0) {
			ret = n;
			goto out;
		}
		if (!n && !neg) {
			ret = -EINVAL;
			goto out;
		}
	}
	base = notrace ? ops->notrace_hash : ops->filter_hash;
	new = fhook_hash_edit(reset ? NULL : base, add.v, add.n, del.v, del.n);
	if (!new) {
		ret = -ENOMEM;
		goto out;
	}
	fhook_hash_stamp(new);
	/* the globs too, in order, for objects loaded later */
	for (tok = globs->globs; tok && tok < globs->globs + globs->globs_len && !ret;
	     tok += strlen(tok) + 1)
		ret = fhook_hash_add_glob(new, tok);
	for (tok = negs->globs; tok && tok < negs->globs + negs->globs_len && !ret;
	     tok += strlen(tok) + 1)
		ret = fhook_hash_add_glob(new, tok);
	ret = ret ? (fhook_hash_free(new), ret) : set_hash(ops, notrace, new);
out:
	fhook_hash_free(globs);
	fhook_hash_free(negs);
	pthread_mutex_unlock(&ftrace_lock);
	free(add.v);
	free(del.v);
	free(text);
	return fhook_ret_errno(ret);
}

int fhook_ops_set_globs(struct ftrace_ops *ops, const char *filter, const char *notfilter)
{
	struct fhook_ipvec add = { 0 }, del = { 0 };
	struct ftrace_hash *new = NULL;
	char *neg = NULL;
	int ret;

	if (notfilter && asprintf(&neg, "!%s", notfilter) < 0)
		return -ENOMEM;
	pthread_mutex_lock(&ftrace_lock);
	fhook_loader_locked(sync_objects, NULL);
	ret = fhook_match_glob(filter, 0, &add);
	if (ret >= 0 && notfilter)
		ret = fhook_match_glob(notfilter, 0, &del);
	if (ret < 0)
		goto out;
	ret = -ENOMEM;
	new = fhook_hash_edit(NULL, add.v, add.n, del.v, del.n);
	if (!new || fhook_hash_add_glob(new, filter) || (neg && fhook_hash_add_glob(new, neg)))
		goto out;
	fhook_hash_stamp(new);
	ret = -ENOENT;
	if (!new->count)
		goto out;
	ret = set_hash(ops, false, new);
	new = NULL;
out:
	pthread_mutex_unlock(&ftrace_lock);
	fhook_hash_free(new);
	free(add.v);
	free(del.v);
	free(neg);
	return ret;
}

int ftrace_set_filter(struct ftrace_ops *ops, unsigned char *buf, int len, int reset)
{
	fhook_internal_guard();
	return set_regex(ops, false, buf, len, reset);
}

int ftrace_set_notrace(struct ftrace_ops *ops, unsigned char *buf, int len, int reset)
{
	fhook_internal_guard();
	return set_regex(ops, true, buf, len, reset);
}

void ftrace_free_filter(struct ftrace_ops *ops)
{
	fhook_internal_guard();
	if (!ops)
		return;
	pthread_mutex_lock(&ftrace_lock);
	if (!(ops->flags & FTRACE_OPS_FL_ENABLED)) {
		fhook_hash_free(ops->filter_hash);
		fhook_hash_free(ops->notrace_hash);
		ops->filter_hash = ops->notrace_hash = NULL;
	}
	pthread_mutex_unlock(&ftrace_lock);
}

/* ---- the process-wide switch ---- */

int ftrace_set_enabled(bool enabled)
{
	fhook_internal_guard();
	struct ftrace_ops *op;
	int ret = 0;

	pthread_mutex_lock(&ftrace_lock);
	if (!enabled)
		for (op = ftrace_ops_list; op; op = op->next)
			if (op->flags & FTRACE_OPS_FL_PERMANENT)
				ret = -EBUSY;
	if (!ret && enabled != ftrace_enabled) {
		ftrace_enabled = enabled;
		ret = fhook_loader_locked(update_fn, NULL);
		fhook_synchronize();
		reap_objects(true);
	}
	pthread_mutex_unlock(&ftrace_lock);
	return fhook_ret_errno(ret);
}

bool ftrace_is_enabled(void)
{
	return ftrace_enabled;
}

int fhook_ops_saves_vectors(const struct ftrace_ops *ops)
{
	int ret;

	if (!ops || !(__atomic_load_n(&ops->flags, __ATOMIC_RELAXED) & FTRACE_OPS_FL_ENABLED))
		return fhook_ret_errno(-EINVAL);
	pthread_mutex_lock(&ftrace_lock);
	ret = !(tramp_flags(ops) & FHOOK_TRAMP_NOSSE);
	pthread_mutex_unlock(&ftrace_lock);
	return ret;
}

int fhook_ops_frameless(const struct ftrace_ops *ops)
{
	const struct fhook_fgraph *fg = ops->private;
	int ret = 0;

	if (!(__atomic_load_n(&ops->flags, __ATOMIC_RELAXED) & FTRACE_OPS_FL_ENABLED) ||
	    !(ops->flags & FHOOK_OPS_FL_FGRAPH))
		return -EINVAL;
#ifndef __SANITIZE_THREAD__	/* (whose builds take the C path) */
	pthread_mutex_lock(&ftrace_lock);
	if (tramp_flags(ops) & FHOOK_TRAMP_LEAN)
		ret |= 1;
	if (__atomic_load_n(&fg->flags, __ATOMIC_RELAXED) & FGRAPH_FL_LEAN_EXIT)
		ret |= 2;
	pthread_mutex_unlock(&ftrace_lock);
#endif
	return ret;
}

/* ---- misc ---- */

int fhook_refresh(void)
{
	fhook_internal_guard();
	int ret;

	pthread_mutex_lock(&ftrace_lock);
	ret = fhook_loader_locked(update_fn, NULL);
	reap_objects(false);
	pthread_mutex_unlock(&ftrace_lock);
	return fhook_ret_errno(ret);
}

void fhook_get_stats(struct fhook_stats *st)
{
	fhook_internal_guard();
	struct fhook_poke_stats ps;
	struct fhook_object *obj;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&ftrace_lock);
	fhook_objects_load_all_sites();
	for (obj = fhook_objects; obj; obj = obj->next) {
		size_t i;

		st->nr_objects++;
		st->nr_sites += obj->nr_recs;
		for (i = 0; i < obj->nr_recs; i++) {
			if (obj->recs[i].flags & FTRACE_FL_ENABLED)
				st->nr_enabled++;
			if (obj->recs[i].flags & FTRACE_FL_DISABLED)
				st->nr_disabled++;
		}
	}
	pthread_mutex_unlock(&ftrace_lock);
	fhook_poke_stats(&ps);
	st->batches = ps.batches;
	st->syncs = ps.syncs;
	st->writes = ps.writes;
	st->traps_emulated = ps.traps_emulated;
	st->traps_rewound = ps.traps_rewound;
	st->procmem = ps.procmem;
}
