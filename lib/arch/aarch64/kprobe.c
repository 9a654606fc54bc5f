// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kprobes on aarch64 (lib/arch/arch.h), as the kernel's arm64 kprobes:
 * the probed instruction becomes "brk #0x004", and the SIGTRAP handler
 * runs the pre_handlers on the registers the trap saved, then the
 * instruction: out of line in a slot (a copy of the word followed by a
 * "b" back to the next one, or by "brk #0x006" when a post_handler wants
 * the thread back, or when no slot lies within a b's reach), or simulated
 * on the saved registers when it reads the pc (kprobe_insn.c).  No jump
 * is ever placed: every probe that is no site is a trap.
 *
 * Placing or removing a probe is one aligned 32-bit store of the word,
 * then the cache maintenance that makes the instruction stream see it
 * and one membarrier(SYNC_CORE) for the batch, so no thread runs a stale
 * copy once fhook_kprobe_arm() returns; no stop of the world is needed,
 * since a thread sees either the old word or the brk.  A probe is
 * armed before its brk is written and disarmed after the original word
 * is back: a thread that meets the brk finds it armed, or finds the word
 * restored and runs it again.
 *
 * Slots are never freed or rewritten: a thread may be inside one long
 * after its probe is gone.  Probing an address again finds its slot.
 */
#define _GNU_SOURCE
#include <asm/sigcontext.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/sigchain.h"
#include "arch/addr_table.h"
#include "kprobe.h"
#include "util/libc.h"
#include "util/procfile.h"

/* a slot and what the signal handler needs to run its instruction */
struct a64_slot {
	struct fhook_kprobe_slot s;
	uint32_t insn;
	int kind;			/* A64_KP_* */
	unsigned long xol;		/* the copy (A64_KP_XOL), or 0 */
	bool ss;			/* the copy ends in the return brk (else a b back) */
};

static struct fhook_kprobe_hooks kp_hooks;
static struct fhook_kprobe_stats kp_stats;
static struct fhook_kprobe_slot *slots_made;
static size_t nr_armed;

#define PSR_BTYPE_BITS	0xc00UL		/* PSTATE.BTYPE */
#define PSR_NZCV_BITS	0xf0000000UL

static inline struct a64_slot *a64_slot(struct fhook_kprobe_slot *s)
{
	return (struct a64_slot *)((char *)s - offsetof(struct a64_slot, s));
}

void fhook_arch_kprobe_init(const struct fhook_kprobe_hooks *hooks)
{
	kp_hooks = *hooks;
}

void fhook_kprobe_stats(struct fhook_kprobe_stats *st)
{
	st->traps = __atomic_load_n(&kp_stats.traps, __ATOMIC_RELAXED);
	st->kept_trap = 0;
	st->stepped_over = 0;
}

/* Decoding needs no library here. */
bool fhook_kprobe_arch_ready(void)
{
	return true;
}

/* ---- the slots, by address, for the SIGTRAP handler ---- */

/* keys: probed addresses and the return brks of the copies */
static struct fhook_addr_table table = { .key_shift = 2 };

static struct a64_slot *table_find(unsigned long key)
{
	return fhook_addr_table_find(&table, key);
}

static int table_add(unsigned long key, struct a64_slot *s)
{
	return fhook_addr_table_add(&table, key, s);
}

/* ---- memory for the copies, within a b's reach of the code ---- */

#define AREA_SIZE	(64UL << 10)
#define B_REACH		(128UL << 20)

struct area {
	struct area *next;
	unsigned long base, used;
};

static struct area *areas;

/* Can a "b" at @from reach @to? */
static bool b_reaches(unsigned long from, unsigned long to)
{
	long d = (long)(to - from);

	return d >= -(long)B_REACH && d < (long)B_REACH;
}

/* Map an area at @hint exactly, or anywhere with @hint 0; 0 if refused. */
static unsigned long area_map(unsigned long hint)
{
	void *p = mmap((void *)hint, AREA_SIZE, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED)
		return 0;
	if (hint && (unsigned long)p != hint) {
		munmap(p, AREA_SIZE);	/* a kernel that ignores the flag */
		return 0;
	}
	return (unsigned long)p;
}

/*
 * A new area, as near @a as a free range allows (below it first: the
 * space above a program's text is its heap's); anywhere if none within
 * reach is free (its copies then come back with a brk).
 */
static struct area *area_new(unsigned long a)
{
	struct area *ar = calloc(1, sizeof(*ar));
	unsigned long base = 0, step = 1UL << 20, k;

	if (!ar)
		return NULL;
	for (k = 1; !base && k < B_REACH / step - 1; k++) {
		unsigned long below = (a & ~(AREA_SIZE - 1)) - k * step;

		if (below < a && below >= (1UL << 20))
			base = area_map(below);
		if (!base)
			base = area_map((a & ~(AREA_SIZE - 1)) + k * step);
	}
	if (!base)
		base = area_map(0);
	if (!base) {
		free(ar);
		return NULL;
	}
	ar->base = base;
	ar->next = areas;
	areas = ar;
	return ar;
}

/* @len bytes for a copy of the word at @a; 0: out of memory. */
static unsigned long area_alloc(unsigned long a, size_t len)
{
	struct area *ar, *far = NULL;
	unsigned long mem;

	for (ar = areas; ar; ar = ar->next) {
		if (ar->used + len > AREA_SIZE)
			continue;
		if (b_reaches(ar->base + ar->used, a))
			break;
		far = far ? far : ar;
	}
	if (!ar) {
		ar = area_new(a);
		if (!ar || !b_reaches(ar->base, a)) {
			/* nothing within reach: any room will do */
			ar = ar && ar->used + len <= AREA_SIZE ? ar : far;
			if (!ar)
				return 0;
		}
	}
	mem = ar->base + ar->used;
	ar->used += len;
	return mem;
}

/*
 * Write a new copy.  Other copies on its page may be running: the page
 * stays executable while it is writable.
 */
static int area_write(unsigned long mem, const void *buf, size_t len)
{
	unsigned long psz = (unsigned long)sysconf(_SC_PAGESIZE);
	unsigned long lo = mem & ~(psz - 1), hi = (mem + len + psz - 1) & ~(psz - 1);

	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -ENOMEM;
	memcpy((void *)mem, buf, len);
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
	__builtin___clear_cache((char *)mem, (char *)mem + len);
	return 0;
}

/* ---- making a slot ---- */

/* the instruction that holds byte @i: a probe's place is a whole instruction */
enum fhook_kprobe_foreign fhook_kprobe_foreign_kind(const unsigned char *mem, size_t len,
						    size_t i)
{
	size_t at = i & ~(size_t)3;
	uint32_t insn;

	if (at + 4 > len)
		return FHOOK_FOREIGN_CODE;
	memcpy(&insn, mem + at, 4);
	if ((insn & 0xffe0001fu) == A64_BRK)		/* brk #imm16 */
		return FHOOK_FOREIGN_TRAP;
	if ((insn & 0x7c000000u) == 0x14000000u)	/* b, bl */
		return FHOOK_FOREIGN_JUMP;
	return FHOOK_FOREIGN_CODE;
}

int fhook_kprobe_read_orig(unsigned long addr, unsigned char *buf, size_t len)
{
	unsigned long w;
	int ret = fhook_text_read(addr, buf, len);

	if (ret || !__atomic_load_n(&nr_armed, __ATOMIC_RELAXED))
		return ret;
	for (w = addr & ~3UL; w < addr + len; w += 4) {
		struct a64_slot *s = table_find(w);
		unsigned long k;

		if (!s || s->s.addr != w || !__atomic_load_n(&s->s.armed, __ATOMIC_RELAXED))
			continue;
		for (k = 0; k < 4; k++)
			if (w + k >= addr && w + k < addr + len)
				buf[w + k - addr] = s->s.orig[k];
	}
	return 0;
}

/* The most instructions back from a probe that may hold its exclusive load. */
#define EXCLUSIVE_WINDOW	16

/*
 * Is @addr between an exclusive load and its store?  A trap there clears
 * the monitor, and the store after it fails every time.  Looks back in the
 * function [@start, ...) (@start 0: unknown, then the window alone).
 */
static bool in_exclusive_sequence(unsigned long addr, unsigned long start)
{
	unsigned long a;
	int n;

	for (a = addr - 4, n = 0; n < EXCLUSIVE_WINDOW && a < addr && (!start || a >= start);
	     a -= 4, n++) {
		unsigned char b[4];
		uint32_t w;

		if (fhook_kprobe_read_orig(a, b, 4))
			break;
		memcpy(&w, b, 4);
		if (fhook_a64_is_store_exclusive(w))
			return false;
		if (fhook_a64_is_load_exclusive(w))
			return true;
	}
	return false;
}

static int slot_make(struct a64_slot *as, unsigned long start, bool post, char *why,
		     size_t why_size)
{
	unsigned long addr = as->s.addr;
	const char *refused;
	uint32_t code[2];
	int kind;

	if (addr & 3) {
		snprintf(why, why_size, "not an instruction: aarch64 instructions are 4-byte "
			 "aligned");
		return -EILSEQ;
	}
	if (fhook_kprobe_read_orig(addr, as->s.orig, 4))
		return -EFAULT;
	memcpy(&as->insn, as->s.orig, 4);
	kind = fhook_a64_kp_decode(as->insn, &refused);
	if (kind < 0) {
		snprintf(why, why_size, "0x%08x: %s", as->insn, refused);
		return -EILSEQ;
	}
	if (in_exclusive_sequence(addr, start)) {
		snprintf(why, why_size, "between an exclusive load and its store: a trap "
			 "would clear the exclusive monitor");
		return -EILSEQ;
	}
	as->kind = kind;
	as->s.post = post;
	as->s.can = FHOOK_KPROBE_TRAP;
	as->s.covered = 4;
	if (kind != A64_KP_XOL)
		return 0;
	as->xol = area_alloc(addr, sizeof(code));
	if (!as->xol)
		return -ENOMEM;
	code[0] = as->insn;
	as->ss = post || !b_reaches(as->xol + 4, addr + 4);
	if (as->ss)
		code[1] = A64_BRK_OF(A64_KP_SS_BRK_IMM);
	else
		code[1] = 0x14000000u | (uint32_t)(((addr + 4 - (as->xol + 4)) >> 2) & 0x3ffffff);
	as->s.resume = as->xol;
	return area_write(as->xol, code, sizeof(code));
}

int fhook_kprobe_slot_get(unsigned long addr, unsigned long start, unsigned long size,
			  unsigned int pad, bool jump, bool post, void *cookie,
			  struct fhook_kprobe_slot **slotp, struct fhook_kprobe_slot **retrapped,
			  char *why, size_t why_size)
{
	struct a64_slot *as = table_find(addr);
	int ret;

	(void)size;
	(void)pad;
	(void)jump;
	*slotp = NULL;
	*retrapped = NULL;	/* no jumps: no probe is ever inside another's */
	if (as && as->s.addr == addr && as->s.cookie == cookie && as->s.post == post) {
		snprintf(why, why_size, "%s", as->s.why);
		as->s.in_use = true;
		*slotp = &as->s;
		return 0;
	}
	if (as && as->s.addr == addr && as->s.armed)
		return -EBUSY;
	as = calloc(1, sizeof(*as));
	if (!as)
		return -ENOMEM;
	as->s.addr = addr;
	as->s.cookie = cookie;
	why[0] = 0;
	ret = slot_make(as, start, post, why, why_size);
	if (!ret)
		ret = table_add(addr, as);
	if (!ret && as->ss)
		ret = table_add(as->xol + 4, as);
	if (ret) {
		free(as);	/* never published (its copy's memory stays unused) */
		return ret;
	}
	snprintf(why, why_size, "aarch64 probes are traps (brk): no jump is placed");
	snprintf(as->s.why, sizeof(as->s.why), "%s", why);
	as->s.in_use = true;
	as->s.made = slots_made;
	slots_made = &as->s;
	*slotp = &as->s;
	return 0;
}

/* ---- placing ---- */

#define TRAP_BLOCKED_WAIT_MS	20	/* in total, before -EBUSY */

/*
 * The id of a thread other than this one with SIGTRAP blocked, or 0.  A
 * thread that meets a brk so dies: the kernel cannot hold a trap back, it
 * unblocks the signal and resets its handler.  Masks that block the
 * signals glibc keeps for itself are a new thread's first moments (every
 * signal blocked), over soon.
 */
static pid_t trap_blocked_thread(char *name, size_t size)
{
	pid_t self = (pid_t)syscall(SYS_gettid), found = 0;
	struct dirent *de;
	DIR *dir = opendir("/proc/self/task");

	if (!dir)
		return 0;	/* no /proc: the look is not possible */
	while (!found && (de = readdir(dir))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		char path[64], buf[4096], *p;
		unsigned long long blk;

		if (tid <= 0 || tid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
		if (fhook_read_small_file(path, buf, sizeof(buf)) <= 0)
			continue;	/* gone */
		p = strstr(buf, "\nSigBlk:\t");
		if (!p)
			continue;
		blk = strtoull(p + 9, NULL, 16);
		if (!(blk & (1ULL << (SIGTRAP - 1))) || (blk & (1ULL << (32 - 1))))
			continue;
		found = tid;
		if (!strncmp(buf, "Name:\t", 6)) {
			size_t len = strcspn(buf + 6, "\n");

			len = len < size ? len : size - 1;
			memcpy(name, buf + 6, len);
			name[len] = 0;
		}
	}
	closedir(dir);
	return found;
}

/*
 * Under an emulator (qemu-user), /proc shows the emulator's threads and
 * signal masks, not the program's: /proc/self/exe is the program, the
 * thread's own exe link the emulator.
 */
static bool under_emulator(void)
{
	static int known;	/* 1: no, 2: yes */
	char a[PATH_MAX], b[PATH_MAX], path[64];
	ssize_t n, m;

	if (known)
		return known == 2;
	snprintf(path, sizeof(path), "/proc/self/task/%d/exe", (int)syscall(SYS_gettid));
	n = readlink("/proc/self/exe", a, sizeof(a));
	m = readlink(path, b, sizeof(b));
	known = n > 0 && m > 0 && (n != m || memcmp(a, b, (size_t)n)) ? 2 : 1;
	return known == 2;
}

static int check_trap_blocked(void)
{
	static pid_t reported;
	struct timespec ts = { 0, 1000 * 1000 };
	char name[32] = "";
	pid_t tid;
	int waited;

#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer's own thread blocks every signal and runs no program code */
	return 0;
#endif
	if (__libc_single_threaded || under_emulator())
		return 0;
	for (waited = 0;; waited++) {
		tid = trap_blocked_thread(name, sizeof(name));
		if (!tid)
			return 0;
		if (waited >= TRAP_BLOCKED_WAIT_MS)
			break;
		nanosleep(&ts, NULL);
	}
	/* once per thread, not once per refused batch */
	if (tid != reported)
		fprintf(stderr, "fhook: thread %d (%s) has SIGTRAP blocked (a raw "
			"rt_sigprocmask, or a ucontext mask): a probe's brk would kill it; "
			"nothing placed (-EBUSY)\n", (int)tid, name);
	reported = tid;
	return -EBUSY;
}

static void clear_armed(struct fhook_kprobe_slot **slots, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		nr_armed -= !!slots[i]->armed;
		__atomic_store_n(&slots[i]->armed, 0, __ATOMIC_RELEASE);
		slots[i]->in_use = false;
	}
}

int fhook_kprobe_arm(struct fhook_kprobe_slot **slots, size_t nr)
{
	const uint32_t brk = A64_BRK_OF(A64_KP_BRK_IMM);
	size_t i;
	int ret = 0;

	if (!nr)
		return 0;
	ret = check_trap_blocked();
	if (ret) {
		clear_armed(slots, nr);
		return ret;
	}
	fhook_trap_install();
	for (i = 0; i < nr; i++) {
		nr_armed += !slots[i]->armed;
		__atomic_fetch_add(&slots[i]->gen, 1, __ATOMIC_RELAXED);
		/* before the brk: a thread that meets it is ours */
		__atomic_store_n(&slots[i]->armed, FHOOK_KPROBE_TRAP, __ATOMIC_RELEASE);
		ret = fhook_a64_text_write(slots[i]->addr, &brk, 4, false);
		if (ret)
			break;
	}
	if (ret) {
		/* the ones written go back: nothing placed */
		fhook_kprobe_disarm(slots, i);
		clear_armed(slots + i, nr - i);
	}
	fhook_sync_core();
	return ret;
}

int fhook_kprobe_disarm(struct fhook_kprobe_slot **slots, size_t nr)
{
	bool *kept = calloc(nr ? nr : 1, sizeof(*kept));
	size_t i;
	int ret = 0;

	if (!kept)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct fhook_kprobe_slot *s = slots[i];
		uint32_t cur;

		/*
		 * Read, compare, write: a word that is no longer our brk (its
		 * object was unloaded, maybe another mapped there) is left
		 * alone, and its slot forgotten.  One that cannot be written
		 * stays armed: its brk is still there.
		 */
		if (s->armed && !fhook_text_read(s->addr, &cur, 4) &&
		    cur == A64_BRK_OF(A64_KP_BRK_IMM) &&
		    fhook_a64_text_write(s->addr, s->orig, 4, false)) {
			kept[i] = true;
			ret = -EPERM;
		}
	}
	if (nr)
		fhook_sync_core();
	/* after the words are back: a thread that trapped still finds its slot */
	for (i = 0; i < nr; i++)
		if (!kept[i])
			clear_armed(&slots[i], 1);
	free(kept);
	return ret;
}

