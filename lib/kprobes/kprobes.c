// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kprobes (<fhook/kprobes.h>): the kernel's API on user-space code.
 *
 * Every probed address has one record, made at its first probe and never
 * freed (its ftrace_ops or its arch slot may still be in use by a thread
 * long after): the probes on it, as an array replaced whole (readers take
 * it without a lock; an old one is freed after fhook_synchronize()), and
 * how it is probed:
 *
 *   site  a function's fhook site, through an ftrace_ops of its own with
 *         FTRACE_OPS_FL_SAVE_REGS, as the kernel's kprobes use ftrace;
 *   jump  a jmp to a detour (lib/arch: the relocated instructions);
 *   trap  a breakpoint (int3, brk), for what cannot be relocated whole or has a
 *         post_handler.
 *
 * Handlers run inside a tasks section (lib/util/tasks.h) and under the
 * recursion lock: a handler that reaches a probed function again skips it
 * and counts in nmissed, as in the kernel.
 *
 * When the object of a probed address is unloaded (dlclose), its probes
 * are marked KPROBE_FLAG_GONE, as the kernel's are when a module goes:
 * their bytes are gone with the object, so nothing is written there any
 * more (another object may be mapped at the same address by then), and
 * the record leaves the table, so that a new probe there starts afresh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fhook/kallsyms.h>
#include <fhook/kprobes.h>

#include "arch/arch.h"
#include "core/core.h"
#include "kallsyms/objects.h"
#include "util/errno.h"
#include "util/lockdep.h"
#include "util/rcu.h"
#include "util/recursion.h"
#include "util/tasks.h"
#include "kprobes.h"
#include "kpglob.h"

static pthread_mutex_t kp_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct kp_addr *kp_table[1024] __fhook_cold_bss;
/*
 * The loader changed while this thread held kp_mutex (dlopen() inside a
 * registration): kp_unlock() looks at the objects before it lets go.
 */
static __thread bool kp_held;
static bool kp_recheck;
static unsigned long kp_epoch;

static void kp_objects_check(void);

/* what refused this thread's last registration, where its errno does not say */
static __thread char kp_last_why[128];

const char *fhook_kprobe_last_why(void)
{
	return kp_last_why;
}

void fhook_kprobe_why_clear(void)
{
	kp_last_why[0] = 0;
}

void fhook_kprobe_why_set(const char *why)
{
	snprintf(kp_last_why, sizeof(kp_last_why), "%s", why);
}

static void kp_lock(void)
{
	pthread_mutex_lock(&kp_mutex);
	kp_held = true;
}

static void kp_unlock(void)
{
	for (;;) {
		while (__atomic_exchange_n(&kp_recheck, false, __ATOMIC_ACQ_REL))
			kp_objects_check();
		kp_held = false;
		pthread_mutex_unlock(&kp_mutex);
		/* an event that found the mutex taken meanwhile: ours to run */
		if (!__atomic_load_n(&kp_recheck, __ATOMIC_ACQUIRE) ||
		    pthread_mutex_trylock(&kp_mutex))
			return;
		kp_held = true;
	}
}

static size_t kp_hash(unsigned long a)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ul) >> 54);
}

static struct kp_addr *kp_addr_find(unsigned long addr)
{
	struct kp_addr *a;

	for (a = kp_table[kp_hash(addr)]; a; a = a->next)
		if (a->addr == addr)
			return a;
	return NULL;
}

/* ---- what the probed code calls ---- */

/* The pre_handlers of @pp, under the recursion lock: 1 if one moved the ip. */
static inline __attribute__((always_inline)) int call_pre(struct kprobe **pp,
							  struct pt_regs *regs)
{
	for (; *pp; pp++) {
		struct kprobe *p = *pp;

		if (__atomic_load_n(&p->flags, __ATOMIC_RELAXED) & KPROBE_FLAG_DISABLED)
			continue;
		if (p->pre_handler && p->pre_handler(p, regs))
			return 1;	/* the ip moved: the rest would see a stale one */
	}
	return 0;
}

static int run_pre(struct kp_addr *a, struct pt_regs *regs)
{
	struct kprobe **pp = __atomic_load_n(&a->probes, __ATOMIC_ACQUIRE);
	int bit, ret;

	if (!pp)
		return 0;
	bit = fhook_recursion_trylock();
	if (bit < 0) {
		if (!fhook_recursion_internal())
			for (; *pp; pp++)
				__atomic_add_fetch(&(*pp)->nmissed, 1, __ATOMIC_RELAXED);
		return 0;
	}
	ret = call_pre(pp, regs);
	fhook_recursion_unlock(bit);
	return ret;
}

