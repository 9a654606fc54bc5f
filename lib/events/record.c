// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The in-process side of `fhook record` and `fhook trace`: read the
 * compiled events from the shared memory the command created (FHOOK_EV_SHM
 * names its fd), register one fprobe per symbol, and on every hit write a
 * binary record into this thread's ring.  Nothing is decoded or formatted
 * here.
 *
 * An event without fetched arguments is two words written straight into
 * the ring (lib/events/ring.h); arguments go through a staging buffer.
 * The handlers allocate nothing and take no lock: a thread's first event
 * claims a ring with a compare-and-swap and maps it.  Memory named by a
 * fetch argument is read with process_vm_readv() so that a bad pointer
 * costs a "(fault)" rather than a crash.  A full ring makes the thread
 * wait for the command (counted), unless the recording is lossy.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include <fhook/fprobe.h>
#include <fhook/kallsyms.h>
#include <fhook/kprobes.h>
#include <fhook/internal/events.h>
#include <fhook/internal/attach.h>

#include "arch_insn.h"
#include "ring.h"
#include "clock.h"
#include "record_trigger.h"
#include "fprobe/rethook.h"
#include "core/core.h"
#include "kprobes/kpglob.h"
#include "util/recursion.h"

struct rec_arg {
	int type;
	unsigned int count;
	int nops;
	struct fhook_fetch_insn code[FHOOK_EV_FETCH_INSN_MAX];
};

struct rec_event {
	uint32_t id;
	bool unresolved;
	int nr_maxactive;
	bool is_return;
	int nr_args;
	struct rec_arg *args;
	int nr_entry;
	int entry_args[FHOOK_EV_MAX_ENTRY_ARGS];
	char *symbol;
	const char **targets;	/* a C++ name: the symbols the command matched */
	int nr_targets;
	/* a 'p' or 'r' event: symbol (or address) + offset, in module if set */
	bool kprobe;
	char *module;
	unsigned long offset;
	char *path;		/* the file SYM is in, as the command found it, or NULL */
	unsigned long link_addr;	/* and its link-time address there */
};

/* A 'p' or 'r' event's own kprobe (kretprobe), as each is in the kernel. */
struct rec_kprobe {
	struct kretprobe rp;		/* rp.kp alone for a 'p' event */
	struct rec_event *e;
	bool registered;
	bool failed;			/* refused: not tried again */
	struct rec_kprobe *many;	/* a glob: one per function (registered each) */
	int nr_many;
};

/*
 * One fprobe per distinct SYM: every event on the same function(s) shares
 * it, so an entry and a return event on one function cost one hook, not a
 * site shared by two ops (which would go through the list function).
 */
struct rec_probe {
	struct fprobe fp;
	const char *symbol;
	struct rec_event *first;	/* its targets, if any */
	int nr_entry, nr_ret;
	int nr_saved;			/* entry arguments its return events use */
	int plain_entry, plain_ret;	/* the one event, if it has no arguments; else -1 */
	struct rec_event **entry;	/* entry events */
	struct rec_event **ret;		/* return events */
	size_t *ret_off;		/* where each return event's saved args go */
	bool registered;
};

struct rec_range {
	unsigned long start, end;
};

/*
 * What a thread keeps of its ring; the ring's header holds what the
 * command reads.  It begins with the writer the graph trampolines use
 * (arch/shadow.h: REC_W_*), in that order.
 */
struct rec_thread {
	/*
	 * The bytes written (published as the ring's head with a release
	 * store) are hbase + wptr (rec_head()): the trampolines move only
	 * wptr, the write pointer.
	 */
	uint64_t hbase;
	/*
	 * head may grow to this with plain records and no other check: room
	 * in the ring, before its end, below the mark that wakes the command,
	 * nothing lost to report (rec_limit()); 0 without a ring.
	 */
	uint64_t limit;
	unsigned char *data;
	uint64_t last_ts;
	struct ev_ring *ring;
	uint32_t last_cpu;
	uint32_t gen;		/* rec_gen when the ring was claimed */
	/*
	 * The trampolines' view of head and limit: wptr is data + head modulo
	 * the ring's size, and a record fits while wptr < wlim, which is
	 * head + 16 <= limit (rec_set_limit()); 0 when none does.
	 */
	uintptr_t wptr;
	uintptr_t wlim;
	uint32_t idx;
	uint64_t tail;		/* last tail seen: refreshed only when room looks short */
	uint64_t lost_pending;	/* dropped since the last record written */
	int no_ring;
	uint32_t no_ring_gen;	/* rings_freed when none was free */
};

_Static_assert(offsetof(struct rec_thread, last_ts) == REC_W_LAST_TS, "REC_W_LAST_TS");
_Static_assert(offsetof(struct rec_thread, ring) == REC_W_RING, "REC_W_RING");
_Static_assert(offsetof(struct rec_thread, last_cpu) == REC_W_LAST_CPU, "REC_W_LAST_CPU");
_Static_assert(offsetof(struct rec_thread, gen) == REC_W_GEN, "REC_W_GEN");
_Static_assert(offsetof(struct rec_thread, wptr) == REC_W_WPTR, "REC_W_WPTR");
_Static_assert(offsetof(struct rec_thread, wlim) == REC_W_WLIM, "REC_W_WLIM");
_Static_assert(offsetof(struct ev_ring, head) == REC_RING_HEAD, "REC_RING_HEAD");
_Static_assert(EV_TS_BITS == REC_TS_BITS, "REC_TS_BITS");

/*
 * In .data (util/startup.h): the set-up of every recorded process writes
 * or reads these, and the exit path reads them; in .bss they were a zero
 * page of their own, one more fault for each process of a suite.
 */
static struct rec_probe *rec_probes __fhook_startup_data;
static int rec_nr_probes __fhook_startup_data;

static struct ev_shm *rec_shm __fhook_startup_data;
static int rec_fd = -1;
/* which file rec_fd must be, and where the command holds it (FHOOK_EV_SHM) */
static dev_t rec_dev __fhook_startup_data;
static ino_t rec_ino __fhook_startup_data;
static int rec_tracer_fd = -1;
static pid_t rec_tracer_pid __fhook_startup_data;
static uint64_t rec_ring_size __fhook_startup_data, rec_mark __fhook_startup_data;
static uint32_t rec_clock __fhook_startup_data;
/*
 * What every writer compares with (arch/shadow.h: struct fhook_rec_global):
 * its generation is bumped when an attached recording ends (fhook trace -p:
 * the rings that threads still name in their rec_thr are gone, and a
 * thread notices it at its next event; other threads' TLS cannot be reset
 * from ours).
 */
#define rec_g		fhook_rec_g
#define rec_gen		rec_g.gen
#define rec_disabled	rec_g.stopped	/* 0 or REC_G_STOPPED */
#define rec_clock_base	rec_g.clock_base
/* glibc registered an rseq area: its cpu_id is rec_g.cpu_off from the thread pointer */
static bool rec_has_rseq __fhook_startup_data;
/*
 * Without rseq, how many plain records may pass between two looks at the
 * cpu (a vDSO call or a system call each): the cpu a record names may be
 * stale by that many records after a migration.
 */
#define REC_CPU_EVERY	256
static struct rec_event *rec_events __fhook_startup_data;
static int rec_nr_events __fhook_startup_data;
/* one per event; only kprobe events' are used */
static struct rec_kprobe *rec_kprobes __fhook_startup_data;
static struct rec_range *rec_callers;
static int rec_nr_callers;
static __thread struct rec_thread rec_thr;
/*
 * What a forked child resets or reads before it most likely execs: in
 * .data (util/startup.h), the page that holds libfhook's locks, which it
 * writes anyway; each other page it wrote would be one more copied.
 */
static uint64_t rec_proc_seq __fhook_startup_data;	/* this image's ev_proc */
/* a forked child announces its objects with its first ring (get_ring) */
static bool rec_announce_pending __fhook_startup_data;
/* a thread is announcing them: the others wait for the number it gets */
static int rec_announcing __fhook_startup_data;
/*
 * A forked child's time of birth (0: none pending): the frames it
 * inherited from the parent's thread get their entries at that time in
 * its first ring (rec_inherit()), so that their returns pair with them.
 */
static uint64_t rec_fork_ts __fhook_startup_data;
/* shm->follow, kept here: the shared page would cost the child a fault */
static bool rec_follow __fhook_startup_data;
static void register_process(void);
static pthread_key_t rec_ring_key __fhook_startup_data;
static bool rec_have_key __fhook_startup_data;
/* no object had sites at start-up: armed when a dlopen() brings one */
static bool rec_deferred __fhook_startup_data;
/* descriptions: 0 not read yet, 1 read, -1 bad */
static int rec_desc_state __fhook_startup_data;
/* This process's mapping of each ring it holds, to unmap in a forked child. */
static struct ev_ring *rec_maps[EV_MAX_RINGS];
/*
 * One past the highest ring index this process ever mapped: a forked
 * child looks at no more of rec_maps, 8 KiB its parent may never have
 * touched, two pages each child would fault in to read zeros.
 */
static uint32_t rec_maps_hi __fhook_startup_data;