void fhook_kprobe_forget(struct fhook_kprobe_slot **slots, size_t nr)
{
	clear_armed(slots, nr);
}

/* ---- the SIGTRAP handler ---- */

static struct sigaction prev_trap;

static void chain_trap(int sig, siginfo_t *info, void *ctx)
{
	fhook_arch_chain_signal(&prev_trap, sig, info, ctx);
}

/*
 * The vector registers the trap saved: the FPSIMD record of the frame,
 * and the SVE record's Z registers where it holds them (a thread that
 * used SVE), which sigreturn then restores instead: a simulated load is
 * written to both.
 */
struct frame_vec {
	unsigned char *v;		/* v0-v31, 16 bytes each */
	unsigned char *z;		/* z0-z31, @zlen bytes each, or NULL */
	size_t zlen;
};

static void frame_vec(ucontext_t *uc, struct frame_vec *fv)
{
	unsigned char *p = (unsigned char *)uc->uc_mcontext.__reserved;
	unsigned char *end = p + sizeof(uc->uc_mcontext.__reserved);

	fv->v = fv->z = NULL;
	fv->zlen = 0;
	while (p + sizeof(struct _aarch64_ctx) <= end) {
		struct _aarch64_ctx *h = (struct _aarch64_ctx *)p;

		if (!h->magic || h->size < sizeof(*h) || h->size > (size_t)(end - p))
			break;
		if (h->magic == FPSIMD_MAGIC) {
			fv->v = (unsigned char *)((struct fpsimd_context *)p)->vregs;
		} else if (h->magic == SVE_MAGIC) {
			struct sve_context *sve = (struct sve_context *)p;
			size_t vq = sve_vq_from_vl(sve->vl);

			if (vq && h->size >= SVE_SIG_CONTEXT_SIZE(vq) &&
			    !(sve->flags & SVE_SIG_FLAG_SM)) {
				fv->z = p + SVE_SIG_ZREG_OFFSET(vq, 0);
				fv->zlen = SVE_SIG_ZREG_SIZE(vq);
			}
		} else if (h->magic == EXTRA_MAGIC && h->size >= sizeof(struct extra_context)) {
			/* the records that did not fit (long SVE vectors) go on there */
			struct extra_context *x = (struct extra_context *)p;

			p = (unsigned char *)(unsigned long)x->datap;
			end = p + x->size;
			continue;
		}
		p += h->size;
	}
}

