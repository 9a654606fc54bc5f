// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The recorder's kprobe events ('p', 'r'): the same records as an fprobe
 * event's, from a struct pt_regs.  Each event has its kprobe (kretprobe),
 * or one per function of a glob, registered when its code is loaded (at
 * start-up, after a dlopen()) and placed anew when its object comes back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fhook/kallsyms.h>

#include "record.h"
#include "kprobes/kpglob.h"

/*
 * What run_fetch() reads: every register of a kprobe's @regs, and the
 * vector ones of @vregs (a double's $argN), or zeros.
 */
static void kp_fregs(struct ftrace_regs *fr, const struct pt_regs *regs, const void *vregs)
{
	fr->regs = *regs;
	fr->fhook_full = 1;
	if (vregs)
		memcpy(fr->fhook_vregs, vregs, sizeof(fr->fhook_vregs));
	else
		memset(fr->fhook_vregs, 0, sizeof(fr->fhook_vregs));
}

static inline bool rec_in_fork(void)
{
	return __builtin_expect(__atomic_load_n(&fhook_rec_forking, __ATOMIC_RELAXED) ==
				&fhook_rec_thr, 0);
}

static int rec_kp_pre_in(struct kprobe *p, struct pt_regs *regs)
{
	struct rec_kprobe *k = (struct rec_kprobe *)((char *)p - offsetof(struct rec_kprobe, rp.kp));
	struct ev_desc_event *e = k->e;
	uint64_t w1 = ev_w1((unsigned long)p->addr, 0);
	struct ftrace_regs fr;

	if (rec_in_fork())
		return 0;
	/* a caller is known at a function's first instruction only */
	if (__builtin_expect(fhook_rec_nr_callers != 0, 0) && !e->offset &&
	    !fhook_rec_caller_ok(*regs_return_address_ptr(regs)))
		return 0;
	if (!e->nr_args) {
		record_plain(e->id, w1);
		return 0;
	}
	kp_fregs(&fr, regs, kprobe_vector_regs());
	fhook_rec_record(e, 0, w1, &fr, NULL);
	return 0;
}

/* A return event's entry: the caller test, and the $argN it prints saved. */
static int rec_kp_ret_entry_in(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct rec_kprobe *k = (struct rec_kprobe *)ri->rp;
	unsigned long *saved = (unsigned long *)ri->data;
	struct ftrace_regs fr;
	int i;

	if (rec_in_fork())
		return 1;
	/*
	 * A forked child's first record takes its ring, and with it the frames
	 * it inherited: before this one is hooked, which is not inherited (its
	 * entry event, which may run after this handler, is the child's own).
	 */
	if (__builtin_expect(fhook_rec_fork_ts != 0, 0))
		(void)rec_thread();
	if (__builtin_expect(fhook_rec_nr_callers != 0, 0) && !fhook_rec_caller_ok(ri->ret_addr))
		return 1;
	if (k->e->nr_entry) {
		kp_fregs(&fr, regs, kprobe_vector_regs());
		for (i = 0; i < k->e->nr_entry; i++)
			saved[i] = fhook_rec_fetch_arg(&fr, k->e->entry_args[i]);
	}
	return 0;
}

/*
 * The exit carries the function's address: the reader pairs it with the
 * open entry of that function.  @regs NULL: the call was unwound
 * (KRETPROBE_FL_EXIT_ON_UNWIND), its values are faults.
 */
static int rec_kp_ret_in(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct rec_kprobe *k = (struct rec_kprobe *)ri->rp;
	uint64_t w1 = ev_w1(ri->ret_addr, 0);
	struct ftrace_regs fr;

	if (rec_in_fork())
		return 0;
	/* a kretprobe's handler is given the return trampoline's ftrace_regs->regs */
	if (regs)
		kp_fregs(&fr, regs, ((struct ftrace_regs *)((char *)regs -
						     offsetof(struct ftrace_regs, regs)))->fhook_vregs);
	else
		w1 |= EV_W1_UNWOUND;
	fhook_rec_record(k->e, (unsigned long)k->rp.kp.addr, w1, regs ? &fr : NULL,
			 (unsigned long *)ri->data);
	return 0;
}

