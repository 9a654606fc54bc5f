// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kprobes on x86-64 (lib/arch/arch.h): the slots of relocated code, their
 * placement with the text_poke_bp protocol, and the int3 probes' part of
 * the SIGTRAP handler.
 *
 * Placing a jump is done as the kernel optimizes a kprobe: first an int3
 * (the probe works from then on, as a trap), then, once no thread is
 * stopped inside the bytes the jump will cover (it would resume in the
 * middle of the jump), the jump with the int3 protocol.  The kernel waits
 * for that with synchronize_rcu_tasks(); here /proc/self/task/N/syscall
 * gives the user-space pc of every thread that sleeps, and one that runs
 * or waits for a cpu is asked with a signal.  (A thread inside a signal
 * handler of the program that interrupted it inside the bytes is not
 * seen: its handler's pc is.)
 *
 * Slots are never freed or rewritten: a thread may be in one long after
 * its probe is gone (preempted between two relocated instructions), and
 * nothing tells when it left.  Probing an address again finds its slot,
 * so they cost one per address ever probed.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/addr_table.h"
#include "internal.h"
#include "cs.h"
#include "kprobe.h"
#include "util/libc.h"
#include "util/lockdep.h"
#include "util/procfile.h"

static struct fhook_kprobe_hooks kp_hooks;
static struct fhook_kprobe_stats kp_stats;

void fhook_arch_kprobe_init(const struct fhook_kprobe_hooks *hooks)
{
	unsigned int a, b, c, d;

	/* the xsave area of the features the kernel enabled (leaf 0xd, ebx) */
	if (__get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b)
		fhook_kprobe_xsave_size = (b + 63) & ~63u;
	kp_hooks = *hooks;
	if (hooks->hit)
		__atomic_store_n(&fhook_kprobe_hit_hook, hooks->hit, __ATOMIC_RELEASE);
}

void fhook_kprobe_stats(struct fhook_kprobe_stats *st)
{
	st->traps = __atomic_load_n(&kp_stats.traps, __ATOMIC_RELAXED);
	st->kept_trap = kp_stats.kept_trap;
	st->stepped_over = kp_stats.stepped_over;
}

/* ---- the slots, by address, for the SIGTRAP handler ---- */

/* keys: probed addresses and the final int3 of each slot */
static struct fhook_addr_table table = { .key_shift = 0 };
static size_t nr_armed;		/* slots whose probe is in the code */

static struct fhook_kprobe_slot *table_find(unsigned long key)
{
	return fhook_addr_table_find(&table, key);
}

static int table_add(unsigned long key, struct fhook_kprobe_slot *s)
{
	return fhook_addr_table_add(&table, key, s);
}

/* ---- memory for slots, near the code they stand for ---- */

#define AREA_SIZE	(64UL << 10)
#define AREA_REACH	((1UL << 31) - AREA_SIZE - (1UL << 20))

/*
 * An area is a memfd mapped twice: read+exec near the code, and
 * read+write anywhere, so that writing a new slot is a memcpy, with no
 * page ever writable and executable at once and no change of protection
 * (a TLB shootdown each).  Where memfd_create() is refused, the area is
 * anonymous and slots are written with fhook_text_write_new().
 */
struct area {
	struct area *next;
	unsigned long base, used;
	long rw_delta;			/* the writable view - base; 0: none */
};

static struct area *areas;

static bool area_reaches(unsigned long base, unsigned long a)
{
	return (a > base ? a - base : base + AREA_SIZE - a) < AREA_REACH;
}

/*
 * The views are shared mappings, which a child of fork() shares too: the
 * child must never write into its parent's areas, nor the parent into
 * space the child took, so the child starts areas of its own.
 */
static void areas_after_fork(void)
{
	struct area *ar;

	for (ar = areas; ar; ar = ar->next)
		ar->used = AREA_SIZE;
}

static void areas_atfork(void)
{
	pthread_atfork(NULL, NULL, areas_after_fork);
}

/* Map [@hint, +AREA_SIZE) exactly, or fail. */
static void *map_at(unsigned long hint, int fd)
{
	void *p = mmap((void *)hint, AREA_SIZE, PROT_READ | PROT_EXEC,
		       (fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS) | MAP_FIXED_NOREPLACE,
		       fd, 0);

	if (p != MAP_FAILED && (unsigned long)p != hint) {
		munmap(p, AREA_SIZE);	/* a kernel that ignores the flag */
		p = MAP_FAILED;
	}
	return p;
}

/* The memory an area's code lives in: a memfd, or -1 (anonymous memory). */
static int area_fd(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int fd;

	pthread_once(&once, areas_atfork);
	fd = memfd_create("fhook-kprobes", MFD_CLOEXEC);
	if (fd >= 0 && ftruncate(fd, AREA_SIZE)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool hint_usable(unsigned long hint, unsigned long a)
{
	return hint >= (1UL << 20) && hint < (1UL << 47) && area_reaches(hint, a);
}

static struct area *area_finish(struct area *ar, void *p, int fd);

/*
 * A fresh area within reach of @a: try addresses at growing distances
 * on both sides, each mapped only where nothing is.
 */
static struct area *area_new(unsigned long a)
{
	const unsigned long step = 16UL << 20;
	struct area *ar;
	unsigned long dist;
	void *p = MAP_FAILED;
	int fd;

	ar = calloc(1, sizeof(*ar));
	if (!ar)
		return NULL;
	fd = area_fd();
	for (dist = step; dist < AREA_REACH && p == MAP_FAILED; dist += step) {
		unsigned long hint[2] = { (a & ~(step - 1)) - dist, (a & ~(step - 1)) + dist };
		int side;

		for (side = 0; side < 2 && p == MAP_FAILED; side++)
			if (hint_usable(hint[side], a))
				p = map_at(hint[side], fd);
	}
	return area_finish(ar, p, fd);
}

/* @ar mapped at @p (or not: MAP_FAILED), its writable view, in the list */
static struct area *area_finish(struct area *ar, void *p, int fd)
{
	void *rw = MAP_FAILED;

	if (p != MAP_FAILED && fd >= 0)
		rw = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (p == MAP_FAILED) {
		free(ar);
		return NULL;
	}
	ar->base = (unsigned long)p;
	ar->rw_delta = rw != MAP_FAILED ? (long)((unsigned long)rw - ar->base) : 0;
	ar->next = areas;
	areas = ar;
	return ar;
}

/*
 * Another tool's breakpoint on a probed function's first byte (a uprobe:
 * the kernel runs the first instruction as the file has it, out of line)
 * sends the thread on after that instruction, into the middle of our jump
 * when the jump covers more than one.  Such a jump takes a detour whose
 * address makes the jump's byte there an int3: the trap sends the thread
 * to the copy of the second instruction (fhook_kprobe_trap()), and the
 * call runs as it would have, unprobed.  @b is the byte of the rel32
 * (0-3) that must be 0xcc.
 *
 * The first address from @to on whose displacement from @from has that
 * byte (the displacement's low 32 bits are the rel32's).
 */
static unsigned long rel_fit(unsigned long from, unsigned long to, unsigned int b)
{
	unsigned long w = 1UL << (8 * b), period = w << 8;
	unsigned long d = to - from, cand;

	if (((d >> (8 * b)) & 0xff) == INT3_INSN_OPCODE)
		return to;
	cand = (d & ~(period - 1)) + INT3_INSN_OPCODE * w;
	if (cand < d)
		cand += period;
	return from + cand;
}

/* Does a jump from @from to @to (in reach) have 0xcc as its rel32's byte @b? */
static bool rel_has(unsigned long from, unsigned long to, unsigned int b)
{
	return (((to - from) >> (8 * b)) & 0xff) == INT3_INSN_OPCODE;
}

/*
 * For bytes 2 and 3 the addresses that fit are a 64 KiB window every 16
 * MiB, or one 16 MiB window about 850 MiB below: an area of its own there.
 */
static struct area *area_new_window(unsigned long a, unsigned long from, unsigned int b)
{
	unsigned long w = 1UL << (8 * b), period = w << 8, base, off;
	struct area *ar;
	void *p = MAP_FAILED;
	long k;
	int fd;

	ar = calloc(1, sizeof(*ar));
	if (!ar)
		return NULL;
	fd = area_fd();
	/* the windows nearest first: k = 0, -1, 1, -2, ... (rel32 0xcc....... is k = -1) */
	for (k = 0; k < 256 && p == MAP_FAILED; k++) {
		long kk = k & 1 ? -(k + 1) / 2 : k / 2;
		long d = (long)(INT3_INSN_OPCODE * w) + kk * (long)period;

		if (b == 3)
			d = (long)(int32_t)(uint32_t)(INT3_INSN_OPCODE * w);
		if (d < -(long)AREA_REACH || d > (long)AREA_REACH)
			continue;
		/* a page-aligned area whose entries from the window's start on fit */
		for (off = 0; off < w && off < (64UL << 20) && p == MAP_FAILED; off += AREA_SIZE) {
			base = (from + (unsigned long)d + off + 4095) & ~4095UL;
			if (hint_usable(base, a))
				p = map_at(base, fd);
		}
		if (b == 3)
			break;
	}
	return area_finish(ar, p, fd);
}

/*
 * @len bytes of slot code within reach of @a whose entry (@hdr bytes in)
 * a jump from @from reaches with 0xcc as its rel32's byte @b.
 */
static unsigned long area_alloc_fit(unsigned long a, size_t len, size_t hdr, unsigned long from,
				    unsigned int b, struct area **arp)
{
	struct area *ar;
	unsigned long mem = 0;
	int tries;

	for (tries = 0; tries < 2; tries++) {
		for (ar = areas; ar; ar = ar->next) {
			if (!area_reaches(ar->base, a) || ar->used >= AREA_SIZE)
				continue;
			mem = rel_fit(from, ar->base + ar->used + hdr, b) - hdr;
			if (mem + len <= ar->base + AREA_SIZE && rel_has(from, mem + hdr, b))
				break;
		}
		if (ar)
			break;
		if (!(b >= 2 ? area_new_window(a, from, b) : area_new(a)))
			return 0;
	}
	if (!ar)
		return 0;
	/* (the bytes skipped stay zero: nothing jumps there) */
	ar->used = ((mem - ar->base) + len + 15) & ~15UL;
	*arp = ar;
	return mem;
}

/* @len bytes of slot code within reach of @a; 0 when none can be mapped */
static unsigned long area_alloc(unsigned long a, size_t len, struct area **arp)
{
	struct area *ar;

	len = (len + 15) & ~15UL;
	for (ar = areas; ar; ar = ar->next)
		if (area_reaches(ar->base, a) && ar->used + len <= AREA_SIZE)
			break;
	if (!ar)
		ar = area_new(a);
	if (!ar)
		return 0;
	ar->used += len;
	*arp = ar;
	return ar->base + ar->used - len;
}

/* Give back the end of the last allocation of @ar: it took @len, uses @keep. */
static void area_trim(struct area *ar, unsigned long mem, size_t len, size_t keep)
{
	len = (len + 15) & ~15UL;
	keep = (keep + 15) & ~15UL;
	if (mem + len == ar->base + ar->used)
		ar->used -= len - keep;
}

/* Write a new slot's bytes: no thread runs them yet. */
static int area_write(struct area *ar, unsigned long mem, const void *buf, size_t len)
{
	if (!ar->rw_delta)
		return fhook_text_write_new(mem, buf, len);
	memcpy((void *)(mem + ar->rw_delta), buf, len);
	return 0;
}

/* ---- making a slot ---- */

enum fhook_kprobe_foreign fhook_kprobe_foreign_kind(const unsigned char *mem, size_t len,
						    size_t i)
{
	(void)len;
	switch (mem[i]) {
	case INT3_INSN_OPCODE:
		return FHOOK_FOREIGN_TRAP;
	case 0xe8:	/* call rel32 */
	case 0xe9:	/* jmp rel32 */
	case 0xeb:	/* jmp rel8 */
	case 0xff:	/* call or jmp through memory */
		return FHOOK_FOREIGN_JUMP;
	}
	return FHOOK_FOREIGN_CODE;
}

int fhook_kprobe_read_orig(unsigned long addr, unsigned char *buf, size_t len)
{
	unsigned long b;
	int ret = fhook_text_read(addr, buf, len);

	if (ret || !__atomic_load_n(&nr_armed, __ATOMIC_RELAXED))
		return ret;
	/* a probe's bytes over what was there: each covers at most 5 bytes */
	for (b = addr >= 4 ? addr - 4 : 0; b < addr + len; b++) {
		struct fhook_kprobe_slot *s = table_find(b);
		unsigned long k;

		if (!s || s->addr != b || !s->armed)
			continue;
		for (k = 0; k < (s->armed == FHOOK_KPROBE_JUMP ? 5u : 1u); k++)
			if (b + k >= addr && b + k < addr + len)
				buf[b + k - addr] = s->orig[k];
	}
	return 0;
}

/* Jump tables are in the objects' own segments: read them in place. */
static bool read_in_object(void *ctx, unsigned long addr, void *buf, size_t len)
{
	struct fhook_text_seg seg;

	if (!fhook_arch_hooks.text_seg || !fhook_arch_hooks.text_seg(addr, &seg) ||
	    !(seg.prot & PROT_READ) || addr + len > seg.end)
		return false;
	memcpy(buf, (const void *)addr, len);
	return true;
}

static const unsigned char kp_prefix[KPROBE_PREFIX] = {
	0x48, 0x8d, 0x64, 0x24, 0x80,			/* lea -128(%rsp), %rsp */
	0xff, 0x15, 0xed, 0xff, 0xff, 0xff,		/* call *-19(%rip): hdr + 8 */
	0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00,	/* lea 128(%rsp), %rsp */
};


/*
 * Relocate for a jump, else for a trap, into fresh memory near @addr.
 * The memory is taken before the copy is made (rip-relative operands
 * depend on where it goes); what a refused try took is left unused.
 */
static int slot_make(struct fhook_kprobe_slot *s, unsigned long start, unsigned long size,
		     unsigned int pad, bool jump, bool post, char *why, size_t why_size)
{
	struct kprobe_reloc_req req = {
		.addr = s->addr, .start = start, .size = size,
		.prefix_len = KPROBE_PREFIX, .post = post,
		.read = read_in_object,
	};
	struct kprobe_reloc *r;
	unsigned char *code = NULL;
	unsigned long mem, hdr[2];
	unsigned int i;
	struct area *ar = NULL, *fit_ar = NULL;
	int ret;

	if (!size) {
		/* unknown extent: what is readable after the address, up to a page */
		start = s->addr;
		size = 64;
		snprintf(why, why_size, "the function's size is unknown");
		jump = false;
		req.start = start;
	}
	r = malloc(sizeof(*r));
	code = malloc(size + pad + 16);
	if (!r || !code) {
		ret = -ENOMEM;
		goto out;
	}
	req.size = size;
	req.pad = pad;
	if (fhook_kprobe_read_orig(start, code, size + pad)) {
		/* a symbol that runs past the mapping: only what is there */
		req.size = size = 16;
		req.pad = pad = 0;
		if (fhook_kprobe_read_orig(s->addr, code, 16)) {
			ret = -EFAULT;
			snprintf(why, why_size, "the code cannot be read");
			goto out;
		}
		req.start = start = s->addr;
		jump = false;
	}
	req.code = code;
	memcpy(s->orig, code + (s->addr - start),
	       start + size + pad - s->addr < sizeof(s->orig) ?
	       start + size + pad - s->addr : sizeof(s->orig));
	mem = area_alloc(s->addr, KPROBE_HDR + KPROBE_CODE_MAX, &ar);
	if (!mem) {
		ret = -ENOMEM;
		goto out;
	}
	req.dest = mem + KPROBE_HDR;
	ret = -EILSEQ;
	if (jump) {
		req.min_len = 5;
		ret = fhook_kprobe_relocate(&req, r, why, why_size);
		if (!ret)
			s->can = FHOOK_KPROBE_JUMP;
		if (!ret && r->nr_insns > 1 && r->ends[0] < 5) {
			/* a detour that puts an int3 after the first instruction (rel_fit()) */
			unsigned long fit = area_alloc_fit(s->addr, KPROBE_HDR + KPROBE_CODE_MAX,
							   KPROBE_HDR, s->addr + 5,
							   r->ends[0] - 1, &fit_ar);

			if (fit) {
				req.dest = fit + KPROBE_HDR;
				if (!fhook_kprobe_relocate(&req, r, why, why_size)) {
					area_trim(ar, mem, KPROBE_HDR + KPROBE_CODE_MAX, 0);
					mem = fit;
					ar = fit_ar;
					s->after_first = s->addr + r->ends[0];
				} else {
					/* (as it was) */
					area_trim(fit_ar, fit, KPROBE_HDR + KPROBE_CODE_MAX, 0);
					req.dest = mem + KPROBE_HDR;
					ret = fhook_kprobe_relocate(&req, r, why, why_size);
				}
			}
		}
	}
	if (ret == -EILSEQ) {
		char w2[96];

		req.min_len = 1;
		ret = fhook_kprobe_relocate(&req, r, w2, sizeof(w2));
		if (ret == -EILSEQ)
			snprintf(why, why_size, "%s", w2);
		if (!ret)
			s->can = FHOOK_KPROBE_TRAP;
	}
	if (ret)
		goto out;
	hdr[0] = (unsigned long)s;
	hdr[1] = (unsigned long)(s->addr - start ? fhook_kprobe_tramp_full :
				 fhook_kprobe_tramp_entry);
	/* the header and the code, in one write */
	memmove(r->code + KPROBE_HDR, r->code, r->len);
	memcpy(r->code, hdr, sizeof(hdr));
	memcpy(r->code + KPROBE_HDR, kp_prefix, KPROBE_PREFIX);
	ret = area_write(ar, mem, r->code, KPROBE_HDR + r->len);
	if (ret)
		goto out;
	area_trim(ar, mem, KPROBE_HDR + KPROBE_CODE_MAX, KPROBE_HDR + r->len);
	s->entry = mem + KPROBE_HDR;
	s->resume = s->entry + KPROBE_PREFIX;
	if (s->after_first && s->can == FHOOK_KPROBE_JUMP)
		s->second = s->entry + r->offs[1];
	else
		s->after_first = 0;
	s->post = post;
	s->nr_exits = (unsigned char)r->nr_exits;
	for (i = 0; i < r->nr_exits; i++) {
		s->exits[i].at = s->entry + r->exits[i].off;
		s->exits[i].kind = r->exits[i].kind;
		s->exits[i].imm = r->exits[i].imm;
		s->exits[i].ip = r->exits[i].ip;
		s->exits[i].resume = r->exits[i].resume;
	}
	s->covered = r->covered;
out:
	free(code);
	free(r);
	return ret;
}

/*
 * Every slot ever made: a detour's header points at its slot, and a slot
 * replaced in the table (made again for a post_handler) stays reachable.
 */
static struct fhook_kprobe_slot *slots_made;

bool fhook_kprobe_arch_ready(void)
{
	fhook_assert_not_held(fhook_text_mutex());
	return fhook_cs_load();
}

/* The first probe in use in (@addr, @addr + @len), or 0. */
static unsigned long in_use_inside(unsigned long addr, unsigned long len)
{
	unsigned long b;

	for (b = addr + 1; b < addr + len; b++) {
		struct fhook_kprobe_slot *n = table_find(b);

		if (n && n->addr == b && n->in_use)
			return b;
	}
	return 0;
}

/* The probe in use whose jump covers @addr past its first byte, if any. */
static struct fhook_kprobe_slot *jump_over(unsigned long addr)
{
	unsigned long b;

	for (b = addr > 32 ? addr - 32 : 0; b < addr; b++) {
		struct fhook_kprobe_slot *n = table_find(b);

		if (n && n->addr == b && n->in_use && n->can == FHOOK_KPROBE_JUMP &&
		    b + n->covered > addr)
			return n;
	}
	return NULL;
}

static void clear_armed(struct fhook_kprobe_slot **slots, size_t nr);

/* @s is one of the slots ever made, for good. */
static void slot_publish(struct fhook_kprobe_slot *s)
{
	s->made = slots_made;
	__atomic_store_n(&slots_made, s, __ATOMIC_RELEASE);
}

/*
 * A probe is wanted at @addr, inside the bytes the jump of @over replaces:
 * as the kernel unoptimizes such a probe, @over becomes a trap on its
 * first instruction alone (a new slot; the old one stays for a thread
 * still in its copy, which skips @addr this once).  Its function is
 * [@start, @start + @size) with @pad, @addr's.
 */
static int retrap(struct fhook_kprobe_slot *over, unsigned long addr, unsigned long start,
		  unsigned long size, unsigned int pad, struct fhook_kprobe_slot **tp)
{
	struct text_poke_loc loc = { .addr = over->addr, .len = 5, .emu_ip = FHOOK_EMU_KPROBE };
	struct fhook_kprobe_slot *t;
	unsigned int i;
	char why[96];
	int ret;

	if (over->addr < start || over->addr >= start + size)
		return -EBUSY;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->addr = over->addr;
	t->cookie = over->cookie;
	ret = slot_make(t, start, size, pad, false, over->post, why, sizeof(why));
	if (ret) {
		free(t);
		return ret;
	}
	for (i = 0; i < t->nr_exits; i++) {
		ret = table_add(t->exits[i].at, t);
		if (ret) {
			free(t);
			return ret;
		}
	}
	snprintf(t->why, sizeof(t->why), "another probe at +0x%lx is inside the bytes "
		 "a jump would replace", addr - over->addr);
	t->for_neighbour = true;
	t->in_use = true;
	slot_publish(t);
	if (!over->armed) {
		fhook_addr_table_replace(&table, t->addr, t);
		over->in_use = false;
		*tp = t;
		return 0;
	}
	/* armed first: a thread that meets the int3 during the batch goes to @t */
	__atomic_fetch_add(&t->gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->armed, FHOOK_KPROBE_TRAP, __ATOMIC_RELEASE);
	nr_armed++;
	fhook_addr_table_replace(&table, t->addr, t);
	if (over->armed == FHOOK_KPROBE_JUMP) {
		loc.new[0] = INT3_INSN_OPCODE;
		memcpy(loc.new + 1, over->orig + 1, 4);
		ret = fhook_text_poke_batch(&loc, 1);
		if (ret) {
			fhook_addr_table_replace(&table, t->addr, over);
			clear_armed(&t, 1);
			return ret;
		}
	}
	clear_armed(&over, 1);
	*tp = t;
	return 0;
}

int fhook_kprobe_slot_get(unsigned long addr, unsigned long start, unsigned long size,
			  unsigned int pad, bool jump, bool post, void *cookie,
			  struct fhook_kprobe_slot **slotp, struct fhook_kprobe_slot **retrapped,
			  char *why, size_t why_size)
{
	struct fhook_kprobe_slot *s = table_find(addr), *over = jump_over(addr);
	unsigned long inside;
	unsigned int i;
	int ret;

	fhook_assert_held(fhook_text_mutex());
	*retrapped = NULL;
	if (over) {
		ret = retrap(over, addr, start, size, pad, retrapped);
		if (ret) {
			snprintf(why, why_size, "inside the jump of the probe at -0x%lx, which "
				 "cannot become a trap", addr - over->addr);
			return ret;
		}
		s = table_find(addr);
	}
	/*
	 * One made for the same use is reused, unless a jump's bytes now hold
	 * another probe, or it is a trap only for a neighbour gone since;
	 * else a new one takes its place.
	 */
	if (s && s->addr == addr && s->cookie == cookie && s->post == post &&
	    (s->can == FHOOK_KPROBE_JUMP ? !in_use_inside(addr, s->covered) :
	     !s->for_neighbour || in_use_inside(addr, 32))) {
		if (s->keep_trap) {
			/* a thread was inside last time: try again */
			s->keep_trap = false;
			s->why[0] = 0;
		}
		snprintf(why, why_size, "%s", s->why);
		s->in_use = true;
		*slotp = s;
		return 0;
	}
	if (s && s->armed)
		return -EBUSY;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->addr = addr;
	s->cookie = cookie;
	why[0] = 0;
	ret = slot_make(s, start, size, pad, jump && !post, post, why, why_size);
	inside = !ret && s->can == FHOOK_KPROBE_JUMP ? in_use_inside(addr, s->covered) : 0;
	if (inside) {
		/* a probe there must still see its hits: one instruction only */
		memset(s, 0, sizeof(*s));
		s->addr = addr;
		s->cookie = cookie;
		ret = slot_make(s, start, size, pad, false, post, why, why_size);
		snprintf(why, why_size, "another probe at +0x%lx is inside the bytes a jump "
			 "would replace", inside - addr);
		s->for_neighbour = true;
	}
	if (!ret && post && !why[0])
		snprintf(why, why_size, "a post_handler needs the trap");
	else if (!ret && !jump && !why[0])
		snprintf(why, why_size, "jumps are off");
	if (!ret)
		ret = table_add(addr, s);
	for (i = 0; !ret && i < s->nr_exits; i++)
		ret = table_add(s->exits[i].at, s);
	if (ret) {
		free(s);	/* never published */
		return ret;
	}
	snprintf(s->why, sizeof(s->why), "%s", why);
	s->in_use = true;
	slot_publish(s);
	*slotp = s;
	return 0;
}

static bool jump_wanted(const struct fhook_kprobe_slot *s)
{
	return s->can == FHOOK_KPROBE_JUMP && !s->keep_trap;
}

/* ---- threads inside the bytes a jump replaces ---- */

/*
 * The user-space pc of thread @tid if it sleeps (in a system call or a
 * page fault), 0 if it is runnable (running, or preempted and waiting for
 * a cpu: the kernel tells no pc then) or gone.
 */
static unsigned long thread_pc(pid_t tid, bool *runnable)
{
	char path[64], buf[256], *last;

	*runnable = false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if (fhook_read_small_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	if (!strncmp(buf, "running", 7)) {
		*runnable = true;
		return 0;
	}
	last = strrchr(buf, ' ');
	return last ? strtoul(last + 1, NULL, 16) : 0;
}

/*
 * A runnable thread is asked where it is: a SIGURG queued to it (SI_QUEUE
 * from this process, a tag in its value) is answered by where_handler()
 * with the pc it interrupted.  Guessing is not enough: a thread preempted
 * inside the bytes waits for a cpu for many milliseconds on a busy
 * machine, and resumes in the middle of the jump.
 *
 * Not SIGTRAP, though its handler is ours: a signal of a kind already
 * pending is dropped, so an int3 met while the question is on its way
 * (a running thread sees it only at its next entry to the kernel) would
 * be lost.  SIGURG's default is to be ignored, and it is used only while
 * the program leaves it so (SIG_DFL or SIG_IGN): our handler is installed
 * for one round of questions and the program's disposition put back
 * after it, which also discards a question still pending (a thread that
 * blocks SIGURG is not asked: it is not known).  A thread is asked only
 * when it was runnable at two looks in a row, and signals go to no thread
 * the kernel shows sleeping; one that enters a system call just as it is
 * asked may see it end with EINTR (as any signal may cause; the handler
 * restarts what can be restarted).  (FHOOK_KPROBE_NOJUMP=1: no jumps, no
 * questions.)
 * A thread that does not answer is not known to be outside: its probes
 * keep their traps.
 *
 * An answer is one word: the round's tag in the top 16 bits, the pc
 * below; the handler answers only in its own place (by thread id) and in
 * the current round.
 */
#define WHERE_MAX	256		/* threads asked per round; more: unknown */
#define WHERE_MAGIC	0xfb5eUL
#define WHERE_WAIT_NS	(3 * 1000 * 1000)	/* for the answers of a round */

static _Atomic unsigned long where_answer[WHERE_MAX] __fhook_cold_bss;
static _Atomic pid_t where_tid[WHERE_MAX] __fhook_cold_bss;
static _Atomic unsigned long where_round;

static void where_handler(int sig, siginfo_t *info, void *ctx)
{
	unsigned long v = (unsigned long)info->si_value.sival_ptr;
	unsigned long round = v >> 16 & 0xffff, idx = v & 0xffff;
	const greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	int saved_errno = errno;

	/* someone else's SIGURG: the default (ignore) was all it had */
	if (info->si_code != SI_QUEUE || v >> 48 != WHERE_MAGIC || info->si_pid != getpid())
		goto out;
	if (idx < WHERE_MAX &&
	    round == atomic_load_explicit(&where_round, memory_order_relaxed) &&
	    atomic_load_explicit(&where_tid[idx], memory_order_relaxed) ==
	    (pid_t)syscall(SYS_gettid))
		atomic_store_explicit(&where_answer[idx],
				      round << 48 | ((unsigned long)g[REG_RIP] & ((1UL << 48) - 1)),
				      memory_order_release);
out:
	errno = saved_errno;
}

/*
 * Install where_handler() for a round; false (nothing changed) if the
 * program has a handler of its own.  @old gets what to put back.
 */
static bool where_install(struct sigaction *old)
{
	struct sigaction sa;

	if (fhook_libc_sigaction(SIGURG, NULL, old))
		return false;
	if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)
		return false;	/* the program's: not ours to send it anything */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = where_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return !fhook_libc_sigaction(SIGURG, &sa, NULL);
}

/*
 * Put @old back, which discards what is still pending: unless the
 * program installed its own handler meanwhile, which stays.
 */
static void where_uninstall(const struct sigaction *old)
{
	struct sigaction cur;

	if (!fhook_libc_sigaction(SIGURG, NULL, &cur) && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == where_handler)
		fhook_libc_sigaction(SIGURG, old, NULL);
}

/* Queue the question to @tid as the @idx-th of @round: false if it could not be. */
static bool where_ask(pid_t tid, unsigned long round, unsigned long idx)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGURG;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)(WHERE_MAGIC << 48 | round << 16 | idx);
	return !syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGURG, &si);
}

