// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Getting into a running process with ptrace (docs/attach.md).
 *
 * Every thread is seized and interrupted, one thread stopped at a safe
 * point (in the program's own code, or blocked in a system call such as
 * read() or nanosleep() that holds no lock of libc's) is chosen, and the
 * others are let go again at once.  The chosen thread is made to call a
 * function of the process: its registers, extended state and signal mask
 * are saved, the arguments are written below its stack's red zone, the
 * call returns to address 0 and the fault stops it for us, and everything
 * is put back.  A thread stopped inside a system call restarts it as the
 * kernel would have (orig_rax and the -ERESTART* value are restored).
 *
 * A process without libfhook first gets it: its gcc pads (five 1-byte
 * nops) are made 5-byte nops while every thread is stopped and none is
 * between two of those nops, then libc's dlopen() loads libfhook on the
 * chosen thread, errno saved around it.  After that, and for a process
 * that had libfhook, each request is one call of fhook_attach_ctl().
 *
 * That first call starts the process's control thread: every later
 * attach goes to its socket instead and stops nothing, the permission
 * proven by seizing that thread (ctl_sock_open(), lib/core/ctl_thread.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <stddef.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <fhook/internal/attach.h>
#include <fhook/internal/elf.h>
#include <fhook/internal/site.h>

#include "../cli.h"
#include "../attach.h"
#include "util/sched_slice.h"

#define ATT_MAX_THREADS		4096
#define ATT_CALL_TIMEOUT_MS	30000
#define ATT_SAFE_TRIES		400	/* times every thread is let run and looked at again */
#define ATT_XSTATE_MAX		(64 << 10)
#define ATT_CTL_BUSY_MS		5000	/* another command's proof on the control thread */
#define ATT_SIGSETXID		33	/* glibc's internal SIGRTMIN + 1 */
#define ATT_MAX_FRAMES		8	/* nested signal frames looked at, per thread */

struct att_thread {
	pid_t tid;
	bool gone;
	int stop_sig;			/* the stop we saw: SIGTRAP, or a group-stop's signal */
	bool sched_saved;		/* boosted while kept: its scheduling put back */
	bool loader;			/* ours, not the program's: start_loader() */
	/* its signal frames' saved pcs, and where they are (rewrite_pads()) */
	int nr_frames;
	unsigned long frame_pc[ATT_MAX_FRAMES], frame_at[ATT_MAX_FRAMES];
	struct fhook_sched_attr sched;
	struct user_regs_struct regs;
};

struct att_map {
	unsigned long start, end, off;
	bool exec;
	char *path;
};

/* A pad of several instructions: no thread may be inside it when it becomes one. */
struct att_split {
	unsigned long addr;
	unsigned int len;
};

/* The gcc pads of one object, at run-time addresses. */
struct att_pads {
	unsigned long *addrs;
	size_t nr;
	/* the object's other sites (calls to __fentry__), sorted: no pads, but sites */
	unsigned long *calls;
	size_t nr_calls;
	unsigned long lo, hi;		/* the pages they are on */
	/*
	 * Worked out while the threads run: the pages as they were (@orig)
	 * and as they are to be (@img), and the split pads, sorted.  With the
	 * threads stopped, the pages are only read again to see that they
	 * did not change meanwhile, and written.
	 */
	unsigned char *orig, *img;
	/*
	 * Where they are read again, allocated and touched beforehand: a
	 * fresh buffer's page faults (hundreds, for a large program) would
	 * be taken with every thread stopped.
	 */
	unsigned char *now;
	struct att_split *split;
	size_t nr_split;
};

struct cli_attach {
	const char *cmd;
	pid_t pid;
	sigset_t old_mask;	/* the attaching thread's before SIGCHLD was blocked */
	int pidfd;
	struct att_thread *th;
	int nr_th;
	struct att_thread *hijack;	/* the thread kept for calls */
	unsigned long ctl;		/* fhook_attach_ctl in the process */
	struct att_map *maps;
	int nr_maps;
	unsigned long restorer;		/* libc's __restore_rt: a signal frame's return */
	/* loading libfhook: found before any thread is stopped */
	struct att_pads *pads;
	int nr_pads;
	unsigned long dlopen_fn, errno_fn, dlerror_fn;
	unsigned long pcreate_fn, pdetach_fn, sleep_fn;	/* for start_loader() */
	const char *pcreate_why;	/* why there is none */
	char pcreate_buf[96];
	pid_t clone_tid;		/* the thread that pthread_create() made */
	bool by_loader;			/* libfhook loaded by that thread */
	char lib[PATH_MAX];
	struct cli_attach_times times;
	/* the control thread's socket, when the process has one: no thread stopped */
	int sock;
	pid_t ctl_tid;
	/* the world stop (stop_world()) */
	pid_t preferred;		/* a thread it found at a safe point */
	double hijack_t0;		/* when the kept thread stopped */
	bool self_boosted;		/* the command's thread, while one is kept */
	struct fhook_sched_attr self_sched;
	bool ctl_missing;		/* no control thread when we came */
	pid_t world_tid;		/* the thread of ours that stopped them */
	int world_ret;
	bool pads_done;
	int pads_moved;			/* threads moved past the rest of a pad */
	int world_threads;
	double world_ms;
};

/* FHOOK_ATTACH_VERBOSE: every thread's verdict, the channel, the times stopped */
static bool verbose(void)
{
	return getenv("FHOOK_ATTACH_VERBOSE");
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { 0, (long)(ms * 1e6) };

	nanosleep(&ts, NULL);
}

pid_t cli_attach_parse_pid(const char *cmd, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX) {
		fprintf(stderr, "fhook: %s: -p needs a process id, got '%s'\n", cmd, s);
		return -1;
	}
	return (pid_t)v;
}

/* One "Name:\tvalues" line of /proc/PID/status, or NULL. */
static char *status_field(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64], line[512];
	size_t n = strlen(name);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, n) && line[n] == ':') {
			snprintf(buf, size, "%s", line + n + 1 + strspn(line + n + 1, " \t"));
			buf[strcspn(buf, "\n")] = 0;
			fclose(f);
			return buf;
		}
	}
	fclose(f);
	return NULL;
}

bool cli_attach_alive(pid_t pid)
{
	char st[64];

	return status_field(pid, "State", st, sizeof(st)) && st[0] != 'Z' && st[0] != 'X';
}

static bool have_cap_sys_ptrace(void)
{
	char buf[64];
	unsigned long long caps;

	if (!status_field(getpid(), "CapEff", buf, sizeof(buf)))
		return false;
	caps = strtoull(buf, NULL, 16);
	return caps & (1ULL << 19);
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Is @pid a descendant of this process (what yama's scope 1 allows)? */
static bool is_descendant(pid_t pid)
{
	char buf[64];
	int depth;

	for (depth = 0; pid > 1 && depth < 4096; depth++) {
		if (!status_field(pid, "PPid", buf, sizeof(buf)))
			return false;
		pid = atoi(buf);
		if (pid == getpid())
			return true;
	}
	return false;
}

/*
 * Before anything is touched: the process exists, is not traced already,
 * and is a 64-bit x86 process.
 */
static int check_target(const char *cmd, pid_t pid)
{
	char buf[128], path[64];
	unsigned char eh[EI_NIDENT + 4];
	int fd, tracer;

	if (!status_field(pid, "State", buf, sizeof(buf))) {
		fprintf(stderr, "fhook: %s: no process %d\n", cmd, pid);
		return -ESRCH;
	}
	if (buf[0] == 'Z' || buf[0] == 'X') {
		fprintf(stderr, "fhook: %s: process %d has exited (a zombie)\n", cmd, pid);
		return -ESRCH;
	}
	if (pid == getpid()) {
		fprintf(stderr, "fhook: %s: process %d is this fhook command\n", cmd, pid);
		return -EINVAL;
	}
	if (status_field(pid, "TracerPid", buf, sizeof(buf)) && (tracer = atoi(buf)) > 0) {
		char comm[64] = "?";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		fprintf(stderr, "fhook: %s: process %d is already traced by process %d (%s): "
			"a process has one tracer; detach the debugger first\n", cmd, pid, tracer,
			comm);
		return -EBUSY;
	}
	/* a call returns through a fault, which would reset an ignored SIGSEGV */
	if (status_field(pid, "SigIgn", buf, sizeof(buf)) &&
	    (strtoull(buf, NULL, 16) & 1ULL << (SIGSEGV - 1))) {
		fprintf(stderr, "fhook: %s: process %d ignores SIGSEGV: fhook cannot call into it "
			"without changing that\n", cmd, pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, eh, sizeof(eh)) == (ssize_t)sizeof(eh) &&
		    !memcmp(eh, ELFMAG, SELFMAG) &&
		    (eh[EI_CLASS] != ELFCLASS64 || (eh[18] | eh[19] << 8) != EM_X86_64)) {
			fprintf(stderr, "fhook: %s: process %d is a %s process: fhook attaches to "
				"64-bit x86 processes only\n", cmd, pid,
				eh[EI_CLASS] != ELFCLASS64 ? "32-bit" : "foreign-architecture");
			close(fd);
			return -ENOEXEC;
		}
		close(fd);
	}
	return 0;
}

/* PTRACE_SEIZE was refused: say which of the kernel's rules did it. */
static void explain_eperm(const char *cmd, pid_t pid)
{
	char uid[128], gid[128], path[64];
	unsigned int ru, eu, su, rg, eg, sg;
	bool cap = have_cap_sys_ptrace();
	int scope = yama_scope();
	struct stat st;

	if (status_field(pid, "Uid", uid, sizeof(uid)) &&
	    status_field(pid, "Gid", gid, sizeof(gid)) &&
	    sscanf(uid, "%u %u %u", &ru, &eu, &su) == 3 &&
	    sscanf(gid, "%u %u %u", &rg, &eg, &sg) == 3 && !cap) {
		if (ru != getuid() || eu != getuid() || su != getuid()) {
			fprintf(stderr, "fhook: %s: not permitted to attach to process %d: it runs "
				"as user %u and you are user %u (the kernel's ptrace rule: the same "
				"user, or CAP_SYS_PTRACE)\n", cmd, pid, eu, getuid());
			return;
		}
		if (rg != getgid() || eg != getgid() || sg != getgid()) {
			fprintf(stderr, "fhook: %s: not permitted to attach to process %d: it runs "
				"with group %u and yours is %u (a set-group-id program; the kernel's "
				"ptrace rule: the same ids, or CAP_SYS_PTRACE)\n", cmd, pid, eg,
				getgid());
			return;
		}
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (!stat(path, &st) && st.st_uid != eu) {
			fprintf(stderr, "fhook: %s: not permitted to attach to process %d: it is not "
				"dumpable (it was set-id, or called prctl(PR_SET_DUMPABLE, 0)); only "
				"CAP_SYS_PTRACE may attach\n", cmd, pid);
			return;
		}
	}
	if (scope == 1 && !cap && !is_descendant(pid)) {
		fprintf(stderr, "fhook: %s: not permitted to attach to process %d: "
			"kernel.yama.ptrace_scope is 1, so only its ancestors (or a process it "
			"named with prctl(PR_SET_PTRACER)) and CAP_SYS_PTRACE may attach\n", cmd, pid);
		return;
	}
	if (scope == 2 && !cap) {
		fprintf(stderr, "fhook: %s: not permitted to attach to process %d: "
			"kernel.yama.ptrace_scope is 2, so only CAP_SYS_PTRACE may attach\n", cmd, pid);
		return;
	}
	if (scope == 3) {
		fprintf(stderr, "fhook: %s: not permitted to attach to process %d: "
			"kernel.yama.ptrace_scope is 3: no process may be attached to\n", cmd, pid);
		return;
	}
	fprintf(stderr, "fhook: %s: not permitted to attach to process %d (the ids, the "
		"dumpable flag and yama allow it: a security module refused, or the process "
		"is traced already)\n", cmd, pid);
}

/* ---- the process's memory map and symbols ------------------------------ */

static void free_maps(struct cli_attach *a)
{
	int i;

	for (i = 0; i < a->nr_maps; i++)
		free(a->maps[i].path);
	free(a->maps);
	a->maps = NULL;
	a->nr_maps = 0;
}

static int read_maps(struct cli_attach *a)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	free_maps(a);
	snprintf(path, sizeof(path), "/proc/%d/maps", a->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char perms[8];
		int n = 0;
		struct att_map *m;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &s, &e, perms, &off, &n) < 4)
			continue;
		line[strcspn(line, "\n")] = 0;
		m = realloc(a->maps, (a->nr_maps + 1) * sizeof(*m));
		if (!m) {
			fclose(f);
			return -ENOMEM;
		}
		a->maps = m;
		m = &a->maps[a->nr_maps++];
		m->start = s;
		m->end = e;
		m->off = off;
		m->exec = perms[2] == 'x';
		m->path = n && line[n] == '/' ? strdup(line + n) : NULL;
	}
	fclose(f);
	return 0;
}

