// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writing code that other threads may be running: the kernel's
 * text_poke_bp_batch() protocol, for user space.
 *
 *   1. int3 on the first byte of every site; serialize every thread
 *   2. every tail (bytes 1..n-1); serialize
 *   3. every first byte; serialize
 *
 * A thread that reaches a site in between traps into our SIGTRAP handler,
 * which emulates the new instruction (a call or a nop), so the thread goes
 * on as if it had met it.  "Serialize" is membarrier()'s SYNC_CORE command:
 * every running thread of the process executes a core-serializing
 * instruction before it returns, so no stale decoded bytes survive.
 *
 * Pages are made writable for the batch with mprotect(); where the system
 * refuses writable+executable mappings the bytes go through /proc/self/mem,
 * which writes regardless of page protection.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/sigchain.h"
#include "internal.h"
#include "util/bsearch.h"
#include "util/libc.h"
#include "util/lockdep.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

static pthread_mutex_t text_mutex = PTHREAD_MUTEX_INITIALIZER;

/* The batch being applied, for the trap handler. */
static struct text_poke_loc *_Atomic bp_locs;
static _Atomic size_t bp_nr;
static _Atomic int bp_refs;

static struct fhook_poke_stats stats;
static int sync_cmd = -1;	/* membarrier command, 0 = none works */
static int procmem_fd = -1;
static int force_procmem = -1;

void fhook_text_lock(void)
{
	pthread_mutex_lock(&text_mutex);
}

void fhook_text_unlock(void)
{
	pthread_mutex_unlock(&text_mutex);
}

pthread_mutex_t *fhook_text_mutex(void)
{
	return &text_mutex;
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
	    !sys_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0)) {
		sync_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE;
		return;
	}
	/*
	 * Without SYNC_CORE, an expedited barrier still interrupts every
	 * running thread, and x86 returns to user space through a
	 * serializing instruction.
	 */
	if ((mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    !sys_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0))
		sync_cmd = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
}

void fhook_sync_core(void)
{
	sync_init();
	stats.syncs++;
	if (sync_cmd > 0 && !sys_membarrier(sync_cmd, 0))
		return;
	/*
	 * Last resort: changing a mapping's protection makes the kernel
	 * shoot down the TLB of every CPU running us, an IPI whose return
	 * serializes.
	 */
	{
		static char *page;

		if (!page)
			page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page != MAP_FAILED && page) {
			page[0] = 1;
			mprotect(page, 4096, PROT_READ);
			mprotect(page, 4096, PROT_READ | PROT_WRITE);
		}
	}
}

int fhook_text_read(unsigned long addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	struct fhook_text_seg seg;

	if (fhook_arch_hooks.text_seg && fhook_arch_hooks.text_seg(addr, &seg) &&
	    (seg.prot & PROT_EXEC) && addr + len <= seg.end) {
		memcpy(buf, (void *)addr, len);
		return 0;
	}
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	return -EFAULT;
}

/* ---- making text writable ---- */



struct wrange {
	unsigned long start, end;
	int prot;			/* original protection */
};