/* Does thread @tid block SIGURG (or can that not be read)? */
static bool blocks_urg(pid_t tid)
{
	char path[64], buf[2048], *p;
	unsigned long long blk;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (fhook_read_small_file(path, buf, sizeof(buf)) <= 0)
		return true;
	p = strstr(buf, "\nSigBlk:\t");
	if (!p)
		return true;
	blk = strtoull(p + 9, NULL, 16);
	return blk & (1ULL << (SIGURG - 1));
}

static int slot_cmp(const void *a, const void *b)
{
	const struct fhook_kprobe_slot *x = *(struct fhook_kprobe_slot *const *)a;
	const struct fhook_kprobe_slot *y = *(struct fhook_kprobe_slot *const *)b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The slot among @s (sorted) whose jump would cover @pc past its first byte. */
static struct fhook_kprobe_slot *slot_around(struct fhook_kprobe_slot **s, size_t nr,
					     unsigned long pc)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s[mid]->addr < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* s[lo - 1] is the last one that starts before pc */
	if (lo && pc < s[lo - 1]->addr + s[lo - 1]->covered)
		return s[lo - 1];
	return NULL;
}

static void keep_trap(struct fhook_kprobe_slot *s, const char *why)
{
	if (!jump_wanted(s))
		return;
	s->keep_trap = true;
	snprintf(s->why, sizeof(s->why), "%s", why);
	kp_stats.kept_trap++;
}