static void run_post(struct kp_addr *a, struct pt_regs *regs)
{
	struct kprobe **pp = __atomic_load_n(&a->probes, __ATOMIC_ACQUIRE);
	int bit;

	if (!pp)
		return;
	bit = fhook_recursion_trylock();
	if (bit < 0)
		return;
	for (; *pp; pp++)
		if (!(__atomic_load_n(&(*pp)->flags, __ATOMIC_RELAXED) & KPROBE_FLAG_DISABLED) &&
		    (*pp)->post_handler)
			(*pp)->post_handler(*pp, regs, 0);
	fhook_recursion_unlock(bit);
}

/* the vector registers of the hit this thread's pre_handlers run for */
static __thread const void *kp_vregs;

const void *kprobe_vector_regs(void)
{
	return kp_vregs;
}

/* The arch hooks: a detour's or a trap's hit, and the trap after a copy. */
/* A hit nested in something of ours, or on a thread not known yet. */
static int __attribute__((noinline)) kp_hit_slow(void *cookie, struct pt_regs *regs)
{
	int ret;

	if (!fhook_tasks_enter())
		return 0;
	ret = run_pre(cookie, regs);
	fhook_tasks_leave();
	return ret;
}

static int kp_hit(void *cookie, struct pt_regs *regs, const void *vregs)
{
	const void *outer = kp_vregs;	/* a hit inside a handler's own calls */
	struct kp_addr *a = cookie;
	struct kprobe **pp;
	int ret = 0;

	kp_vregs = vregs;
	/* the usual case: the section and the recursion lock in one store */
	if (!fhook_fast_enter()) {
		ret = kp_hit_slow(cookie, regs);
		goto out;
	}
	pp = __atomic_load_n(&a->probes, __ATOMIC_ACQUIRE);
	if (pp)
		ret = call_pre(pp, regs);
	fhook_fast_leave();
out:
	kp_vregs = outer;
	return ret;
}

static void kp_post(void *cookie, struct pt_regs *regs)
{
	if (!fhook_tasks_enter())
		return;
	run_post(cookie, regs);
	fhook_tasks_leave();
}

/*
 * The sites placed by one registration share one ftrace_ops, whose filter
 * holds them all: one round of text patching for a batch (a glob on a
 * program built with fhook's flags), not one registration each.  Its
 * table, sorted by site, is fixed once registered (readers take it
 * without a lock); an address whose last probe goes leaves the filter,
 * and the ops is unregistered with its last address.
 */
struct kp_site_ops {
	struct ftrace_ops ops;
	size_t nr;
	size_t live;			/* addresses still in the filter */
	unsigned long *sites;		/* sorted */
	struct kp_addr **addrs;		/* each site's record */
};