static void regs_from(struct pt_regs *regs, const mcontext_t *mc)
{
	fhook_a64_trap_copy(regs->regs, mc->regs, sizeof(regs->regs));
	regs->sp = mc->sp;
	regs->pc = mc->pc;
	regs->pstate = mc->pstate;
}

/* What a handler changed: the registers, the stack pointer, the flags. */
static void regs_to(const struct pt_regs *regs, mcontext_t *mc)
{
	fhook_a64_trap_copy(mc->regs, regs->regs, sizeof(regs->regs));
	mc->sp = regs->sp;
	mc->pstate = (mc->pstate & ~PSR_NZCV_BITS) | (regs->pstate & PSR_NZCV_BITS);
}

static void run_post(struct a64_slot *as, mcontext_t *mc)
{
	struct pt_regs regs;

	if (!as->s.post || !kp_hooks.post)
		return;
	regs_from(&regs, mc);
	kp_hooks.post(as->s.cookie, &regs);
	regs_to(&regs, mc);
	mc->pc = regs.pc;
}

/* The thread met the brk of @as's probe; @hooks: its handlers run. */
static void probe_hit(struct a64_slot *as, ucontext_t *uc, bool hooks)
{
	mcontext_t *mc = &uc->uc_mcontext;
	struct frame_vec fv;
	struct pt_regs regs;

	__atomic_fetch_add(&kp_stats.traps, 1, __ATOMIC_RELAXED);
	/*
	 * The landing pad the brk may stand on was checked (a brk is a
	 * valid one); where the thread goes on from here is no branch's
	 * target.
	 */
	mc->pstate &= ~PSR_BTYPE_BITS;
	frame_vec(uc, &fv);
	regs_from(&regs, mc);
	if (hooks && kp_hooks.hit && kp_hooks.hit(as->s.cookie, &regs, fv.v)) {
		regs_to(&regs, mc);
		/* a pre_handler moved the ip: the instruction is skipped */
		mc->pc = regs.pc;
		return;
	}
	regs_to(&regs, mc);
	if (as->kind == A64_KP_XOL) {
		mc->pc = as->xol;
		return;
	}
	{
		struct fhook_a64_sim_regs r = {
			.x = (unsigned long *)mc->regs, .pc = mc->pc, .pstate = mc->pstate,
			.v = fv.v,
		};
		int kind = as->kind;
		unsigned int rt = as->insn & 0x1f;

		/* a frame without vector registers (none seen): the load becomes a prefetch */
		if (!fv.v && kind >= A64_KP_LDR_S)
			kind = A64_KP_PRFM;
		fhook_a64_kp_simulate(kind, as->insn, as->s.addr, &r);
		mc->pc = r.pc;
		/* the load zeroes the Z register's bits past its V register too */
		if (fv.v && fv.z && kind >= A64_KP_LDR_S) {
			fhook_a64_trap_zero(fv.z + rt * fv.zlen, fv.zlen);
			fhook_a64_trap_copy(fv.z + rt * fv.zlen, fv.v + 16 * rt, 16);
		}
	}
	if (hooks)
		run_post(as, mc);
}