static const struct att_map *map_of(struct cli_attach *a, unsigned long addr)
{
	int i;

	for (i = 0; i < a->nr_maps; i++)
		if (addr >= a->maps[i].start && addr < a->maps[i].end)
			return &a->maps[i];
	return NULL;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

/* The first mapping of the object whose file name starts with @prefix. */
static const struct att_map *object_named(struct cli_attach *a, const char *prefix)
{
	int i;

	for (i = 0; i < a->nr_maps; i++)
		if (a->maps[i].path && !a->maps[i].off &&
		    !strncmp(base_name(a->maps[i].path), prefix, strlen(prefix)))
			return &a->maps[i];
	return NULL;
}

/*
 * The run-time address of the function @name of the object mapped at @m
 * (its mapping of file offset 0), from .symtab or .dynsym; 0 if none.
 */
static unsigned long object_sym(const struct att_map *m, const char *name)
{
	unsigned long addr = 0, bias = 0, lo = ~0UL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t i, n;
	Elf *elf;
	int fd;

	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		goto out;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lo)
			lo = ph.p_vaddr;
	}
	if (eh.e_type == ET_DYN && lo != ~0UL)
		bias = m->start - (lo & ~4095UL);
	while ((scn = elf_nextscn(elf, scn)) && !addr) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				addr = bias + s.st_value;
				break;
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return addr;
}

int cli_attach_objects(pid_t pid, char ***paths, int *nr)
{
	struct cli_attach a = { .pid = pid };
	char exe[PATH_MAX], link[64];
	ssize_t n;
	int i, j, ret;

	*paths = NULL;
	*nr = 0;
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return -errno;
	exe[n] = 0;
	ret = read_maps(&a);
	if (ret)
		return ret;
	*paths = calloc(a.nr_maps + 1, sizeof(**paths));
	if (!*paths) {
		free_maps(&a);
		return -ENOMEM;
	}
	(*paths)[(*nr)++] = strdup(exe);
	for (i = 0; i < a.nr_maps; i++) {
		const char *p = a.maps[i].path;

		if (!p || a.maps[i].off || !strcmp(p, exe) || strstr(p, " (deleted)"))
			continue;
		for (j = 0; j < *nr; j++)
			if (!strcmp((*paths)[j], p))
				break;
		if (j == *nr)
			(*paths)[(*nr)++] = strdup(p);
	}
	free_maps(&a);
	return 0;
}

/* ---- threads ----------------------------------------------------------- */

static struct att_thread *find_thread(struct cli_attach *a, pid_t tid)
{
	int i;

	for (i = 0; i < a->nr_th; i++)
		if (a->th[i].tid == tid)
			return &a->th[i];
	return NULL;
}

/*
 * Sleep until a tracee changes state, or at most a quarter of a
 * millisecond: the kernel sends the tracer SIGCHLD at every stop, taken
 * here.  SIGCHLD is blocked in the attaching thread for the whole attach
 * (cli_attach_open()), and so in the threads it starts: ignored by
 * default, a SIGCHLD that came while this thread was not blocking it was
 * dropped, and the wait took its whole timeout (under load, when the
 * thread was preempted between its waitpid() and the block, often).
 * Polling every few microseconds instead woke the command hundreds of
 * times per request, each time waiting for a CPU that the threads it waits
 * for needed too.  The signal may still go to a thread of ours started
 * before the attach: then the timeout passes.
 */
static void wait_for_tracee(void)
{
	struct timespec ts = { 0, 250000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &ts);
}

/*
 * Wait until @t stops for us (PTRACE_EVENT_STOP), letting any signal that
 * arrives first be delivered.  -ESRCH when the thread is gone.
 */
static int wait_stop(struct att_thread *t)
{
	double deadline = now_ms() + 2000;
	int st;

	for (;;) {
		pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			t->gone = true;
			return -ESRCH;
		}
		if (!r) {
			if (now_ms() > deadline) {
				/* a zombie leader never stops: it has no user context left */
				t->gone = true;
				return -ESRCH;
			}
			wait_for_tracee();
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = true;
			return -ESRCH;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			t->stop_sig = WSTOPSIG(st);
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs))
				return -errno;
			return 0;
		}
		/* a signal on its way: deliver it, our interrupt is still pending */
		ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)WSTOPSIG(st));
	}
}

/* Seize and stop every thread, including threads started meanwhile. */
static int stop_all(struct cli_attach *a)
{
	char path[64];
	bool added;
	int ret;

	do {
		struct dirent *de;
		DIR *d;

		added = false;
		snprintf(path, sizeof(path), "/proc/%d/task", a->pid);
		d = opendir(path);
		if (!d)
			return -ESRCH;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			struct att_thread *t;

			if (tid <= 0 || find_thread(a, tid))
				continue;
			if (a->nr_th >= ATT_MAX_THREADS) {
				closedir(d);
				fprintf(stderr, "fhook: %s: process %d has more than %d threads\n",
					a->cmd, a->pid, ATT_MAX_THREADS);
				return -E2BIG;
			}
			if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
				ret = -errno;
				if (ret == -ESRCH)
					continue;	/* it exited */
				closedir(d);
				if (ret == -EPERM)
					explain_eperm(a->cmd, a->pid);
				else
					fprintf(stderr, "fhook: %s: cannot attach to thread %d of "
						"process %d: %s\n", a->cmd, tid, a->pid, strerror(-ret));
				return ret;
			}
			t = &a->th[a->nr_th++];
			memset(t, 0, sizeof(*t));
			t->tid = tid;
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			added = true;
		}
		closedir(d);
		for (int i = 0; i < a->nr_th; i++)
			if (!a->th[i].gone && !a->th[i].stop_sig)
				wait_stop(&a->th[i]);
	} while (added);
	for (int i = 0; i < a->nr_th; i++)
		if (!a->th[i].gone)
			return 0;
	fprintf(stderr, "fhook: %s: process %d exited\n", a->cmd, a->pid);
	return -ESRCH;
}

static void release(struct att_thread *t)
{
	if (t->sched_saved && !t->gone)
		fhook_restore_sched(t->tid, &t->sched);
	t->sched_saved = false;
	if (!t->gone)
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
	t->gone = true;
}

/*
 * start_loader()'s thread is let go returning 0 from its sleep instead of
 * sleeping on: its start routine returns and the thread ends.
 */
static void end_loader(struct att_thread *t)
{
	struct user_regs_struct regs = t->regs;

	if (!t->gone) {
		regs.rax = 0;
		regs.orig_rax = -1;	/* no restart */
		ptrace(PTRACE_SETREGS, t->tid, NULL, &regs);
	}
	release(t);
}

/* Let the kept thread go; how long a thread of the program was stopped, in all, is noted. */
static void release_hijack(struct cli_attach *a)
{
	if (!a->hijack)
		return;
	if (a->self_boosted)
		fhook_restore_sched(0, &a->self_sched);
	a->self_boosted = false;
	if (a->hijack->loader) {
		end_loader(a->hijack);
	} else {
		/* (a second kept thread, after a lost loader thread, adds its time) */
		if (!a->hijack->gone)
			a->times.stopped_ms += now_ms() - a->hijack_t0;
		release(a->hijack);
	}
	a->hijack = NULL;
}

static bool in_signal_handler(struct cli_attach *a, struct att_thread *t);

/*
 * Blocking system calls that libc makes without holding a lock of its own:
 * a thread stopped in one may run our call (and restart it afterwards).
 */