/* The first entry of @so for site @ip (a function's entry and its site after the arch's entry instructions share one) */
static size_t site_ops_find(const struct kp_site_ops *so, unsigned long ip)
{
	size_t lo = 0, hi = so->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (so->sites[mid] < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A site's ftrace_ops: the trampoline holds the tasks section already. */
static void kp_ftrace_func(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			   struct ftrace_regs *fregs)
{
	struct kp_site_ops *so = (struct kp_site_ops *)((char *)op -
							 offsetof(struct kp_site_ops, ops));
	struct pt_regs *regs = ftrace_get_regs(fregs);
	const void *outer;	/* a hit inside a handler's own calls */
	unsigned long resume;
	size_t i;

	if (!regs)
		return;
	outer = kp_vregs;
	kp_vregs = fregs->fhook_vregs;
	resume = instruction_pointer(regs);
	for (i = site_ops_find(so, ip); i < so->nr && so->sites[i] == ip; i++) {
		struct kp_addr *a = so->addrs[i];

		instruction_pointer_set(regs, a->addr + FHOOK_KPROBE_HIT_IP_OFF);
		if (run_pre(a, regs))
			break;
		/* as the kernel's kprobe_ftrace_handler: post runs at once */
		instruction_pointer_set(regs, a->addr + FHOOK_SITE_LEN);
		run_post(a, regs);
		instruction_pointer_set(regs, resume);
	}
	kp_vregs = outer;
}

/* ---- objects unloaded ---- */

/* The load generation of the object holding @addr; 0: none. */
static unsigned long kp_obj_gen(unsigned long addr)
{
	int rcu = fhook_rcu_read_lock();
	struct fhook_object *obj = fhook_object_of(addr);
	unsigned long gen = obj ? obj->gen : 0;

	fhook_rcu_read_unlock(rcu);
	return gen;
}

/* Take @a out of the table (it stays allocated: probes still name it). */
static void kp_addr_unlink(struct kp_addr *a)
{
	struct kp_addr **pp;

	for (pp = &kp_table[kp_hash(a->addr)]; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			return;
		}
}

/*
 * Mark the probes whose object is gone.  Call with kp_mutex held, after
 * the objects were brought in line with the loader.
 */
static void kp_objects_check(void)
{
	unsigned long epoch = __atomic_load_n(&fhook_objects_epoch, __ATOMIC_ACQUIRE);
	struct fhook_kprobe_slot **slots = NULL;
	size_t i, n = 0, cap = 0;

	fhook_assert_held(&kp_mutex);
	if (epoch == kp_epoch)
		return;
	kp_epoch = epoch;
	for (i = 0; i < sizeof(kp_table) / sizeof(kp_table[0]); i++) {
		struct kp_addr *a, *next;

		for (a = kp_table[i]; a; a = next) {
			struct kprobe **pp;

			next = a->next;
			if (!a->placed || a->gone || kp_obj_gen(a->addr) == a->obj_gen)
				continue;
			a->gone = true;
			for (pp = a->probes; pp && *pp; pp++)
				__atomic_or_fetch(&(*pp)->flags, KPROBE_FLAG_GONE,
						  __ATOMIC_RELAXED);
			if (a->method != KPROBE_METHOD_SITE) {
				/* nothing to write: its bytes went with the object */
				a->placed = false;
				if (n == cap) {
					struct fhook_kprobe_slot **t;

					cap = cap ? 2 * cap : 64;
					t = realloc(slots, cap * sizeof(*t));
					if (!t) {
						/* disarming finds the bytes changed */
						a->placed = true;
						continue;
					}
					slots = t;
				}
				slots[n++] = a->slot;
			}
			kp_addr_unlink(a);
		}
	}
	if (n) {
		fhook_text_lock();
		fhook_kprobe_forget(slots, n);
		fhook_text_unlock();
	}
	free(slots);
}

/*
 * After dlopen()/dlclose() (lib/core's loader notification).  Never
 * waits for kp_mutex: its holder may be waiting for a grace period that
 * this thread, inside a handler, holds up; the holder looks instead.
 */
static void kp_loader_event(void)
{
	__atomic_store_n(&kp_recheck, true, __ATOMIC_RELEASE);
	if (kp_held || pthread_mutex_trylock(&kp_mutex))
		return;
	kp_held = true;
	kp_unlock();
}

static void kp_init_once(void)
{
	static const struct fhook_kprobe_hooks hooks = { .hit = kp_hit, .post = kp_post };

	fhook_arch_kprobe_init(&hooks);
	kp_epoch = __atomic_load_n(&fhook_objects_epoch, __ATOMIC_ACQUIRE);
	fhook_loader_notify(kp_loader_event);
}

/* ---- the probes of an address ---- */

static size_t probes_count(struct kprobe **pp)
{
	size_t n = 0;

	while (pp && pp[n])
		n++;
	return n;
}

/* A copy of the array of @a with @add, or without @del; NULL: no memory. */
static struct kprobe **probes_with(struct kp_addr *a, struct kprobe *add, struct kprobe *del,
				   bool *empty)
{
	size_t n = probes_count(a->probes), i, k = 0;
	struct kprobe **pp = calloc(n + 2, sizeof(*pp));

	if (!pp)
		return NULL;
	for (i = 0; i < n; i++)
		if (a->probes[i] != del)
			pp[k++] = a->probes[i];
	if (add)
		pp[k++] = add;
	*empty = !k;
	return pp;
}

/*
 * Is the function at @addr entered through a site at @site: the address
 * itself, or right after the instructions the arch allows before one?
 */
static bool site_at_entry(unsigned long addr, unsigned long site)
{
	unsigned char b[FHOOK_SITE_ENTRY_MAX];

	if (site == addr)
		return true;
	return site > addr && site - addr <= FHOOK_SITE_ENTRY_MAX &&
	       !fhook_kprobe_read_orig(addr, b, sizeof(b)) && site == addr + fhook_site_entry_off(b);
}

/*
 * How many bytes from @end on lie in no symbol, up to the next 16-byte
 * boundary (where the next function would start: a stripped object's
 * static functions have no symbol).
 */
static unsigned int pad_after(unsigned long end)
{
	unsigned long size, off;
	unsigned int n, max = (16 - end % 16) % 16;

	for (n = 0; n < max; n++)
		if (kallsyms_lookup_size_offset(end + n, &size, &off))
			break;
	return n;
}

/*
 * FHOOK_KPROBE_NOJUMP=1 makes every probe that is no site a trap, as the
 * kernel's debug.kprobes-optimization=0 does (for comparisons).
 */
static bool jumps_allowed(void)
{
	const char *e = secure_getenv("FHOOK_KPROBE_NOJUMP");

	return !e || strcmp(e, "1");
}

static void kp_set_flags(struct kprobe *p);

/* The probe whose jump covered a new one's address is a trap now, in @slot. */
static void kp_retrapped(struct fhook_kprobe_slot *slot)
{
	struct kp_addr *x = slot->cookie;
	struct kprobe **pp;

	x->slot = slot;
	x->method = KPROBE_METHOD_TRAP;
	snprintf(x->why, sizeof(x->why), "%s", slot->why);
	for (pp = x->probes; pp && *pp; pp++)
		kp_set_flags(*pp);
}

/* ---- bytes that are not what fhook expects ---- */

/* Where the file of the object holding an address has its bytes. */
struct kp_file_at {
	unsigned long addr;
	const char *name;	/* "" for the executable */
	unsigned long off;	/* in the file */
	unsigned long avail;	/* bytes of its segment in the file from there */
	bool found;
};

static int file_at_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kp_file_at *f = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		unsigned long lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || f->addr < lo || f->addr >= lo + ph->p_filesz)
			continue;
		f->name = info->dlpi_name ? info->dlpi_name : "";
		f->off = ph->p_offset + (f->addr - lo);
		f->avail = lo + ph->p_filesz - f->addr;
		f->found = true;
		return 1;
	}
	return 0;
}