/* 1 if a thread at @pc is inside a slot of @s, which keeps its trap if @last. */
static int inside(struct fhook_kprobe_slot **s, size_t nr, unsigned long pc, bool last)
{
	struct fhook_kprobe_slot *in = slot_around(s, nr, pc);

	if (in && last)
		keep_trap(in, "a thread stayed inside its first bytes");
	return !!in;
}

/*
 * One look at every other thread (the int3s are in place: a thread
 * outside the bytes now can only come in through the first one, which
 * takes it to the slot).  Runnable threads are asked where they are if
 * they were runnable at the last look too (@runnable, by thread id,
 * updated here).  Returns how many are inside a slot of @s or could not
 * be located; on the last round those slots keep their traps (every slot,
 * for a thread that could not be located).
 */
static int where_round_once(struct fhook_kprobe_slot **s, size_t nr, bool last,
			    pid_t *runnable, size_t *nr_runnable)
{
	pid_t self = (pid_t)syscall(SYS_gettid), asked[WHERE_MAX], now_runnable[WHERE_MAX];
	unsigned long round, pcs[WHERE_MAX];
	struct timespec t0, now, nap = { 0, 50 * 1000 };
	size_t i, nasked = 0, nanswered = 0, nnow = 0;
	struct sigaction old;
	bool unknown = false, installed = false, ask = true;
	struct dirent *de;
	int busy = 0;
	DIR *dir;

	round = (atomic_load_explicit(&where_round, memory_order_relaxed) + 1) & 0xffff;
	round += !round;
	atomic_store_explicit(&where_round, round, memory_order_relaxed);
	dir = opendir("/proc/self/task");
	if (!dir) {
		/* no /proc at all: nothing can be seen (start-up is one thread) */
		if (errno == ENOENT)
			return 0;
		unknown = true;
		goto out;
	}
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		bool was = false, is;
		unsigned long pc;

		if (tid <= 0 || tid == self)
			continue;
		pc = thread_pc(tid, &is);
		if (is) {
			for (i = 0; i < *nr_runnable && !was; i++)
				was = runnable[i] == tid;
			if (nnow < WHERE_MAX)
				now_runnable[nnow++] = tid;
			if (!ask || !was || nasked == WHERE_MAX || blocks_urg(tid)) {
				unknown = true;
				continue;
			}
			if (!installed && !(installed = where_install(&old))) {
				ask = false;
				unknown = true;
				continue;
			}
			atomic_store_explicit(&where_tid[nasked], tid, memory_order_relaxed);
			atomic_store_explicit(&where_answer[nasked], 0, memory_order_relaxed);
			if (where_ask(tid, round, nasked))
				asked[nasked++] = tid;
			else if (errno != ESRCH)
				unknown = true;	/* gone meanwhile is fine */
			continue;
		}
		if (pc)
			busy += inside(s, nr, pc, last);
	}
	closedir(dir);
	memcpy(runnable, now_runnable, nnow * sizeof(*runnable));
	*nr_runnable = nnow;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(pcs, 0, sizeof(pcs));
	while (nanswered < nasked) {
		for (i = 0; i < nasked; i++) {
			unsigned long a = atomic_load_explicit(&where_answer[i],
							      memory_order_acquire);

			if (!pcs[i] && a >> 48 == round) {
				pcs[i] = a & ((1UL << 48) - 1);
				pcs[i] += !pcs[i];	/* pc 0: answered all the same */
				nanswered++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (nanswered == nasked || (now.tv_sec - t0.tv_sec) * 1000000000L +
		    now.tv_nsec - t0.tv_nsec > WHERE_WAIT_NS)
			break;
		nanosleep(&nap, NULL);
	}
	if (installed)
		where_uninstall(&old);
	for (i = 0; i < nasked; i++) {
		if (pcs[i])
			busy += inside(s, nr, pcs[i], last);
		else if (!syscall(SYS_tgkill, getpid(), asked[i], 0))
			unknown = true;	/* not exited: still waiting for a cpu */
	}
out:
	if (unknown) {
		busy++;
		for (i = 0; last && i < nr; i++)
			keep_trap(s[i], "a thread did not say where it was");
	}
	return busy;
}

#define INSIDE_TRIES	20	/* 1 ms apart */

/* Mark (kept as a trap) the slots of @s (sorted) a thread stays inside of. */
static void keep_traps_for_threads_inside(struct fhook_kprobe_slot **s, size_t nr)
{
	pid_t runnable[WHERE_MAX];
	size_t nr_runnable = 0;
	int try;

	/* the first look asks nothing: threads seen runnable then are asked at the next */
	for (try = 0; try < INSIDE_TRIES; try++) {
		struct timespec ts = { 0, 1000 * 1000 };

		if (!where_round_once(s, nr, try == INSIDE_TRIES - 1, runnable, &nr_runnable))
			break;
		nanosleep(&ts, NULL);
	}
}

/* ---- placing and removing ---- */


enum poke_mode {
	POKE_TRAPS,		/* an int3 on every slot */
	POKE_JUMPS,		/* a jmp on the slots that can have one */
	POKE_ALL,		/* both: a jmp where it can be, else an int3 */
	POKE_ORIG,		/* the original bytes back */
};

static int poke(struct fhook_kprobe_slot **slots, size_t nr, enum poke_mode mode)
{
	struct text_poke_loc *locs = calloc(nr ? nr : 1, sizeof(*locs));
	size_t i, n = 0;
	int ret;

	if (!locs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct fhook_kprobe_slot *s = slots[i];
		struct text_poke_loc *l = &locs[n];
		bool jump = jump_wanted(s);

		if (mode == POKE_JUMPS && !jump)
			continue;
		l->addr = s->addr;
		if (mode == POKE_ORIG) {
			l->len = s->armed == FHOOK_KPROBE_JUMP ? 5 : 1;
			memcpy(l->new, s->orig, l->len);
			l->emu_ip = s->armed == FHOOK_KPROBE_JUMP ? s->entry : FHOOK_EMU_KPROBE;
		} else if (jump && mode != POKE_TRAPS) {
			int32_t rel = (int32_t)((long)s->entry - (long)(s->addr + 5));

			l->len = 5;
			l->new[0] = 0xe9;
			memcpy(l->new + 1, &rel, 4);
			l->emu_ip = s->entry;
		} else {
			l->len = 1;
			l->new[0] = INT3_INSN_OPCODE;
			l->emu_ip = FHOOK_EMU_KPROBE;
		}
		n++;
	}
	ret = fhook_text_poke_batch(locs, n);
	free(locs);
	return ret;
}

/* Is the calling thread the process's only one? */
static bool only_thread(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!dir)
		return false;
	while ((de = readdir(dir)) && n < 2)
		n += de->d_name[0] != '.';
	closedir(dir);
	return n == 1;
}