/* Original protection of the page at @addr, from /proc/self/maps. */
static int maps_prot(unsigned long addr, int *prot)
{
	char line[512];
	FILE *f;
	int ret = -EFAULT;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) != 3)
			continue;
		if (addr >= lo && addr < hi) {
			*prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
				(p[2] == 'x' ? PROT_EXEC : 0);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int page_prot(unsigned long page, int *prot)
{
	struct fhook_text_seg seg;

	if (fhook_arch_hooks.text_seg && fhook_arch_hooks.text_seg(page, &seg)) {
		*prot = seg.prot;
		return 0;
	}
	return maps_prot(page, prot);
}

static bool __fhook_startup use_procmem(void)
{
	if (force_procmem < 0) {
		const char *e = secure_getenv("FHOOK_TEXT_POKE");

		force_procmem = e && !strcmp(e, "procmem");
	}
	return force_procmem;
}

static int procmem_write(unsigned long addr, const void *buf, size_t len)
{
	if (procmem_fd < 0) {
		procmem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		if (procmem_fd < 0)
			return -EPERM;
	}
	if (pwrite(procmem_fd, buf, len, (off_t)addr) != (ssize_t)len)
		return -EPERM;
	return 0;
}

int fhook_text_write_new(unsigned long addr, const void *buf, size_t len)
{
	unsigned long psz = (unsigned long)sysconf(_SC_PAGESIZE);
	unsigned long lo = addr & ~(psz - 1), hi = (addr + len + psz - 1) & ~(psz - 1);

	/*
	 * /proc/self/mem first: changing a mapping's protection costs a TLB
	 * shootdown, tens of microseconds in a virtual machine.
	 */
	if (!procmem_write(addr, buf, len))
		return 0;
	/* other threads may run other code of these pages: keep them executable */
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EPERM;
	memcpy((void *)addr, buf, len);
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
	return 0;
}

/* The pages a batch writes, as runs of pages of one protection. */
struct wranges {
	struct wrange *r;
	size_t n, cap;
	unsigned long psz;
};

/*
 * Add the pages of [@addr, @addr + @len).  Sites mostly come in address
 * order, and most share their page with the last: those cost a compare
 * (ranges_add()).  Out-of-order ones start runs of their own, which
 * ranges_settle() sorts and merges.  -EPERM: a page's protection is
 * unknown.
 */
static int ranges_add_pages(struct wranges *w, unsigned long addr, size_t len)
{
	unsigned long lo = addr & ~(w->psz - 1), hi = (addr + len + w->psz - 1) & ~(w->psz - 1);
	unsigned long p;

	for (p = lo; p < hi; p += w->psz) {
		struct wrange *last = w->n ? &w->r[w->n - 1] : NULL;
		int prot = 0;

		if (last && p >= last->start && p < last->end)
			continue;
		if (page_prot(p, &prot))
			return -EPERM;
		if (last && last->end == p && last->prot == prot) {
			last->end = p + w->psz;
			continue;
		}
		if (w->n == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 8;
			struct wrange *r = realloc(w->r, cap * sizeof(*r));

			if (!r)
				return -EPERM;
			w->r = r;
			w->cap = cap;
		}
		w->r[w->n].start = p;
		w->r[w->n].end = p + w->psz;
		w->r[w->n].prot = prot;
		w->n++;
	}
	return 0;
}

static inline int __fhook_startup ranges_add(struct wranges *w, unsigned long addr, size_t len)
{
	if (w->n && addr >= w->r[w->n - 1].start && addr + len <= w->r[w->n - 1].end)
		return 0;
	return ranges_add_pages(w, addr, len);
}

/* Sort the runs and merge those that overlap or touch with one protection. */
static void ranges_settle(struct wranges *w)
{
	size_t i, j, n = 0;

	for (i = 1; i < w->n; i++) {
		struct wrange r = w->r[i];

		for (j = i; j && w->r[j - 1].start > r.start; j--)
			w->r[j] = w->r[j - 1];
		w->r[j] = r;
	}
	for (i = 0; i < w->n; i++) {
		if (n && w->r[i].start <= w->r[n - 1].end && w->r[i].prot == w->r[n - 1].prot) {
			if (w->r[i].end > w->r[n - 1].end)
				w->r[n - 1].end = w->r[i].end;
			continue;
		}
		w->r[n++] = w->r[i];
	}
	w->n = n;
}

/*
 * Unmap the pages of [@start, @end) that still map the file unchanged
 * (present, no private copy yet), as /proc/self/pagemap (@fd) tells.
 * Copying a page that is mapped costs a TLB shootdown, tens of
 * microseconds each in a virtual machine; copying one that is not costs
 * a few, and the next touch maps the same bytes from the page cache
 * again.  A private copy (ours, a debugger's breakpoint) is never
 * dropped: its bytes are not the file's.
 */
static void unmap_file_pages(int fd, unsigned long start, unsigned long end, unsigned long psz)
{
	uint64_t e[128];
	unsigned long p = start, run = 0;

	while (p < end) {
		size_t i, n = (end - p) / psz;

		if (n > sizeof(e) / sizeof(e[0]))
			n = sizeof(e) / sizeof(e[0]);
		if (pread(fd, e, n * sizeof(e[0]), (off_t)(p / psz * sizeof(e[0]))) !=
		    (ssize_t)(n * sizeof(e[0])))
			break;
		for (i = 0; i < n; i++, p += psz) {
			/* bit 63: present; bit 61: a file page, not a private copy */
			bool file = (e[i] >> 63 & 1) && (e[i] >> 61 & 1);

			if (file && !run)
				run = p;
			if (!file && run) {
				madvise((void *)run, p - run, MADV_DONTNEED);
				run = 0;
			}
		}
	}
	if (run)
		madvise((void *)run, p - run, MADV_DONTNEED);
}

/*
 * Make the runs of @w writable, with private copies of their pages.
 * @mapped: the pages may be mapped already (else nothing has touched
 * them, and /proc is not read).  Returns their number, or -EPERM when
 * mprotect is refused (the caller then writes through /proc/self/mem).
 */
static int __fhook_startup ranges_open(struct wranges *w, bool mapped)
{
	struct wrange *r = w->r;
	int fd = -1;
	size_t i;

	ranges_settle(w);
	if (mapped)
		fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	for (i = 0; i < w->n; i++) {
		if (mprotect((void *)r[i].start, r[i].end - r[i].start,
			     r[i].prot | PROT_WRITE | PROT_READ)) {
			while (i--)
				mprotect((void *)r[i].start, r[i].end - r[i].start, r[i].prot);
			if (fd >= 0)
				close(fd);
			return -EPERM;
		}
		if (fd >= 0)
			unmap_file_pages(fd, r[i].start, r[i].end, w->psz);
		/*
		 * Every page of the range is about to be written: make the
		 * private copies in one call rather than one fault per page.
		 * Kernels before 5.14 refuse it, and the faults happen as ever.
		 */
		madvise((void *)r[i].start, r[i].end - r[i].start, MADV_POPULATE_WRITE);
	}
	if (fd >= 0)
		close(fd);
	return (int)w->n;
}

/* Make the pages of @locs writable: ranges_open() of their pages. */
static int open_ranges(struct text_poke_loc *locs, size_t nr, struct wrange **rangesp)
{
	struct wranges w = { .psz = (unsigned long)sysconf(_SC_PAGESIZE) };
	size_t i;
	int n;

	for (i = 0; i < nr; i++)
		if (ranges_add(&w, locs[i].addr, locs[i].len))
			goto fail;
	n = ranges_open(&w, true);
	if (n < 0)
		goto fail;
	*rangesp = w.r;
	return n;
fail:
	free(w.r);
	*rangesp = NULL;
	return -EPERM;
}

static void __fhook_startup close_ranges(struct wrange *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		mprotect((void *)r[i].start, r[i].end - r[i].start, r[i].prot);
	free(r);
}

/*
 * Copy at most six bytes of code: a call to memcpy() costs more than the
 * copy.  Not instrumented by the sanitizers, which keep no shadow for code
 * pages.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
__attribute__((noinline, no_sanitize_thread, no_sanitize_address))
#else
__attribute__((always_inline)) inline
#endif
static void __fhook_startup code_copy(unsigned long addr, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t i;

	/* the sizes that occur, as plain stores; the order inside one is free */
	if (len == 1) {
		*(volatile unsigned char *)addr = b[0];
	} else if (len == 4) {
		memcpy((void *)addr, b, 4);
	} else if (len == 5) {
		memcpy((void *)addr, b, 5);
	} else {
		for (i = 0; i < len; i++)
			((volatile unsigned char *)addr)[i] = b[i];
	}
	__asm__ __volatile__("" ::: "memory");
}