/* The file last read (a glob reads one object's, thousands of times). */
static char kp_file_path[PATH_MAX] __fhook_cold_bss;
static int kp_file_fd = -1;

static void kp_file_close(void)
{
	if (kp_file_fd >= 0)
		close(kp_file_fd);
	kp_file_fd = -1;
	kp_file_path[0] = 0;
}

/* Is @a inside an fhook site (whose pad start-up rewrote)? */
static bool in_site(unsigned long a)
{
	unsigned long k;

	for (k = 0; k < FHOOK_SITE_LEN && k <= a; k++)
		if (ftrace_location(a - k) == a - k)
			return true;
	return false;
}

/*
 * The bytes a probe at @addr would move (@len of them, at most 64) must be
 * the object's file's: another tool's breakpoint (a uprobe's, a debugger's
 * breakpoint) or patch (a jump) there would be copied into the slot, or
 * overwritten, and break both.  fhook's own probes are seen through
 * (fhook_kprobe_read_orig()), and so are its sites.  0, or -EBUSY with
 * the cause in kp_last_why.  Code with no file (the vDSO, a JIT's) is
 * not checked.
 */
static int kp_foreign_check(unsigned long addr, unsigned long len)
{
	struct kp_file_at f = { .addr = addr };
	unsigned char mem[64], file[64];
	const char *path;
	unsigned long i;

	if (len > sizeof(mem))
		len = sizeof(mem);
	dl_iterate_phdr(file_at_cb, &f);
	if (!f.found || !strncmp(f.name, "linux-vdso", 10) || !strncmp(f.name, "linux-gate", 10))
		return 0;
	if (len > f.avail)
		len = f.avail;
	path = f.name[0] ? f.name : "/proc/self/exe";
	if (kp_file_fd < 0 || strcmp(path, kp_file_path)) {
		kp_file_close();
		kp_file_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (kp_file_fd < 0)
			return 0;
		snprintf(kp_file_path, sizeof(kp_file_path), "%s", path);
	}
	if (!len || pread(kp_file_fd, file, len, (off_t)f.off) != (ssize_t)len ||
	    fhook_kprobe_read_orig(addr, mem, len))
		return 0;	/* cannot tell */
	for (i = 0; i < len; i++)
		if (mem[i] != file[i] && !in_site(addr + i))
			break;
	if (i == len)
		return 0;
	switch (fhook_kprobe_foreign_kind(mem, len, i)) {
	case FHOOK_FOREIGN_TRAP:
		snprintf(kp_last_why, sizeof(kp_last_why), "%s that is not fhook's at +%lu "
			 "(a uprobe's or a debugger's breakpoint): refused", FHOOK_ARCH_TRAP_NAME, i);
		break;
	case FHOOK_FOREIGN_JUMP:
		snprintf(kp_last_why, sizeof(kp_last_why), "a jump or call that is not fhook's at "
			 "+%lu, not the file's code (another tool's patch): refused", i);
		break;
	default:
		snprintf(kp_last_why, sizeof(kp_last_why), "code at +%lu that is not the file's "
			 "(0x%02x, the file has 0x%02x: patched by another tool): refused", i,
			 mem[i], file[i]);
	}
	return -EBUSY;
}