static void set_armed(struct fhook_kprobe_slot **slots, size_t nr, bool jumps)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		nr_armed += !slots[i]->armed;
		__atomic_fetch_add(&slots[i]->gen, 1, __ATOMIC_RELAXED);
	}
	for (i = 0; i < nr; i++)
		__atomic_store_n(&slots[i]->armed, jumps && jump_wanted(slots[i]) ?
				 FHOOK_KPROBE_JUMP : FHOOK_KPROBE_TRAP, __ATOMIC_RELEASE);
}

static void clear_armed(struct fhook_kprobe_slot **slots, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		nr_armed -= !!slots[i]->armed;
		__atomic_store_n(&slots[i]->armed, 0, __ATOMIC_RELEASE);
		slots[i]->in_use = false;
		slots[i]->keep_trap = false;
	}
}

int fhook_kprobe_arm(struct fhook_kprobe_slot **slots, size_t nr)
{
	struct fhook_kprobe_slot **sorted;
	bool any_jump = false;
	size_t i;
	int ret;

	fhook_assert_held(fhook_text_mutex());
	for (i = 0; i < nr; i++)
		any_jump |= jump_wanted(slots[i]);
	/* before the first int3: a thread that meets one during the batch is ours */
	set_armed(slots, nr, false);
	/* no other thread can be inside the bytes: one batch (start-up) */
	if (any_jump && only_thread()) {
		ret = poke(slots, nr, POKE_ALL);
		if (ret)
			clear_armed(slots, nr);
		else
			set_armed(slots, nr, true);
		return ret;
	}
	ret = poke(slots, nr, POKE_TRAPS);
	if (ret) {
		clear_armed(slots, nr);
		return ret;
	}
	if (!any_jump)
		return 0;
	sorted = malloc(nr * sizeof(*sorted));
	if (!sorted)
		return 0;	/* traps work */
	memcpy(sorted, slots, nr * sizeof(*sorted));
	qsort(sorted, nr, sizeof(*sorted), slot_cmp);
	keep_traps_for_threads_inside(sorted, nr);
	free(sorted);
	if (!poke(slots, nr, POKE_JUMPS))
		set_armed(slots, nr, true);
	return 0;	/* where no jump could be written, traps work */
}