/* The handlers as registered: each works for its kprobe's recording. */
static int rec_kp_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct rec_kprobe *k = (struct rec_kprobe *)((char *)p - offsetof(struct rec_kprobe, rp.kp));
	long old = rec_enter(k->inst);
	int ret = rec_kp_pre_in(p, regs);

	rec_leave(old);
	return ret;
}

static int rec_kp_ret_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	long old = rec_enter(((struct rec_kprobe *)ri->rp)->inst);
	int ret = rec_kp_ret_entry_in(ri, regs);

	rec_leave(old);
	return ret;
}

static int rec_kp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	long old = rec_enter(((struct rec_kprobe *)ri->rp)->inst);
	int ret = rec_kp_ret_in(ri, regs);

	rec_leave(old);
	return ret;
}

/* The kretprobe event whose return hook @probe (a rethook's owner) is, or NULL. */
struct ev_desc_event *fhook_rec_kretprobe_of(const void *probe)
{
	int i, j;

	for (i = 0; fhook_rec_kprobes && i < fhook_rec_nr_events; i++) {
		const struct rec_kprobe *k = &fhook_rec_kprobes[i];

		if (!k->e || !k->e->is_return)
			continue;
		if (k->registered && k->rp.fhook_rethook == probe)
			return k->e;
		for (j = 0; j < k->nr_many; j++)
			if (k->many[j].registered && k->many[j].rp.fhook_rethook == probe)
				return k->e;
	}
	return NULL;
}

/*
 * The entry event, without arguments, of the function whose return event
 * is @r: a 'p' on the same symbol in the same object, which the reader
 * pairs with @r's exits.
 */
const struct ev_desc_event *fhook_rec_kp_entry_of(const struct ev_desc_event *r)
{
	int i;

	for (i = 0; i < fhook_rec_nr_events; i++) {
		const struct ev_desc_event *e = &fhook_rec_events[i];

		if (e->kprobe && !e->is_return && !e->offset && !e->nr_args &&
		    !strcmp(e->symbol, r->symbol) &&
		    !strcmp(e->module ? e->module : "", r->module ? r->module : ""))
			return e;
	}
	return NULL;
}

struct kp_find {
	const char *mod, *name;
	const char *exe;		/* the executable's file name */
	unsigned long addr;
};

static int kp_find_cb(void *data, const struct fhook_symbol *sym)
{
	struct kp_find *f = data;
	const char *obj = sym->object ? sym->object : f->exe;

	if (strcmp(sym->name, f->name) || !obj || strcmp(obj, f->mod))
		return 0;
	f->addr = sym->addr;
	return 1;
}

static int exe_base_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(unsigned long *)arg = info->dlpi_addr;
	return 1;	/* the first object is the executable */
}

struct kp_file {
	struct stat st;
	unsigned long base;
	bool found;
};

/* The loaded object that is file @arg->st (by inode: /lib and /usr/lib are one). */
static int kp_file_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kp_file *f = arg;
	const char *name = info->dlpi_name;
	struct stat st;
	int ret;

	if (!name || !*name) {
		/*
		 * The executable: opened, not stat()ed, where an emulator
		 * (qemu-user) hands over the program's file while the kernel's
		 * link names the emulator's.
		 */
		int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

		ret = fd < 0 ? -1 : fstat(fd, &st);
		if (fd >= 0)
			close(fd);
	} else {
		ret = stat(name, &st);
	}
	if (ret || st.st_ino != f->st.st_ino || st.st_dev != f->st.st_dev)
		return 0;
	f->base = info->dlpi_addr;
	f->found = true;
	return 1;
}

/*
 * Where kprobe event @e probes in this process: SYM by kallsyms, MOD:SYM
 * in the object of that file name (MOD may be a path), an address in the
 * executable (a link-time address: its load base added).  0 while absent.
 */