/* The record of @addr, made (not placed) if new.  Call with kp_mutex held. */
static int kp_addr_get(unsigned long addr, bool post, struct kp_addr **ap)
{
	struct kp_addr *a = kp_addr_find(addr);
	struct fhook_kprobe_slot *retrapped;
	unsigned long size = 0, off = 0, site;
	int ret;

	fhook_assert_held(&kp_mutex);
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->addr = addr;
		a->next = kp_table[kp_hash(addr)];
		kp_table[kp_hash(addr)] = a;
	}
	*ap = a;
	if (a->probes)
		return post && a->method == KPROBE_METHOD_JUMP ? -EBUSY : 0;
	/* the first probe here: choose how */
	site = ftrace_location(addr);
	if (site && site_at_entry(addr, site)) {
		a->method = KPROBE_METHOD_SITE;
		a->why[0] = 0;
		return 0;
	}
	if (!kallsyms_lookup_size_offset(addr, &size, &off))
		size = off = 0;
	ret = kp_foreign_check(addr, size ? size - off : 16);
	if (ret)
		return ret;
	fhook_text_lock();
	ret = fhook_kprobe_slot_get(addr, addr - off, size, size ? pad_after(addr - off + size) : 0,
				    jumps_allowed(), post, a, &a->slot, &retrapped, a->why,
				    sizeof(a->why));
	fhook_text_unlock();
	if (retrapped)
		kp_retrapped(retrapped);
	if (ret)
		return ret;
	a->method = a->slot->can == FHOOK_KPROBE_JUMP ? KPROBE_METHOD_JUMP : KPROBE_METHOD_TRAP;
	return 0;
}

/* The address @p asks for, or a negative errno. */
static long kp_resolve(struct kprobe *p)
{
	unsigned long base;

	if (p->symbol_name) {
		base = kallsyms_lookup_name(p->symbol_name);
		if (!base)
			return -ENOENT;
		/* both: only as a registration left them (a probe registered again) */
		if (p->addr && (unsigned long)p->addr != base + p->offset)
			return -EINVAL;
	} else {
		base = (unsigned long)p->addr;
		if (!base)
			return -EINVAL;
	}
	return (long)(base + p->offset);
}

/* ---- placing a batch ---- */

struct kp_batch {
	struct kp_addr **new;		/* records that got their first probe */
	size_t nr;
};

static void site_ops_free(struct kp_site_ops *so)
{
	free(so->sites);
	free(so->addrs);
	free(so);
}

struct site_pair {
	unsigned long site;
	struct kp_addr *a;
};

static int site_pair_cmp(const void *x, const void *y)
{
	const struct site_pair *p = x, *q = y;

	return p->site < q->site ? -1 : p->site > q->site;
}

