// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Caller-selective redirect and fault injection (the kernel's
 * klp_ftrace_handler and fail_function, with parent_ip tested against caller ranges).
 *
 * One ftrace_ops with FTRACE_OPS_FL_IPMODIFY per patch, filtered on the
 * target's site.  The handler compares parent_ip with each route's caller
 * range and either leaves the ip alone (original), points it at the
 * replacement, or makes the target return at once.
 *
 * Removal must not return while a thread can still jump into a
 * replacement.  The grace period of unregister_ftrace_function() only
 * covers threads inside the handler; a thread that left the handler with
 * the ip pointing at the replacement is still in the trampoline's tail,
 * outside the read-side section, and may be preempted there for any time.
 * So the handler does not send a thread straight to the replacement: it
 * pushes {replacement, &patch->inflight} on a small per-thread stack,
 * counts the thread in @inflight, and points the ip at the arch layer's
 * fhook_redirect_thunk, which pops the entry, uncounts the thread and
 * jumps.  Removal waits for
 * the grace period and then for @inflight to drain.  The stack (not one
 * slot) keeps a signal handler that calls the target from inside the
 * tail from overwriting the interrupted thread's entry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fhook/ftrace.h>
#include <fhook/kallsyms.h>
#include <fhook/livepatch.h>

#include "util/errno.h"
#include "lp.h"
#include "util/recursion.h"
#include "util/startup.h"
#include "arch/arch.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Where this thread's messages go instead of stderr (the attach channel's reply). */
__thread FILE *fhook_lp_err_file;