static bool quiet_syscall(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev: case SYS_pread64:
	case SYS_pwrite64: case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
	case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_nanosleep: case SYS_clock_nanosleep:
	case SYS_pause: case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait: case SYS_wait4:
	case SYS_waitid: case SYS_accept: case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_sendto: case SYS_sendmsg: case SYS_connect: case SYS_msgrcv:
	/* a sleep that an earlier attach interrupted goes on in restart_syscall */
	case SYS_restart_syscall:
		return true;
	}
	return false;
}

/*
 * A thread is at a safe point when it can call into libc and the loader
 * without meeting a lock it holds itself: in the program's own code (or a
 * library other than libc, the loader and libfhook, whose
 * handlers may hold an RCU read lock), or in libc blocked in a quiet
 * system call.  Not in anonymous memory (fhook's trampolines, JIT code).
 */
static bool safe_point(struct cli_attach *a, struct att_thread *t, const char **why)
{
	const struct att_map *m = map_of(a, t->regs.rip);
	const char *b;

	*why = "not in a file's code (a trampoline, JIT code)";
	if (!m || !m->path || !m->exec)
		return false;
	*why = "in a signal handler";
	if (in_signal_handler(a, t))
		return false;
	b = base_name(m->path);
	*why = "in the loader, libfhook or urcu";
	if (!strncmp(b, "ld-", 3) || !strncmp(b, "libfhook", 8) || !strncmp(b, "liburcu", 7))
		return false;
	if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "libpthread", 10)) {
		*why = (long)t->regs.orig_rax >= 0 ? "in libc, in a system call that may hold a lock"
						   : "in libc, not in a system call";
		if ((long)t->regs.orig_rax >= 0 && quiet_syscall((long)t->regs.orig_rax)) {
			*why = "safe: blocked in a system call";
			return true;
		}
		return false;
	}
	*why = "safe: in the program's code";
	return true;
}

static int mem_read(struct cli_attach *a, unsigned long addr, void *buf, size_t len);

/*
 * Where libc's signal return trampoline (__restore_rt: mov $15, %rax;
 * syscall) is in the process: every signal frame's return address.  It is
 * a local symbol, so it is found by its bytes in libc's file.
 */
static unsigned long find_restorer(struct cli_attach *a)
{
	static const unsigned char code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	const struct att_map *libc = object_named(a, "libc.so");
	unsigned char *img = NULL, *hit;
	unsigned long off, ret = 0;
	struct stat st;
	int fd, i;

	unsigned long near;
	unsigned char around[8192];

	if (!libc)
		return 0;
	/* glibc defines it beside sigaction(): look there first */
	near = object_sym(libc, "sigaction");
	if (near > 4096 && !mem_read(a, near - 4096, around, sizeof(around)) &&
	    (hit = memmem(around, sizeof(around), code, sizeof(code))))
		return near - 4096 + (hit - around);
	if ((fd = open(libc->path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (!fstat(fd, &st) && (img = malloc(st.st_size)) &&
	    pread(fd, img, st.st_size, 0) == st.st_size &&
	    (hit = memmem(img, st.st_size, code, sizeof(code)))) {
		off = hit - img;
		for (i = 0; i < a->nr_maps && !ret; i++) {
			const struct att_map *m = &a->maps[i];

			if (m->exec && m->path && !strcmp(m->path, libc->path) && off >= m->off &&
			    off < m->off + (m->end - m->start))
				ret = m->start + (off - m->off);
		}
	}
	free(img);
	close(fd);
	return ret;
}

/*
 * Where a stopped thread's stack is read (read_stack()): touched before any
 * thread is stopped, so that its page faults are not taken with every
 * thread stopped.
 */
static unsigned long att_stack_words[8192];

/*
 * The top of @t's stack (at most att_stack_words' size) read into
 * att_stack_words, when libc's __restore_rt is known: how many words; 0
 * if none.
 */
static size_t read_stack(struct cli_attach *a, const struct att_thread *t)
{
	const struct att_map *m = map_of(a, t->regs.rsp);
	unsigned long len;

	if (!a->restorer)
		a->restorer = find_restorer(a);
	if (!a->restorer || !m)
		return 0;
	len = m->end - t->regs.rsp;
	if (len > sizeof(att_stack_words))
		len = sizeof(att_stack_words);
	len &= ~7UL;
	return mem_read(a, t->regs.rsp, att_stack_words, len) ? 0 : len / 8;
}

/*
 * Is the thread running a signal handler?  Then it may have interrupted
 * malloc or the loader, and a call from there could wait for a lock it
 * holds itself.  A signal frame puts __restore_rt on the stack.
 */
static bool in_signal_handler(struct cli_attach *a, struct att_thread *t)
{
	size_t i, n = read_stack(a, t);

	for (i = 0; i < n; i++)
		if (att_stack_words[i] == a->restorer)
			return true;
	return false;
}

static struct att_thread *pick_safe(struct cli_attach *a)
{
	struct att_thread *pick = NULL;
	const char *why;
	int i;

	for (i = 0; i < a->nr_th; i++) {
		if (a->th[i].gone)
			continue;
		if (safe_point(a, &a->th[i], &why) && !pick)
			pick = &a->th[i];
		if (verbose())
			fprintf(stderr, "fhook: %s: thread %d: %s\n", a->cmd, a->th[i].tid, why);
		else if (pick)
			break;
	}
	return pick;
}

/* Does a thread of @pid block SIGTRAP? (/proc: nothing is stopped to know.) */
static bool sigtrap_blocked(pid_t pid)
{
	char path[64], buf[64];
	struct dirent *de;
	bool ret = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!ret && (de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid > 0 && status_field(tid, "SigBlk", buf, sizeof(buf)))
			ret = strtoull(buf, NULL, 16) & 1ULL << (SIGTRAP - 1);
	}
	closedir(d);
	return ret;
}

/*
 * With libfhook there already, nothing is rewritten while threads are
 * stopped: stop one thread at a time and keep the first at a safe point,
 * so that no two threads are ever stopped together.
 */
/*
 * Stop thread @tid alone and keep it if it is at a safe point: 1 when it
 * is kept (a->hijack), 0 when it is let go (or gone), a negative errno
 * when the kernel refuses (the reason printed).
 */
static int try_thread(struct cli_attach *a, pid_t tid, bool recheck_maps)
{
	struct att_thread *t = &a->th[0];
	const char *why;
	double t0;
	int ret;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
		ret = -errno;
		if (ret == -ESRCH)
			return 0;
		if (ret == -EPERM)
			explain_eperm(a->cmd, a->pid);
		else
			fprintf(stderr, "fhook: %s: cannot attach to thread %d of process %d: %s\n",
				a->cmd, tid, a->pid, strerror(-ret));
		return ret;
	}
	a->nr_th = 1;
	/*
	 * It runs our calls among the process's busy threads: while it is
	 * kept, it runs above them (fhook_boost_rt(): a real-time thread of
	 * the lowest priority, or nice -20 and a short slice), if we may
	 * (CAP_SYS_NICE), put back when it is let go.  Given before it is
	 * stopped: even a thread asleep needs the CPU to stop, and a thread
	 * of nice 0 waited for one up to a scheduler tick (4 ms here) after
	 * the busy threads.  Its calls are bounded and wait for no thread of
	 * the process but through the kernel (a futex sleeps).
	 */
	t->sched_saved = fhook_boost_rt(tid, &t->sched);
	ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	if (wait_stop(t)) {
		/* not stopped in time (in D state?), or gone: the boost goes either way */
		if (t->sched_saved)
			fhook_restore_sched(tid, &t->sched);
		t->sched_saved = false;
		release(t);
		a->nr_th = 0;
		return 0;
	}
	/*
	 * Stopped from here: until now it was runnable and waiting for a CPU
	 * (up to a scheduler tick, 4 ms, after the busy threads), and ran
	 * nothing of ours once it had one.
	 */
	t0 = now_ms();
	if (recheck_maps)
		read_maps(a);	/* a library loaded meanwhile */
	if (safe_point(a, t, &why)) {
		/* and the command, whom it waits for at every step, too */
		if (!a->self_boosted)
			a->self_boosted = fhook_boost_rt(0, &a->self_sched);
		a->hijack = t;
		a->hijack_t0 = t0;
		a->times.threads = 1;
		return 1;
	}
	if (verbose())
		fprintf(stderr, "fhook: %s: thread %d: %s\n", a->cmd, tid, why);
	release(t);
	a->nr_th = 0;
	return 0;
}

static int stop_one_safe(struct cli_attach *a)
{
	char path[64];
	int tries, ret;

	snprintf(path, sizeof(path), "/proc/%d/task", a->pid);
	for (tries = 0; tries < ATT_SAFE_TRIES; tries++) {
		bool recheck = tries && !(tries % 50);
		struct dirent *de;
		DIR *d;

		/* the thread the world stop found at a safe point, first */
		if (a->preferred && (ret = try_thread(a, a->preferred, recheck)))
			return ret < 0 ? ret : 0;
		d = opendir(path);
		if (!d)
			return -ESRCH;
		a->nr_th = 0;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);

			if (tid <= 0 || tid == a->preferred)
				continue;
			ret = try_thread(a, tid, recheck);
			recheck = false;
			if (ret) {
				closedir(d);
				return ret < 0 ? ret : 0;
			}
		}
		closedir(d);
		sleep_ms(1);
	}
	fprintf(stderr, "fhook: %s: no thread of process %d came to a safe point (outside "
		"libc's locks and the loader) in %d tries\n", a->cmd, a->pid, tries);
	return -EAGAIN;
}

/* ---- memory and calls -------------------------------------------------- */