static unsigned long kp_event_addr(const struct ev_desc_event *e)
{
	struct kp_find f = { .name = e->symbol };
	char exe[PATH_MAX];
	unsigned long base = 0;
	ssize_t n;

	if (!e->module && e->symbol[0] >= '0' && e->symbol[0] <= '9') {
		dl_iterate_phdr(exe_base_cb, &base);
		return base + strtoul(e->symbol, NULL, 0);
	}
	if (e->path) {
		struct kp_file kf = { .found = false };

		if (!stat(e->path, &kf.st))
			dl_iterate_phdr(kp_file_cb, &kf);
		if (kf.found)
			return kf.base + e->link_addr + e->offset;
	}
	if (!e->module) {
		base = kallsyms_lookup_name(e->symbol);
		return base ? base + e->offset : 0;
	}
	f.mod = strrchr(e->module, '/') ? strrchr(e->module, '/') + 1 : e->module;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	f.exe = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : NULL;
	fhook_kallsyms_for_each(kp_find_cb, &f);
	return f.addr ? f.addr + e->offset : 0;
}

/* For the command's summary at exit: what kprobe event @e found (ring.h) */
#define rec_kp_count(e, field, n) do {						\
		if ((e)->id < EV_MAX_KP_EVENTS && (n))				\
			__atomic_fetch_add(&fhook_rec_shm->field[(e)->id], (n), __ATOMIC_RELAXED); \
	} while (0)

/* @k's handlers for event @e at @addr (not registered) */
static void rec_kp_init(struct rec_kprobe *k, struct ev_desc_event *e, unsigned long addr)
{
	memset(k, 0, sizeof(*k));
	k->e = e;
	k->inst = REC_CUR;
	k->rp.kp.addr = (kprobe_opcode_t *)addr;
	if (e->is_return) {
		k->rp.entry_handler = rec_kp_ret_entry;
		k->rp.handler = rec_kp_ret;
		k->rp.maxactive = e->nr_maxactive;
		k->rp.data_size = e->nr_entry * sizeof(unsigned long);
		k->rp.fhook_flags = KRETPROBE_FL_EXIT_ON_UNWIND;
	} else {
		k->rp.kp.pre_handler = rec_kp_pre;
	}
}

/*
 * A glob ("p *", "r liblzma.so.5:lzma_*"): a kprobe on every function it
 * names in its object (lib/kprobes/kpglob.c), registered in batches; one
 * that is refused is said and the others stay.
 */
static void rec_kp_arm_glob(struct ev_desc_event *e, struct rec_kprobe *k, FILE *err)
{
	struct fhook_kp_glob g;
	struct rec_kprobe *m;
	char **whys = NULL;
	void **list = NULL;
	int *errs = NULL, i, n, placed, refused = 0;

	if (fhook_kprobe_glob(e->module, e->symbol, e->is_return, &g) || !g.loaded) {
		fhook_kprobe_glob_free(&g);
		return;		/* its object comes later, if ever */
	}
	rec_kp_count(e, kp_loaded, 1);
	n = (int)g.nr;
	m = calloc(n ? n : 1, sizeof(*m));
	list = calloc(n ? n : 1, sizeof(*list));
	errs = calloc(n ? n : 1, sizeof(*errs));
	whys = calloc(n ? n : 1, sizeof(*whys));
	k->e = e;
	k->registered = true;	/* not again: the object is here */
	if (!m || !list || !errs || !whys || fhook_rec_resolve_symbols(e)) {
		fprintf(err, "fhook: %s: cannot probe %s%s%s: %s\n", fhook_rec_cmd,
			e->module ? e->module : "",
			e->module ? ":" : "", e->symbol, m && list && errs && whys ?
			"a symbol of its arguments is not in this process" : strerror(ENOMEM));
		free(m);
		n = 0;
		m = NULL;
	}
	for (i = 0; i < n; i++) {
		rec_kp_init(&m[i], e, g.addrs[i]);
		list[i] = e->is_return ? (void *)&m[i].rp : (void *)&m[i].rp.kp;
	}
	__atomic_store_n(&rec_disabled, 0, __ATOMIC_RELAXED);
	placed = !n ? 0 : e->is_return ?
		fhook_register_kretprobes_each((struct kretprobe **)list, n, errs, whys) :
		fhook_register_kprobes_each((struct kprobe **)list, n, errs, whys);
	for (i = 0; i < n; i++) {
		char name[KSYM_SYMBOL_LEN];

		m[i].registered = !errs[i];
		if (!errs[i])
			continue;
		refused++;
		sprint_symbol(name, g.addrs[i]);
		fprintf(err, "fhook: %s: cannot probe %s: %s\n", fhook_rec_cmd, name, whys[i] ? whys[i] :
			errs[i] == -EILSEQ ? "an instruction that cannot be moved" :
			strerror(-errs[i]));
		free(whys[i]);
	}
	if (refused)
		fhook_rec_untraced("%d of %d functions of %s%s%s not probed", refused, n,
				   e->module ? e->module : "", e->module ? ":" : "", e->symbol);
	rec_kp_count(e, kp_placed, placed);
	k->many = m;
	k->nr_many = n;
	k->failed = n && !placed;
	fhook_kprobe_glob_free(&g);
	free(list);
	free(errs);
	free(whys);
}