/* Do the bytes at @s's address still hold what placing it wrote? */
static bool still_placed(const struct fhook_kprobe_slot *s)
{
	unsigned char want[5], cur[5];
	size_t len = 1;

	want[0] = INT3_INSN_OPCODE;
	if (s->armed == FHOOK_KPROBE_JUMP) {
		int32_t rel = (int32_t)((long)s->entry - (long)(s->addr + 5));

		want[0] = 0xe9;
		memcpy(want + 1, &rel, 4);
		len = 5;
	}
	return !fhook_text_read(s->addr, cur, len) && !memcmp(cur, want, len);
}

int fhook_kprobe_disarm(struct fhook_kprobe_slot **slots, size_t nr)
{
	struct fhook_kprobe_slot **ours = malloc((nr ? nr : 1) * sizeof(*ours));
	size_t i, n = 0;
	int ret;

	if (!ours)
		return -ENOMEM;
	/*
	 * Read, compare, write, as for a site: bytes that are not ours any
	 * more (the object was unloaded, and maybe another mapped there)
	 * are left alone, and their slot forgotten.
	 */
	for (i = 0; i < nr; i++) {
		if (still_placed(slots[i]))
			ours[n++] = slots[i];
		else
			clear_armed(&slots[i], 1);
	}
	ret = poke(ours, n, POKE_ORIG);
	/* after the batch: a thread that trapped in it still finds its slot */
	if (!ret)
		clear_armed(ours, n);
	free(ours);
	return ret;
}