static int safe_read(void *dst, unsigned long src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)src, len };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* Copy a NUL-terminated string of at most EV_STR_MAX - 1 bytes; -1 on a fault. */
static int safe_strcpy(char *dst, unsigned long src)
{
	size_t n = 0;

	while (n < EV_STR_MAX - 1) {
		size_t chunk = 4096 - ((src + n) & 4095), i;

		if (chunk > EV_STR_MAX - 1 - n)
			chunk = EV_STR_MAX - 1 - n;
		if (safe_read(dst + n, src + n, chunk))
			return n ? (int)n : -1;
		for (i = 0; i < chunk; i++)
			if (!dst[n + i])
				return n + i;
		n += chunk;
	}
	dst[n] = 0;
	return n;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static void rec_untraced(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the command recording this process ("record", "trace"), for its messages */
static char rec_cmd[sizeof(((struct ev_shm *)0)->cmd)] = "record";
static void detach(const char *why);

static bool fd_is_shm(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && st.st_dev == rec_dev && st.st_ino == rec_ino;
}

/* @v in decimal at @p; the end of it */
static char *__fhook_startup put_decimal(char *p, unsigned long v)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = digits[--n];
	return p;
}

/*
 * "/proc/PID/fd/FD" in @buf (64 bytes; PID 0 is "self"), without
 * snprintf(): its pages would be faulted in by every recorded process,
 * and a vfork child about to exec may build it (async-signal-safe).
 */
static void __fhook_startup proc_fd_path(char *buf, unsigned long pid, unsigned long fd)
{
	char *p = buf + 6;

	memcpy(buf, "/proc/", 6);
	if (pid) {
		p = put_decimal(p, pid);
	} else {
		memcpy(p, "self", 4);
		p += 4;
	}
	memcpy(p, "/fd/", 4);
	p = put_decimal(p + 4, fd);
	*p = 0;
}

/* Is @fd (of this process) a memfd fhook made for a recording? */
static bool __fhook_startup fd_is_trace_memfd(long fd)
{
	char link[64], target[64];
	ssize_t n;

	if (fd < 0)
		return false;
	proc_fd_path(link, 0, (unsigned long)fd);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = 0;
	return n > 0 && !strncmp(target, "/memfd:fhook-trace", 18);
}

/*
 * The trace buffer's memfd, by a descriptor that still is it.  A program
 * may close descriptors it did not open (closefrom(3) before it execs a
 * daemon) and open files that get the number: mapping those instead of
 * the rings would write the trace into its files, or die of SIGBUS past
 * their end.  The command holds the memfd open under the same number; it
 * is reopened from there (/proc/PID/fd/N, which the kernel allows only to
 * a process that could ptrace the command: its own user's).  -1 if not.
 */
static int reopen_shm(pid_t tracer, int tracer_fd)
{
	char path[64];
	int fd;

	if (tracer <= 0 || tracer_fd < 0)
		return -1;
	proc_fd_path(path, (unsigned long)tracer, (unsigned long)tracer_fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && !fd_is_shm(fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int shm_fd(void)
{
	int fd;

	if (fd_is_shm(rec_fd))
		return rec_fd;
	fd = reopen_shm(rec_tracer_pid, rec_tracer_fd);
	if (fd >= 0)
		rec_fd = fd;
	return fd;
}

static void register_process(void);

/*
 * The process's objects announced by the first thread that claims a ring;
 * another thread claiming one meanwhile waits for the image's number, or
 * its records would name none (their addresses printed as numbers).  The
 * wait is bounded: announcing waits at most 200 ms for a mailbox.
 */
static void announce_first(void)
{
	int i;

	if (!__atomic_exchange_n(&rec_announcing, 1, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&rec_announce_pending, __ATOMIC_ACQUIRE))
			register_process();
		__atomic_store_n(&rec_announcing, 0, __ATOMIC_RELEASE);
		return;
	}
	for (i = 0; i < 4000 && __atomic_load_n(&rec_announce_pending, __ATOMIC_ACQUIRE); i++)
		usleep(100);
}

/*
 * A gap in time from t->last_ts that takes a record of the full time.
 * The trampolines' records since are less than 2^32 from last_ts (the
 * same high word, arch/shadow.h), so the reader, which extends 48 bits
 * from the record before, sees no gap of 2^47 without that record.
 */
#define REC_GAP		(1ULL << (EV_TS_BITS - 2))

static inline uint64_t rec_head(const struct rec_thread *t)
{
	return t->hbase + t->wptr;
}

static inline void rec_head_add(struct rec_thread *t, uint64_t n)
{
	t->wptr += n;
}

/*
 * Before this thread's C writes: the records the trampolines wrote since
 * its last are plain events (struct ev_ring.events_head).
 */
static inline void rec_count_tramp(struct rec_thread *t)
{
	struct ev_ring *r = t->ring;
	uint64_t head = rec_head(t);

	if (head != r->events_head) {
		__atomic_store_n(&r->events, r->events + (head - r->events_head) / 16,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&r->events_head, head, __ATOMIC_RELAXED);
	}
}

static void rec_set_head(struct rec_thread *t, uint64_t head)
{
	t->wptr = (uintptr_t)t->data + (head & (rec_ring_size - 1));
	t->hbase = head - t->wptr;
}

/*
 * Head may grow to @limit with plain records; the trampolines' bound of
 * wptr for that (a record fits while wptr < wlim), with wptr back in the
 * ring's bytes after a lap.
 */
static void rec_set_limit(struct rec_thread *t, uint64_t limit)
{
	uint64_t head = rec_head(t);

	t->limit = limit;
	rec_set_head(t, head);
	t->wlim = limit >= head + 16 ? t->wptr + (limit - head) - 15 : 0;
}

static void rec_inherit(struct rec_thread *t);

/*
 * A free ring for this thread, mapped.  When none is free, the thread
 * retries only after the command has freed one (rings_freed moved), not
 * on every event.
 */
static struct ev_ring *get_ring(struct rec_thread *t)
{
	struct ev_ring *r;
	uint32_t freed, idx, hw, nr = EV_MAX_RINGS;
	void *map;
	int fd;

	freed = __atomic_load_n(&rec_shm->rings_freed, __ATOMIC_ACQUIRE);
	if (t->no_ring && freed == t->no_ring_gen)
		return NULL;
	map = NULL;
	fd = shm_fd();
	if (fd < 0) {
		detach("the program closed the trace buffer's descriptor and fhook's copy "
		       "cannot be reopened");
		return NULL;
	}
	for (idx = 0; idx < nr; idx++) {
		if (!ev_slot_claim(&rec_shm->ring_state[idx]))
			continue;
		map = mmap(NULL, ev_ring_stride(rec_ring_size), PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, rec_shm->rings_off + (off_t)idx * ev_ring_stride(rec_ring_size));
		if (map == MAP_FAILED) {
			/* no address space left: give the ring back */
			__atomic_store_n(&rec_shm->ring_state[idx], EV_SLOT_FREE, __ATOMIC_RELEASE);
			map = NULL;
		}
		break;
	}
	if (!map) {
		static int said;

		/* its events are counted lost; the summary says whose, why and what to change */
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
			struct rlimit rl;

			if (idx == nr)
				rec_untraced("threads untraced: all %u trace rings in use (threads "
					     "recording at once)", nr);
			else if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY)
				rec_untraced("threads untraced: no address space for a %lu KiB trace "
					     "ring under RLIMIT_AS %lu MiB: record with a smaller "
					     "--buffer-size, or raise ulimit -v",
					     (unsigned long)(ev_ring_stride(rec_ring_size) >> 10),
					     (unsigned long)(rl.rlim_cur >> 20));
			else
				rec_untraced("threads untraced: no memory for a %lu KiB trace ring: "
					     "record with a smaller --buffer-size",
					     (unsigned long)(ev_ring_stride(rec_ring_size) >> 10));
		}
		t->no_ring = 1;
		t->no_ring_gen = freed;
		return NULL;
	}
	r = map;
	t->no_ring = 0;
	hw = __atomic_load_n(&rec_shm->nr_rings, __ATOMIC_RELAXED);
	while (hw < idx + 1 &&
	       !__atomic_compare_exchange_n(&rec_shm->nr_rings, &hw, idx + 1, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	if (__atomic_load_n(&rec_announce_pending, __ATOMIC_ACQUIRE))
		announce_first();
	r->pid = getpid();
	r->tid = syscall(SYS_gettid);
	r->proc_seq = __atomic_load_n(&rec_proc_seq, __ATOMIC_ACQUIRE);
	prctl(PR_GET_NAME, r->comm);
	t->ring = r;
	t->data = ev_ring_data(r);
	rec_set_head(t, r->head);
	t->tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	t->last_ts = 1ULL << 63;	/* the ring's first record says the full time */
	t->last_cpu = ~0U;
	t->idx = idx;
	rec_maps[idx] = r;
	hw = __atomic_load_n(&rec_maps_hi, __ATOMIC_RELAXED);
	while (hw < idx + 1 &&
	       !__atomic_compare_exchange_n(&rec_maps_hi, &hw, idx + 1, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	__atomic_store_n(&rec_shm->ring_state[idx], EV_SLOT_READY, __ATOMIC_RELEASE);
	/* the key was made first thing in the process: a slot of the static block */
	if (rec_have_key)
		pthread_setspecific(rec_ring_key, r);
	/* a forked child's thread (its only one at the fork: tid == pid) */
	if (__builtin_expect(rec_fork_ts != 0, 0) && r->tid == r->pid)
		rec_inherit(t);
	return r;
}

/*
 * This thread will not write @r again (a later record claims a new ring):
 * the command may free it as soon as it has written it out.
 */
static void retire_ring(void *arg)
{
	struct rec_thread *t = &rec_thr;
	struct ev_ring *r = arg;

	if (!r || r != t->ring || t->gen != __atomic_load_n(&rec_gen, __ATOMIC_ACQUIRE))
		return;
	t->ring = NULL;
	rec_set_limit(t, 0);
	rec_maps[t->idx] = NULL;
	__atomic_store_n(&r->exited, 1, __ATOMIC_RELEASE);
	munmap(r, ev_ring_stride(rec_ring_size));
}

/* Wake the command: this ring is filling up. */
static void kick(struct ev_ring *r, bool force)
{
	if (!force && __atomic_load_n(&r->kicked, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&r->kicked, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&rec_shm->wake, 1, __ATOMIC_RELEASE);
	futex(&rec_shm->wake, FUTEX_WAKE, 1, NULL);
}

/* Name this process in the command's summary: it runs untraced, or partly. */
static void rec_untraced(const char *fmt, ...)
{
	struct ev_untraced *u;
	va_list ap;
	uint32_t i;

	if (!rec_shm)
		return;
	i = __atomic_fetch_add(&rec_shm->nr_untraced, 1, __ATOMIC_RELAXED);
	if (i >= EV_MAX_UNTRACED)
		return;
	u = &rec_shm->untraced[i];
	u->pid = (uint32_t)getpid();
	prctl(PR_GET_NAME, u->comm);
	va_start(ap, fmt);
	vsnprintf(u->why, sizeof(u->why), fmt, ap);
	va_end(ap);
	__atomic_store_n(&u->state, EV_SLOT_READY, __ATOMIC_RELEASE);
}

/*
 * Will the program at @path load libfhook?  NULL if it will, as far as
 * its file tells; else why not.  Async-signal-safe (a vfork child).
 */
static const char *__fhook_startup exec_untraced_why(const char *path)
{
	/* the header and the first program headers, with one read */
	unsigned char e[512] __attribute__((aligned(8)));
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e;
	Elf64_Phdr ph;
	struct stat st;
	bool interp = false;
	const char *why = NULL;
	ssize_t got;
	int fd, i;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;	/* the exec fails too, or cannot be looked at */
	/*
	 * Not memcmp(): nothing else binds it in a shell, so each child it
	 * forks would look it up (lazy binding), eight pages of the loader's
	 * and libc's tables to fault in before the exec.
	 */
	if (fstat(fd, &st) || (got = pread(fd, e, sizeof(e), 0)) < (ssize_t)sizeof(*eh) ||
	    e[EI_MAG0] != ELFMAG0 || e[EI_MAG1] != ELFMAG1 || e[EI_MAG2] != ELFMAG2 ||
	    e[EI_MAG3] != ELFMAG3)
		goto out;	/* a script: its interpreter is what is preloaded */
	if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
	    ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && st.st_gid != getgid())) {
		why = "set-id: the loader ignores LD_PRELOAD there";
		goto out;
	}
	if (e[EI_CLASS] != ELFCLASS64 || eh->e_machine != FHOOK_ELF_MACHINE) {
		why = "not an x86-64 program";
		goto out;
	}
	for (i = 0; i < eh->e_phnum && i < 64; i++) {
		uint64_t off = eh->e_phoff + (uint64_t)i * sizeof(ph);

		if (off <= (uint64_t)got && sizeof(ph) <= (uint64_t)got - off)
			memcpy(&ph, e + off, sizeof(ph));
		else if (pread(fd, &ph, sizeof(ph), (off_t)off) != sizeof(ph))
			break;
		/* right after PT_PHDR in a linked program: one read, not one a header */
		if (ph.p_type == PT_INTERP) {
			interp = true;
			break;
		}
	}
	if (!interp)
		why = "statically linked: no loader to preload libfhook into";
out:
	close(fd);
	return why;
}

/* An interposed exec or spawn: name the program in the summary if it runs untraced. */
static void __fhook_startup rec_exec(const char *path, bool search)
{
	char buf[PATH_MAX];
	const char *why, *dirs = "/usr/local/bin:/usr/bin:/bin", *env;
	extern char **environ;
	char **e;

	if (!rec_shm || !rec_follow || __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
		return;
	if (search && !strchr(path, '/')) {
		/* environ by hand: getenv is not async-signal-safe on every libc */
		for (e = environ; e && *e; e++)
			if (!strncmp(*e, "PATH=", 5))
				dirs = *e + 5;
		for (env = dirs; *env; ) {
			size_t n = strcspn(env, ":");

			if (n && n + strlen(path) + 2 <= sizeof(buf)) {
				memcpy(buf, env, n);
				buf[n] = '/';
				strcpy(buf + n + 1, path);
				if (!access(buf, X_OK))
					break;
			}
			env += n + (env[n] == ':');
		}
		if (!*env)
			return;
		path = buf;
	}
	why = exec_untraced_why(path);
	if (!why) {
		bool shm = false;

		/* `env -i`, clearenv(): the program took fhook's variables from its children */
		for (e = environ; e && *e; e++)
			if (!strncmp(*e, "FHOOK_EV_SHM=", 13))
				shm = true;
		if (!shm)
			why = "its environment was cleared of fhook's variables (env -i, "
			      "clearenv()): start it under fhook itself to trace it";
	}
	if (!why && !fd_is_shm(rec_tracer_fd)) {
		/*
		 * The program reused the number FHOOK_EV_SHM names: the new
		 * program must reopen the buffer from the command, and has
		 * the credentials this process has now.  If that fails here,
		 * it fails there, where nothing could tell the command.
		 */
		int fd = reopen_shm(rec_tracer_pid, rec_tracer_fd);

		if (fd < 0)
			why = "the program reused the trace buffer's descriptor and fhook's "
			      "copy cannot be reopened (a process of another user?)";
		else
			close(fd);
	}
	if (why)
		rec_untraced("started %.80s: untraced, %s", path, why);
}

static void detach(const char *why)
{
	if (__atomic_exchange_n(&rec_disabled, REC_G_STOPPED, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "fhook: %s: %s: process %d continues untraced\n", rec_cmd, why,
		getpid());
	rec_untraced("%s", why);
}

/*
 * A flight recorder's full ring: free the oldest whole records, so that
 * the ring always holds the newest.  The tail is published before the
 * bytes behind it are overwritten (the command, copying meanwhile, reads
 * the tail again after its copy and keeps only what is still behind it).
 */
static bool flight_room(struct rec_thread *t, uint64_t need)
{
	struct ev_ring *r = t->ring;
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED), head = rec_head(t);

	if (tail > head || head - tail > rec_ring_size)
		tail = head;	/* not what this thread wrote: start over */
	/* an eighth of the ring at once: the fast path runs on until the next */
	need += rec_ring_size / 8;
	while (head + need - tail > rec_ring_size) {
		bool event;
		uint64_t len = ev_rec_len(t->data, tail & (rec_ring_size - 1), rec_ring_size,
					  &event);

		if (!len || tail + len > head) {
			tail = head;
			break;
		}
		tail += len;
	}
	t->tail = tail;
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	/* the new tail is seen before any byte behind it changes */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return true;
}

/*
 * The ring has no room for @need bytes: wait for the command to write
 * some out.  False when the record must be dropped: a lossy recording,
 * a stopped one, or a command that is gone (its drain rounds stopped
 * for two seconds while records wait, and its process is no more).  A
 * command that is alive but slow (its output is a slow pipe) is waited
 * for: nothing is lost.
 */
static bool wait_room(struct rec_thread *t, uint64_t need)
{
	struct ev_ring *r = t->ring;
	const struct timespec slice = { 0, 20 * 1000 * 1000 };
	uint64_t beat = __atomic_load_n(&rec_shm->heartbeat, __ATOMIC_RELAXED);
	int still = 0;

	bool counted = false;

	if (rec_shm->flight)
		return flight_room(t, need);
	if (rec_shm->lossy)
		return false;
	for (;;) {
		uint32_t seq = __atomic_load_n(&r->space_seq, __ATOMIC_ACQUIRE);
		uint64_t now_beat;

		/* a detach (rec_teardown) waits for this thread to leave its handler */
		if (__atomic_load_n(&rec_shm->stopped, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
			return false;
		/* pairs with the command's store of tail, then load of waiting */
		__atomic_store_n(&r->waiting, 1, __ATOMIC_SEQ_CST);
		t->tail = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);
		if (rec_head(t) + need - t->tail <= rec_ring_size)
			break;
		/*
		 * A tail no consumer can have written (past the head, or more
		 * than a ring behind it): the shared memory was written over.
		 * Waiting would be forever; this record is dropped.
		 */
		if (t->tail > rec_head(t) || rec_head(t) - t->tail > rec_ring_size)
			return false;
		/* a wait, not a drop: counted once it sleeps */
		if (!counted) {
			counted = true;
			__atomic_store_n(&r->waits, r->waits + 1, __ATOMIC_RELAXED);
		}
		kick(r, true);
		futex(&r->space_seq, FUTEX_WAIT, seq, &slice);
		t->tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (rec_head(t) + need - t->tail <= rec_ring_size)
			break;
		now_beat = __atomic_load_n(&rec_shm->heartbeat, __ATOMIC_RELAXED);
		if (now_beat != beat) {
			beat = now_beat;
			still = 0;
		} else if (++still >= 100) {
			still = 0;
			if (ev_proc_start((int)rec_shm->tracer_pid) != rec_shm->tracer_start) {
				detach("the fhook process stopped reading the trace");
				return false;
			}
		}
	}
	__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	return true;
}

/*
 * Make room for @len bytes of records at the head (records never wrap: a
 * filler takes the ring's end).  Returns where they go, or NULL: dropped.
 */
static inline uint64_t *reserve(struct rec_thread *t, uint32_t len)
{
	uint64_t pos = rec_head(t) & (rec_ring_size - 1), need = len;

	if (pos + len > rec_ring_size)
		need += rec_ring_size - pos;
	if (__builtin_expect(rec_head(t) + need - t->tail > rec_ring_size, 0)) {
		t->tail = __atomic_load_n(&t->ring->tail, __ATOMIC_ACQUIRE);
		if (rec_head(t) + need - t->tail > rec_ring_size && !wait_room(t, need))
			return NULL;
	}
	if (__builtin_expect(pos + len > rec_ring_size, 0)) {
		*(uint64_t *)(t->data + pos) = ev_w0(rec_ring_size - pos, EV_ID_PAD);
		rec_head_add(t, rec_ring_size - pos);
		pos = 0;
	}
	return (uint64_t *)(t->data + pos);
}

/* Publish what reserve() gave and was written: @len bytes. */
static inline void commit(struct rec_thread *t, uint32_t len)
{
	struct ev_ring *r = t->ring;

	rec_head_add(t, len);
	__atomic_store_n(&r->events, r->events + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->events_head, rec_head(t), __ATOMIC_RELAXED);
	__atomic_store_n(&r->head, rec_head(t), __ATOMIC_RELEASE);
	if (__builtin_expect(rec_head(t) - t->tail >= rec_mark, 0)) {
		t->tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (rec_head(t) - t->tail >= rec_mark)
			kick(r, false);
	}
}

static inline struct rec_thread *rec_thread(void)
{
	struct rec_thread *t = &rec_thr;
	uint32_t gen = __atomic_load_n(&rec_gen, __ATOMIC_ACQUIRE);

	if (__builtin_expect(t->gen != gen, 0)) {
		/* its ring went with an earlier attached recording */
		memset(t, 0, sizeof(*t));
		t->gen = gen;
	}
	if (__builtin_expect(!t->ring, 0) && !get_ring(t)) {
		__atomic_fetch_add(&rec_shm->lost_no_ring, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return t;
}

/*
 * A record that found no room.  It is lost, unless the recording ended while
 * its thread waited for room (a detach, the command's --duration or its
 * SIGINT): the reader makes no more room then, and a call that reaches the
 * ring after the end is outside the recording, as perf leaves out what comes
 * after a disable, not a loss.
 */
static void drop(struct rec_thread *t)
{
	rec_set_limit(t, 0);
	if (__atomic_load_n(&rec_shm->stopped, __ATOMIC_RELAXED) == EV_STOP_END ||
	    __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
		return;
	t->lost_pending++;
	__atomic_store_n(&t->ring->lost, t->ring->lost + 1, __ATOMIC_RELAXED);
}

/* The thread's rseq cpu_id, when rec_has_rseq. */
static inline int32_t rec_rseq_cpu(void)
{
	return *(volatile int32_t *)((char *)__builtin_thread_pointer() + rec_g.cpu_off);
}

static inline uint32_t rec_cpu(void)
{
	if (__builtin_expect(rec_has_rseq, 1)) {
		int32_t cpu = rec_rseq_cpu();

		if (cpu >= 0)
			return (uint32_t)cpu;
	}
	return (uint32_t)sched_getcpu();
}

/*
 * Write the ring's own records an event needs first (records lost just
 * before it, the full time after a long gap, a new cpu) and the event's
 * two words; @ext more bytes follow the header (filled in by the caller
 * before commit).  Returns the header, or NULL: dropped.
 */
static inline uint64_t *begin_event(struct rec_thread *t, uint32_t id, uint64_t w1, uint32_t ext)
{
	uint64_t now = ev_clock_read(rec_clock) - rec_clock_base;
	uint32_t cpu = rec_cpu(), len = 16 + ext, pre = 0;
	bool new_time = now - t->last_ts >= REC_GAP;
	uint64_t *p;

	rec_count_tramp(t);
	if (__builtin_expect(new_time, 0))
		pre += 16;
	if (__builtin_expect(cpu != t->last_cpu, 0))
		pre += 16;
	if (__builtin_expect(t->lost_pending != 0, 0))
		pre += 16;
	p = reserve(t, len + pre);
	if (!p) {
		drop(t);
		return NULL;
	}
	if (__builtin_expect(pre != 0, 0)) {
		if (t->lost_pending) {
			p[0] = ev_w0(now, EV_ID_LOST);
			p[1] = t->lost_pending;
			t->lost_pending = 0;
			p += 2;
		}
		if (new_time) {
			p[0] = ev_w0(now, EV_ID_TIME);
			p[1] = now;
			p += 2;
		}
		if (cpu != t->last_cpu) {
			p[0] = ev_w0(now, EV_ID_CPU);
			p[1] = cpu;
			t->last_cpu = cpu;
			p += 2;
		}
		rec_head_add(t, pre);
	}
	t->last_ts = now;
	p[0] = ev_w0(now, id);
	p[1] = w1;
	return p;
}

static inline uint64_t ev_w1(unsigned long addr, unsigned long depth)
{
	return (addr & EV_ADDR_MASK) | (uint64_t)(depth & EV_DEPTH_MASK) << 48;
}

/* past the mark, how far apart the slow path looks at the reader's progress */
#define REC_MARK_STEP	(rec_mark / 8)

/* How far the fast path of record_plain() may take head (struct rec_thread.limit). */
static uint64_t rec_limit(const struct rec_thread *t)
{
	uint64_t lap_end, room, mark;

	if (!t->ring || t->lost_pending)
		return 0;
	lap_end = (rec_head(t) & ~(rec_ring_size - 1)) + rec_ring_size;
	room = t->tail + rec_ring_size;
	mark = t->tail + rec_mark;
	/*
	 * Past the mark the command has been woken (commit()): the slow path
	 * looks at its progress again a step on, not at every record, which
	 * made a writer whose reader lags (text formatted on one cpu of two)
	 * pay the slow path for half the ring.
	 */
	if (mark <= rec_head(t))
		mark = rec_head(t) + REC_MARK_STEP;
	if (room < lap_end)
		lap_end = room;
	if (mark < lap_end)
		lap_end = mark;
	/* without rseq, the slow path looks at the cpu every REC_CPU_EVERY records */
	if (!rec_has_rseq && rec_head(t) + REC_CPU_EVERY * 16 < lap_end)
		lap_end = rec_head(t) + REC_CPU_EVERY * 16;
	return lap_end;
}

/*
 * Is the thread still on the cpu of its last record?  From the rseq area
 * where glibc registered one; else sched_getcpu() costs a system call or
 * a vDSO call, and is asked only when the limit (rec_limit()) sends a
 * record to the slow path, every REC_CPU_EVERY records.
 */
static inline bool rec_cpu_same(const struct rec_thread *t)
{
	return !rec_has_rseq || rec_rseq_cpu() == (int32_t)t->last_cpu;
}

static void record_plain_slow(uint32_t id, uint64_t w1);

/*
 * An event without fetched arguments: 16 bytes.  The common case (the
 * ring has room before its end and its mark, same cpu, no gap in time,
 * nothing lost, the TSC for a clock) is rdtsc, two stores and a release,
 * with no call and no stack frame.
 */
static inline void record_plain(uint32_t id, uint64_t w1)
{
	struct rec_thread *t = &rec_thr;
	uint64_t head = rec_head(t), now, *p;

	/* CLOCK_MONOTONIC is a call (the vDSO's): that clock takes the slow path */
	if (__builtin_expect(head + 16 > t->limit || t->gen != rec_gen ||
			     __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED) ||
			     rec_clock != EV_CLOCK_TSC || !rec_cpu_same(t), 0))
		goto slow;
	now = ev_clock_tsc() - rec_clock_base;
	if (__builtin_expect(now - t->last_ts >= REC_GAP, 0))
		goto slow;
	p = (uint64_t *)(t->data + (head & (rec_ring_size - 1)));
	p[0] = ev_w0(now, id);
	p[1] = w1;
	t->last_ts = now;
	rec_count_tramp(t);
	rec_head_add(t, 16);
	__atomic_store_n(&t->ring->events, t->ring->events + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring->events_head, head + 16, __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring->head, head + 16, __ATOMIC_RELEASE);
	return;
slow:
	record_plain_slow(id, w1);
}

/* Everything else of record_plain(): the ring's own records first, waits, drops. */
static void __attribute__((noinline)) record_plain_slow(uint32_t id, uint64_t w1)
{
	struct rec_thread *t = &rec_thr;
	uint64_t now, pos, *p;
	uint32_t cpu;

	if (__builtin_expect(!t->ring || t->gen != rec_gen, 0)) {
		if (__atomic_load_n(&rec_disabled, __ATOMIC_RELAXED) || !rec_thread())
			return;
	}
	rec_count_tramp(t);
	now = ev_clock_read(rec_clock) - rec_clock_base;
	cpu = rec_cpu();
	pos = rec_head(t) & (rec_ring_size - 1);
	if (__builtin_expect(now - t->last_ts >= REC_GAP || cpu != t->last_cpu ||
			     t->lost_pending || rec_head(t) + 16 - t->tail > rec_ring_size ||
			     pos + 16 > rec_ring_size ||
			     __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED), 0)) {
		if (__atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
			return;
		if (begin_event(t, id, w1, 0))
			commit(t, 16);
		rec_set_limit(t, rec_limit(t));
		return;
	}
	p = (uint64_t *)(t->data + pos);
	p[0] = ev_w0(now, id);
	p[1] = w1;
	t->last_ts = now;
	commit(t, 16);
	rec_set_limit(t, rec_limit(t));
}

static unsigned long fetch_arg(struct ftrace_regs *fregs, unsigned int n)
{
	unsigned long v = 0;

	if (n >= FHOOK_EV_ARG_XMM) {
		/* the low eight bytes of a vector register: a double, or a float in four */
		if (n - FHOOK_EV_ARG_XMM < 8)
			memcpy(&v, ftrace_regs_get_vector(fregs, n - FHOOK_EV_ARG_XMM), sizeof(v));
		return v;
	}
	if (n < FHOOK_NR_REG_ARGS)
		return ftrace_regs_get_argument(fregs, n);
	/* the arguments past the registers sit on the stack */
	safe_read(&v, (unsigned long)(regs_stack_args(&fregs->regs) + (n - FHOOK_NR_REG_ARGS)),
		  sizeof(v));
	return v;
}

/* An argument that could not be fetched, in run_fetch()'s layout. */
static int fault_arg(struct rec_arg *a, unsigned char *out, size_t room)
{
	unsigned int n = a->count ? a->count : 1, size = fhook_ev_type_size(a->type);
	size_t len = fhook_ev_type_is_string(a->type) ? 8 : (size * n + 1 + 7) & ~7UL;

	if (room < len)
		return -1;
	memset(out, 0, len);
	if (!fhook_ev_type_is_string(a->type))
		out[size * n] = 1;
	return (int)len;
}

/*
 * Run one argument's fetch program.  Returns the bytes written at @out,
 * -1 if nothing fits.
 */
static int run_fetch(struct rec_arg *a, struct ftrace_regs *fregs, unsigned long *entry,
		     struct ev_ring *ring, unsigned char *out, size_t room)
{
	unsigned long val = 0, addr = 0;
	unsigned int size = fhook_ev_type_size(a->type), i, n;
	bool is_addr = false, fault = false;
	int k, last = a->nops - 1;
	struct fhook_fetch_insn *bf = NULL;

	if (last >= 0 && a->code[last].op == FHOOK_FOP_MOD_BF) {
		bf = &a->code[last];
		last--;
	}
	for (k = 0; k <= last && !fault; k++) {
		struct fhook_fetch_insn *in = &a->code[k];

		switch (in->op) {
		case FHOOK_FOP_ARG: val = fetch_arg(fregs, in->param); break;
		case FHOOK_FOP_EDATA: val = entry ? entry[in->param] : 0; break;
		case FHOOK_FOP_RETVAL:
			if (in->param == 1)
				memcpy(&val, ftrace_regs_get_vector(fregs, 0), sizeof(val));
			else
				val = ftrace_regs_get_return_value(fregs);
			break;
		case FHOOK_FOP_STACKP: val = ftrace_regs_get_stack_pointer(fregs); break;
		case FHOOK_FOP_REG: val = ((unsigned long *)&fregs->regs)[in->param]; break;
		case FHOOK_FOP_STACK:
			fault = safe_read(&val, ftrace_regs_get_stack_pointer(fregs) + 8 * in->param,
					  sizeof(val));
			break;
		case FHOOK_FOP_IMM: val = in->param; break;
		case FHOOK_FOP_ADD: val += in->param; break;
		case FHOOK_FOP_DEREF:
		case FHOOK_FOP_UDEREF:
			if (k == last) {
				/* the store reads at the final address */
				addr = val + in->param;
				is_addr = true;
			} else {
				fault = safe_read(&val, val + in->param, sizeof(val));
			}
			break;
		default:
			break;
		}
	}
	if (fhook_ev_type_is_string(a->type)) {
		/* u32: length (0 = fault), then the bytes and a NUL */
		char *s = (char *)out + 4;
		int len;
		uint32_t l;

		if (room < 4 + EV_STR_MAX)
			return -1;
		if (a->code[0].op == FHOOK_FOP_COMM) {
			len = strlen(ring->comm);
			memcpy(s, ring->comm, len + 1);
		} else if (a->code[0].op == FHOOK_FOP_DATA) {
			len = strlen(a->code[0].data);
			if (len > EV_STR_MAX - 1)
				len = EV_STR_MAX - 1;
			memcpy(s, a->code[0].data, len);
			s[len] = 0;
		} else if (a->type == FHOOK_EVT_SYMSTR) {
			/* the address; the command turns it into "sym+0xoff/0xsize" */
			len = fault ? -1 : 8;
			if (!fault) {
				if (is_addr)
					fault = safe_read(&val, addr, 8);
				memcpy(s, &val, 8);
				if (fault)
					len = -1;
			}
		} else {
			len = fault ? -1 : safe_strcpy(s, is_addr ? addr : val);
		}
		l = len < 0 ? 0 : (uint32_t)len + 1;
		memcpy(out, &l, 4);
		return (4 + l + 7) & ~7;
	}
	n = a->count ? a->count : 1;
	if (room < (size_t)size * n + 8)
		return -1;
	memset(out, 0, size * n + 1);
	for (i = 0; i < n; i++) {
		unsigned long v = val;

		if (is_addr && !fault)
			fault = safe_read(&v, addr + i * size, size);
		if (bf) {
			unsigned int bits = bf->basesize * 8;

			v = (v << (64 - bits + bf->lshift)) >> (64 - bits + bf->rshift);
		}
		memcpy(out + i * size, &v, size);
	}
	/* one flag byte after the values: the fetch faulted */
	out[size * n] = fault;
	return (size * n + 1 + 7) & ~7;
}

/*
 * An event with fetched arguments, or an exit without an entry event to
 * pair with (@ip set): built in a staging buffer, then copied.
 */
static void record(struct rec_event *e, unsigned long ip, uint64_t w1,
		   struct ftrace_regs *fregs, unsigned long *entry)
{
	unsigned char buf[8 + 8 + EV_REC_MAX + 8 + EV_STR_MAX] __attribute__((aligned(8)));
	struct rec_thread *t;
	size_t len = 8;
	uint64_t *p, flags = 0;
	int i, w;

	if (__atomic_load_n(&rec_disabled, __ATOMIC_RELAXED) || !(t = rec_thread()))
		return;
	if (ip) {
		memcpy(buf + len, &ip, 8);
		len += 8;
		flags |= EV_W2_IP;
	}
	for (i = 0; i < e->nr_args; i++) {
		/* an exit the unwinder caused has no registers: its values are faults */
		w = fregs ? run_fetch(&e->args[i], fregs, entry, t->ring, buf + len,
				      8 + EV_REC_MAX - len)
			  : fault_arg(&e->args[i], buf + len, 8 + EV_REC_MAX - len);
		if (w < 0) {
			/* larger than a record may be: counted as lost */
			drop(t);
			return;
		}
		len += w;
	}
	*(uint64_t *)buf = (uint64_t)(len + 16) | flags << 32;
	p = begin_event(t, e->id | EV_ID_EXT, w1, (uint32_t)len);
	if (!p)
		return;
	memcpy(p + 2, buf, len);
	commit(t, (uint32_t)len + 16);
	rec_set_limit(t, rec_limit(t));
}

static bool caller_ok(unsigned long parent_ip)
{
	int i;

	if (!rec_nr_callers)
		return true;
	parent_ip = rethook_find_ret_addr(parent_ip);
	for (i = 0; i < rec_nr_callers; i++)
		if (parent_ip >= rec_callers[i].start && parent_ip < rec_callers[i].end)
			return true;
	return false;
}

static void entry_events(struct rec_probe *p, unsigned long entry_ip, uint64_t w1,
			 struct ftrace_regs *fregs)
{
	int i;

	/*
	 * In the kernel each event is its own fprobe, and ftrace calls the
	 * newest ops first: entry events print newest first.  Their return
	 * hooks stack the other way, so return events print oldest first.
	 */
	for (i = p->nr_entry - 1; i >= 0; i--) {
		struct rec_event *e = p->entry[i];

		if (!e->nr_args)
			record_plain(e->id, w1);
		else
			record(e, 0, w1, fregs, NULL);
	}
}

/*
 * A plain record at time @ts, earlier than now: only into a ring nothing
 * was written to since @ts (rec_inherit(), a fresh ring).
 */
static void record_plain_at(struct rec_thread *t, uint32_t id, uint64_t w1, uint64_t ts)
{
	uint32_t cpu = rec_cpu(), pre = 0;
	uint64_t *p;

	if (ts - t->last_ts >= REC_GAP)
		pre += 16;
	if (cpu != t->last_cpu)
		pre += 16;
	p = reserve(t, 16 + pre);
	if (!p) {
		drop(t);
		return;
	}
	if (ts - t->last_ts >= REC_GAP) {
		p[0] = ev_w0(ts, EV_ID_TIME);
		p[1] = ts;
		p += 2;
	}
	if (cpu != t->last_cpu) {
		p[0] = ev_w0(ts, EV_ID_CPU);
		p[1] = cpu;
		t->last_cpu = cpu;
		p += 2;
	}
	rec_head_add(t, pre);
	t->last_ts = ts;
	p[0] = ev_w0(ts, id);
	p[1] = w1;
	commit(t, 16);
}

static struct rec_probe *rec_probe_of(void *probe)
{
	int i;

	for (i = 0; probe && i < rec_nr_probes; i++)
		if (probe == (void *)&rec_probes[i].fp)
			return &rec_probes[i];
	return NULL;
}

/* what rec_inherit() writes: plain entries at the fork's time until one is not */
struct rec_inherit_ctx {
	struct rec_thread *t;
	bool now;
};

/* The kretprobe event whose return hook @probe (a rethook's owner) is, or NULL. */
static struct rec_event *rec_kretprobe_of(const void *probe)
{
	int i, j;

	for (i = 0; rec_kprobes && i < rec_nr_events; i++) {
		const struct rec_kprobe *k = &rec_kprobes[i];

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
static const struct rec_event *rec_kp_entry_of(const struct rec_event *r)
{
	int i;

	for (i = 0; i < rec_nr_events; i++) {
		const struct rec_event *e = &rec_events[i];

		if (e->kprobe && !e->is_return && !e->offset && !e->nr_args &&
		    !strcmp(e->symbol, r->symbol) &&
		    !strcmp(e->module ? e->module : "", r->module ? r->module : ""))
			return e;
	}
	return NULL;
}

static void rec_inherit_one(void *probe, unsigned long entry_ip, unsigned long slot, void *arg)
{
	struct rec_inherit_ctx *c = arg;
	struct rec_probe *p = rec_probe_of(probe);
	uint64_t w1 = ev_w1(entry_ip, slot);

	/* a kprobe event's: its entry, if it has one to pair with (no arguments) */
	if (!p && probe) {
		const struct rec_event *r = rec_kretprobe_of(probe), *e;

		if (r && (e = rec_kp_entry_of(r)) && !c->now)
			record_plain_at(c->t, e->id, ev_w1(entry_ip, 0), rec_fork_ts);
		return;
	}
	/* without an entry event, its exit carries the address: nothing to pair */
	if (!p || !p->nr_entry || !p->nr_ret)
		return;
	if (p->plain_entry >= 0 && !c->now) {
		record_plain_at(c->t, p->plain_entry, w1, rec_fork_ts);
		return;
	}
	/* arguments are not known here (faults); later ones now, in order */
	c->now = true;
	if (p->plain_entry >= 0)
		record_plain(p->plain_entry, w1);
	else
		entry_events(p, entry_ip, w1, NULL);
}

/*
 * The first ring of a forked child's thread: the frames it inherited
 * (main, and whatever called fork()) were entered by the parent, whose
 * ring has their entries; their returns are this thread's.  Their entries
 * go first, at the fork's time and at their shadow-stack slots, so the
 * child's own records pair with them: its calls are a tree under them, as
 * the parent's are, and a return from main is main's exit.
 */
static void rec_inherit(struct rec_thread *t)
{
	struct rec_inherit_ctx c = { t, false };

	rethook_for_each_pending(rec_inherit_one, &c);
	rec_fork_ts = 0;
	rec_set_limit(t, rec_limit(t));
}

static int __attribute__((noinline)) rec_entry_slow(struct fprobe *fp, unsigned long entry_ip,
						     unsigned long ret_ip,
						     struct ftrace_regs *fregs, void *entry_data);

/* The entry of `fhook record`'s every function: one plain event, no caller filter. */
static int rec_entry(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		     struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;

	if (__builtin_expect(p->plain_entry < 0 || p->nr_saved || rec_nr_callers, 0))
		return rec_entry_slow(fp, entry_ip, ret_ip, fregs, entry_data);
	record_plain(p->plain_entry,
		     ev_w1(entry_ip, p->nr_ret ? rethook_data_index(entry_data) : 0));
	return 0;
}

static int rec_entry_slow(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
			  struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;
	unsigned long depth = p->nr_ret ? rethook_data_index(entry_data) : 0;
	uint64_t w1 = ev_w1(entry_ip, depth);
	int i, k;

	if (__builtin_expect(rec_nr_callers != 0, 0) && !caller_ok(ret_ip))
		return 1;	/* and no exit event either */
	if (p->plain_entry >= 0) {
		/* one entry event without arguments: `fhook record`'s every function */
		record_plain(p->plain_entry, w1);
		if (!p->nr_saved)
			return 0;
	} else {
		entry_events(p, entry_ip, w1, fregs);
	}
	for (i = 0; i < p->nr_ret; i++) {
		struct rec_event *e = p->ret[i];
		unsigned long *saved = (unsigned long *)((char *)entry_data + p->ret_off[i]);

		for (k = 0; k < e->nr_entry; k++)
			saved[k] = fetch_arg(fregs, e->entry_args[k]);
	}
	return 0;
}

/*
 * @fregs is NULL for a frame that an exception, longjmp or cancellation
 * removed (FPROBE_FL_EXIT_ON_UNWIND): the exit is recorded where the
 * unwinder left it, marked as such.
 */
static void __attribute__((noinline)) rec_exit_slow(struct rec_probe *p, unsigned long entry_ip,
						     struct ftrace_regs *fregs, void *entry_data,
						     uint64_t w1);

static void rec_exit(struct fprobe *fp, unsigned long entry_ip, unsigned long ret_ip,
		     struct ftrace_regs *fregs, void *entry_data)
{
	struct rec_probe *p = (struct rec_probe *)fp;
	uint64_t w1 = ev_w1(ret_ip, rethook_data_index(entry_data));

	if (!fregs)
		w1 |= EV_W1_UNWOUND;
	if (__builtin_expect(p->plain_ret >= 0 && p->nr_entry, 1) &&
	    __builtin_expect(!fregs || rethook_data_pairs(entry_data), 1))
		record_plain(p->plain_ret, w1);
	else
		rec_exit_slow(p, entry_ip, fregs, entry_data, w1);
}

static void rec_exit_slow(struct rec_probe *p, unsigned long entry_ip,
			  struct ftrace_regs *fregs, void *entry_data, uint64_t w1)
{
	/*
	 * Without an entry event the reader cannot pair: the address goes
	 * along; nor for an entry the reader no longer has open (a thread
	 * that switched stacks: rethook_data_pairs()).
	 */
	bool pair = p->nr_entry && (!fregs || rethook_data_pairs(entry_data));
	int i;

	for (i = 0; i < p->nr_ret; i++) {
		struct rec_event *e = p->ret[i];

		if (!e->nr_args && pair)
			record_plain(e->id, w1);
		else
			record(e, pair ? 0 : entry_ip, w1, fregs,
			       (unsigned long *)((char *)entry_data + p->ret_off[i]));
	}
}

/* ---- kprobe events ('p', 'r'): the same records, from a struct pt_regs ---- */

static int resolve_symbols(struct rec_event *e);

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

/*
 * The thread inside fork(), between fhook's prepare handler and its parent
 * or child one (libc runs one fork at a time): a kprobe event there (a
 * libc function that fork() or another handler runs) would write with the
 * parent's ring in the child.  In .data with what the child's handler
 * writes anyway: clearing it there costs the child no page.
 */
static struct rec_thread *rec_forking __fhook_startup_data;

static void rec_atfork_prepare(void)
{
	__atomic_store_n(&rec_forking, &rec_thr, __ATOMIC_RELAXED);
}

static void rec_atfork_parent(void)
{
	__atomic_store_n(&rec_forking, NULL, __ATOMIC_RELAXED);
}

static inline bool rec_in_fork(void)
{
	return __builtin_expect(__atomic_load_n(&rec_forking, __ATOMIC_RELAXED) == &rec_thr, 0);
}

static int rec_kp_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct rec_kprobe *k = (struct rec_kprobe *)((char *)p - offsetof(struct rec_kprobe, rp.kp));
	struct rec_event *e = k->e;
	uint64_t w1 = ev_w1((unsigned long)p->addr, 0);
	struct ftrace_regs fr;

	if (rec_in_fork())
		return 0;
	/* a caller is known at a function's first instruction only */
	if (__builtin_expect(rec_nr_callers != 0, 0) && !e->offset &&
	    !caller_ok(*regs_return_address_ptr(regs)))
		return 0;
	if (!e->nr_args) {
		record_plain(e->id, w1);
		return 0;
	}
	kp_fregs(&fr, regs, kprobe_vector_regs());
	record(e, 0, w1, &fr, NULL);
	return 0;
}

/* A return event's entry: the caller test, and the $argN it prints saved. */
static int rec_kp_ret_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
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
	if (__builtin_expect(rec_fork_ts != 0, 0))
		(void)rec_thread();
	if (__builtin_expect(rec_nr_callers != 0, 0) && !caller_ok(ri->ret_addr))
		return 1;
	if (k->e->nr_entry) {
		kp_fregs(&fr, regs, kprobe_vector_regs());
		for (i = 0; i < k->e->nr_entry; i++)
			saved[i] = fetch_arg(&fr, k->e->entry_args[i]);
	}
	return 0;
}

/*
 * The exit carries the function's address: the reader pairs it with the
 * open entry of that function.  @regs NULL: the call was unwound
 * (KRETPROBE_FL_EXIT_ON_UNWIND), its values are faults.
 */
static int rec_kp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
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
	record(k->e, (unsigned long)k->rp.kp.addr, w1, regs ? &fr : NULL,
	       (unsigned long *)ri->data);
	return 0;
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

	if (!name || !*name)
		name = "/proc/self/exe";
	if (stat(name, &st) || st.st_ino != f->st.st_ino || st.st_dev != f->st.st_dev)
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
static unsigned long kp_event_addr(const struct rec_event *e)
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
			__atomic_fetch_add(&rec_shm->field[(e)->id], (n), __ATOMIC_RELAXED); \
	} while (0)

/* @k's handlers for event @e at @addr (not registered) */
static void rec_kp_init(struct rec_kprobe *k, struct rec_event *e, unsigned long addr)
{
	memset(k, 0, sizeof(*k));
	k->e = e;
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
static void rec_kp_arm_glob(struct rec_event *e, struct rec_kprobe *k, FILE *err)
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
	if (!m || !list || !errs || !whys || resolve_symbols(e)) {
		fprintf(err, "fhook: %s: cannot probe %s%s%s: %s\n", rec_cmd,
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
		fprintf(err, "fhook: %s: cannot probe %s: %s\n", rec_cmd, name, whys[i] ? whys[i] :
			errs[i] == -EILSEQ ? "an instruction that cannot be moved" :
			strerror(-errs[i]));
		free(whys[i]);
	}
	if (refused)
		rec_untraced("%d of %d functions of %s%s%s not probed", refused, n,
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

static bool rec_kp_is_glob(const struct rec_event *e)
{
	return strpbrk(e->symbol, "*?[") != NULL;
}

/*
 * Register the kprobe events whose code is loaded now and that are not
 * yet: at start-up, and after each dlopen() (an object the program loads
 * later, as the kernel probes a module that comes later).
 */
static void rec_kp_disarm_glob(struct rec_kprobe *k);
static unsigned long kp_nmissed(const struct rec_kprobe *k);

/* what probes of objects that were unloaded missed (they are placed anew) */
static unsigned long rec_kp_missed_gone;

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
	return kp_nmissed(k);
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

static void rec_kp_arm(FILE *err)
{
	int i, ret;

	if (!rec_kprobes)
		rec_kprobes = calloc(rec_nr_events ? rec_nr_events : 1, sizeof(*rec_kprobes));
	/*
	 * Returns first, then entries: in a running process (-p) a call that
	 * enters between the two would have an entry and never an exit, and
	 * the reader would nest what follows under it; an exit without its
	 * entry is only left unpaired.
	 */
	for (i = 0; rec_kprobes && i < 2 * rec_nr_events; i++) {
		struct rec_event *e = &rec_events[i % rec_nr_events];
		struct rec_kprobe *k = &rec_kprobes[i % rec_nr_events];
		unsigned long addr;

		if (e->is_return != (i < rec_nr_events))
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
		if (resolve_symbols(e)) {
			fprintf(err, "fhook: %s: a symbol of event %u is not in this process\n", rec_cmd,
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

			fprintf(err, "fhook: %s: cannot probe %s%s%s+%lu: %s\n", rec_cmd,
				e->module ? e->module : "", e->module ? ":" : "", e->symbol,
				e->offset, why);
			rec_untraced("cannot probe %s+%lu: %s", e->symbol, e->offset, why);
		}
	}
}

/* asked by every recorded process at start-up: with that code (util/startup.h) */
static bool __fhook_startup rec_kp_pending(void)
{
	int i;

	for (i = 0; i < rec_nr_events; i++)
		if (rec_events[i].kprobe && (!rec_kprobes ||
		    (!rec_kprobes[i].registered && !rec_kprobes[i].failed) ||
		    (rec_kprobes[i].registered && rec_kp_gone(&rec_kprobes[i]))))
			return true;
	return false;
}

static unsigned long kp_nmissed(const struct rec_kprobe *k)
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
static unsigned long rec_kp_disarm(void)
{
	unsigned long missed = rec_kp_missed_gone;
	int i;

	for (i = 0; rec_kprobes && i < rec_nr_events; i++) {
		struct rec_kprobe *k = &rec_kprobes[i];

		if (k->registered)
			missed += rec_kp_off(k);
	}
	return missed;
}

/* Group the events by SYM, one probe each. */
static int build_probes(void)
{
	int i, j;

	rec_probes = calloc(rec_nr_events ? rec_nr_events : 1, sizeof(*rec_probes));
	if (!rec_probes)
		return -ENOMEM;
	for (i = 0; i < rec_nr_events; i++) {
		struct rec_event *e = &rec_events[i];
		struct rec_probe *p = NULL;

		if (e->unresolved || e->kprobe)
			continue;
		for (j = 0; j < rec_nr_probes; j++)
			if (!strcmp(rec_probes[j].symbol, e->symbol))
				p = &rec_probes[j];
		if (!p) {
			p = &rec_probes[rec_nr_probes++];
			p->symbol = e->symbol;
			p->first = e;
			p->entry = calloc(rec_nr_events, sizeof(*p->entry));
			p->ret = calloc(rec_nr_events, sizeof(*p->ret));
			p->ret_off = calloc(rec_nr_events, sizeof(*p->ret_off));
			if (!p->entry || !p->ret || !p->ret_off)
				return -ENOMEM;
		}
		if (e->nr_maxactive > p->fp.nr_maxactive)
			p->fp.nr_maxactive = e->nr_maxactive;
		if (e->is_return) {
			p->nr_saved += e->nr_entry;
			p->ret_off[p->nr_ret] = p->fp.entry_data_size;
			p->ret[p->nr_ret++] = e;
			p->fp.entry_data_size += e->nr_entry * sizeof(unsigned long);
			/* the entry data's place tells the handlers the shadow-stack slot */
			if (!p->fp.entry_data_size)
				p->fp.entry_data_size = sizeof(unsigned long);
		} else {
			p->entry[p->nr_entry++] = e;
		}
	}
	for (j = 0; j < rec_nr_probes; j++) {
		struct rec_probe *p = &rec_probes[j];

		p->plain_entry = p->nr_entry == 1 && !p->entry[0]->nr_args ? (int)p->entry[0]->id : -1;
		p->plain_ret = p->nr_ret == 1 && !p->ret[0]->nr_args ? (int)p->ret[0]->id : -1;
	}
	return 0;
}

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/*
 * The fields of a description line, each after a space: not sscanf(),
 * whose code (vfscanf, strtoull, the locale's tables) was five pages of
 * libc that each recorded process with sites faulted in for it alone.
 * Each moves *@s past what it took and is false when there is none.
 */
static bool parse_num(const char **s, unsigned long long max, unsigned long long *out);

static bool desc_skip(const char **s)
{
	while (**s == ' ')
		(*s)++;
	return **s && **s != '\n';
}

static bool desc_long(const char **s, long min, long max, long *out)
{
	unsigned long long v;
	bool neg;

	if (!desc_skip(s))
		return false;
	neg = **s == '-';
	*s += neg;
	if (!parse_num(s, neg ? (unsigned long long)max + 1 : (unsigned long long)max, &v))
		return false;
	*out = neg ? (long)(0 - v) : (long)v;
	return *out >= min;
}

static bool desc_int(const char **s, int *out)
{
	long v;

	if (!desc_long(s, INT_MIN, INT_MAX, &v))
		return false;
	*out = (int)v;
	return true;
}

static bool desc_uint(const char **s, unsigned int *out)
{
	long v;

	if (!desc_long(s, 0, UINT_MAX, &v))
		return false;
	*out = (unsigned int)v;
	return true;
}

static bool desc_hex(const char **s, unsigned long *out)
{
	unsigned long v = 0;
	const char *p;

	if (!desc_skip(s))
		return false;
	for (p = *s; (*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'); p++) {
		if (v >> 60)
			return false;
		v = v << 4 | (unsigned long)hexval(*p);
	}
	if (p == *s)
		return false;
	*s = p;
	*out = v;
	return true;
}

/* A word of at most @size - 1 bytes, NUL-terminated in @buf. */
static bool desc_word(const char **s, char *buf, size_t size)
{
	size_t n = 0;

	if (!desc_skip(s))
		return false;
	while ((*s)[n] && (*s)[n] != ' ' && (*s)[n] != '\n')
		n++;
	if (n >= size)
		return false;
	memcpy(buf, *s, n);
	buf[n] = 0;
	*s += n;
	return true;
}

/* The descriptions the command wrote (lib/events/session.c, desc_write()). */
static int parse_desc(const char *d)
{
	const char *line = d;
	struct rec_event *e = NULL;
	struct rec_arg *a;

	while (*line) {
		const char *nl = strchr(line, '\n');
		char *l = strndup(line, nl ? (size_t)(nl - line) : strlen(line));
		const char *p = l + 1;
		int i;

		if (!l)
			return -ENOMEM;
		if (l[0] == 'E') {
			unsigned int id, ret, nargs, nentry, maxactive;
			char sym[1024];

			rec_events = realloc(rec_events, (rec_nr_events + 1) * sizeof(*rec_events));
			e = &rec_events[rec_nr_events++];
			memset(e, 0, sizeof(*e));
			if (!desc_uint(&p, &id) || !desc_uint(&p, &ret) || !desc_uint(&p, &nargs) ||
			    !desc_uint(&p, &nentry))
				goto bad;
			e->id = id;
			e->is_return = ret;
			e->nr_entry = nentry;
			for (i = 0; i < (int)nentry && i < FHOOK_EV_MAX_ENTRY_ARGS; i++)
				if (!desc_int(&p, &e->entry_args[i]))
					goto bad;
			if (!desc_uint(&p, &maxactive) || !desc_word(&p, sym, sizeof(sym)))
				goto bad;
			e->nr_maxactive = (int)maxactive;
			e->symbol = strdup(sym);
			e->args = calloc(nargs ? nargs : 1, sizeof(*e->args));
		} else if (l[0] == 'A' && e) {
			a = &e->args[e->nr_args++];
			if (!desc_int(&p, &a->type) || !desc_uint(&p, &a->count) ||
			    !desc_int(&p, &a->nops) || a->nops < 0 || a->nops > FHOOK_EV_FETCH_INSN_MAX)
				goto bad;
			for (i = 0; i < a->nops; i++) {
				struct fhook_fetch_insn *in = &a->code[i];
				unsigned int lsh, rsh, bs;
				char data[2 * 4096 + 2];
				int op;

				if (!desc_int(&p, &op) || !desc_long(&p, LONG_MIN, LONG_MAX, &in->param) ||
				    !desc_uint(&p, &lsh) || !desc_uint(&p, &rsh) || !desc_uint(&p, &bs) ||
				    !desc_word(&p, data, sizeof(data)))
					goto bad;
				in->op = op;
				in->lshift = lsh;
				in->rshift = rsh;
				in->basesize = bs;
				if (strcmp(data, "-")) {
					size_t k, dl = strlen(data) / 2;

					in->data = malloc(dl + 1);
					for (k = 0; k < dl; k++)
						in->data[k] = hexval(data[2 * k]) << 4 | hexval(data[2 * k + 1]);
					in->data[dl] = 0;
				}
			}
		} else if (l[0] == 'K' && e) {
			char mod[PATH_MAX], path[PATH_MAX];
			long off;

			if (!desc_long(&p, 0, LONG_MAX, &off) || !desc_word(&p, mod, sizeof(mod)) ||
			    !desc_word(&p, path, sizeof(path)) || !desc_hex(&p, &e->link_addr))
				goto bad;
			e->offset = (unsigned long)off;
			e->kprobe = true;
			if (strcmp(mod, "-") && !(e->module = strdup(mod)))
				goto bad;
			if (strcmp(path, "-") && !(e->path = strdup(path)))
				goto bad;
		} else if (l[0] == 'T' && e && l[1] == ' ') {
			const char **nt = realloc(e->targets, (e->nr_targets + 1) * sizeof(*nt));

			if (!nt)
				goto bad;
			e->targets = nt;
			if (!(e->targets[e->nr_targets] = strdup(l + 2)))
				goto bad;
			e->nr_targets++;
		} else if (l[0] == 'C') {
			unsigned long addr = kallsyms_lookup_name(l + 2), size = 0, off;

			if (!addr || !kallsyms_lookup_size_offset(addr, &size, &off)) {
				fprintf(stderr, "fhook: %s: no caller '%s' in this process\n",
					rec_cmd, l + 2);
			} else {
				rec_callers = realloc(rec_callers, (rec_nr_callers + 1) * sizeof(*rec_callers));
				rec_callers[rec_nr_callers].start = addr;
				rec_callers[rec_nr_callers++].end = addr + size;
			}
		}
		free(l);
		line = nl ? nl + 1 : line + strlen(line);
		continue;
bad:
		free(l);
		return -EINVAL;
	}
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/*
 * A C++ name the command matched to several symbols: those this process
 * has, each function once (a constructor's or destructor's variants are
 * often one function under two names).
 */
static int register_targets(struct rec_probe *p)
{
	struct rec_event *e = p->first;
	unsigned long *addrs = calloc(e->nr_targets, sizeof(*addrs));
	int i, n = 0, m = 0, ret;

	if (!addrs)
		return -ENOMEM;
	for (i = 0; i < e->nr_targets; i++) {
		unsigned long a = kallsyms_lookup_name(e->targets[i]);

		if (a && ftrace_location(a))
			addrs[n++] = a;
	}
	qsort(addrs, n, sizeof(*addrs), cmp_addr);
	for (i = 0; i < n; i++)
		if (!m || addrs[m - 1] != addrs[i])
			addrs[m++] = addrs[i];
	ret = m ? register_fprobe_ips(&p->fp, addrs, m) : -ENOENT;
	free(addrs);
	return ret;
}

struct base_arg {
	const char *path;
	unsigned long base;
	bool found;
};

static int base_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct base_arg *b = arg;
	char exe[256];
	const char *name = info->dlpi_name;

	if (!name || !*name) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = 0;
		name = exe;
	}
	if (strcmp(name, b->path))
		return 0;
	b->base = info->dlpi_addr;
	b->found = true;
	return 1;
}

/*
 * @SYM[+-off] comes as the file that defines it and its link-time address
 * (the command read the symbol tables): add where that file is loaded.
 */
static int resolve_symbols(struct rec_event *e)
{
	int i, k;

	for (i = 0; i < e->nr_args; i++) {
		for (k = 0; k < e->args[i].nops; k++) {
			struct fhook_fetch_insn *in = &e->args[i].code[k];
			struct base_arg b = { .path = in->data };

			if (in->op != FHOOK_FOP_SYMBOL)
				continue;
			if (!in->data || in->data[0] != '/')
				return -ENOENT;
			dl_iterate_phdr(base_cb, &b);
			if (!b.found)
				return -ENOENT;
			in->op = FHOOK_FOP_NOP;
			in[1].op = FHOOK_FOP_IMM;
			in[1].param = b.base + in->param;
		}
	}
	return 0;
}

static int __fhook_startup obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ev_proc *p = arg;
	struct ev_obj *o;

	if (p->nr_objs >= EV_MAX_OBJS)
		return 1;
	o = &p->objs[p->nr_objs];
	o->base = info->dlpi_addr;
	if (!p->nr_objs) {
		ssize_t n = readlink("/proc/self/exe", o->path, sizeof(o->path) - 1);

		o->path[n > 0 ? n : 0] = 0;
	} else if (info->dlpi_name && info->dlpi_name[0] == '/') {
		/* not snprintf(): three libc pages a process fault in for nothing else */
		size_t n = strnlen(info->dlpi_name, sizeof(o->path) - 1);

		memcpy(o->path, info->dlpi_name, n);
		o->path[n] = 0;
	} else if (info->dlpi_name && info->dlpi_name[0]) {
		/* dlopen("./lib.so") or a relative RPATH: the command needs the whole path */
		char rp[PATH_MAX];

		if (!realpath(info->dlpi_name, rp) || strlen(rp) >= sizeof(o->path))
			return 0;
		memcpy(o->path, rp, strlen(rp) + 1);
	} else {
		return 0;
	}
	p->nr_objs++;
	return 0;
}

/*
 * Announce this process image's objects in a free mailbox: the command
 * symbolizes with them.  A mailbox is waited for (the command empties them
 * at every drain), but not for long: without one, addresses print as numbers.
 */
static void __fhook_startup announce_objects(uint64_t seq)
{
	struct ev_proc *p = NULL;
	int tries, i;

	for (tries = 0; tries < 200 && !p; tries++) {
		for (i = 0; i < EV_MAX_PROCS; i++) {
			p = &ev_shm_procs(rec_shm)[i];
			if (ev_slot_claim(&p->state))
				break;
			p = NULL;
		}
		if (!p)
			usleep(1000);
	}
	if (!p)
		return;
	p->pid = getpid();
	p->nr_objs = 0;
	dl_iterate_phdr(obj_cb, p);
	p->seq = seq ? seq : __atomic_add_fetch(&rec_shm->proc_seq, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&p->state, EV_SLOT_READY, __ATOMIC_RELEASE);
	/* after the mailbox: a ring that names the image is read after it */
	__atomic_store_n(&rec_proc_seq, p->seq, __ATOMIC_RELEASE);
}

/*
 * A new process image (start-up, a forked child): a new number.  Pending
 * until announced (get_ring()'s other threads wait for it), and not again
 * if no mailbox was free.
 */
static void __fhook_startup register_process(void)
{
	rec_proc_seq = 0;
	announce_objects(0);
	__atomic_store_n(&rec_announce_pending, false, __ATOMIC_RELEASE);
}

/* dlopen or dlclose returned: the same image, its objects again. */
static int rec_arm(FILE *err);

/*
 * Registering probes may dlopen() (capstone, libgcc_s), which calls
 * rec_objects_changed() back while the locks of that registration are
 * held: no arming from there.
 */
static bool rec_arming __fhook_startup_data;

static void rec_objects_changed(void)
{
	unsigned int old;

	if (!rec_shm || !(rec_proc_seq || rec_announce_pending) ||
	    __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
		return;
	old = fhook_internal_enter();
	if (rec_proc_seq)
		announce_objects(rec_proc_seq);
	if (!rec_arming) {
		rec_arming = true;
		if (rec_deferred && fhook_objects_have_sites())
			rec_arm(stderr);
		if (rec_kp_pending())
			rec_kp_arm(stderr);
		rec_arming = false;
	}
	fhook_internal_leave(old);
}

/* Zero @p, writing only if it is not: a forked child copies every page it writes. */
static void __fhook_startup zero_if_set(void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i]) {
			memset(p, 0, len);
			return;
		}
}

static void __fhook_startup rec_atfork_child(void)
{
	uint32_t i;

	if (!rec_shm)
		return;
	/* the parent's threads' rings: mapped here, but not this process's to write */
	for (i = 0; i < rec_maps_hi; i++) {
		if (rec_maps[i]) {
			munmap(rec_maps[i], ev_ring_stride(rec_ring_size));
			rec_maps[i] = NULL;
		}
	}
	zero_if_set(&rec_thr, sizeof(rec_thr));
	if (!rec_follow) {
		__atomic_store_n(&rec_disabled, REC_G_STOPPED, __ATOMIC_RELAXED);
		return;
	}
	/*
	 * The child's thread is a new thread: its own ring, its own pid, and
	 * its objects announced with its first ring: most children exec at
	 * once (a shell's, make's), and that costs them about 25 page faults.
	 */
	rec_proc_seq = 0;
	rec_forking = NULL;
	rec_announce_pending = true;
	rec_announcing = 0;
	rec_fork_ts = ev_clock_read(rec_clock) - rec_clock_base;
}

/*
 * The shared memory named by FHOOK_EV_SHM ("FD:INODE:PID": the memfd's
 * descriptor, its inode, the command's pid), mapped up to the rings.  The
 * descriptor is inherited, and a program may have closed it and opened
 * something else under its number: only that memfd is taken (fstat: a
 * memfd, the inode, a size the header agrees with), reopened from the
 * command if the number now is another file.
 */
/*
 * The decimal number at *@s, *@s moved past it; false if there is none or
 * it exceeds @max.  Not strtoul(): in every recorded process, its code and
 * the locale's table would be two more libc pages to fault in.
 */
static bool __fhook_startup parse_num(const char **s, unsigned long long max,
				      unsigned long long *out)
{
	const char *p = *s;
	unsigned long long v = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (unsigned long long)(*p - '0')) / 10)
			return false;
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	*s = p;
	*out = v;
	return true;
}

static struct ev_shm *__fhook_startup map_shm(const char *v, const char **why)
{
	char link[64];
	struct ev_shm hdr, *shm;
	unsigned long long nfd, ino = 0, npid = 0;
	const char *end = v;
	struct stat st;
	long fd, pid;

	*why = "is malformed";
	if (!parse_num(&end, INT_MAX, &nfd) ||
	    (*end == ':' && (end++, !parse_num(&end, ~0ULL, &ino) ||
			     (*end == ':' && (end++, !parse_num(&end, INT_MAX, &npid))))) ||
	    *end)
		return NULL;
	fd = (long)nfd;
	pid = (long)npid;
	rec_tracer_fd = (int)fd;
	rec_tracer_pid = (pid_t)pid;
	*why = "is not fhook's trace buffer";
	if (!fd_is_trace_memfd(fd) || fstat((int)fd, &st) ||
	    (ino && st.st_ino != (ino_t)ino)) {
		/* closed, or its number reused: the command's copy */
		if (!ino || !pid)
			goto not_ours;
		rec_ino = (ino_t)ino;
		rec_dev = 0;
		proc_fd_path(link, (unsigned long)pid, (unsigned long)fd);
		fd = open(link, O_RDWR | O_CLOEXEC);
		if (fd < 0 || fstat((int)fd, &st) || st.st_ino != (ino_t)ino) {
			if (fd >= 0)
				close((int)fd);
			*why = "names a descriptor the program reused, and the command's "
			       "copy cannot be opened";
			return NULL;
		}
	}
	rec_dev = st.st_dev;
	rec_ino = st.st_ino;
	*why = "is not fhook's trace buffer";
	if ((uint64_t)st.st_size < sizeof(struct ev_shm))
		goto not_ours;
	/* the fields checked, read: no mapping of their own to fault in */
	if (pread((int)fd, &hdr, offsetof(struct ev_shm, untraced), 0) !=
	    (ssize_t)offsetof(struct ev_shm, untraced))
		goto not_ours;
	if (hdr.magic != EV_SHM_MAGIC || hdr.size != (uint64_t)st.st_size ||
	    hdr.rings_off > hdr.size || hdr.desc_off + hdr.desc_len > hdr.rings_off ||
	    hdr.procs_off + EV_MAX_PROCS * sizeof(struct ev_proc) > hdr.desc_off ||
	    hdr.ring_size < EV_RING_MIN || hdr.ring_size > EV_RING_MAX ||
	    (hdr.ring_size & (hdr.ring_size - 1)) ||
	    hdr.rings_off + EV_MAX_RINGS * ev_ring_stride(hdr.ring_size) > hdr.size ||
	    (pid && hdr.tracer_pid != (uint32_t)pid))
		goto not_ours;
	shm = mmap(NULL, hdr.rings_off, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (shm == MAP_FAILED) {
		*why = "cannot be mapped (address space)";
		goto not_ours;
	}
	rec_fd = (int)fd;
	return shm;
not_ours:
	if ((int)fd != rec_tracer_fd)
		close((int)fd);
	return NULL;
}

/*
 * Start recording into the shared memory of descriptor @v (a number):
 * at start-up (FHOOK_EV_SHM), or when `fhook trace -p` attached (@attached;
 * messages then go to @err, the channel's reply).  0 or a negative errno.
 */
/* Resolve the events' symbols and register their probes. */
/*
 * A probe of plain events only (`fhook record`'s every function, or an
 * entry and a return event without arguments) has its records written by
 * the trampolines (arch/shadow.h: graph records), when the clock is the
 * TSC with no base; rec_entry() and rec_exit() still take
 * whatever the trampolines leave to C.
 */
static void rec_graph(struct rec_probe *p)
{
	if (rec_clock != EV_CLOCK_TSC || rec_clock_base || rec_nr_callers || p->nr_saved ||
	    p->plain_entry < 0 || (p->nr_ret && p->plain_ret < 0))
		return;
	fprobe_graph_rec(&p->fp, (long)((char *)&rec_thr - (char *)__builtin_thread_pointer()),
			 (unsigned long)p->plain_entry << EV_TS_BITS,
			 p->nr_ret ? (unsigned long)p->plain_ret << EV_TS_BITS : 0);
}

static void free_events(void);

/*
 * The event descriptions the command wrote, parsed when the probes are
 * first built: a process none of whose objects has a site (a suite's
 * shell, make, rm) never needs them, and parsing costs it sscanf()'s and
 * malloc()'s pages.
 */
static int read_desc(FILE *err)
{
	char *desc;

	if (rec_desc_state)
		return rec_desc_state < 0 ? -EINVAL : 0;
	desc = strndup((char *)rec_shm + rec_shm->desc_off, rec_shm->desc_len);
	if (!desc || parse_desc(desc)) {
		fprintf(err, "fhook: %s: bad event descriptions\n", rec_cmd);
		rec_untraced("bad event descriptions");
		free(desc);
		free_events();
		rec_desc_state = -1;
		return -EINVAL;
	}
	free(desc);
	rec_desc_state = 1;
	return 0;
}

static int rec_arm(FILE *err)
{
	int i, ret;

	rec_deferred = false;
	ret = read_desc(err);
	if (ret)
		return ret;
	for (i = 0; i < rec_nr_events; i++) {
		struct rec_event *e = &rec_events[i];

		if (e->kprobe)
			continue;
		if (resolve_symbols(e)) {
			fprintf(err, "fhook: %s: a symbol of event %u is not in this process\n", rec_cmd,
				e->id);
			e->unresolved = true;
		}
	}
	if (build_probes()) {
		fprintf(err, "fhook: %s: out of memory\n", rec_cmd);
		return -ENOMEM;
	}
	__atomic_store_n(&rec_disabled, 0, __ATOMIC_RELAXED);
	for (i = 0; i < rec_nr_probes; i++) {
		struct rec_probe *p = &rec_probes[i];

		p->fp.entry_handler = rec_entry;
		if (p->nr_ret) {
			p->fp.exit_handler = rec_exit;
			/* frames an exception, longjmp or cancellation removes get their exits */
			p->fp.flags |= FPROBE_FL_EXIT_ON_UNWIND;
		}
		if (p->first->nr_targets)
			ret = register_targets(p);
		else
			ret = register_fprobe(&p->fp, p->symbol, NULL);
		/* a child that exec'd another program may not have the function */
		if (ret && ret != -ENOENT) {
			fprintf(err, "fhook: %s: cannot probe %s: %s\n", rec_cmd, p->symbol,
				strerror(-ret));
			rec_untraced("cannot probe %s: %s", p->symbol, strerror(-ret));
		}
		p->registered = !ret;
		if (!ret)
			rec_graph(p);
	}
	rec_trigger_arm(rec_shm, err);
	return 0;
}

/*
 * If the fhook command dies (SIGKILL, a crash, the OOM killer) without
 * detaching, the control thread removes the probes when it sees the
 * command's pidfd close, as trace-stop would: the process runs on at its
 * untraced speed, and a later attach finds it free.  A process that
 * probes nothing (no sites, no kprobes yet) gets no thread for it.
 */
static void rec_watch_tracer(bool attached)
{
	if (!attached && !rec_nr_probes && !rec_kprobes)
		return;
	fhook_ctl_watch((pid_t)rec_shm->tracer_pid, "trace-stop");
	if (!attached) {
		/* pthread_create's calloc may be the program's own, and traced: not this call */
		unsigned int old = fhook_internal_enter();

		fhook_ctl_thread_start();
		fhook_internal_leave(old);
	}
}

/* The command's name as it wrote it, if it is a plain word; else "record". */
static void rec_set_cmd(const char *cmd)
{
	size_t i;

	for (i = 0; i < sizeof(rec_cmd) - 1 && cmd[i] >= 'a' && cmd[i] <= 'z'; i++)
		;
	if (!i || cmd[i]) {
		strcpy(rec_cmd, "record");
		return;
	}
	memcpy(rec_cmd, cmd, i + 1);
}

static int __fhook_startup rec_setup(const char *v, bool attached, FILE *err)
{
	static bool once;
	struct ev_shm *shm;
	const char *why;
	int ret = 0;

	shm = map_shm(v, &why);
	if (!shm) {
		fprintf(err, "fhook: record: FHOOK_EV_SHM=%s %s: this process is not traced\n",
			v, why);
		if (!attached)
			unsetenv("FHOOK_EV_SHM");
		return -EINVAL;
	}
	rec_shm = shm;
	rec_set_cmd(shm->cmd);
	rec_ring_size = shm->ring_size;
	rec_mark = shm->ring_size / 2;
	rec_clock = shm->clock;
	rec_clock_base = shm->clock_base;
	rec_follow = shm->follow;
	/* cpu_id is at +4 of struct rseq */
	rec_has_rseq = &__rseq_size && __rseq_size;
	if (rec_has_rseq)
		rec_g.cpu_off = __rseq_offset + 4;
	else
		rec_g.cpu_off = (long)((char *)&rec_thr.last_cpu - (char *)__builtin_thread_pointer());
	if (!shm->follow) {
		/* programs this one starts are not traced; its own threads map rings later */
		if (!attached)
			unsetenv("FHOOK_EV_SHM");
		fcntl(rec_fd, F_SETFD, FD_CLOEXEC);
	}
	/*
	 * A program the command or a traced process started announces its
	 * objects with its first ring, as a forked child does: most of a
	 * suite's programs (rm, cmp, the shell) record nothing, and the
	 * announcement cost each a mailbox page, four system calls and the
	 * command the symbols of files no event names.  An attached process
	 * may already have events pending in its threads: at once.
	 */
	if (attached) {
		register_process();
	} else {
		rec_proc_seq = 0;
		rec_announce_pending = true;
	}
	rec_desc_state = 0;
	if (!once) {
		once = true;
		fhook_atfork(rec_atfork_prepare, rec_atfork_parent, rec_atfork_child);
		fhook_loader_notify(rec_objects_changed);
		/* a record is named by the object at its address: none takes another's */
		fhook_loader_keep_addresses();
		fhook_exec_notify(rec_exec);
	}
	/*
	 * A process none of whose objects has a patchable site (the shell and
	 * make of a test suite) has nothing to probe: it resolves no symbol
	 * and registers nothing until a dlopen() brings an object that has.
	 */
	rec_arming = true;
	if (fhook_objects_have_sites())
		ret = rec_arm(err);
	else
		rec_deferred = true;
	/* kprobe events need no site: any object, the executable's too, now */
	if (!ret && !rec_desc_state && rec_shm->desc_kprobes)
		ret = read_desc(err);
	if (!ret && rec_kp_pending())
		rec_kp_arm(err);
	rec_arming = false;
	if (ret)
		return ret;
	rec_watch_tracer(attached);
	/*
	 * After the probes: thread-exit destructors run in the order their
	 * keys were made, and the return hooks report the frames a thread
	 * leaves behind from theirs; the ring is retired after that.
	 */
	if (!rec_have_key)
		rec_have_key = !pthread_key_create(&rec_ring_key, retire_ring);
	return 0;
}

__attribute__((constructor(210))) static void fhook_ev_preload(void)
{
	const char *v = secure_getenv("FHOOK_EV_SHM");

	if (v)
		rec_setup(v, false, stderr);
}

__attribute__((destructor(210))) static void fhook_ev_preload_exit(void)
{
	unsigned long missed = 0;
	int i;

	if (!rec_shm)
		return;
	for (i = 0; i < rec_nr_probes; i++)
		missed += fprobe_nmissed(&rec_probes[i].fp);
	for (i = 0; rec_kprobes && i < rec_nr_events; i++)
		missed += kp_nmissed(&rec_kprobes[i]);
	__atomic_fetch_add(&rec_shm->nmissed, missed, __ATOMIC_RELAXED);
	if (rec_thr.ring)
		retire_ring(rec_thr.ring);
}

/* ---- fhook trace -p / fhook record -p: the attach channel's verbs ---- */

static void free_events(void)
{
	int i, k, j;

	for (i = 0; i < rec_nr_events; i++) {
		struct rec_event *e = &rec_events[i];

		for (k = 0; k < e->nr_args; k++)
			for (j = 0; j < e->args[k].nops; j++)
				free(e->args[k].code[j].data);
		free(e->args);
		free(e->symbol);
		free(e->module);
		free(e->path);
		for (k = 0; k < e->nr_targets; k++)
			free((char *)e->targets[k]);
		free(e->targets);
	}
	free(rec_events);
	rec_events = NULL;
	for (i = 0; rec_kprobes && i < rec_nr_events; i++)
		free(rec_kprobes[i].many);
	rec_nr_events = 0;
	free(rec_kprobes);
	rec_kprobes = NULL;
	for (i = 0; i < rec_nr_probes; i++) {
		free(rec_probes[i].entry);
		free(rec_probes[i].ret);
		free(rec_probes[i].ret_off);
	}
	free(rec_probes);
	rec_probes = NULL;
	rec_nr_probes = 0;
	free(rec_callers);
	rec_callers = NULL;
	rec_nr_callers = 0;
}

/*
 * End an attached recording: every probe removed (unregister_fprobe waits
 * until no thread is in a handler), then the rings are retired for the
 * command to free, and the memory is unmapped.  Threads find out that
 * their ring is gone from rec_gen.
 */
static int rec_teardown(FILE *out)
{
	unsigned long missed = 0;
	uint64_t rings_off;
	int i;

	if (!rec_shm) {
		fprintf(out, "fhook: record: this process is not being recorded\n");
		return -ENOENT;
	}
	fhook_ctl_unwatch();
	__atomic_store_n(&rec_disabled, REC_G_STOPPED, __ATOMIC_RELAXED);
	for (i = 0; i < rec_nr_probes; i++) {
		if (rec_probes[i].registered)
			unregister_fprobe(&rec_probes[i].fp);
		missed += fprobe_nmissed(&rec_probes[i].fp);
	}
	missed += rec_kp_disarm();
	/* (before the shared memory it writes to goes) */
	rec_trigger_disarm();
	__atomic_add_fetch(&rec_gen, 1, __ATOMIC_RELEASE);
	for (i = 0; i < EV_MAX_RINGS; i++) {
		if (!rec_maps[i])
			continue;
		__atomic_store_n(&rec_maps[i]->exited, 1, __ATOMIC_RELEASE);
		munmap(rec_maps[i], ev_ring_stride(rec_ring_size));
		rec_maps[i] = NULL;
	}
	__atomic_fetch_add(&rec_shm->nmissed, missed, __ATOMIC_RELAXED);
	rings_off = rec_shm->rings_off;
	munmap(rec_shm, rings_off);
	rec_shm = NULL;
	close(rec_fd);
	rec_fd = -1;
	rec_proc_seq = 0;
	free_events();
	return 0;
}

/*
 * The command a request came from, by its last word ("trace" or
 * "record"; a command that does not say is record): its messages name it.
 */
static const char *verb_cmd(int argc, char **argv, int at)
{
	return argc > at && !strcmp(argv[at], "trace") ? "trace" : "record";
}

static int say_busy(const char *cmd, FILE *out)
{
	fprintf(out, "fhook: %s: process %d is being %s already (by fhook record or trace, "
		"started with it or attached)\n", cmd, (int)getpid(),
		strcmp(cmd, "trace") ? "recorded" : "traced");
	return -EBUSY;
}

/*
 * Is this process recorded by a command that is still there?  A claim
 * whose command is gone (killed before the control thread saw it: its
 * pidfd is read every CTL_WATCH_MS) expires here: the probes go, and the
 * new command may take the process.
 */
static bool rec_claimed(void)
{
	if (!rec_shm)
		return false;
	if (ev_proc_start((int)rec_shm->tracer_pid) == rec_shm->tracer_start)
		return true;
	rec_teardown(stderr);
	return false;
}

/*
 * The memory the last "memfd" request made, until a "trace-start" takes
 * it: a command killed between the two leaves it here, and the next
 * request closes it (if it is still ours: the program may have closed the
 * number and opened its own).
 */
static int rec_pending_fd = -1;

static void close_pending(void)
{
	if (rec_pending_fd != rec_fd && fd_is_trace_memfd(rec_pending_fd))
		close(rec_pending_fd);
	rec_pending_fd = -1;
}

static int verb_memfd(int argc, char **argv, FILE *out)
{
	int fd;

	/* refused before the command starts anything (its -o file included) */
	if (rec_claimed())
		return say_busy(verb_cmd(argc, argv, 0), out);
	close_pending();
	fd = memfd_create("fhook-trace", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0) {
		fprintf(out, "fhook: record: memfd_create: %s\n", strerror(errno));
		return -errno;
	}
	rec_pending_fd = fd;
	fprintf(out, "%d\n", fd);
	return 0;
}

/* The command could not use the memory after all: close it, if it is ours. */
static int verb_memfd_close(int argc, char **argv, FILE *out)
{
	int fd = argc == 1 ? atoi(argv[0]) : -1;

	if (fd == rec_fd || !fd_is_trace_memfd(fd)) {
		fprintf(out, "fhook: record: descriptor %d is not an unused fhook memory\n", fd);
		return -EINVAL;
	}
	close(fd);
	if (fd == rec_pending_fd)
		rec_pending_fd = -1;
	return 0;
}

static int verb_trace_start(int argc, char **argv, FILE *out)
{
	if (argc != 1 && argc != 2) {
		fprintf(out, "fhook: record: bad request\n");
		return -EINVAL;
	}
	if (rec_claimed())
		return say_busy(verb_cmd(argc, argv, 1), out);
	rec_pending_fd = -1;
	return rec_setup(argv[0], true, out);
}

static int verb_trace_stop(int argc, char **argv, FILE *out)
{
	return rec_teardown(out);
}

static const struct fhook_attach_verb rec_verbs[] = {
	{ "memfd", verb_memfd },
	{ "memfd-close", verb_memfd_close },
	{ "trace-start", verb_trace_start },
	{ "trace-stop", verb_trace_stop },
};

__attribute__((constructor(205))) static void rec_attach_init(void)
{
	size_t i;

	for (i = 0; i < sizeof(rec_verbs) / sizeof(rec_verbs[0]); i++)
		fhook_attach_register(&rec_verbs[i]);
}