static bool rec_kp_is_glob(const struct ev_desc_event *e)
{
	return strpbrk(e->symbol, "*?[") != NULL;
}

static void rec_kp_disarm_glob(struct rec_kprobe *k);

/* what probes of objects that were unloaded missed (they are placed anew) */

/* Was the object of @k's probes unloaded (KPROBE_FLAG_GONE)? */
static bool rec_kp_gone(const struct rec_kprobe *k)
{
	int i;

	if (!k->many)
		return __atomic_load_n(&k->rp.kp.flags, __ATOMIC_RELAXED) & KPROBE_FLAG_GONE;
	for (i = 0; i < k->nr_many; i++)
		if (k->many[i].registered)
			return __atomic_load_n(&k->many[i].rp.kp.flags, __ATOMIC_RELAXED) &
			       KPROBE_FLAG_GONE;
	return false;
}

/* @k's probes off (registered); returns what they missed */
static unsigned long rec_kp_off(struct rec_kprobe *k)
{
	if (k->many)
		rec_kp_disarm_glob(k);
	else if (k->e->is_return)
		unregister_kretprobe(&k->rp);
	else
		unregister_kprobe(&k->rp.kp);
	k->registered = false;
	return fhook_rec_kp_nmissed(k);
}

/* @k's probes off, their object gone: it may come back (dlopen again) */
static void rec_kp_forget(struct rec_kprobe *k)
{
	rec_kp_missed_gone += rec_kp_off(k);
	free(k->many);
	k->many = NULL;
	k->nr_many = 0;
	k->registered = false;
}

/*
 * Register the kprobe events whose code is loaded now and that are not
 * yet: at start-up, and after each dlopen() (an object the program loads
 * later, as the kernel probes a module that comes later).
 */