static int mem_write(struct cli_attach *a, unsigned long addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len }, r = { (void *)addr, len };

	return process_vm_writev(a->pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int mem_read(struct cli_attach *a, unsigned long addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)addr, len };

	return process_vm_readv(a->pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A NUL-terminated string of the process (malloc'd), at most @max bytes. */
static char *mem_string(struct cli_attach *a, unsigned long addr, size_t max)
{
	size_t len = 0, cap = 0;
	char *s = NULL;

	while (len < max) {
		size_t chunk = 4096 - ((addr + len) & 4095);
		char *ns;
		void *nul;

		if (len + chunk + 1 > cap) {
			cap = (len + chunk + 1) * 2;
			ns = realloc(s, cap);
			if (!ns)
				break;
			s = ns;
		}
		if (mem_read(a, addr + len, s + len, chunk))
			break;
		nul = memchr(s + len, 0, chunk);
		if (nul)
			return s;
		len += chunk;
	}
	if (s)
		s[len < cap ? len : cap - 1] = 0;
	return s;
}

/*
 * Make the hijacked thread call @fn(@args...) with @data (if any) copied
 * below its stack (its address replaces args[@data_arg]); the result in
 * *@ret.  Everything the thread had is put back after.
 */
static int call(struct cli_attach *a, unsigned long fn, unsigned long *args, int nargs,
		const void *data, size_t dlen, int data_arg, unsigned long *ret)
{
	struct att_thread *t = a->hijack;
	struct user_regs_struct regs = t->regs, now;
	static unsigned char xstate[ATT_XSTATE_MAX];
	struct iovec xiov = { xstate, sizeof(xstate) };
	unsigned long sp, zero = 0, mask, callmask;
	bool have_x, have_mask;
	double start = now_ms(), deadline = start + ATT_CALL_TIMEOUT_MS;
	int st, err = 0;

	have_x = !ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &xiov);
	have_mask = !ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	/* below the red zone, and then some */
	sp = (t->regs.rsp - 512) & ~15UL;
	if (data) {
		sp = (sp - dlen) & ~15UL;
		if (mem_write(a, sp, data, dlen))
			return -EFAULT;
		args[data_arg] = sp;
	}
	sp -= 8;	/* at entry, rsp + 8 is 16-byte aligned */
	if (mem_write(a, sp, &zero, sizeof(zero)))
		return -EFAULT;
	regs.rip = fn;
	regs.rsp = sp;
	regs.rax = 0;
	regs.orig_rax = -1;	/* not inside a system call: nothing to restart */
	regs.rdi = nargs > 0 ? args[0] : 0;
	regs.rsi = nargs > 1 ? args[1] : 0;
	regs.rdx = nargs > 2 ? args[2] : 0;
	regs.rcx = nargs > 3 ? args[3] : 0;
	regs.r8 = nargs > 4 ? args[4] : 0;
	regs.r9 = nargs > 5 ? args[5] : 0;
	regs.eflags &= ~0x400UL;	/* DF clear, as the ABI says */
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs))
		return -errno;
	/*
	 * Asynchronous signals wait until the thread is back in its own code,
	 * but glibc's SIGSETXID (33): a setuid() of another thread waits until
	 * every thread has run its handler (which only makes the system call),
	 * and a thread pthread_create() makes here (start_loader()) has this
	 * mask for its whole life.
	 */
	callmask = ~0UL;
	callmask &= ~(1UL << (SIGTRAP - 1) | 1UL << (SIGSEGV - 1) | 1UL << (SIGBUS - 1) |
		      1UL << (SIGILL - 1) | 1UL << (SIGFPE - 1) | 1UL << (ATT_SIGSETXID - 1));
	if (have_mask)
		ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(callmask), &callmask);
	if (ptrace(PTRACE_CONT, t->tid, NULL, NULL))
		return -errno;
	for (;;) {
		pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (r > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) {
			t->gone = true;
			return -ESRCH;
		}
		if (!r) {
			if (now_ms() > deadline) {
				fprintf(stderr, "fhook: %s: the call into process %d did not return "
					"in %d s; the process is left running it\n", a->cmd, a->pid,
					ATT_CALL_TIMEOUT_MS / 1000);
				release(t);
				return -ETIMEDOUT;
			}
			wait_for_tracee();
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			/* stopped with the group meanwhile: finish our call first */
			ptrace(PTRACE_CONT, t->tid, NULL, NULL);
			continue;
		}
		if (st >> 16 == PTRACE_EVENT_CLONE) {
			/* start_loader()'s thread, attached to us at birth */
			unsigned long msg = 0;

			if (!ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg))
				a->clone_tid = (pid_t)msg;
			ptrace(PTRACE_CONT, t->tid, NULL, NULL);
			continue;
		}
		if (WSTOPSIG(st) == SIGSEGV && !ptrace(PTRACE_GETREGS, t->tid, NULL, &now) &&
		    now.rip == 0 && now.rsp == sp + 8) {
			*ret = now.rax;
			break;
		}
		/* fhook's int3 mid-patch, or a real fault of the call: its handler decides */
		ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)WSTOPSIG(st));
	}
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs))
		err = -errno;
	if (have_x && ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &xiov))
		err = -errno;
	/* the fault unblocks SIGSEGV if it was blocked: the mask comes back whole */
	if (have_mask)
		ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	a->times.call_ms = now_ms() - start;
	return err;
}

/* ---- loading libfhook -------------------------------------------------- */

/*
 * gcc's pads, five 1-byte nops, become one 5-byte nop in every object of
 * the process, with every thread stopped: a thread between two of those
 * nops is first moved past the rest of the pad.
 */
static void free_pads(struct cli_attach *a)
{
	int i;

	for (i = 0; i < a->nr_pads; i++) {
		free(a->pads[i].addrs);
		free(a->pads[i].calls);
		free(a->pads[i].orig);
		free(a->pads[i].now);
		free(a->pads[i].split);
	}
	free(a->pads);
	a->pads = NULL;
	a->nr_pads = 0;
}

/*
 * What @pd's pages become, from their bytes @cur (@pd->orig is set to
 * them): each pad the 5-byte nop, and the pads that were several
 * instructions listed.  The classifier libfhook and `fhook prepare` use.
 */