/* The site records of @b (@n of them) in one ops, registered: 0 or an errno. */
static int kp_place_sites(struct kp_batch *b, size_t n)
{
	struct kp_site_ops *so = calloc(1, sizeof(*so));
	struct site_pair *pairs = calloc(n ? n : 1, sizeof(*pairs));
	size_t i, k = 0;
	int ret = -ENOMEM;

	if (!so || !pairs)
		goto fail;
	so->sites = calloc(n, sizeof(*so->sites));
	so->addrs = calloc(n, sizeof(*so->addrs));
	if (!so->sites || !so->addrs)
		goto fail;
	for (i = 0; i < b->nr; i++)
		if (b->new[i]->method == KPROBE_METHOD_SITE) {
			b->new[i]->site = ftrace_location(b->new[i]->addr);
			pairs[k].site = b->new[i]->site;
			pairs[k++].a = b->new[i];
		}
	qsort(pairs, k, sizeof(*pairs), site_pair_cmp);
	for (i = 0; i < k; i++) {
		so->sites[i] = pairs[i].site;
		so->addrs[i] = pairs[i].a;
	}
	so->nr = so->live = k;
	so->ops.func = kp_ftrace_func;
	so->ops.flags = FTRACE_OPS_FL_SAVE_REGS;
	ret = ftrace_set_filter_ips(&so->ops, so->sites, (unsigned int)k, 0, 1);
	if (!ret)
		ret = register_ftrace_function(&so->ops);
	if (ret) {
		ftrace_free_filter(&so->ops);
		goto fail;
	}
	for (i = 0; i < k; i++) {
		so->addrs[i]->sops = so;
		so->addrs[i]->obj_gen = kp_obj_gen(so->addrs[i]->addr);
		so->addrs[i]->placed = true;
	}
	free(pairs);
	return 0;
fail:
	free(pairs);
	if (so)
		site_ops_free(so);
	return ret;
}

/* Place the new records of @b: one arch batch for the slots, one ops for the sites. */
static int kp_place(struct kp_batch *b)
{
	struct fhook_kprobe_slot **slots = calloc(b->nr + 1, sizeof(*slots));
	size_t i, n = 0, nsites = 0;
	int ret = 0;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < b->nr; i++) {
		if (b->new[i]->method == KPROBE_METHOD_SITE)
			nsites++;
		else
			slots[n++] = b->new[i]->slot;
	}
	if (nsites)
		ret = kp_place_sites(b, nsites);
	/* not inside a handler that runs without the vector registers saved */
	for (i = 0; i < b->nr && !ret; i++)
		ret = fhook_ops_probe_check(b->new[i]->addr);
	if (!ret && n) {
		fhook_text_lock();
		ret = fhook_kprobe_arm(slots, n);
		fhook_text_unlock();
		for (i = 0; i < b->nr && !ret; i++) {
			struct kp_addr *a = b->new[i];

			if (a->method == KPROBE_METHOD_SITE)
				continue;
			a->obj_gen = kp_obj_gen(a->addr);
			a->placed = true;
			/* a jump kept a trap (a thread was inside its bytes) */
			a->method = a->slot->armed == FHOOK_KPROBE_JUMP ? KPROBE_METHOD_JUMP :
				    KPROBE_METHOD_TRAP;
			snprintf(a->why, sizeof(a->why), "%s", a->slot->why);
		}
	}
	free(slots);
	return ret;
}

/*
 * The sites among @as leave their ops: an ops left with none is
 * unregistered (an empty filter would mean every function), the others
 * drop them from their filters, one call per ops.
 */
static void kp_unplace_sites(struct kp_addr **as, size_t nr)
{
	unsigned long *ips = calloc(nr + 1, sizeof(*ips));
	size_t i, j, n;

	for (i = 0; i < nr; i++) {
		struct kp_site_ops *so = as[i]->sops;

		if (!as[i]->placed || as[i]->method != KPROBE_METHOD_SITE || !so)
			continue;
		/* every record of this ops among the rest of @as */
		for (j = i, n = 0; j < nr; j++) {
			struct kp_addr *a = as[j];

			if (!a->placed || a->method != KPROBE_METHOD_SITE || a->sops != so)
				continue;
			if (ips)
				ips[n] = a->site;
			n++;
			a->placed = false;
			a->sops = NULL;
		}
		if (n >= so->live || !ips) {
			unregister_ftrace_function(&so->ops);
			ftrace_free_filter(&so->ops);
			for (j = 0; j < so->nr; j++)
				if (so->addrs[j]->sops == so)
					so->addrs[j]->sops = NULL;
			/* unregistering waited for the handlers: none reads it now */
			site_ops_free(so);
			continue;
		}
		/* (a site whose object is gone is no longer in it: refused, as it should) */
		ftrace_set_filter_ips(&so->ops, ips, (unsigned int)n, 1, 0);
		so->live -= n;
	}
	free(ips);
}

/* Remove @nr records' probes from the code (their last probe went). */
static void kp_unplace(struct kp_addr **as, size_t nr)
{
	struct fhook_kprobe_slot **slots = calloc(nr + 1, sizeof(*slots));
	size_t i, n = 0;

	kp_unplace_sites(as, nr);
	for (i = 0; i < nr; i++) {
		struct kp_addr *a = as[i];

		if (!a->placed || a->method == KPROBE_METHOD_SITE)
			continue;
		if (slots)
			slots[n++] = a->slot;
		a->placed = false;
	}
	if (n) {
		fhook_text_lock();
		fhook_kprobe_disarm(slots, n);
		fhook_text_unlock();
	}
	free(slots);
}