void fhook_rec_kp_arm(FILE *err)
{
	int i, ret;

	if (!fhook_rec_kprobes)
		fhook_rec_kprobes = calloc(fhook_rec_nr_events ? fhook_rec_nr_events : 1,
					   sizeof(*fhook_rec_kprobes));
	/*
	 * Returns first, then entries: in a running process (-p) a call that
	 * enters between the two would have an entry and never an exit, and
	 * the reader would nest what follows under it; an exit without its
	 * entry is only left unpaired.
	 */
	for (i = 0; fhook_rec_kprobes && i < 2 * fhook_rec_nr_events; i++) {
		struct ev_desc_event *e = &fhook_rec_events[i % fhook_rec_nr_events];
		struct rec_kprobe *k = &fhook_rec_kprobes[i % fhook_rec_nr_events];
		unsigned long addr;

		if (e->is_return != (i < fhook_rec_nr_events))
			continue;
		if (e->kprobe && k->registered && rec_kp_gone(k))
			rec_kp_forget(k);
		if (!e->kprobe || k->registered || k->failed)
			continue;
		if (rec_kp_is_glob(e)) {
			rec_kp_arm_glob(e, k, err);
			continue;
		}
		addr = kp_event_addr(e);
		if (!addr)
			continue;
		rec_kp_count(e, kp_loaded, 1);
		if (fhook_rec_resolve_symbols(e)) {
			fprintf(err, "fhook: %s: a symbol of event %u is not in this process\n", fhook_rec_cmd,
				e->id);
			k->failed = true;
			continue;
		}
		rec_kp_init(k, e, addr);
		__atomic_store_n(&rec_disabled, 0, __ATOMIC_RELAXED);
		if (e->is_return)
			ret = register_kretprobe(&k->rp);
		else
			ret = register_kprobe(&k->rp.kp);
		k->registered = !ret;
		k->failed = ret != 0;
		rec_kp_count(e, kp_placed, !ret);
		if (ret) {
			const char *why = fhook_kprobe_last_why()[0] ? fhook_kprobe_last_why() :
				ret == -EILSEQ ? "not the first byte of an instruction, or "
				"an instruction that cannot be moved" : strerror(-ret);

			fprintf(err, "fhook: %s: cannot probe %s%s%s+%lu: %s\n", fhook_rec_cmd,
				e->module ? e->module : "", e->module ? ":" : "", e->symbol,
				e->offset, why);
			fhook_rec_untraced("cannot probe %s+%lu: %s", e->symbol, e->offset, why);
		}
	}
}

/* asked by every recorded process at start-up: with that code (util/startup.h) */
bool __fhook_startup fhook_rec_kp_pending(void)
{
	int i;

	for (i = 0; i < fhook_rec_nr_events; i++)
		if (fhook_rec_events[i].kprobe && (!fhook_rec_kprobes ||
		    (!fhook_rec_kprobes[i].registered && !fhook_rec_kprobes[i].failed) ||
		    (fhook_rec_kprobes[i].registered && rec_kp_gone(&fhook_rec_kprobes[i]))))
			return true;
	return false;
}

unsigned long fhook_rec_kp_nmissed(const struct rec_kprobe *k)
{
	unsigned long n = k->rp.kp.nmissed + (unsigned long)k->rp.nmissed;
	int i;

	for (i = 0; i < k->nr_many; i++)
		n += k->many[i].rp.kp.nmissed + (unsigned long)k->many[i].rp.nmissed;
	return n;
}

/* A glob's probes off, in one batch; @k is not registered any more. */
static void rec_kp_disarm_glob(struct rec_kprobe *k)
{
	void **list = calloc(k->nr_many ? k->nr_many : 1, sizeof(*list));
	int i, n = 0;

	for (i = 0; i < k->nr_many; i++) {
		struct rec_kprobe *m = &k->many[i];

		if (!m->registered)
			continue;
		m->registered = false;
		if (!list)
			k->e->is_return ? unregister_kretprobe(&m->rp) : unregister_kprobe(&m->rp.kp);
		else
			list[n++] = k->e->is_return ? (void *)&m->rp : (void *)&m->rp.kp;
	}
	if (n && k->e->is_return)
		unregister_kretprobes((struct kretprobe **)list, n);
	else if (n)
		unregister_kprobes((struct kprobe **)list, n);
	free(list);
}

/* Remove the kprobe events' probes; their misses are returned. */
unsigned long fhook_rec_kp_disarm(void)
{
	unsigned long missed = rec_kp_missed_gone;
	int i;

	for (i = 0; fhook_rec_kprobes && i < fhook_rec_nr_events; i++) {
		struct rec_kprobe *k = &fhook_rec_kprobes[i];

		if (k->registered)
			missed += rec_kp_off(k);
	}
	return missed;
}