static int plan_pads(struct att_pads *pd, const unsigned char *cur)
{
	size_t len = pd->hi - pd->lo, k, cap = 0;

	free(pd->orig);
	free(pd->split);
	pd->split = NULL;
	pd->nr_split = 0;
	pd->orig = malloc(2 * len);
	if (!pd->orig)
		return -ENOMEM;
	pd->img = pd->orig + len;
	memcpy(pd->orig, cur, len);
	memcpy(pd->img, cur, len);
	for (k = 0; k < pd->nr; k++) {
		unsigned long s = pd->addrs[k], avail = pd->hi - s;
		struct fhook_site_nop nop;

		if (fhook_site_classify(pd->img + (s - pd->lo), avail < FHOOK_SITE_BYTES_MAX ?
					avail : FHOOK_SITE_BYTES_MAX, false, &nop) ||
		    !nop.split || !nop.len)
			continue;
		memcpy(pd->img + (s - pd->lo), nop.bytes, nop.len);
		if (pd->nr_split == cap) {
			struct att_split *n;

			cap = cap ? cap * 2 : 1024;
			n = realloc(pd->split, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			pd->split = n;
		}
		pd->split[pd->nr_split].addr = s;
		pd->split[pd->nr_split++].len = nop.len;
	}
	return 0;
}

static int cmp_split(const void *x, const void *y)
{
	const struct att_split *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int cmp_addr(const void *x, const void *y)
{
	unsigned long a = *(const unsigned long *)x, b = *(const unsigned long *)y;

	return a < b ? -1 : a > b;
}

/* Read @pd's pages through @fd (/proc/PID/mem) and plan them. */
static int read_and_plan(struct att_pads *pd, int fd)
{
	size_t len = pd->hi - pd->lo;
	unsigned char *cur = malloc(len);
	int ret = -EFAULT;

	if (cur && pread(fd, cur, len, pd->lo) == (ssize_t)len)
		ret = plan_pads(pd, cur);
	else if (!cur)
		ret = -ENOMEM;
	if (!ret) {
		qsort(pd->split, pd->nr_split, sizeof(*pd->split), cmp_split);
		/* the buffer itself, already touched, is the one read into later */
		pd->now = cur;
		return 0;
	}
	free(cur);
	return ret;
}

/* The split pad that @ip is inside of (past its first byte), or NULL. */
static const struct att_split *inside_split(const struct att_pads *pd, unsigned long ip)
{
	size_t lo = 0, hi = pd->nr_split;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (pd->split[m].addr < ip)
			lo = m + 1;
		else
			hi = m;
	}
	/* the last pad starting below ip */
	if (!lo || ip >= pd->split[lo - 1].addr + pd->split[lo - 1].len)
		return NULL;
	return &pd->split[lo - 1];
}

/* The sites of every object, from its file (threads still running). */
static int collect_pads(struct cli_attach *a)
{
	int i, j;

	for (i = 0; i < a->nr_maps; i++) {
		const struct att_map *m = &a->maps[i];
		struct fhook_elf_scan scan;
		struct fhook_elf_sites sites;
		struct att_pads *p;
		unsigned long bias, k;
		unsigned char eh[18];
		int efd;

		/* each object once, from its first mapping */
		if (!m->path || m->off)
			continue;
		for (j = 0; j < i; j++)
			if (a->maps[j].path && !strcmp(a->maps[j].path, m->path))
				break;
		if (j < i)
			continue;
		if (fhook_elf_scan(m->path, &scan) || !scan.nr_sections || scan.prepared)
			continue;
		if (fhook_elf_read_sites(m->path, &sites) || !sites.nr)
			continue;
		/* link-time address -> run time: ET_DYN objects start at 0 here */
		bias = m->start;
		efd = open(m->path, O_RDONLY | O_CLOEXEC);
		if (efd >= 0) {
			if (pread(efd, eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
			    (eh[16] | eh[17] << 8) == ET_EXEC)
				bias = 0;
			close(efd);
		}
		p = realloc(a->pads, (a->nr_pads + 1) * sizeof(*p));
		if (!p) {
			free(sites.addrs);
			free(sites.from_mcount);
			return -ENOMEM;
		}
		a->pads = p;
		p = &a->pads[a->nr_pads++];
		p->addrs = sites.addrs;
		p->nr = 0;
		p->calls = NULL;
		p->nr_calls = 0;
		p->lo = ~0UL;
		p->hi = 0;
		for (k = 0; k < sites.nr; k++) {
			unsigned long s = sites.addrs[k] + bias;

			if (sites.from_mcount[k]) {
				/* a call, not a pad */
				if (!p->calls)
					p->calls = malloc(sites.nr * sizeof(*p->calls));
				if (p->calls)
					p->calls[p->nr_calls++] = s;
				continue;
			}
			p->addrs[p->nr++] = s;
			p->lo = s < p->lo ? s : p->lo;
			p->hi = s + 5 > p->hi ? s + 5 : p->hi;
		}
		free(sites.from_mcount);
		/* in address order: a page's sites are found together (precow_pads()) */
		qsort(p->addrs, p->nr, sizeof(*p->addrs), cmp_addr);
		if (p->calls)
			qsort(p->calls, p->nr_calls, sizeof(*p->calls), cmp_addr);
		p->lo &= ~4095UL;
		p->hi = (p->hi + 4095) & ~4095UL;
		p->orig = NULL;
		p->now = NULL;
		p->split = NULL;
		p->nr_split = 0;
		if (!p->nr) {
			free(p->addrs);
			free(p->calls);
			a->nr_pads--;
		}
	}
	return 0;
}

/* The first address from @c on that is in none of the 5-byte sites @s (sorted, from *@j on). */
static unsigned long past_sites(const unsigned long *s, size_t n, size_t *j, unsigned long c)
{
	size_t i;

	while (*j < n && s[*j] + 5 <= c)
		(*j)++;
	for (i = *j; i < n && s[i] <= c; i++)
		if (c < s[i] + 5)
			c = s[i] + 5;
	return c;
}

/*
 * Each page that the rewrite will change is made the process's own copy
 * now, while its threads run, by writing back one byte of it as it is:
 * the copy (a page fault in the process, hundreds for a large program)
 * is then not made with every thread stopped.  The byte is one of no
 * site: the only text that anything (a libfhook another attach is
 * loading meanwhile) may be changing is a site's, and the process has
 * no debugger (checked first).  The bytes a thread executes stay what
 * they were.
 */
static void precow_pads(const struct att_pads *pd, int fd)
{
	size_t len = pd->hi - pd->lo, k, j = 0, jc = 0;

	for (k = 0; k < len; k += 4096) {
		unsigned long c = pd->lo + k, c0;
		unsigned char b;

		if (!memcmp(pd->orig + k, pd->img + k, 4096))
			continue;
		do {
			c0 = c;
			c = past_sites(pd->addrs, pd->nr, &j, c);
			c = past_sites(pd->calls, pd->nr_calls, &jc, c);
		} while (c != c0);
		/* (a page left out is copied later, in the stopped window) */
		if (c < pd->lo + k + 4096 && pread(fd, &b, 1, c) == 1 && pwrite(fd, &b, 1, c) != 1)
			break;
	}
}

/*
 * The pads' pages planned with the threads running.  Reading another
 * process's memory needs the permission the attach checks later: without
 * it nothing is planned here (and the attach says why it is refused).
 */
static void plan_all_pads(struct cli_attach *a)
{
	char mem_path[64];
	int i, fd;

	snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", a->pid);
	fd = open(mem_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < a->nr_pads; i++) {
		if (read_and_plan(&a->pads[i], fd))
			break;
		precow_pads(&a->pads[i], fd);
	}
	close(fd);
}

/*
 * Where a thread at @pc, between two nops of a pad of @pd, is to go on:
 * the pad's end (the nops left only move the pc); 0 when @pc is in none.
 */
static unsigned long past_pad(const struct att_pads *pd, unsigned long pc)
{
	const struct att_split *sp = inside_split(pd, pc);

	return sp && pc != sp->addr ? sp->addr + sp->len : 0;
}

/*
 * A thread running a signal handler goes back, by its signal frame, to
 * where the signal interrupted it, which may be between two nops of a pad:
 * the pcs saved in its frames are noted, to be moved as its own pc is.
 * Frames are found as in_signal_handler() finds them, by the handler's
 * return address (__restore_rt) on the stack, and taken for frames only
 * when they hold a 64-bit user code segment where the kernel puts it.
 */
static void find_frames(struct cli_attach *a, struct att_thread *t)
{
	const size_t gregs = (offsetof(ucontext_t, uc_mcontext) +
			      offsetof(mcontext_t, gregs)) / 8 + 1;
	const unsigned long *words = att_stack_words;
	size_t i, n = read_stack(a, t);

	t->nr_frames = 0;
	for (i = 0; i + gregs + NGREG <= n && t->nr_frames < ATT_MAX_FRAMES; i++) {
		const unsigned long *g = &words[i + gregs];

		if (words[i] != a->restorer || (g[REG_CSGSFS] & 0xffff) != 0x33)
			continue;
		t->frame_pc[t->nr_frames] = g[REG_RIP];
		t->frame_at[t->nr_frames++] = t->regs.rsp + (i + gregs + REG_RIP) * 8;
	}
}

/*
 * gcc's pads, five 1-byte nops, become one 5-byte nop in every object of
 * the process, with every thread stopped: a thread between two of those
 * nops is first moved past the rest of the pad.  What the pages become was
 * worked out before the threads were stopped (plan_pads()); here they are
 * read again, and planned again only if they changed meanwhile, and each
 * run of changed pages is one write.
 */
static int rewrite_pads(struct cli_attach *a)
{
	char mem_path[64];
	int i, j, fd, ret = 0;

	snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", a->pid);
	fd = open(mem_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (j = 0; j < a->nr_th; j++)
		if (!a->th[j].gone)
			find_frames(a, &a->th[j]);
	for (i = 0; i < a->nr_pads && !ret; i++) {
		struct att_pads *pd = &a->pads[i];
		unsigned long len = pd->hi - pd->lo, k, run;
		unsigned char *now;

		if (!pd->now)
			pd->now = malloc(len);	/* not planned beforehand (no permission then) */
		now = pd->now;
		if (!now || pread(fd, now, len, pd->lo) != (ssize_t)len)
			continue;
		if (!pd->orig || memcmp(now, pd->orig, len)) {
			ret = plan_pads(pd, now);
			if (ret)
				break;
			qsort(pd->split, pd->nr_split, sizeof(*pd->split), cmp_split);
		}
		/*
		 * Nobody may be between two of these nops when they become
		 * one.  What is left of a pad is nops, whose only effect is to
		 * move the pc: a thread inside gets its pc at the pad's end,
		 * as if it had run them (single-stepping it there cost 50-90
		 * us a step, up to 20 steps in a process of 8 busy threads,
		 * with every thread stopped).
		 */
		for (j = 0; j < a->nr_th; j++) {
			struct att_thread *t = &a->th[j];
			unsigned long pc;
			int f;

			for (f = 0; !t->gone && f < t->nr_frames; f++)
				if ((pc = past_pad(pd, t->frame_pc[f])) &&
				    !mem_write(a, t->frame_at[f], &pc, sizeof(pc)))
					a->pads_moved++;
			if (t->gone || !(pc = past_pad(pd, t->regs.rip)))
				continue;
			t->regs.rip = pc;
			if (ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs))
				t->gone = true;		/* killed meanwhile */
			else
				a->pads_moved++;
		}
		/* each run of changed pages written back at once */
		for (k = 0; k < len && !ret; k += run) {
			run = 4096;
			if (!memcmp(pd->orig + k, pd->img + k, 4096))
				continue;
			while (k + run < len && memcmp(pd->orig + k + run, pd->img + k + run, 4096))
				run += 4096;
			if (pwrite(fd, pd->img + k, run, pd->lo + k) != (ssize_t)run)
				ret = -errno;
		}
	}
	close(fd);
	return ret;
}

/* Has any object of the process recorded sites? (Else loading libfhook would be for nothing.) */
static bool has_sites(struct cli_attach *a)
{
	struct fhook_elf_scan scan;
	int i;

	for (i = 0; i < a->nr_maps; i++)
		if (a->maps[i].path && a->maps[i].exec &&
		    !fhook_elf_scan(a->maps[i].path, &scan) && scan.nr_sections)
			return true;
	return false;
}

bool cli_attach_no_sites_ok;

/* Does the ELF file @path export a function @name (a definition in .dynsym)? */
static bool exports_func(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t i;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize && !found; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			nm = elf_strptr(elf, sh.sh_link, sym.st_name);
			found = nm && !strcmp(nm, name);
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/*
 * start_loader()'s functions: libc's since glibc 2.34, libpthread's
 * before.  Not when another object of the process exports its own
 * pthread_create(), which the program's threads are made by: a
 * sanitizer's runtime (ASan, TSan) or a preloaded library keeps a record
 * of every thread and intercepts malloc() and dlopen() on it, and a thread
 * made behind its back, running dlopen() through it, would break it.
 */
static void find_loader_syms(struct cli_attach *a, const struct att_map *libc)
{
	const struct att_map *lp = object_named(a, "libpthread.so");
	int i;

	if (!lp)
		lp = object_named(a, "libpthread-");
	a->pcreate_fn = object_sym(libc, "pthread_create");
	a->pdetach_fn = object_sym(libc, "pthread_detach");
	if (lp && !a->pcreate_fn) {
		a->pcreate_fn = object_sym(lp, "pthread_create");
		a->pdetach_fn = object_sym(lp, "pthread_detach");
	}
	a->sleep_fn = object_sym(libc, "sleep");
	a->pcreate_why = "no pthread_create(), pthread_detach() or sleep() in libc";
	for (i = 0; i < a->nr_maps && a->pcreate_fn; i++) {
		const struct att_map *m = &a->maps[i];

		if (m->off || !m->path || !strcmp(m->path, libc->path) ||
		    (lp && !strcmp(m->path, lp->path)) || !exports_func(m->path, "pthread_create"))
			continue;
		snprintf(a->pcreate_buf, sizeof(a->pcreate_buf), "%s has its own pthread_create()",
			 base_name(m->path));
		a->pcreate_why = a->pcreate_buf;
		a->pcreate_fn = 0;
	}
}

/*
 * What loading libfhook needs, found while the threads still run: the
 * process's dlopen(), that it has sites at all, and those sites.
 */
static int prep_load(struct cli_attach *a)
{
	const struct att_map *libc = object_named(a, "libc.so") ?: object_named(a, "libc-");
	char path[PATH_MAX];
	int ret;

	if (cli_libfhook_path(path, sizeof(path)) || !realpath(path, a->lib)) {
		fprintf(stderr, "fhook: %s: cannot find libfhook.so next to the fhook command\n",
			a->cmd);
		return -ENOENT;
	}
	if (libc)
		a->dlopen_fn = object_sym(libc, "dlopen");
	if (!a->dlopen_fn) {
		const struct att_map *libdl = object_named(a, "libdl.so");

		a->dlopen_fn = libdl ? object_sym(libdl, "dlopen") : 0;
	}
	if (!libc || !a->dlopen_fn) {
		fprintf(stderr, "fhook: %s: process %d has no dlopen() to load libfhook with "
			"(statically linked, or not glibc)\n", a->cmd, a->pid);
		return -ENOEXEC;
	}
	if (!cli_attach_no_sites_ok && !has_sites(a)) {
		fprintf(stderr, "fhook: %s: process %d has no patchable sites: rebuild the program "
			"with `cc $(fhook cflags) ...` (-fpatchable-function-entry=5); nothing was "
			"changed\n", a->cmd, a->pid);
		return -ENOENT;
	}
	a->errno_fn = object_sym(libc, "__errno_location");
	a->dlerror_fn = object_sym(libc, "dlerror");
	find_loader_syms(a, libc);
	ret = collect_pads(a);
	if (ret)
		fprintf(stderr, "fhook: %s: reading the sites of process %d: %s\n", a->cmd, a->pid,
			strerror(-ret));
	else
		plan_all_pads(a);
	return ret;
}

/* The kept thread's errno, for put_errno() after calls that may change it; 0 if unknown. */
static unsigned long get_errno(struct cli_attach *a, int *saved)
{
	unsigned long addr = 0, args[1] = { 0 };

	if (a->errno_fn && !call(a, a->errno_fn, args, 0, NULL, 0, 0, &addr) && addr &&
	    !mem_read(a, addr, saved, sizeof(*saved)))
		return addr;
	return 0;
}

static void put_errno(struct cli_attach *a, unsigned long addr, int saved)
{
	if (addr)
		mem_write(a, addr, &saved, sizeof(saved));
}

/* libfhook loaded with the process's dlopen() on the kept thread, its errno kept. */
static int load_libfhook(struct cli_attach *a)
{
	unsigned long err_addr = 0, args[2] = { 0 }, h = 0;
	int saved_errno = 0, ret;

	/* the loader thread's own errno is nobody's */
	if (!a->by_loader)
		err_addr = get_errno(a, &saved_errno);
	args[1] = RTLD_NOW;
	ret = call(a, a->dlopen_fn, args, 2, a->lib, strlen(a->lib) + 1, 0, &h);
	if (!ret && !h) {
		unsigned long msg = 0;
		char *s = NULL;

		if (a->dlerror_fn && !call(a, a->dlerror_fn, args, 0, NULL, 0, 0, &msg) && msg)
			s = mem_string(a, msg, 4096);
		fprintf(stderr, "fhook: %s: loading libfhook into process %d failed: %s\n", a->cmd,
			a->pid, s ? s : "dlopen returned NULL");
		free(s);
		ret = -ENOEXEC;
	}
	if (verbose())
		fprintf(stderr, "fhook: %s: dlopen of libfhook: %.2f ms in the process (%.2f ms "
			"since the thread was stopped)\n", a->cmd, a->times.call_ms,
			now_ms() - a->hijack_t0);
	put_errno(a, err_addr, saved_errno);
	if (!ret)
		a->times.loaded = true;
	return ret;
}

/*
 * libfhook is loaded by a thread of ours, not of the program (as Frida
 * does it): the kept thread of the program only starts it, with the
 * process's pthread_create(), and is let go; its dlopen() then runs while
 * every thread of the program runs (2-20 ms on a busy machine, where the
 * kept thread was stopped for all of it before).  The new thread's start
 * routine is libc's sleep(): it is taken in its sleep (a quiet system
 * call, no lock held), detaches itself, loads libfhook and sends the first
 * request, and end_loader() makes the sleep return 0, which ends it.  It
 * is seen being made by PTRACE_O_TRACECLONE, which attaches it to us at
 * birth; it has the signal mask of our call (asynchronous signals
 * blocked), so that no signal of the process goes to it.  Not under a
 * seccomp filter (as the control thread is not).  1 when the loader
 * thread is now a->hijack; 0 when it is not, and a thread of the program
 * is to load libfhook: the kept one still (pthread_create() missing or
 * refused), or none (the loader thread lost); a negative errno when the
 * process went away.
 */
#define ATT_LOADER_SLEEP	30	/* s: a loader thread we lost ends by itself */
#define ATT_LOADER_WAIT_MS	2000	/* for it to come to its sleep */

static bool in_sleep(const struct att_thread *t)
{
	long nr = (long)t->regs.orig_rax, r = (long)t->regs.rax;

	/* interrupted in it: -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK */
	return (nr == SYS_clock_nanosleep || nr == SYS_nanosleep) && r <= -512 && r >= -516;
}

/*
 * Let the loader thread run until it sleeps, and take it there: its
 * system call is watched in /proc without stopping it (an interrupt sent
 * while it waited for a CPU took it before it had run anything of its
 * own), then it is interrupted and looked at.  0 when it is stopped in
 * its sleep.
 */
static int loader_to_sleep(struct cli_attach *a, struct att_thread *h)
{
	double deadline = now_ms() + ATT_LOADER_WAIT_MS;
	char path[64], buf[32];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", a->pid, h->tid);
	while (!in_sleep(h)) {
		if (now_ms() > deadline || ptrace(PTRACE_CONT, h->tid, NULL, NULL))
			return -EAGAIN;
		for (;;) {
			ssize_t n = -1;

			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, buf, sizeof(buf) - 1);
				close(fd);
			}
			if (n <= 0)
				return -ESRCH;
			buf[n] = 0;
			if (atoi(buf) == SYS_clock_nanosleep || atoi(buf) == SYS_nanosleep)
				break;
			if (now_ms() > deadline)
				break;
			sleep_ms(0.05);
		}
		ptrace(PTRACE_INTERRUPT, h->tid, NULL, NULL);
		if (wait_stop(h))
			return -ESRCH;
	}
	return 0;
}

static int start_loader(struct cli_attach *a)
{
	unsigned long args[4] = { 0, 0, a->sleep_fn, ATT_LOADER_SLEEP }, r = ~0UL, ptid = 0;
	struct att_thread *t = a->hijack, *h = &a->th[1];
	int ret, saved_errno = 0;
	unsigned long err_addr;
	const char *why;
	char buf[32];

	/* under a seccomp filter, a clone() may be what it kills for (as the control thread) */
	if (!status_field(t->tid, "Seccomp", buf, sizeof(buf)) || atoi(buf)) {
		why = "under a seccomp filter";
		goto no_loader;
	}
	why = a->pcreate_why;
	if (!a->pcreate_fn || !a->pdetach_fn || !a->sleep_fn)
		goto no_loader;
	why = "no PTRACE_O_TRACECLONE";
	if (ptrace(PTRACE_SETOPTIONS, t->tid, NULL, (void *)PTRACE_O_TRACECLONE))
		goto no_loader;
	a->clone_tid = 0;
	/* a clone3() refused (ENOSYS in some containers) is retried as clone(), errno set */
	err_addr = get_errno(a, &saved_errno);
	ret = call(a, a->pcreate_fn, args, 4, &ptid, sizeof(ptid), 0, &r);
	if (!t->gone) {
		ptrace(PTRACE_SETOPTIONS, t->tid, NULL, NULL);
		put_errno(a, err_addr, saved_errno);
	}
	if (!ret && (int)r == 0 && mem_read(a, args[0], &ptid, sizeof(ptid)))
		ptid = 0;
	if (ret && !a->clone_tid)
		return ret;
	why = ret ? strerror(-ret) : (int)r ? strerror((int)r) : "no thread seen";
	if (!a->clone_tid)
		goto no_loader;
	if (verbose())
		fprintf(stderr, "fhook: %s: pthread_create: %.2f ms in the process (%.2f ms since the "
			"thread was stopped)\n", a->cmd, a->times.call_ms, now_ms() - a->hijack_t0);
	release_hijack(a);
	memset(h, 0, sizeof(*h));
	h->tid = a->clone_tid;
	h->loader = true;
	a->nr_th = 2;
	/* born stopped (PTRACE_EVENT_STOP), before it ran anything */
	if (wait_stop(h)) {
		why = "gone";
		goto lost;
	}
	/* it inherited the option: the control thread it starts is not to be ours */
	ptrace(PTRACE_SETOPTIONS, h->tid, NULL, NULL);
	h->sched_saved = fhook_boost_thread(h->tid, 100 * 1000, -20, false, &h->sched);
	/*
	 * Detached first, where it stands (an atomic store in its descriptor):
	 * lost from here on, it ends by itself after its sleep and leaves
	 * nothing behind.
	 */
	a->hijack = h;
	args[0] = ptid;
	r = ~0UL;
	if (!ptid || call(a, a->pdetach_fn, args, 1, NULL, 0, 0, &r) || (int)r) {
		why = "not detached";
		goto lost;
	}
	if (loader_to_sleep(a, h)) {
		why = h->gone ? "gone" : "did not come to its sleep";
		goto lost;
	}
	a->hijack_t0 = now_ms();
	a->by_loader = true;
	if (verbose())
		fprintf(stderr, "fhook: %s: loader thread %d started\n", a->cmd, h->tid);
	return 1;
lost:
	/* a thread of the program loads libfhook after all (stop_one_safe()) */
	if (verbose())
		fprintf(stderr, "fhook: %s: the loader thread %d: %s; a thread of the program "
			"loads libfhook\n", a->cmd, h->tid, why);
	release(h);
	a->hijack = NULL;
	a->nr_th = 0;
	return 0;
no_loader:
	if (verbose())
		fprintf(stderr, "fhook: %s: no loader thread (%s); libfhook is loaded on thread %d\n",
			a->cmd, why, t->tid);
	return 0;
}

/*
 * A thread that meets fhook's int3 with SIGTRAP blocked is killed by the
 * kernel.  libfhook keeps SIGTRAP out of the masks of the programs it
 * starts (its pthread_sigmask); a loaded libfhook cannot, so the masks are
 * fixed here, the one change of a thread's state that attaching makes.
 */
static void unblock_sigtrap(struct cli_attach *a)
{
	unsigned long mask;
	int i;

	for (i = 0; i < a->nr_th; i++) {
		if (a->th[i].gone)
			continue;
		a->world_threads++;
		if (!ptrace(PTRACE_GETSIGMASK, a->th[i].tid, (void *)sizeof(mask), &mask) &&
		    (mask & 1UL << (SIGTRAP - 1))) {
			mask &= ~(1UL << (SIGTRAP - 1));
			if (!ptrace(PTRACE_SETSIGMASK, a->th[i].tid, (void *)sizeof(mask), &mask))
				fprintf(stderr, "fhook: %s: note: thread %d blocked SIGTRAP; it is "
					"unblocked (fhook's int3 would kill it)\n", a->cmd,
					a->th[i].tid);
		}
	}
}

/*
 * What needs every thread stopped (the pads, the signal masks) is done on
 * a thread of ours that then exits: a tracer's exit lets go of every
 * thread it traced at once (the kernel's exit_ptrace()), where
 * PTRACE_DETACHing them one by one let the first one released take our
 * CPU while the others stayed stopped (3 to 14 ms on a busy machine).
 */
static void *stop_world(void *arg)
{
	struct cli_attach *a = arg;
	const struct att_thread *pick;
	struct fhook_sched_attr old;
	double t0 = now_ms(), t1 = t0;
	struct rusage ru0 = { 0 }, ru1;
	int ret;

	a->world_tid = (pid_t)syscall(SYS_gettid);
	/* every thread of the process waits for this one: it takes the CPU first ... */
	fhook_boost_rt(0, &old);
	ret = stop_all(a);
	/* ... and, once they are stopped, keeps it for the work (a slice of the default length) */
	if (sched_getscheduler(0) != SCHED_FIFO)
		fhook_set_slice(0);
	if (!ret)
		ret = read_maps(a);
	if (!ret) {
		/* FHOOK_ATTACH_VERBOSE: every thread's verdict */
		pick = pick_safe(a);
		a->preferred = pick ? pick->tid : 0;
		unblock_sigtrap(a);
		t1 = now_ms();
		/* the faults (ours and the process's copies of its pages) are this thread's */
		if (verbose())
			getrusage(RUSAGE_THREAD, &ru0);
		if (!object_named(a, "libfhook.so") && a->dlopen_fn) {
			ret = rewrite_pads(a);
			if (ret)
				fprintf(stderr, "fhook: %s: cannot rewrite the pads of process %d: "
					"%s\n", a->cmd, a->pid, strerror(-ret));
			a->pads_done = !ret;
		}
	}
	a->world_ms = now_ms() - t0;
	a->world_ret = ret;
	if (verbose() && !ret) {
		getrusage(RUSAGE_THREAD, &ru1);
		fprintf(stderr, "fhook: %s: stopping %d threads took %.2f ms, the pads %.2f ms "
			"(%ld page faults; %d threads moved past the rest of a pad)\n", a->cmd,
			a->world_threads, t1 - t0, now_ms() - t1, ru1.ru_minflt - ru0.ru_minflt,
			a->pads_moved);
	}
	return NULL;
}

/* Run stop_world() and wait until its thread is gone, and every thread let go with it. */
static int world_stop(struct cli_attach *a)
{
	pthread_t th;
	int i;

	if (pthread_create(&th, NULL, stop_world, a))
		return -EAGAIN;
	pthread_join(th, NULL);
	/*
	 * Joined once the thread's stack is free; its tracees go a little
	 * later.  TracerPid names the tracing thread, not its process.
	 */
	for (i = 0; i < a->nr_th; i++) {
		char buf[32];
		int n;

		if (a->th[i].gone)
			continue;
		for (n = 0; n < 2000; n++) {
			if (!status_field(a->th[i].tid, "TracerPid", buf, sizeof(buf)) ||
			    atoi(buf) != a->world_tid)
				break;
			sleep_ms(0.05);
		}
		a->th[i].gone = true;
	}
	a->nr_th = 0;
	return a->world_ret;
}

/* ---- the control thread's socket (lib/core/ctl_thread.c) ---------------- */

/* The thread of @pid that serves the control socket, by its name; 0 if none. */
static pid_t find_ctl_thread(pid_t pid)
{
	char path[64], comm[32];
	struct dirent *de;
	pid_t found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strcmp(comm, FHOOK_CTL_THREAD_NAME "\n"))
			found = tid;
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * The proof of the ptrace permission: a thread of ours seizes the control
 * thread (which stops nothing) and holds it until the server has checked
 * the connection; then it exits, which lets the thread go without a stop
 * (PTRACE_DETACH would need one).  Meanwhile a signal the thread meets is
 * passed on, and a stop of its group only noted: it stays stopped.
 */
struct ctl_seizer {
	pid_t tid;
	pid_t tracer;		/* the seizing thread */
	int ret;
	int ready[2];		/* written once the seize is done or refused */
	int done[2];		/* closed when the proof is over */
	volatile bool stopped;	/* stopped with its group (SIGSTOP): it cannot answer */
};

static void *ctl_seize(void *arg)
{
	struct ctl_seizer *s = arg;
	double deadline = now_ms() + ATT_CTL_BUSY_MS;
	struct pollfd pfd = { .fd = s->done[0], .events = POLLIN };
	int st, untraced = 0;
	char buf[32];

	s->tracer = (pid_t)syscall(SYS_gettid);
	for (;;) {
		if (!ptrace(PTRACE_SEIZE, s->tid, NULL, NULL)) {
			s->ret = 0;
			break;
		}
		s->ret = -errno;
		/*
		 * A thread has one tracer: another command's proof, which is
		 * brief.  No tracer when we look: it may have let go between
		 * the seize and the look, so a few more tries before the
		 * refusal is taken as ours.
		 */
		if (s->ret != -EPERM || !status_field(s->tid, "TracerPid", buf, sizeof(buf)) ||
		    (atoi(buf) <= 0 && ++untraced > 3) || now_ms() > deadline)
			break;
		sleep_ms(1);
	}
	if (write(s->ready[1], "", 1) != 1 || s->ret)
		return NULL;
	while (poll(&pfd, 1, 1) == 0) {
		if (waitpid(s->tid, &st, __WALL | WNOHANG) <= 0 || !WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP)
			s->stopped = true;
		else
			ptrace(PTRACE_CONT, s->tid, NULL, (void *)(long)WSTOPSIG(st));
	}
	return NULL;
}

/*
 * One NUL-terminated message from the control thread (malloc'd), waiting
 * at most ATT_CALL_TIMEOUT_MS; -ETIMEDOUT, -EAGAIN when @s says the thread
 * was stopped, -ESRCH when the process is gone, -EPIPE at the end.
 */
static int ctl_sock_recv(struct cli_attach *a, struct ctl_seizer *s, char **msg)
{
	double deadline = now_ms() + ATT_CALL_TIMEOUT_MS;
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int ret;

	*msg = NULL;
	for (;;) {
		struct pollfd pfd = { .fd = a->sock, .events = POLLIN };
		ssize_t n;

		if (s && s->stopped) {
			ret = -EAGAIN;
			break;
		}
		if (now_ms() > deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, 10) <= 0) {
			if (!s && !cli_attach_alive(a->pid)) {
				ret = -ESRCH;
				break;
			}
			continue;
		}
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap = (len + 4096) * 2);

			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
		}
		n = recv(a->sock, buf + len, cap - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = cli_attach_alive(a->pid) ? -EPIPE : -ESRCH;
			break;
		}
		len += n;
		if (buf[len - 1] == 0) {
			*msg = buf;
			return 0;
		}
	}
	free(buf);
	return ret;
}

