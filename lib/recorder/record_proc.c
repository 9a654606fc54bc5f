// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The recorded process: its objects announced to the command, which
 * symbolizes with them (at start-up, after a dlopen() or dlclose(), in a
 * forked child with its first ring); its forks, whose children record on
 * their own rings or not at all; and its execs, which name in the
 * command's summary a program that will run untraced.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch_insn.h"
#include "record.h"

/*
 * The process's objects announced by the first thread that claims a ring;
 * another thread claiming one meanwhile waits for the image's number, or
 * its records would name none (their addresses printed as numbers).  The
 * wait is bounded: announcing waits at most 200 ms for a mailbox.
 */
void fhook_rec_announce_first(void)
{
	int i;

	if (!__atomic_exchange_n(&rec_announcing, 1, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&fhook_rec_announce_pending, __ATOMIC_ACQUIRE))
			fhook_rec_register_process();
		__atomic_store_n(&rec_announcing, 0, __ATOMIC_RELEASE);
		return;
	}
	for (i = 0; i < 4000 && __atomic_load_n(&fhook_rec_announce_pending, __ATOMIC_ACQUIRE); i++)
		usleep(100);
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
			p = &ev_shm_procs(fhook_rec_shm)[i];
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
	p->seq = seq ? seq : __atomic_add_fetch(&fhook_rec_shm->proc_seq, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&p->state, EV_SLOT_READY, __ATOMIC_RELEASE);
	/* after the mailbox: a ring that names the image is read after it */
	__atomic_store_n(&fhook_rec_proc_seq, p->seq, __ATOMIC_RELEASE);
}

/*
 * A new process image (start-up, a forked child): a new number.  Pending
 * until announced (fhook_rec_get_ring()'s other threads wait for it), and
 * not again if no mailbox was free.
 */
void __fhook_startup fhook_rec_register_process(void)
{
	fhook_rec_proc_seq = 0;
	announce_objects(0);
	__atomic_store_n(&fhook_rec_announce_pending, false, __ATOMIC_RELEASE);
}

/*
 * Registering probes may dlopen() (capstone, libgcc_s), which calls
 * fhook_rec_objects_changed() back while the locks of that registration are
 * held: no arming from there.
 */
bool fhook_rec_arming __fhook_startup_data;

/* dlopen or dlclose returned: the same image, its objects again. */
static void rec_objects_changed(void)
{
	unsigned int old;

	if (!fhook_rec_shm || !(fhook_rec_proc_seq || fhook_rec_announce_pending) ||
	    __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
		return;
	old = fhook_internal_enter();
	if (fhook_rec_proc_seq)
		announce_objects(fhook_rec_proc_seq);
	if (!fhook_rec_arming) {
		fhook_rec_arming = true;
		if (fhook_rec_deferred && fhook_objects_have_sites())
			fhook_rec_arm(stderr);
		if (fhook_rec_kp_pending())
			fhook_rec_kp_arm(stderr);
		fhook_rec_arming = false;
	}
	fhook_internal_leave(old);
}

/*
 * The thread inside fork(), between fhook's prepare handler and its parent
 * or child one (libc runs one fork at a time): a kprobe event there (a
 * libc function that fork() or another handler runs) would write with the
 * parent's ring in the child (struct rec_inst.forking, each recording's
 * writer of that thread).
 */
void fhook_rec_atfork_prepare(void)
{
	struct rec_inst *in;
	long old;

	for_each_rec_inst(in, old)
		__atomic_store_n(&fhook_rec_forking, &fhook_rec_thr, __ATOMIC_RELAXED);
}

void fhook_rec_atfork_parent(void)
{
	struct rec_inst *in;
	long old;

	for_each_rec_inst(in, old)
		__atomic_store_n(&fhook_rec_forking, NULL, __ATOMIC_RELAXED);
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

	/* the parent's threads' rings: mapped here, but not this process's to write */
	for (i = 0; i < fhook_rec_maps_hi; i++) {
		if (fhook_rec_maps[i]) {
			munmap(fhook_rec_maps[i], ev_ring_stride(fhook_rec_ring_size));
			fhook_rec_maps[i] = NULL;
		}
	}
	zero_if_set(&fhook_rec_thr, sizeof(fhook_rec_thr));
	if (!fhook_rec_follow) {
		__atomic_store_n(&rec_disabled, REC_G_STOPPED, __ATOMIC_RELAXED);
		return;
	}
	/*
	 * The child's thread is a new thread: its own ring, its own pid, and
	 * its objects announced with its first ring: most children exec at
	 * once (a shell's, make's), and that costs them about 25 page faults.
	 */
	fhook_rec_proc_seq = 0;
	fhook_rec_forking = NULL;
	fhook_rec_announce_pending = true;
	rec_announcing = 0;
	fhook_rec_fork_ts = ev_clock_read(fhook_rec_clock) - rec_clock_base;
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

	if (!fhook_rec_shm || !fhook_rec_follow || __atomic_load_n(&rec_disabled, __ATOMIC_RELAXED))
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
	if (!why && !fhook_rec_fd_is_shm(fhook_rec_tracer_fd)) {
		/*
		 * The program reused the number FHOOK_EV_SHM names: the new
		 * program must reopen the buffer from the command, and has
		 * the credentials this process has now.  If that fails here,
		 * it fails there, where nothing could tell the command.
		 */
		int fd = fhook_rec_reopen_shm(fhook_rec_tracer_pid, fhook_rec_tracer_fd);

		if (fd < 0)
			why = "the program reused the trace buffer's descriptor and fhook's "
			      "copy cannot be reopened (a process of another user?)";
		else
			close(fd);
	}
	if (why)
		fhook_rec_untraced("started %.80s: untraced, %s", path, why);
}

/*
 * The process's hooks, for each recording (the child of a fork is followed
 * by the recordings that follow children: fhook record -- PROG).
 */
void fhook_rec_objects_changed(void)
{
	struct rec_inst *in;
	long old;

	for_each_rec_inst(in, old)
		rec_objects_changed();
}

void __fhook_startup fhook_rec_atfork_child(void)
{
	struct rec_inst *in;
	long old;

	for_each_rec_inst(in, old)
		rec_atfork_child();
}

void __fhook_startup fhook_rec_exec(const char *path, bool search)
{
	struct rec_inst *in;
	long old;

	for_each_rec_inst(in, old)
		rec_exec(path, search);
}