void fhook_lp_err(const struct fhook_lp *lp, const char *fmt, ...)
{
	FILE *f = fhook_lp_err_file ? fhook_lp_err_file : stderr;
	va_list ap;

	if (lp && (lp->flags & FHOOK_LP_QUIET))
		return;
	fprintf(f, "fhook: %s: ", lp && lp->name ? lp->name : "livepatch");
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

/* ---- fault attribute: the kernel's should_fail() ---- */

static uint64_t lp_random(struct fhook_lp *lp)
{
	uint64_t z = __atomic_add_fetch(&lp->rnd, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool lp_should_fail(struct fhook_lp *lp)
{
	long times;

	if (!lp->attr.probability)
		return false;
	times = __atomic_load_n(&lp->times_left, __ATOMIC_RELAXED);
	if (!times)
		return false;
	if (lp->attr.interval > 1) {
		unsigned long c = __atomic_add_fetch(&lp->count, 1, __ATOMIC_RELAXED);

		if (c % lp->attr.interval)
			return false;
	}
	if (lp->attr.probability <= lp_random(lp) % 100)
		return false;
	/* use up one of @times; exact even when threads race for the last one */
	while (times != -1) {
		if (!times)
			return false;
		if (__atomic_compare_exchange_n(&lp->times_left, &times, times - 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	return true;
}

/* ---- the handler ---- */

static inline bool in_range(unsigned long addr, unsigned long start, unsigned long size)
{
	return addr - start < size;
}

int fhook_lp_route_call(struct fhook_lp *lp, unsigned long parent_ip, unsigned long *to)
{
	struct lp_route *r = NULL;
	unsigned int i;

	/* a replacement calling the target reaches the original */
	for (i = 0; i < lp->nr_routes; i++)
		if (lp->routes[i].new_func &&
		    in_range(parent_ip, lp->routes[i].new_func, lp->routes[i].new_size))
			goto other;
	for (i = 0; i < lp->nr_routes; i++)
		if (in_range(parent_ip, lp->routes[i].start, lp->routes[i].size)) {
			r = &lp->routes[i];
			break;
		}
	if (!r)
		goto other;
	__atomic_add_fetch(&r->seen, 1, __ATOMIC_RELAXED);
	if (!r->new_func) {
		if (!lp_should_fail(lp))
			return LP_CALL_RUN;
		__atomic_add_fetch(&r->hit, 1, __ATOMIC_RELAXED);
		*to = r->retval;
		return LP_CALL_RETURN;
	}
	__atomic_add_fetch(&r->hit, 1, __ATOMIC_RELAXED);
	if (fhook_redirect_tls.depth < FHOOK_REDIRECT_DEPTH) {
		struct fhook_redirect *e = &fhook_redirect_tls.e[fhook_redirect_tls.depth];

		e->target = r->new_func;
		e->inflight = &lp->inflight;
		__atomic_add_fetch(&lp->inflight, 1, __ATOMIC_SEQ_CST);
		/* the entry is complete before a signal handler can see it pushed */
		__asm__ __volatile__("" ::: "memory");
		fhook_redirect_tls.depth++;
		*to = (unsigned long)fhook_redirect_thunk;
	} else {
		/* nested eight deep in signal handlers: go straight there */
		*to = r->new_func;
	}
	return LP_CALL_REDIRECT;
other:
	__atomic_add_fetch(&lp->other_seen, 1, __ATOMIC_RELAXED);
	return LP_CALL_RUN;
}

static void lp_handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		       struct ftrace_regs *fregs)
{
	struct fhook_lp *lp = container_of(op, struct fhook_lp, ops);
	unsigned long to;

	(void)ip;
	switch (fhook_lp_route_call(lp, parent_ip, &to)) {
	case LP_CALL_RETURN:
		ftrace_override_function_with_return(fregs, to);
		break;
	case LP_CALL_REDIRECT:
		ftrace_regs_set_instruction_pointer(fregs, to);
		break;
	}
}

/*
 * How a function without a site is patched (set by lib/kprobes), or NULL.
 * Set by a constructor of every process: with the start-up code and data
 * (util/startup.h), not a text window and a zero page of its own.
 */
static const struct fhook_lp_nosite *lp_nosite __fhook_startup_data;

void __fhook_startup fhook_lp_set_nosite(const struct fhook_lp_nosite *ops)
{
	lp_nosite = ops;
}

/* ---- building a patch ---- */

struct fhook_lp *fhook_lp_new(const char *target, const struct fhook_lp_opts *opts)
{
	fhook_internal_guard();
	struct fhook_lp_opts o = { 0 };
	struct fhook_lp *lp;
	int ret;

	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (!target || !*target) {
		errno = EINVAL;
		return NULL;
	}
	lp = calloc(1, sizeof(*lp));
	if (!lp) {
		errno = ENOMEM;
		return NULL;
	}
	lp->flags = o.flags;
	lp->name = strdup(o.name ? o.name : "livepatch");
	lp->target = strdup(target);
	if (!lp->name || !lp->target) {
		ret = -ENOMEM;
		goto err;
	}
	lp->addr = kallsyms_lookup_name(target);
	if (!lp->addr) {
		fhook_lp_err(lp, "no function named '%s' in the program or its libraries", target);
		ret = -ENOENT;
		goto err;
	}
	lp->site = ftrace_location(lp->addr);
	if (!lp->site && lp_nosite) {
		/* a kprobe at its entry does the handler's work (lp_nosite->apply) */
		fhook_lp_set_fault_attr(lp, NULL);
		return lp;
	}
	if (!lp->site) {
		fhook_lp_err(lp, "'%s' is not traceable: it has no patchable site "
			     "(build its object with `fhook cflags`)", target);
		ret = -ENOENT;
		goto err;
	}
	lp->ops.func = lp_handler;
	lp->ops.flags = FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_DYNAMIC;
	ret = ftrace_set_filter_ip(&lp->ops, lp->addr, 0, 1);
	if (ret) {
		fhook_lp_err(lp, "cannot filter on '%s': %s", target, strerror(-ret));
		goto err;
	}
	fhook_lp_set_fault_attr(lp, NULL);
	return lp;
err:
	fhook_lp_free(lp);
	errno = -ret;
	return NULL;
}

static int add_route(struct fhook_lp *lp, const char *caller, void *new_func,
		     unsigned long retval)
{
	struct lp_route r = { 0 }, *n;
	unsigned int i;
	char how[256];

	if (!lp)
		return fhook_ret_errno(-EINVAL);
	if (lp->applied)
		return fhook_ret_errno(-EBUSY);
	for (i = 0; i < lp->nr_routes; i++)
		if ((!caller && !lp->routes[i].caller) ||
		    (caller && lp->routes[i].caller && !strcmp(caller, lp->routes[i].caller))) {
			fhook_lp_err(lp, "caller '%s' already has a route", caller ? caller : "(all)");
			return fhook_ret_errno(-EEXIST);
		}
	if (caller) {
		unsigned long off;

		r.start = kallsyms_lookup_name(caller);
		if (!r.start) {
			fhook_lp_err(lp, "no function named '%s' (caller of '%s')", caller,
				     lp->target);
			return fhook_ret_errno(-ENOENT);
		}
		if (!kallsyms_lookup_size_offset(r.start, &r.size, &off) || !r.size) {
			fhook_lp_err(lp, "caller '%s' has no size in the symbol table", caller);
			return fhook_ret_errno(-ENOENT);
		}
		if (!(lp->flags & FHOOK_LP_NO_TAILCALL_CHECK) &&
		    fhook_lp_check_caller(lp, caller, how, sizeof(how)) == 0)
			fhook_lp_err(lp, "warning: caller '%s' %s; calls of '%s' it makes this "
				     "way are not routed", caller, how, lp->target);
	} else {
		/* the catch-all route: every return address */
		r.start = 0;
		r.size = ~0UL;
	}
	if (new_func) {
		unsigned long off = 0;

		r.new_func = (unsigned long)new_func;
		if (!kallsyms_lookup_size_offset(r.new_func, &r.new_size, &off) || off ||
		    !r.new_size) {
			/* unknown extent: at least its first byte is no caller */
			r.new_size = 1;
			if (!caller)
				fhook_lp_err(lp, "warning: the replacement for '%s' has no symbol "
					     "size: if it calls '%s', that call is redirected "
					     "again", lp->target, lp->target);
		}
	}
	r.retval = retval;
	if (caller && !(r.caller = strdup(caller)))
		return fhook_ret_errno(-ENOMEM);
	n = realloc(lp->routes, (lp->nr_routes + 1) * sizeof(*n));
	if (!n) {
		free(r.caller);
		return fhook_ret_errno(-ENOMEM);
	}
	lp->routes = n;
	/* the catch-all route stays last, so named callers win */
	if (lp->nr_routes && !lp->routes[lp->nr_routes - 1].caller && caller) {
		lp->routes[lp->nr_routes] = lp->routes[lp->nr_routes - 1];
		lp->routes[lp->nr_routes - 1] = r;
	} else {
		lp->routes[lp->nr_routes] = r;
	}
	lp->nr_routes++;
	return 0;
}

int fhook_lp_redirect(struct fhook_lp *lp, const char *caller, void *new_func)
{
	fhook_internal_guard();
	if (!new_func)
		return fhook_ret_errno(-EINVAL);
	return add_route(lp, caller, new_func, 0);
}

int fhook_lp_fail(struct fhook_lp *lp, const char *caller, unsigned long retval)
{
	fhook_internal_guard();
	return add_route(lp, caller, NULL, retval);
}

int fhook_lp_set_fault_attr(struct fhook_lp *lp, const struct fhook_fault_attr *attr)
{
	fhook_internal_guard();
	struct fhook_fault_attr a = {
		.sz = sizeof(a), .probability = 100, .interval = 1, .times = -1,
	};

	if (!lp)
		return fhook_ret_errno(-EINVAL);
	if (lp->applied)
		return fhook_ret_errno(-EBUSY);
	if (attr) {
		memset(&a, 0, sizeof(a));
		memcpy(&a, attr, attr->sz < sizeof(a) ? attr->sz : sizeof(a));
		if (a.probability > 100 || a.times < -1) {
			fhook_lp_err(lp, "probability must be 0-100 and times -1 or more");
			return fhook_ret_errno(-EINVAL);
		}
	}
	lp->attr = a;
	lp->times_left = a.times;
	lp->count = 0;
	lp->rnd = a.seed;
	return 0;
}

/*
 * The patch as generated code (arch's direct trampolines): when the fault
 * attribute fails every call (a counter or a random draw needs the
 * handler) and the ranges fit.  The handler stays for calls that reach
 * the site through the list function (another ops on the same site).
 */
static void *lp_direct(struct fhook_lp *lp)
{
	struct fhook_direct_route skip[FHOOK_DIRECT_MAX_SKIP], routes[FHOOK_DIRECT_MAX_ROUTES];
	unsigned int i, nr_skip = 0;

	lp->direct = NULL;
	if ((lp->flags & FHOOK_LP_NO_DIRECT) || lp->nr_routes > FHOOK_DIRECT_MAX_ROUTES ||
	    lp->attr.probability != 100 || lp->attr.interval > 1 || lp->attr.times != -1)
		return NULL;
	for (i = 0; i < lp->nr_routes; i++) {
		const struct lp_route *r = &lp->routes[i];

		if (r->new_func) {
			if (nr_skip == FHOOK_DIRECT_MAX_SKIP)
				return NULL;
			skip[nr_skip].start = r->new_func;
			skip[nr_skip++].size = r->new_size;
		}
		routes[i].start = r->start;
		routes[i].size = r->size;
		routes[i].target = r->new_func;
		routes[i].retval = r->retval;
	}
	lp->direct = fhook_direct_get(lp->site + FHOOK_SITE_LEN, skip, nr_skip, routes,
				      lp->nr_routes);
	return lp->direct ? fhook_direct_code(lp->direct) : NULL;
}

/* The generated code's counts join the handler's: the next apply starts it at zero. */
static void lp_direct_fold(struct fhook_lp *lp)
{
	unsigned int i;

	for (i = 0; i < lp->nr_routes; i++) {
		unsigned long n = fhook_direct_count(lp->direct, i);

		lp->routes[i].seen += n;
		lp->routes[i].hit += n;
	}
	lp->other_seen += fhook_direct_count(lp->direct, lp->nr_routes);
}

int fhook_lp_apply(struct fhook_lp *lp)
{
	fhook_internal_guard();
	int ret;

	if (!lp)
		return fhook_ret_errno(-EINVAL);
	if (lp->applied)
		return fhook_ret_errno(-EALREADY);
	if (!lp->nr_routes) {
		fhook_lp_err(lp, "nothing to do for '%s': no caller routes", lp->target);
		return fhook_ret_errno(-EINVAL);
	}
	if (!lp->site) {
		ret = lp_nosite->apply(lp);
		if (ret)
			return fhook_ret_errno(ret);
		lp->applied = true;
		return 0;
	}
	lp->ops.direct = lp_direct(lp);
	ret = register_ftrace_function(&lp->ops);
	if (ret == -EBUSY)
		fhook_lp_err(lp, "'%s' is already redirected by another IPMODIFY user "
			     "(another patch or fault injection); nothing changed", lp->target);
	else if (ret)
		fhook_lp_err(lp, "cannot hook '%s': %s", lp->target, strerror(-ret));
	if (ret) {
		if (lp->direct)
			fhook_direct_retire(lp->direct);	/* never published */
		lp->direct = NULL;
		return fhook_ret_errno(ret);
	}
	lp->applied = true;
	return 0;
}

int fhook_lp_remove(struct fhook_lp *lp)
{
	fhook_internal_guard();
	struct timespec ts = { 0, 20000 };
	int ret, spins = 0;

	if (!lp || !lp->applied)
		return fhook_ret_errno(-ENODEV);
	/* waits until no thread is inside the handler */
	if (lp->site)
		ret = unregister_ftrace_function(&lp->ops);
	else
		ret = lp_nosite->remove(lp);
	if (lp->direct) {
		/* no site leads to it now: a thread still inside goes to the original */
		fhook_direct_retire(lp->direct);
		lp_direct_fold(lp);
		lp->direct = NULL;
	}
	/* ... and then for threads the handler sent to the thunk */
	while (__atomic_load_n(&lp->inflight, __ATOMIC_SEQ_CST)) {
		if (++spins < 100)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
	lp->applied = false;
	return fhook_ret_errno(ret == -ENODEV ? 0 : ret);
}

void fhook_lp_free(struct fhook_lp *lp)
{
	fhook_internal_guard();
	unsigned int i;

	if (!lp)
		return;
	if (lp->applied)
		fhook_lp_remove(lp);
	ftrace_free_filter(&lp->ops);
	for (i = 0; i < lp->nr_routes; i++)
		free(lp->routes[i].caller);
	free(lp->routes);
	free(lp->target);
	free(lp->name);
	free(lp);
}

/* ---- counters ---- */

int fhook_lp_stats(struct fhook_lp *lp, struct fhook_lp_stat *st, int max)
{
	fhook_internal_guard();
	unsigned int i;
	int n = 0;
	bool catch_all = false;

	if (!lp)
		return fhook_ret_errno(-EINVAL);
	for (i = 0; i < lp->nr_routes; i++, n++) {
		if (!lp->routes[i].caller)
			catch_all = true;
		if (n < max) {
			unsigned long d = lp->direct ? fhook_direct_count(lp->direct, i) : 0;

			st[n].caller = lp->routes[i].caller;
			st[n].seen = __atomic_load_n(&lp->routes[i].seen, __ATOMIC_RELAXED) + d;
			st[n].hit = __atomic_load_n(&lp->routes[i].hit, __ATOMIC_RELAXED) + d;
		}
	}
	if (!catch_all) {
		if (n < max) {
			st[n].caller = NULL;
			st[n].seen = __atomic_load_n(&lp->other_seen, __ATOMIC_RELAXED) +
				     (lp->direct ? fhook_direct_count(lp->direct, lp->nr_routes)
						 : 0);
			st[n].hit = 0;
		}
		n++;
	}
	return n;
}

void fhook_lp_print_summary(struct fhook_lp *lp, FILE *f)
{
	fhook_internal_guard();
	struct fhook_lp_stat st[64];
	unsigned long seen = 0, hit = 0;
	bool inject = lp->nr_routes && !lp->routes[0].new_func;
	int n, i;

	n = fhook_lp_stats(lp, st, 64);
	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		seen += st[i].seen;
		hit += st[i].hit;
	}
	fprintf(f, "fhook %s: %s: %lu calls seen, %lu %s\n", lp->name, lp->target, seen, hit,
		inject ? "failed" : "redirected");
	fprintf(f, "  %-32s %10s %10s\n", "caller", "seen", inject ? "failed" : "redirected");
	for (i = 0; i < n; i++)
		fprintf(f, "  %-32s %10lu %10lu\n",
			st[i].caller ? st[i].caller :
			(i == n - 1 && lp->routes[lp->nr_routes - 1].caller) ? "(other callers)"
									     : "(all callers)",
			st[i].seen, st[i].hit);
	fflush(f);
}