static inline int text_write(bool procmem, unsigned long addr, const void *buf, size_t len)
{
	stats.writes++;
	if (__builtin_expect(procmem, 0))
		return procmem_write(addr, buf, len);
	code_copy(addr, buf, len);
	return 0;
}

/*
 * The first byte at every site of a batch (what undoing an int3 needs),
 * and that every site is readable.  Sites of one segment come in a row:
 * look the segment up once per run, not once per site.
 */
static int read_old(const struct text_poke_loc *locs, size_t nr, unsigned char *old)
{
	struct fhook_text_seg seg = { 0, 0, 0 };
	unsigned char buf[FHOOK_SITE_MAX];
	size_t i;

	for (i = 0; i < nr; i++) {
		unsigned long a = locs[i].addr;

		if (a >= seg.start && a + locs[i].len <= seg.end && (seg.prot & PROT_EXEC)) {
			old[i] = *(const unsigned char *)a;
			continue;
		}
		if (fhook_text_read(a, buf, locs[i].len))
			return -EFAULT;
		old[i] = buf[0];
		if (!fhook_arch_hooks.text_seg || !fhook_arch_hooks.text_seg(a, &seg))
			seg.start = seg.end = 0;
	}
	return 0;
}

static int loc_cmp(const void *a, const void *b)
{
	const struct text_poke_loc *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}