void fhook_kprobe_forget(struct fhook_kprobe_slot **slots, size_t nr)
{
	clear_armed(slots, nr);
}

/* ---- hits ---- */

/* no hook yet: nothing to run */
static int no_hit(void *cookie, struct pt_regs *regs, const void *vregs)
{
	return 0;
}

int (*fhook_kprobe_hit_hook)(void *cookie, struct pt_regs *regs, const void *vregs) = no_hit;

static const int greg_of[] = {
	REG_R15, REG_R14, REG_R13, REG_R12, REG_RBP, REG_RBX, REG_R11, REG_R10,
	REG_R9, REG_R8, REG_RAX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
};

static void regs_from(struct pt_regs *regs, const greg_t *g)
{
	unsigned long *r = (unsigned long *)regs;
	size_t i;

	for (i = 0; i < sizeof(greg_of) / sizeof(greg_of[0]); i++)
		r[i] = (unsigned long)g[greg_of[i]];
	regs->orig_ax = -1UL;
	regs->ip = (unsigned long)g[REG_RIP];
	regs->cs = 0x33;
	regs->flags = (unsigned long)g[REG_EFL];
	regs->sp = (unsigned long)g[REG_RSP];
	regs->ss = 0x2b;
}

static void regs_to(const struct pt_regs *regs, greg_t *g)
{
	const unsigned long *r = (const unsigned long *)regs;
	size_t i;

	for (i = 0; i < sizeof(greg_of) / sizeof(greg_of[0]); i++)
		g[greg_of[i]] = (greg_t)r[i];
	g[REG_EFL] = (greg_t)regs->flags;
}