static int ctl_sock_send(struct cli_attach *a, const char *req)
{
	size_t len = strlen(req) + 1, off = 0;

	while (off < len) {
		ssize_t n = send(a->sock, req + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cli_attach_alive(a->pid) ? -EPIPE : -ESRCH;
		off += n;
	}
	return 0;
}

/* Connect to the control socket of a->pid and check that the process itself answers. */
static int ctl_sock_connect(struct cli_attach *a)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int n;

	a->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->sock < 0)
		return -errno;
	n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, FHOOK_CTL_SOCK_PREFIX "%d",
		     a->pid);
	if (connect(a->sock, (struct sockaddr *)&addr,
		    offsetof(struct sockaddr_un, sun_path) + 1 + n))
		return -errno;
	/* a squatter on the name must not pass for the process */
	if (getsockopt(a->sock, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return -errno;
	if (cr.pid != a->pid) {
		if (verbose())
			fprintf(stderr, "fhook: %s: the control socket's name is held by process "
				"%d, not %d\n", a->cmd, (int)cr.pid, a->pid);
		return -EPERM;
	}
	return 0;
}

/*
 * Reach the process through its control thread: seize it, connect, get
 * the server's word that the permission is proven, let the thread go.
 * 0 with a->sock connected; otherwise the ptrace call is the channel.
 */
static int ctl_sock_open(struct cli_attach *a)
{
	struct ctl_seizer s = { .ready = { -1, -1 }, .done = { -1, -1 } };
	char st[64], *greeting = NULL, c;
	pthread_t th;
	int ret;

	s.tid = find_ctl_thread(a->pid);
	if (!s.tid)
		return -ENOENT;
	a->ctl_tid = s.tid;
	/* stopped with the process (SIGSTOP): it cannot answer */
	if (!status_field(s.tid, "State", st, sizeof(st)) || st[0] == 'T' || st[0] == 't') {
		if (verbose())
			fprintf(stderr, "fhook: %s: the control thread %d is stopped\n", a->cmd,
				s.tid);
		return -EAGAIN;
	}
	if (pipe2(s.ready, O_CLOEXEC))
		return -errno;
	if (pipe2(s.done, O_CLOEXEC)) {
		ret = -errno;
		goto out_ready;
	}
	if (pthread_create(&th, NULL, ctl_seize, &s)) {
		ret = -EAGAIN;
		goto out_done;
	}
	ret = read(s.ready[0], &c, 1) == 1 ? s.ret : -EIO;
	if (ret && verbose())
		fprintf(stderr, "fhook: %s: cannot seize the control thread %d: %s\n", a->cmd,
			s.tid, strerror(-ret));
	if (!ret)
		ret = ctl_sock_connect(a);
	if (!ret)
		ret = ctl_sock_recv(a, &s, &greeting);
	if (!ret && strncmp(greeting, "ok\n", 3)) {
		if (verbose())
			fprintf(stderr, "fhook: %s: %s", a->cmd, greeting);
		ret = -EPERM;
	}
	free(greeting);
	close(s.done[1]);
	s.done[1] = -1;
	pthread_join(th, NULL);
	/*
	 * Joined once its stack is free; the thread is let go a little later.
	 * A ptrace call that follows must not find it still ours.
	 */
	for (int n = 0; ret && !s.ret && n < 2000; n++) {
		if (!status_field(s.tid, "TracerPid", st, sizeof(st)) || atoi(st) != s.tracer)
			break;
		sleep_ms(0.05);
	}
out_done:
	if (s.done[1] >= 0)
		close(s.done[1]);
	close(s.done[0]);
out_ready:
	close(s.ready[0]);
	close(s.ready[1]);
	if (ret && a->sock >= 0) {
		close(a->sock);
		a->sock = -1;
	}
	return ret;
}

static int ctl_sock_request(struct cli_attach *a, const char *req, char **reply)
{
	double t0 = now_ms();
	int ret;

	ret = ctl_sock_send(a, req);
	if (!ret)
		ret = ctl_sock_recv(a, NULL, reply);
	a->times.call_ms = now_ms() - t0;
	if (ret == -ETIMEDOUT)
		fprintf(stderr, "fhook: %s: process %d did not answer in %d s\n", a->cmd, a->pid,
			ATT_CALL_TIMEOUT_MS / 1000);
	return ret;
}

/* ---- the interface ----------------------------------------------------- */

/*
 * The first request through the kept thread is a "hello", which starts
 * the control thread (fhook_attach_ctl()); then the kept thread is let go
 * and the requests go to the control socket, so that no thread of the
 * process waits for them (the first "patch --list" of a process of 20,000
 * functions kept it 1.3-1.7 ms more).  Without a control thread (a
 * seccomp filter, its name taken), a thread is kept again and the ptrace
 * call stays the channel.
 */
static int hello_then_socket(struct cli_attach *a)
{
	char *reply = NULL;
	int ret;

	ret = cli_attach_ctl(a, "hello", &reply);
	free(reply);
	if (ret < 0)
		return ret;
	release_hijack(a);
	if (!ctl_sock_open(a))
		return 0;
	if (verbose())
		fprintf(stderr, "fhook: %s: no control socket in process %d: the ptrace call "
			"stays the channel\n", a->cmd, a->pid);
	return stop_one_safe(a);
}

static int attach_open(const char *cmd, pid_t pid, struct cli_attach **out)
{
	struct cli_attach *a;
	const struct att_map *lib;
	sigset_t chld;
	int ret;

	*out = NULL;
	ret = check_target(cmd, pid);
	if (ret)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	/* every stop's SIGCHLD kept for wait_for_tracee() (the mask is put back at close) */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &a->old_mask);
	a->cmd = cmd;
	a->pid = pid;
	a->sock = -1;
	a->pidfd = syscall(SYS_pidfd_open, pid, 0);
	/* attached to before: its control thread answers, and no thread is stopped */
	ret = ctl_sock_open(a);
	if (!ret) {
		*out = a;
		return 0;
	}
	/* none yet: the first request starts it (hello_then_socket()) */
	a->ctl_missing = ret == -ENOENT;
	a->th = calloc(ATT_MAX_THREADS, sizeof(*a->th));
	if (!a->th) {
		ret = -ENOMEM;
		goto fail;
	}
	/* what can be learnt with the threads running is learnt first */
	ret = read_maps(a);
	if (!ret)
		a->restorer = find_restorer(a);
	if (!ret && object_named(a, "libfhook.so") && !sigtrap_blocked(pid)) {
		/* nothing needs the world stopped: one thread at a time, until one is safe */
		ret = stop_one_safe(a);
		if (ret)
			goto fail;
		goto have_lib;
	}
	if (!ret && !object_named(a, "libfhook.so")) {
		ret = prep_load(a);
		if (ret)
			goto fail;
	}
	/* every thread stopped together only for the pads and the masks */
	memset(att_stack_words, 0, sizeof(att_stack_words));
	ret = world_stop(a);
	if (ret)
		goto fail;
	/* then one thread at a safe point, the others running: dlopen may need their locks */
	ret = stop_one_safe(a);
	if (ret)
		goto fail;
	if (!object_named(a, "libfhook.so")) {
		ret = a->pads_done ? start_loader(a) : -EAGAIN;	/* it went away? */
		if (!ret && !a->hijack)		/* the kept thread let go, the loader lost */
			ret = stop_one_safe(a);
		if (ret >= 0)
			ret = load_libfhook(a);
		if (ret)
			goto fail;
		read_maps(a);
	}
have_lib:
	lib = object_named(a, "libfhook.so");
	a->ctl = lib ? object_sym(lib, "fhook_attach_ctl") : 0;
	if (!a->ctl) {
		fprintf(stderr, "fhook: %s: the libfhook of process %d has no control channel "
			"(an older libfhook?)\n", cmd, pid);
		ret = -ENOSYS;
		goto fail;
	}
	if (a->ctl_missing) {
		ret = hello_then_socket(a);
		if (ret)
			goto fail;
	}
	*out = a;
	return 0;
fail:
	if (ret == -ESRCH && !cli_attach_alive(pid))
		fprintf(stderr, "fhook: %s: process %d exited\n", cmd, pid);
	cli_attach_close(a);
	return ret;
}

