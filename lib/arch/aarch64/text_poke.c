// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writing aarch64 text.
 *
 * A site is one word, toggled between "nop" and "bl" by one aligned
 * 32-bit store: the architecture lets other threads execute such a word
 * while it changes (B, BL and NOP are among the instructions concurrent
 * modification allows), so no int3-style protocol and no stop of the
 * world is needed, as in the kernel's arm64 ftrace.  The store is followed
 * by cleaning the data cache and invalidating the instruction cache to
 * the point of unification (__builtin___clear_cache emits DC CVAU, IC
 * IVAU, DSB, ISB).  Where more than one word changes together (the pads
 * at start-up), every thread's pipeline is also synchronized with
 * membarrier(SYNC_CORE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

static pthread_mutex_t text_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct fhook_poke_stats stats;
static int sync_cmd = -1;

void fhook_text_lock(void)
{
	pthread_mutex_lock(&text_mutex);
}

void fhook_text_unlock(void)
{
	pthread_mutex_unlock(&text_mutex);
}

void fhook_poke_stats(struct fhook_poke_stats *st)
{
	*st = stats;
}

static long sys_membarrier(int cmd, unsigned int flags)
{
	return syscall(__NR_membarrier, cmd, flags, 0);
}

static void sync_init(void)
{
	long mask;

	if (sync_cmd >= 0)
		return;
	sync_cmd = 0;
	mask = sys_membarrier(MEMBARRIER_CMD_QUERY, 0);
	if (mask < 0)
		return;
	if ((mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) &&
	    !sys_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0))
		sync_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE;
}

void fhook_sync_core(void)
{
	sync_init();
	stats.syncs++;
	if (sync_cmd > 0)
		sys_membarrier(sync_cmd, 0);
	/*
	 * Without it, each CPU's next context switch (which synchronizes
	 * its instruction stream) does the same, later.
	 */
}

int fhook_text_read(unsigned long addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	struct fhook_text_seg seg;

	if (fhook_arch_hooks.text_seg && fhook_arch_hooks.text_seg(addr, &seg) &&
	    (seg.prot & PROT_READ) && addr + len <= seg.end) {
		memcpy(buf, (void *)addr, len);
		return 0;
	}
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	return -EFAULT;
}

/* Protection of the page at @addr: its object's segment, else /proc/self/maps. */
static int page_prot(unsigned long addr, int *prot)
{
	struct fhook_text_seg seg;
	char line[512];
	FILE *f;
	int ret = -EFAULT;

	if (fhook_arch_hooks.text_seg && fhook_arch_hooks.text_seg(addr, &seg)) {
		*prot = seg.prot;
		return 0;
	}
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) != 3 || addr < lo || addr >= hi)
			continue;
		*prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
			(p[2] == 'x' ? PROT_EXEC : 0);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static unsigned long page_size(void)
{
	static unsigned long psz;

	if (!psz)
		psz = (unsigned long)sysconf(_SC_PAGESIZE);
	return psz;
}

/*
 * The pages [@lo, @hi) writable, and executable still (other threads run
 * other code of them); *@prot gets what to restore.
 */
static int pages_open(unsigned long lo, unsigned long hi, int *prot)
{
	if (page_prot(lo, prot))
		*prot = PROT_READ | PROT_EXEC;
	if (*prot & PROT_WRITE)
		return 0;
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EPERM;
	return 0;
}

static void pages_close(unsigned long lo, unsigned long hi, int prot)
{
	if (!(prot & PROT_WRITE))
		mprotect((void *)lo, hi - lo, prot);
}

/* One store for an aligned word or doubleword, so no reader sees half of it. */
static void store(unsigned long addr, const void *buf, size_t len)
{
	if (len == 4 && !(addr & 3)) {
		uint32_t w;

		memcpy(&w, buf, 4);
		__atomic_store_n((uint32_t *)addr, w, __ATOMIC_RELEASE);
	} else if (len == 8 && !(addr & 7)) {
		uint64_t d;

		memcpy(&d, buf, 8);
		__atomic_store_n((uint64_t *)addr, d, __ATOMIC_RELEASE);
	} else {
		memcpy((void *)addr, buf, len);
	}
}

int fhook_a64_text_write(unsigned long addr, const void *buf, size_t len, bool sync)
{
	unsigned long psz = page_size();
	unsigned long lo = addr & ~(psz - 1), hi = (addr + len + psz - 1) & ~(psz - 1);
	int prot;

	if (pages_open(lo, hi, &prot))
		return -EPERM;
	store(addr, buf, len);
	pages_close(lo, hi, prot);
	__builtin___clear_cache((char *)addr, (char *)addr + len);
	stats.writes++;
	if (sync)
		fhook_sync_core();
	return 0;
}