/*
 * A post_handler's exit: the one instruction was run out of line (or is
 * emulated here: ret, and the target an indirect jmp or call pushed), and
 * the handler runs in the signal handler with regs->ip where the thread
 * goes on, as after the kernel's single step.
 */
static bool post_exit(struct fhook_kprobe_slot *s, const struct fhook_kprobe_exit *x, greg_t *g)
{
	struct pt_regs regs;
	unsigned long ip, resume;
	sigset_t trap;

	/* a post_handler may meet another probe: that trap must not kill the thread */
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);
	syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &trap, NULL, _NSIG / 8);
	regs_from(&regs, g);
	switch (x->kind) {
	case KPROBE_EXIT_RET:
		ip = resume = *(unsigned long *)regs.sp;
		regs.sp += 8 + x->imm;
		break;
	case KPROBE_EXIT_JMP_IND:
		ip = resume = *(unsigned long *)regs.sp;
		regs.sp += 8 + KPROBE_RED_ZONE;
		break;
	case KPROBE_EXIT_CALL_IND:
		ip = resume = *(unsigned long *)regs.sp;
		*(unsigned long *)regs.sp = x->ip;	/* the return address, where a call puts it */
		break;
	default:
		ip = x->ip;
		resume = x->resume;
		break;
	}
	regs.ip = ip;
	if (kp_hooks.post)
		kp_hooks.post(s->cookie, &regs);
	regs_to(&regs, g);
	g[REG_RSP] = (greg_t)regs.sp;
	g[REG_RIP] = (greg_t)(regs.ip == ip ? resume : regs.ip);
	return true;
}