/*
 * While it attaches, the command runs at nice -20, and as a real-time
 * thread while it keeps a thread of the process stopped (fhook_boost_rt(),
 * when it may: CAP_SYS_NICE): every step waits for it,
 * and on a machine whose CPUs the process's busy threads fill, each wake
 * of the command waited for one (5 ms more for a two-call step, measured).
 * Put back once attached: `trace -p` then reads events for as long as it
 * runs.
 */
int cli_attach_open(const char *cmd, pid_t pid, struct cli_attach **out)
{
	struct fhook_sched_attr old;
	bool boosted;
	int ret;

	/*
	 * (nice -20 without SCHED_FLAG_RESET_ON_FORK: the threads the command
	 * starts for the attach, the stopping one and the one that seizes the
	 * control thread, are born with it; at nice 0 each waited up to a
	 * scheduler tick for its first instruction)
	 */
	boosted = fhook_boost_thread(0, 100 * 1000, -20, true, &old);
	ret = attach_open(cmd, pid, out);

	/* (a thread still kept for later requests: the command is put back all the same) */
	if (*out && (*out)->self_boosted) {
		fhook_restore_sched(0, &(*out)->self_sched);
		(*out)->self_boosted = false;
	}
	if (boosted)
		fhook_restore_sched(0, &old);
	/*
	 * Later requests too are waited for by the process: each is served
	 * first when it wakes, though the command gets no more of the CPU than
	 * any thread.
	 */
	fhook_short_slice();
	return ret;
}