static bool kp_trap(ucontext_t *uc, bool hooks)
{
	mcontext_t *mc = &uc->uc_mcontext;
	unsigned long pc = mc->pc;
	struct a64_slot *as = table_find(pc);
	unsigned int gen;
	uint32_t w;
	int armed;

	if (!as)
		return false;
	if (pc != as->s.addr) {
		/* the brk after a copy: the instruction ran, the thread goes on after it */
		mc->pc = as->s.addr + 4;
		if (hooks)
			run_post(as, mc);
		return true;
	}
	/*
	 * armed first: disarming writes the original word before it clears
	 * armed, so a word read after armed was seen clear is the original,
	 * unless the probe was armed again in between (its generation moved:
	 * arming bumps it before it writes the brk).
	 */
	gen = __atomic_load_n(&as->s.gen, __ATOMIC_ACQUIRE);
	armed = __atomic_load_n(&as->s.armed, __ATOMIC_ACQUIRE);
	w = *(volatile uint32_t *)pc;
	if (armed && w == A64_BRK_OF(A64_KP_BRK_IMM)) {
		probe_hit(as, uc, hooks);
		return true;
	}
	/*
	 * A brk of ours still there with no probe armed since the slot was
	 * disarmed is someone else's (the slot outlived its object): not
	 * ours.  Else the probe was removed since this thread trapped (the
	 * original word is back, or is coming back) or placed again: the
	 * thread runs the word at pc again, whichever it is now.
	 */
	if (!armed && w == A64_BRK_OF(A64_KP_BRK_IMM)) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&as->s.gen, __ATOMIC_RELAXED) == gen)
			return false;
	}
	mc->pc = pc;
	return true;
}