/*
 * An int3 of ours.  The handlers do not run here: the thread goes on at
 * its slot's entry, as a jump would have taken it, and they run from the
 * trampoline in the thread's ordinary context (no signal-safety rules for
 * them, no registration of the thread inside a signal handler, and no
 * second trap to fear if they meet another probe).  Only a post_handler's
 * exits run their handlers here; the thread passed the entry, so it is
 * known to util/tasks.h already.
 */
/*
 * The int3 that a jump's displacement holds after its first instruction
 * (rel_fit()): another tool's breakpoint ran that instruction for the
 * thread (the jump was not taken), which goes on with the copy of the
 * second one.  The probe misses this call, as it would under a uprobe
 * in the kernel.
 */
/*
 * Write @len bytes of text from a signal handler: /proc/self/mem, opened
 * here (open, pwrite and close are async-signal-safe).
 */
static bool handler_text_write(unsigned long addr, const unsigned char *buf, size_t len)
{
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = pwrite(fd, buf, len, (off_t)addr) == (ssize_t)len;
	close(fd);
	return ok;
}

/*
 * The other tool's breakpoint stays on the first byte, and when it goes,
 * its tool writes back the file's first byte (a uprobe does), not our
 * jump's: the bytes after it must be the function's own by then.  So the
 * jump's other bytes go back to the original ones now, the int3 after
 * the first instruction last (a thread that meets it meanwhile still
 * goes to the copy); the probe on this function is off from here on, as
 * the kernel's probe is under another one's breakpoint.  Disarming finds
 * the bytes not its own and leaves them.  Once, by the first thread.
 */
static void give_back(struct fhook_kprobe_slot *s)
{
	unsigned long k = s->after_first - s->addr;

	if (__atomic_exchange_n(&s->given_back, true, __ATOMIC_ACQ_REL))
		return;
	/* (the rest of the first instruction runs from the other tool's copy only) */
	if (k > 1 && !handler_text_write(s->addr + 1, s->orig + 1, k - 1))
		return;
	if (k + 1 < FHOOK_KPROBE_MAX_BYTES &&
	    !handler_text_write(s->after_first + 1, s->orig + k + 1,
				FHOOK_KPROBE_MAX_BYTES - k - 1))
		return;
	fhook_sync_core();
	if (handler_text_write(s->after_first, s->orig + k, 1))
		fhook_sync_core();
}

static bool stepped_over(unsigned long ip, greg_t *g)
{
	struct fhook_kprobe_slot *s;
	unsigned long k;

	for (k = 1; k < FHOOK_KPROBE_MAX_BYTES; k++) {
		s = table_find(ip - k);
		if (s && s->after_first == ip && s->second &&
		    __atomic_load_n(&s->armed, __ATOMIC_ACQUIRE) == FHOOK_KPROBE_JUMP &&
		    *(volatile unsigned char *)ip == INT3_INSN_OPCODE) {
			__atomic_fetch_add(&kp_stats.stepped_over, 1, __ATOMIC_RELAXED);
			/* someone's breakpoint, not our jump, at the first byte */
			if (*(volatile unsigned char *)s->addr == INT3_INSN_OPCODE)
				give_back(s);
			g[REG_RIP] = (greg_t)s->second;
			return true;
		}
	}
	return false;
}

bool fhook_kprobe_trap(unsigned long ip, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	struct fhook_kprobe_slot *s = table_find(ip);
	unsigned int i, gen;

	if (ip + 1 == (unsigned long)fhook_kprobe_setregs) {
		/* a pre_handler moved the ip of a probe inside a function */
		struct pt_regs *regs = (struct pt_regs *)g[REG_RSP];

		regs_to(regs, g);
		g[REG_RSP] = (greg_t)regs->sp;
		g[REG_RIP] = (greg_t)regs->ip;
		return true;
	}
	if (!s)
		return stepped_over(ip, g);
	for (i = 0; i < s->nr_exits; i++)
		if (ip == s->exits[i].at)
			return post_exit(s, &s->exits[i], g);
	gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
	if (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE)) {
		/*
		 * Removed since this thread trapped: the original bytes are
		 * back, run them.  An int3 still there with no arming since
		 * (arming bumps the generation before it writes the int3) is
		 * someone else's (the slot outlived its object): not ours to
		 * handle.  One placed again since runs again, and traps again.
		 */
		if (*(volatile unsigned char *)ip == INT3_INSN_OPCODE) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&s->gen, __ATOMIC_RELAXED) == gen)
				return false;
		}
		g[REG_RIP] = (greg_t)ip;
		return true;
	}
	__atomic_fetch_add(&kp_stats.traps, 1, __ATOMIC_RELAXED);
	g[REG_RIP] = (greg_t)s->entry;
	return true;
}