/*
 * How this batch's bytes get written: through writable mappings of its
 * pages (@ranges), or through /proc/self/mem where those are refused.
 * Returns true for /proc/self/mem.
 */
static bool open_writes(struct text_poke_loc *locs, size_t nr, struct wrange **ranges,
			int *nranges)
{
	bool procmem = use_procmem();

	if (!procmem) {
		*nranges = open_ranges(locs, nr, ranges);
		if (*nranges < 0)
			procmem = true;
	}
	stats.procmem = procmem;
	stats.batches++;
	return procmem;
}

/* The batch in address order: the callers' lists mostly are already. */
static void sort_locs(struct text_poke_loc *locs, size_t nr)
{
	size_t i;

	for (i = 1; i < nr && locs[i - 1].addr <= locs[i].addr; i++)
		;
	if (i < nr)
		qsort(locs, nr, sizeof(*locs), loc_cmp);
}


/*
 * Threads inside trap_handler(): the kernel blocks SIGTRAP while it runs,
 * and rt_sigreturn puts the thread's own mask back, so such a thread is
 * no reason to refuse a batch (the look above skips them).  A full table
 * only makes a look see a blocked thread, and wait.
 */
#define TRAP_TIDS	64
static _Atomic pid_t trap_tids[TRAP_TIDS] __fhook_cold_bss;

static bool in_trap_handler(pid_t tid)
{
	int i;

	for (i = 0; i < TRAP_TIDS; i++)
		if (atomic_load_explicit(&trap_tids[i], memory_order_acquire) == tid)
			return true;
	return false;
}

/*
 * A thread with SIGTRAP blocked that meets one of the batch's int3s is
 * killed: the kernel unblocks a forced trap, resets its action to the
 * default and delivers it.  The libc calls that set masks are interposed
 * (lib/core/sigtrap_mask.c), but a raw rt_sigprocmask system call, a
 * swapcontext() to a context whose mask is full (glibc switches masks by
 * the system call) or a handler installed by a raw rt_sigaction get past
 * them.  No user-space protocol makes such a thread safe: every trap
 * instruction raises a signal it may have blocked, and nothing stops a
 * thread that blocks every signal.  So a batch looks first (SigBlk in
 * /proc/self/task/TID/status) and, while such a thread exists, is not
 * applied.  It waits a little first, for a thread that blocks it only for
 * a moment.  What it cannot see: a thread that blocks SIGTRAP after the
 * look and meets a site within the batch (three membarrier calls).
 *
 * glibc blocks every signal, its internal ones included, around clone, in
 * an exiting thread and in a few other calls of its own, where no
 * traceable code runs; a mask with SIGCANCEL (32) in it is such a moment,
 * not a program's choice (sigfillset() leaves that signal out).
 */