static int loc_cmp(const void *a, const void *b)
{
	const struct text_poke_loc *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Before a site calls a stub, its literal slot names the stub (the
 * kernel's CALL_OPS: the ops pointer before the function), for the
 * common trampoline a site out of any stub's reach calls.  A misaligned
 * slot (GCC at -Os) is never written: a doubleword store there would not
 * be single-copy atomic, and its site is never sent to that trampoline.
 */
static void literal_for(const struct text_poke_loc *l)
{
	unsigned long target = fhook_site_call_target(l->new, l->addr), lit, stub;

	if (!target)
		return;
	stub = fhook_a64_stub_literal(target);
	lit = a64_site_literal(l->addr);
	if (!stub || (lit & 7) || *(unsigned long *)lit == stub)
		return;
	store(lit, &stub, 8);
}

int fhook_text_poke_batch(struct text_poke_loc *locs, size_t nr)
{
	unsigned long psz = page_size();
	size_t i, j;
	int ret = 0;

	if (!nr)
		return 0;
	stats.batches++;
	qsort(locs, nr, sizeof(*locs), loc_cmp);
	/* each run of sites on one page (or two, for the literal): one mprotect pair */
	for (i = 0; i < nr && !ret; i = j) {
		unsigned long lo = (locs[i].addr - 24) & ~(psz - 1), hi;
		int prot;

		for (j = i + 1; j < nr && locs[j].addr + locs[j].len <= lo + 2 * psz; j++)
			;
		hi = (locs[j - 1].addr + locs[j - 1].len + psz - 1) & ~(psz - 1);
		if (pages_open(lo, hi, &prot)) {
			ret = -EPERM;
			break;
		}
		for (size_t k = i; k < j; k++) {
			literal_for(&locs[k]);
			store(locs[k].addr, locs[k].new, locs[k].len);
			__builtin___clear_cache((char *)locs[k].addr,
						(char *)locs[k].addr + locs[k].len);
			stats.writes++;
		}
		pages_close(lo, hi, prot);
	}
	return ret;
}

/* Is [@a, @a + @len) in an object's executable text? */
static bool in_text(unsigned long a, size_t len, struct fhook_text_seg *seg)
{
	if (a < seg->start || a + len > seg->end) {
		if (!fhook_arch_hooks.text_seg || !fhook_arch_hooks.text_seg(a, seg)) {
			seg->start = seg->end = 0;
			return false;
		}
	}
	return (seg->prot & PROT_EXEC) && a + len <= seg->end;
}

long __fhook_startup fhook_text_init_pads(const unsigned long *addrs, size_t stride, size_t nr,
					  unsigned long bias, bool expect_pads, bool records)
{
	static const uint32_t mov = A64_MOV_X9_X30;
	struct fhook_text_seg seg = { 0, 0, 0 };
	unsigned long psz = page_size(), open_lo = 0, open_hi = 0;
	size_t i, pads = 0;
	long others = 0;
	int prot = 0, ret = 0;

	(void)expect_pads;
	for (i = 0; i < nr && !ret; i++) {
		unsigned long a = addrs[i * stride], site;

		if (!a)
			continue;
		a += bias;
		if (records) {
			if (!in_text(a, FHOOK_SITE_ADJUST_SPAN, &seg))
				continue;
			site = fhook_site_adjust(a);
		} else {
			site = a;
			if (!in_text(site - 4, 8, &seg))
				continue;
		}
		if (!fhook_site_is_pad((const unsigned char *)site)) {
			others += !fhook_site_is_nop((const unsigned char *)site);
			continue;
		}
		/* sites come in address order mostly: keep one page open */
		if (site - 4 < open_lo || site >= open_hi) {
			if (open_hi)
				pages_close(open_lo, open_hi, prot);
			open_lo = (site - 4) & ~(psz - 1);
			open_hi = (site + psz) & ~(psz - 1);
			if (pages_open(open_lo, open_hi, &prot)) {
				open_hi = 0;
				ret = -EPERM;
				break;
			}
		}
		store(site - 4, &mov, 4);
		__builtin___clear_cache((char *)site - 4, (char *)site);
		pads++;
	}
	if (open_hi)
		pages_close(open_lo, open_hi, prot);
	stats.writes += pads;
	if (pads) {
		stats.batches++;
		fhook_sync_core();
	}
	return ret ? ret : others;
}