int cli_attach_ctl(struct cli_attach *a, const char *req, char **reply)
{
	unsigned long args[1], r = 0;
	int ret;

	*reply = NULL;
	if (a->sock >= 0) {
		ret = ctl_sock_request(a, req, reply);
		if (verbose())
			fprintf(stderr, "fhook: %s: request '%.*s': %.2f ms in the process\n",
				a->cmd, (int)strcspn(req, "\t"), req, a->times.call_ms);
		if (ret == -ESRCH)
			fprintf(stderr, "fhook: %s: process %d exited\n", a->cmd, a->pid);
		if (ret)
			return ret;
		return strncmp(*reply, "ok\n", 3) ? 1 : 0;
	}
	if (!a->hijack || a->hijack->gone)
		return -ESRCH;
	ret = call(a, a->ctl, args, 1, req, strlen(req) + 1, 0, &r);
	if (verbose())
		fprintf(stderr, "fhook: %s: request '%.*s': %.2f ms in the process\n", a->cmd,
			(int)strcspn(req, "\t"), req, a->times.call_ms);
	if (ret == -ESRCH)
		fprintf(stderr, "fhook: %s: process %d exited\n", a->cmd, a->pid);
	if (ret)
		return ret;
	*reply = r ? mem_string(a, r, 1 << 20) : NULL;
	if (!*reply)
		return -EFAULT;
	return strncmp(*reply, "ok\n", 3) ? 1 : 0;
}

int cli_attach_getfd(struct cli_attach *a, int fd)
{
	int r = a->pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, a->pidfd, fd, 0) : -1;

	return r < 0 ? -errno : r;
}

/*
 * FHOOK_ATTACH_VERBOSE: the channel, and how long threads were stopped
 * (every thread together, then the one kept for the calls until it was let go).
 */
static void say_channel(const struct cli_attach *a)
{
	char chan[80], stops[160];
	int kept;

	if (a->sock >= 0)
		snprintf(chan, sizeof(chan), "control socket (thread %d)%s", a->ctl_tid,
			 a->ctl_missing ? " after a ptrace call" : "");
	else
		snprintf(chan, sizeof(chan), "ptrace call");
	/* a thread kept for ptrace calls: whatever the channel became after them */
	kept = a->sock >= 0 ? a->ctl_missing : a->times.threads;
	if (a->world_threads)
		snprintf(stops, sizeof(stops), "%d threads stopped for %.2f ms%s, then 1 for "
			 "%.2f ms%s", a->world_threads, a->world_ms,
			 a->pads_done ? " (pads rewritten)" : "", a->times.stopped_ms,
			 !a->times.loaded ? "" : a->by_loader ? " (it started the loader thread)" :
			 " (libfhook loaded)");
	else if (kept)
		snprintf(stops, sizeof(stops), "%d threads stopped for %.2f ms", a->times.threads,
			 a->times.stopped_ms);
	else if (a->sock >= 0)
		snprintf(stops, sizeof(stops), "0 threads stopped for 0.00 ms");
	else
		return;
	fprintf(stderr, "fhook: %s: channel: %s; %s; last call %.2f ms\n", a->cmd, chan, stops,
		a->times.call_ms);
}

void cli_attach_close(struct cli_attach *a)
{
	int i;

	if (!a)
		return;
	release_hijack(a);
	for (i = 0; i < a->nr_th; i++)
		release(&a->th[i]);
	if (verbose())
		say_channel(a);
	free_maps(a);
	free_pads(a);
	free(a->th);
	if (a->sock >= 0)
		close(a->sock);
	if (a->pidfd >= 0)
		close(a->pidfd);
	pthread_sigmask(SIG_SETMASK, &a->old_mask, NULL);
	free(a);
}