#define TRAP_BLOCKED_WAIT_US	20000	/* in total, before -EBUSY */

static unsigned long long hexnum(const char *s)
{
	unsigned long long v = 0;

	for (;; s++) {
		if (*s >= '0' && *s <= '9')
			v = v << 4 | (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			v = v << 4 | (unsigned)(*s - 'a' + 10);
		else
			return v;
	}
}

/*
 * The status files stay open between batches: opening one costs three
 * times what reading it again does.  They are ours only while their
 * identity holds (a program may close descriptors it did not open and
 * reuse the numbers): a descriptor that is no longer the file we opened is
 * forgotten, never read or closed.  The cache is this process's: after a
 * fork, what the child inherited names the parent's threads.
 */
struct task_file {
	pid_t tid;
	int fd;
	dev_t dev;
	ino_t ino;
	bool seen;
};

static struct task_file *task_files;
static size_t nr_task_files, cap_task_files;
static pid_t task_files_pid;

static bool task_file_ours(const struct task_file *t)
{
	struct stat st;

	return !fstat(t->fd, &st) && st.st_dev == t->dev && st.st_ino == t->ino;
}

static void task_file_drop(size_t i)
{
	if (task_file_ours(&task_files[i]))
		close(task_files[i].fd);
	task_files[i] = task_files[--nr_task_files];
}

static struct task_file *task_file_get(pid_t tid)
{
	struct task_file *t;
	char path[64];
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < nr_task_files; i++)
		if (task_files[i].tid == tid) {
			if (task_file_ours(&task_files[i]))
				return &task_files[i];
			task_files[i] = task_files[--nr_task_files];
			break;
		}
	if (nr_task_files == cap_task_files) {
		size_t cap = cap_task_files ? 2 * cap_task_files : 16;

		t = realloc(task_files, cap * sizeof(*t));
		if (!t)
			return NULL;
		task_files = t;
		cap_task_files = cap;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;	/* gone meanwhile */
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	t = &task_files[nr_task_files++];
	t->tid = tid;
	t->fd = fd;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	return t;
}

/*
 * Is @blk the mask trap_handler() runs with (fhook_trap_install())?  The
 * kernel sets it before the handler can note its thread in trap_tids, and
 * it stays until sigreturn, after: a thread that meets int3s often (trap
 * kprobes) spends much of its time in those windows.  A program's own
 * full mask blocks SIGSEGV and SIGBUS too.
 */
static bool in_trap_mask(unsigned long long blk)
{
	const unsigned long long never = 1ULL << (SIGKILL - 1) | 1ULL << (SIGSTOP - 1) |
		1ULL << (32 - 1) | 1ULL << (33 - 1);
	const unsigned long long open = 1ULL << (SIGSEGV - 1) | 1ULL << (SIGBUS - 1);

	return !(blk & open) && (blk | never | open) == ~0ULL;
}

/* The id of a thread other than this one with SIGTRAP blocked, or 0. */
static pid_t trap_blocked_thread(char *name, size_t size)
{
	char buf[4096], *p;
	pid_t self = (pid_t)syscall(SYS_gettid), tid, found = 0;
	struct task_file *t;
	struct dirent *de;
	DIR *dir;
	ssize_t n;
	size_t i;

	if (task_files_pid != getpid()) {
		nr_task_files = 0;	/* the parent's: leave the descriptors alone */
		task_files_pid = getpid();
	}
	dir = opendir("/proc/self/task");
	if (!dir)
		return 0;	/* no /proc: the look is not possible */
	for (i = 0; i < nr_task_files; i++)
		task_files[i].seen = false;
	while (!found && (de = readdir(dir))) {
		unsigned long long blk;

		tid = (pid_t)atoi(de->d_name);
		if (tid <= 0 || tid == self)
			continue;
		t = task_file_get(tid);
		if (!t)
			continue;
		t->seen = true;
		n = pread(t->fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;	/* exited: dropped below */
		buf[n] = 0;
		p = strstr(buf, "\nSigBlk:\t");
		if (!p || in_trap_handler(tid))
			continue;
		blk = hexnum(p + 9);
		if (!(blk & (1ULL << (SIGTRAP - 1))) || (blk & (1ULL << (32 - 1))) ||
		    in_trap_mask(blk))
			continue;
		found = tid;
		name[0] = 0;
		if (!strncmp(buf, "Name:\t", 6)) {
			size_t len = strcspn(buf + 6, "\n");

			if (len >= size)
				len = size - 1;
			memcpy(name, buf + 6, len);
			name[len] = 0;
		}
	}
	closedir(dir);
	/* threads gone since the last look (only after a whole pass) */
	for (i = nr_task_files; !found && i--;)
		if (!task_files[i].seen)
			task_file_drop(i);
	return found;
}

static int check_trap_blocked(void)
{
	static pid_t reported;
	struct timespec ts = { 0, 1000 * 1000 };
	char name[32];
	pid_t tid;
	int waited;

#ifdef __SANITIZE_THREAD__
	/*
	 * ThreadSanitizer's runtime has a thread of its own that blocks
	 * every signal and never runs the program's code, and it delivers
	 * signals itself (sigtrap_mask.c stands aside there as well).
	 */
	return 0;
#endif

	/*
	 * No other thread (glibc clears this at the first pthread_create()
	 * and never sets it again): nothing to look for in /proc/self/task,
	 * whose opendir() was five system calls and the heap pages of a DIR
	 * buffer in each traced process that patches before main().
	 */
	if (__libc_single_threaded)
		return 0;
	for (waited = 0;; waited += 1000) {
		tid = trap_blocked_thread(name, sizeof(name));
		if (!tid)
			return 0;
		if (waited >= TRAP_BLOCKED_WAIT_US)
			break;
		nanosleep(&ts, NULL);
	}
	/* once per thread, not once per refused batch */
	if (tid == reported)
		return -EBUSY;
	reported = tid;
	fprintf(stderr, "fhook: thread %d (%s) has SIGTRAP blocked (a raw rt_sigprocmask, "
		"or a ucontext mask): a site being patched would kill it; nothing patched "
		"(-EBUSY)\n", (int)tid, name);
	return -EBUSY;
}

int fhook_text_poke_batch(struct text_poke_loc *locs, size_t nr)
{
	static const unsigned char int3 = INT3_INSN_OPCODE;
	unsigned char *old = NULL;
	struct wrange *ranges = NULL;
	sigset_t all, saved;
	int nranges = 0, ret = 0;
	bool procmem;
	size_t i;

	fhook_assert_held(&text_mutex);
	if (!nr)
		return 0;
	sort_locs(locs, nr);
	old = malloc(nr * sizeof(*old));
	if (!old)
		return -ENOMEM;
	if (read_old(locs, nr, old)) {
		free(old);
		return -EFAULT;
	}

	fhook_trap_install();
	/*
	 * While a site holds an int3, this thread must not run one: no
	 * signal handler of the program may run here.
	 */
	sigfillset(&all);
	sigdelset(&all, SIGTRAP);	/* an int3 this thread meets is handled */
	fhook_libc_sigmask(SIG_BLOCK, &all, &saved);

	ret = check_trap_blocked();
	if (ret) {
		fhook_libc_sigmask(SIG_SETMASK, &saved, NULL);
		free(old);
		return ret;
	}
	procmem = open_writes(locs, nr, &ranges, &nranges);

	atomic_store(&bp_nr, nr);
	atomic_store(&bp_locs, locs);

	/* 1: int3 everywhere */
	for (i = 0; i < nr; i++) {
		ret = text_write(procmem, locs[i].addr, &int3, 1);
		if (ret) {
			/* undo the int3s written so far */
			while (i--)
				text_write(procmem, locs[i].addr, &old[i], 1);
			fhook_sync_core();
			goto out;
		}
	}
	fhook_sync_core();

	/* 2: the tails */
	for (i = 0; i < nr; i++)
		if (locs[i].len > 1)
			text_write(procmem, locs[i].addr + 1, locs[i].new + 1, locs[i].len - 1u);
	fhook_sync_core();

	/* 3: the first bytes */
	for (i = 0; i < nr; i++)
		text_write(procmem, locs[i].addr, locs[i].new, 1);
	fhook_sync_core();
out:
	atomic_store(&bp_locs, NULL);
	/* a trap handler may still be reading the array */
	while (atomic_load(&bp_refs))
		sched_yield();
	if (nranges > 0)
		close_ranges(ranges, nranges);
	else
		free(ranges);
	fhook_libc_sigmask(SIG_SETMASK, &saved, NULL);
	free(old);
	return ret;
}

/* The segment holding @a into @seg; false (and @seg empty) if none. */
static bool __fhook_startup init_find_seg(unsigned long a, struct fhook_text_seg *seg)
{
	if (fhook_arch_hooks.text_seg && fhook_arch_hooks.text_seg(a, seg))
		return true;
	seg->start = seg->end = 0;
	return false;
}

/*
 * Is @a a site in an object's text, with room for the longest site?
 * @seg caches the last segment found: sites of one segment come in a row.
 */
static inline bool init_site_in_text(unsigned long a, struct fhook_text_seg *seg)
{
	if ((a < seg->start || a >= seg->end) && !init_find_seg(a, seg))
		return false;
	return (seg->prot & PROT_EXEC) && a + FHOOK_SITE_MAX <= seg->end;
}

long __fhook_startup fhook_text_init_pads(const unsigned long *addrs, size_t stride, size_t nr,
			  unsigned long bias, bool expect_pads, bool records)
{
	struct wranges w = { .psz = fhook_page_size() };
	struct fhook_text_seg seg = { 0, 0, 0 };
	size_t i, pads = 0;
	long others = 0;
	int nranges = -1, ret = 0;
	bool procmem;

	fhook_assert_held(&text_mutex);
	/*
	 * Which pages to write.  Expecting pads, every page holding a site,
	 * from the addresses alone: a page copied before anything maps it
	 * costs a few microseconds, one mapped already (read, run) a TLB
	 * shootdown each, ten to fifty times that in a virtual machine.
	 * Otherwise only the pages that turn out to hold a pad.
	 */
	for (i = 0; i < nr; i++) {
		unsigned long a = addrs[i * stride];
		const unsigned char *b = (const unsigned char *)(a + bias);

		if (!a || !init_site_in_text(a + bias, &seg))
			continue;
		if (!expect_pads) {
			if (!fhook_site_is_pad(b)) {
				others += !fhook_site_is_nop(b);
				continue;
			}
			pads++;
		}
		if (nranges && ranges_add(&w, a + bias, FHOOK_SITE_LEN))
			nranges = 0;	/* unknown protection: /proc/self/mem */
	}
	if (!expect_pads && !pads) {
		free(w.r);
		return others;
	}
	procmem = use_procmem() || !nranges;
	if (!procmem) {
		/* no /proc at start-up: expecting pads, nothing mapped the pages yet */
		nranges = ranges_open(&w, false);
		procmem = nranges < 0;
	}
	stats.procmem = procmem;
	stats.batches++;
	pads = others = 0;
	seg.start = seg.end = 0;
	for (i = 0; i < nr && !ret; i++) {
		unsigned long a = addrs[i * stride];
		const unsigned char *b = (const unsigned char *)(a + bias);

		if (!a || !init_site_in_text(a + bias, &seg))
			continue;
		if (!fhook_site_is_pad(b)) {
			others += !fhook_site_is_nop(b);
			continue;
		}
		pads++;
		if (procmem)
			ret = procmem_write(a + bias, fhook_site_nop, FHOOK_SITE_LEN);
		else
			code_copy(a + bias, fhook_site_nop, FHOOK_SITE_LEN);
	}
	stats.writes += pads;
	if (!procmem && nranges > 0)
		close_ranges(w.r, nranges);
	else
		free(w.r);
	fhook_sync_core();
	return ret ? ret : others;
}

/* ---- the trap handler ---- */

static struct sigaction prev_trap;
static _Atomic int trap_installed;

static bool is_our_site(unsigned long ip)
{
	return fhook_arch_hooks.is_site && fhook_arch_hooks.is_site(ip);
}

static void chain_trap(int sig, siginfo_t *info, void *ctx)
{
	fhook_arch_chain_signal(&prev_trap, sig, info, ctx);
}

static int trap_enter(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int i;

	for (i = 0; i < TRAP_TIDS; i++) {
		pid_t free_slot = 0;

		if (atomic_compare_exchange_strong(&trap_tids[i], &free_slot, tid))
			return i;
	}
	return -1;
}

static void trap_leave(int slot)
{
	if (slot >= 0)
		atomic_store_explicit(&trap_tids[slot], 0, memory_order_release);
}

static bool trap_emulate(siginfo_t *info, void *ctx);

static void trap_handler(int sig, siginfo_t *info, void *ctx)
{
	int saved_errno = errno, slot = trap_enter();
	bool handled = trap_emulate(info, ctx);

	trap_leave(slot);
	errno = saved_errno;
	/* the program's own handler runs as our guest no more: not in the table */
	if (!handled)
		chain_trap(sig, info, ctx);
}

/* The int3 was one of ours: the thread goes on as if it had met the new bytes. */
static bool trap_emulate(siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *gregs = uc->uc_mcontext.gregs;
	unsigned long ip = (unsigned long)gregs[REG_RIP] - 1;
	struct text_poke_loc *locs;

	if (info->si_code != SI_KERNEL)
		return false;

	atomic_fetch_add(&bp_refs, 1);
	locs = atomic_load(&bp_locs);
	if (locs) {
		size_t nr = atomic_load(&bp_nr);
		size_t k = fhook_lower_bound(nr, m, locs[m].addr, ip);
		struct text_poke_loc *l = &locs[k];

		if (k < nr && l->addr == ip) {
			unsigned long target = fhook_site_call_target(l->new, ip);

			if (l->emu_ip == FHOOK_EMU_KPROBE) {
				atomic_fetch_sub(&bp_refs, 1);
				return fhook_kprobe_trap(ip, ctx);
			}
			if (l->emu_ip) {
				gregs[REG_RIP] = (greg_t)l->emu_ip;
			} else if (target) {
				gregs[REG_RSP] -= 8;
				*(unsigned long *)gregs[REG_RSP] = ip + CALL_INSN_SIZE;
				gregs[REG_RIP] = (greg_t)target;
			} else {
				gregs[REG_RIP] = (greg_t)(ip + l->emu_len);
			}
			atomic_fetch_sub(&bp_refs, 1);
			__atomic_fetch_add(&stats.traps_emulated, 1, __ATOMIC_RELAXED);
			return true;
		}
	}
	atomic_fetch_sub(&bp_refs, 1);

	if (fhook_kprobe_trap(ip, ctx))
		return true;
	/*
	 * The batch that put the int3 here has ended (or is ending) since
	 * this thread trapped: once the byte is no longer an int3 the site is
	 * whole again, and the thread simply runs it.
	 */
	if (is_our_site(ip)) {
		while (*(volatile unsigned char *)ip == INT3_INSN_OPCODE)
			sched_yield();
		gregs[REG_RIP] = (greg_t)ip;
		__atomic_fetch_add(&stats.traps_rewound, 1, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

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
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	/* a handler run from here may pass a site that holds an int3 */
	sigdelset(&sa.sa_mask, SIGTRAP);
	fhook_libc_sigaction(SIGTRAP, &sa, NULL);
	atomic_store(&trap_installed, 1);
}