/*
 * Take @p off its record; the record leaves the code when it was the
 * last.  The old array goes on @old for the caller to free after a grace
 * period.  Call with kp_mutex held.
 */
static int kp_detach(struct kprobe *p, struct kprobe ***oldp, struct kp_addr **emptied)
{
	struct kp_addr *a = p->fhook_site;
	struct kprobe **pp;
	bool empty;

	fhook_assert_held(&kp_mutex);
	pp = probes_with(a, NULL, p, &empty);
	if (!pp)
		return -ENOMEM;
	*oldp = a->probes;
	if (empty) {
		free(pp);
		pp = NULL;
		*emptied = a;
	}
	__atomic_store_n(&a->probes, pp, __ATOMIC_RELEASE);
	p->fhook_site = NULL;
	__atomic_and_fetch(&p->flags, ~(KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_FTRACE),
			   __ATOMIC_RELAXED);
	return 0;
}

/* The flags saying the method (the handlers read the others meanwhile). */
static void kp_set_flags(struct kprobe *p)
{
	struct kp_addr *a = p->fhook_site;
	unsigned int set = a->method == KPROBE_METHOD_JUMP ? KPROBE_FLAG_OPTIMIZED :
			   a->method == KPROBE_METHOD_SITE ? KPROBE_FLAG_FTRACE : 0;

	__atomic_and_fetch(&p->flags, ~(KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_FTRACE),
			   __ATOMIC_RELAXED);
	__atomic_or_fetch(&p->flags, set, __ATOMIC_RELAXED);
}

/* unregister_kprobes() under kp_mutex: detach, unplace, wait, free. */
static void kp_unregister_locked(struct kprobe **kps, int num)
{
	struct kprobe ***old = calloc((size_t)num + 1, sizeof(*old));
	struct kp_addr **emptied = calloc((size_t)num + 1, sizeof(*emptied));
	size_t ne = 0;
	int i;

	fhook_assert_held(&kp_mutex);
	if (!old || !emptied) {
		/* without room for the lists: one at a time, each waited for */
		for (i = 0; i < num; i++)
			if (kps[i]->fhook_site)
				kp_unregister_locked(&kps[i], 1);
		free(old);
		free(emptied);
		return;
	}
	for (i = 0; i < num; i++) {
		struct kp_addr *e = NULL;

		if (!kps[i] || !kps[i]->fhook_site)
			continue;
		if (kp_detach(kps[i], &old[i], &e))
			continue;
		if (e)
			emptied[ne++] = e;
	}
	kp_unplace(emptied, ne);
	fhook_synchronize();
	for (i = 0; i < num; i++)
		free(old[i]);
	free(old);
	free(emptied);
}

struct kp_order {
	struct kprobe *p;
	unsigned long addr;
};

/* highest address first: see register_kprobes() */
static int order_cmp(const void *a, const void *b)
{
	const struct kp_order *x = a, *y = b;

	return x->addr < y->addr ? 1 : x->addr > y->addr ? -1 : 0;
}

/*
 * Resolve every probe of @kps into @ord, sorted by address, highest first:
 * a probe inside the bytes another's jump would cover then has its slot
 * first, and that other gets a trap instead of a jump that would skip it.
 */
static int kp_order(struct kprobe **kps, int num, struct kp_order *ord)
{
	int i;

	for (i = 0; i < num; i++) {
		long addr;

		if (!kps[i] || kps[i]->fhook_site)
			return kps[i] ? -EEXIST : -EINVAL;
		addr = kp_resolve(kps[i]);
		if (addr < 0)
			return (int)addr;
		ord[i].p = kps[i];
		ord[i].addr = (unsigned long)addr;
	}
	qsort(ord, (size_t)num, sizeof(*ord), order_cmp);
	return 0;
}