/*
 * How deep this thread is in trap_handler().  The handler's own calls
 * (errno's __errno_location(), the kprobe layer's, a pre_handler's) may
 * meet a probe: one level down its handlers are called (inside another
 * probe's handler the recursion lock makes that a missed hit, counted in
 * nmissed), deeper only the instruction runs, as the kernel runs a probe re-entered from
 * its own handling, so that a probe on anything the handler uses cannot
 * recurse without end.  Read before any call: initial-exec, no call.
 */
static __thread unsigned int trap_depth __attribute__((tls_model("initial-exec")));

#define TRAP_DEPTH_HOOKS	2	/* from this depth on, no handlers */

static void trap_handler(int sig, siginfo_t *info, void *ctx)
{
	unsigned int depth = trap_depth;
	int saved_errno;
	bool handled;

	if (depth >= TRAP_DEPTH_HOOKS) {
		if (!kp_trap(ctx, false))
			chain_trap(sig, info, ctx);
		return;
	}
	trap_depth = depth + 1;
	saved_errno = errno;
	handled = kp_trap(ctx, true);
	errno = saved_errno;
	trap_depth = depth;
	if (!handled)
		chain_trap(sig, info, ctx);
}

/*
 * Sites never trap on aarch64: only kprobes need the handler, and arming
 * the first one installs it.
 */
void fhook_trap_install(void)
{
	struct sigaction sa, cur;

	if (fhook_libc_sigaction(SIGTRAP, NULL, &cur))
		return;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == trap_handler)
		return;
	/* first time, or the program installed its own since: chain to it */
	prev_trap = cur;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trap_handler;
	/*
	 * SA_NODEFER: a handler run from here may meet another probe, whose
	 * trap must not find SIGTRAP blocked (the kernel would kill the
	 * thread); the recursion lock keeps its handlers from running.
	 */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	sigdelset(&sa.sa_mask, SIGTRAP);
	fhook_libc_sigaction(SIGTRAP, &sa, NULL);
}