int register_kprobes(struct kprobe **kps, int num)
{
	fhook_internal_guard();
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct kp_batch b = { 0 };
	struct kprobe ***old = NULL, **done_kps = NULL;
	struct kp_order *ord = NULL;
	int i, done = 0, ret = 0;

	kp_last_why[0] = 0;
	if (num <= 0 || !kps)
		return fhook_ret_errno(-EINVAL);
	pthread_once(&once, kp_init_once);
	/* capstone's dlopen() takes the loader's locks: not under text_mutex */
	fhook_kprobe_arch_ready();
	b.new = calloc((size_t)num, sizeof(*b.new));
	old = calloc((size_t)num, sizeof(*old));
	ord = calloc((size_t)num, sizeof(*ord));
	done_kps = calloc((size_t)num, sizeof(*done_kps));
	if (!b.new || !old || !ord || !done_kps) {
		ret = -ENOMEM;
		goto out_free;
	}
	kp_lock();
	/* a record whose object went unseen (no dlclose() of ours) is not reused */
	fhook_objects_refresh();
	kp_objects_check();
	ret = kp_order(kps, num, ord);
	for (i = 0; i < num && !ret; i++) {
		struct kprobe *p = ord[i].p;
		struct kp_addr *a;
		struct kprobe **pp;
		bool empty, first;

		ret = kp_addr_get(ord[i].addr, p->post_handler, &a);
		if (ret)
			break;
		first = !a->probes;
		pp = probes_with(a, p, NULL, &empty);
		if (!pp) {
			ret = -ENOMEM;
			break;
		}
		p->addr = (kprobe_opcode_t *)ord[i].addr;
		p->opcode = a->slot ? a->slot->orig[0] : *(kprobe_opcode_t *)ord[i].addr;
		p->nmissed = 0;
		/* as the kernel: of the flags only the user's DISABLED stays */
		__atomic_and_fetch(&p->flags, KPROBE_FLAG_DISABLED, __ATOMIC_RELAXED);
		p->fhook_site = a;
		old[i] = a->probes;
		__atomic_store_n(&a->probes, pp, __ATOMIC_RELEASE);
		if (first)
			b.new[b.nr++] = a;
		done_kps[done++] = p;
	}
	if (!ret)
		ret = kp_place(&b);
	if (ret) {
		/* every probe of this call off again, as if never registered */
		kp_unregister_locked(done_kps, done);
		for (i = 0; i < done; i++)
			free(old[i]);
	} else {
		for (i = 0; i < num; i++)
			kp_set_flags(kps[i]);
		/* arrays replaced: readers may still hold them */
		if (b.nr < (size_t)num)
			fhook_synchronize();
		for (i = 0; i < num; i++)
			free(old[i]);
	}
	kp_file_close();
	kp_unlock();
out_free:
	free(b.new);
	free(old);
	free(ord);
	free(done_kps);
	return fhook_ret_errno(ret);
}

int register_kprobe(struct kprobe *p)
{
	return register_kprobes(&p, 1);
}

void unregister_kprobes(struct kprobe **kps, int num)
{
	fhook_internal_guard();

	if (num <= 0 || !kps)
		return;
	kp_lock();
	/* nothing is written where an object went, even unseen */
	fhook_objects_refresh();
	kp_objects_check();
	kp_unregister_locked(kps, num);
	kp_unlock();
}

void unregister_kprobe(struct kprobe *p)
{
	unregister_kprobes(&p, 1);
}

int disable_kprobe(struct kprobe *p)
{
	if (!p || !p->fhook_site)
		return fhook_ret_errno(-EINVAL);
	__atomic_or_fetch(&p->flags, KPROBE_FLAG_DISABLED, __ATOMIC_RELEASE);
	return 0;
}

int enable_kprobe(struct kprobe *p)
{
	/* as the kernel: a probe whose code is gone cannot be enabled */
	if (!p || !p->fhook_site || (__atomic_load_n(&p->flags, __ATOMIC_RELAXED) &
				     KPROBE_FLAG_GONE))
		return fhook_ret_errno(-EINVAL);
	__atomic_and_fetch(&p->flags, ~KPROBE_FLAG_DISABLED, __ATOMIC_RELEASE);
	return 0;
}

enum kprobe_method kprobe_method(const struct kprobe *p, char *why, size_t size)
{
	const struct kp_addr *a = p ? p->fhook_site : NULL;

	if (why && size)
		snprintf(why, size, "%s", a && a->method != KPROBE_METHOD_SITE ? a->why : "");
	return a ? (enum kprobe_method)a->method : KPROBE_METHOD_NONE;
}

const char *kprobe_method_name(enum kprobe_method m)
{
	switch (m) {
	case KPROBE_METHOD_SITE: return "site";
	case KPROBE_METHOD_JUMP: return "jump";
	case KPROBE_METHOD_TRAP: return "trap";
	default: return "none";
	}
}
