// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loading libfhook into a process that has none: the process's dlopen()
 * and the other functions found while its threads run, then dlopen()
 * called on a loader thread of ours (or on the kept thread of the
 * program), errno kept.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fhook/internal/elf.h>

#include "../cli.h"
#include "att.h"

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
 * Can pthread_exit() unwind in the process: libgcc_s mapped already, or
 * where its loader finds it (seen from the process's root: a container's
 * files are its own).
 */
static bool has_libgcc_s(struct cli_attach *a)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					    "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
					    "/lib64", "/usr/lib64", "/lib", "/usr/lib" };
	char path[PATH_MAX];
	unsigned int i;

	if (att_object_named(a, "libgcc_s.so"))
		return true;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%d/root%s/libgcc_s.so.1", a->pid, dirs[i]);
		if (!access(path, R_OK))
			return true;
	}
	return false;
}

/*
 * att_start_loader()'s functions: libc's since glibc 2.34, libpthread's
 * before.  Not when another object of the process exports its own
 * pthread_create(), which the program's threads are made by: a
 * sanitizer's runtime (ASan, TSan) or a preloaded library keeps a record
 * of every thread and intercepts malloc() and dlopen() on it, and a thread
 * made behind its back, running dlopen() through it, would break it.
 */
static void find_loader_syms(struct cli_attach *a, const struct att_map *libc)
{
	const struct att_map *lp = att_object_named(a, "libpthread.so");
	int i;

	if (!lp)
		lp = att_object_named(a, "libpthread-");
	a->pcreate_fn = att_object_sym(libc, "pthread_create");
	a->pdetach_fn = att_object_sym(libc, "pthread_detach");
	a->end_fn = att_object_sym(libc, "pthread_exit");
	if (lp && !a->pcreate_fn) {
		a->pcreate_fn = att_object_sym(lp, "pthread_create");
		a->pdetach_fn = att_object_sym(lp, "pthread_detach");
		a->end_fn = att_object_sym(lp, "pthread_exit");
	}
	/* the landing, where pthread_exit() can unwind (it loads libgcc_s, or aborts) */
	if (has_libgcc_s(a) && !getenv("FHOOK_ATTACH_NO_LANDING"))
		a->land_fn = att_object_sym(libc, "getppid");
	a->sleep_fn = att_object_sym(libc, "sleep");
	a->pcreate_why = "no pthread_create(), pthread_detach() or sleep() in libc";
	for (i = 0; i < a->nr_maps && a->pcreate_fn; i++) {
		const struct att_map *m = &a->maps[i];

		if (m->off || !m->path || !strcmp(m->path, libc->path) ||
		    (lp && !strcmp(m->path, lp->path)) || !exports_func(m->path, "pthread_create"))
			continue;
		snprintf(a->pcreate_buf, sizeof(a->pcreate_buf), "%s has its own pthread_create()",
			 att_base_name(m->path));
		a->pcreate_why = a->pcreate_buf;
		a->pcreate_fn = 0;
	}
}

/*
 * What loading libfhook needs, found while the threads still run: the
 * process's dlopen(), that it has sites at all, and those sites.
 */
int att_prep_load(struct cli_attach *a)
{
	const struct att_map *libc = att_libc(a);
	char path[PATH_MAX];
	int ret;

	if (cli_libfhook_path(path, sizeof(path)) || !realpath(path, a->lib)) {
		fprintf(stderr, "fhook: %s: cannot find libfhook.so next to the fhook command\n",
			a->cmd);
		return -ENOENT;
	}
	if (libc)
		a->dlopen_fn = att_object_sym(libc, "dlopen");
	if (!a->dlopen_fn) {
		const struct att_map *libdl = att_object_named(a, "libdl.so");

		a->dlopen_fn = libdl ? att_object_sym(libdl, "dlopen") : 0;
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
	a->errno_fn = att_object_sym(libc, "__errno_location");
	a->dlerror_fn = att_object_sym(libc, "dlerror");
	find_loader_syms(a, libc);
	ret = att_collect_pads(a);
	if (ret)
		fprintf(stderr, "fhook: %s: reading the sites of process %d: %s\n", a->cmd, a->pid,
			strerror(-ret));
	else
		att_plan_all_pads(a);
	return ret;
}

/* The kept thread's errno, for put_errno() after calls that may change it; 0 if unknown. */
static unsigned long get_errno(struct cli_attach *a, int *saved)
{
	unsigned long addr = 0, args[1] = { 0 };

	if (a->errno_fn && !att_call(a, a->errno_fn, args, 0, NULL, 0, 0, &addr) && addr &&
	    !att_mem_read(a, addr, saved, sizeof(*saved)))
		return addr;
	return 0;
}

static void put_errno(struct cli_attach *a, unsigned long addr, int saved)
{
	if (addr)
		att_mem_write(a, addr, &saved, sizeof(saved));
}

/* libfhook loaded with the process's dlopen() on the kept thread, its errno kept. */
int att_load_libfhook(struct cli_attach *a)
{
	unsigned long err_addr = 0, args[2] = { 0 }, h = 0, msg = 0;
	int saved_errno = 0, ret;

	/* the loader thread's own errno is nobody's */
	if (!a->by_loader)
		err_addr = get_errno(a, &saved_errno);
	args[1] = RTLD_NOW;
	/*
	 * On the loader thread, the call does not return to address 0 but
	 * into a landing that ends the thread if the command dies meanwhile
	 * (SIGKILL: no signal of the kind that waits): the 10-20 ms in which
	 * a killed command left the process to fault.  No handle then: the
	 * process's mappings say whether it loaded.
	 */
	ret = -EOPNOTSUPP;
	if (a->by_loader && a->land_fn)
		ret = att_call_land(a, a->dlopen_fn, args, 2, a->lib, strlen(a->lib) + 1, 0);
	if (!ret) {
		/* loaded: in the maps (dlerror(), a call that could be killed, when not) */
		h = !att_read_maps(a) && att_object_named(a, "libfhook.so");
		if (!h && a->dlerror_fn)
			att_call(a, a->dlerror_fn, args, 0, NULL, 0, 0, &msg);
		if (att_verbose())
			fprintf(stderr, "fhook: %s: dlopen returned into its landing\n", a->cmd);
	} else if (ret == -EOPNOTSUPP) {
		ret = att_call(a, a->dlopen_fn, args, 2, a->lib, strlen(a->lib) + 1, 0, &h);
		if (!ret && !h && a->dlerror_fn)
			att_call(a, a->dlerror_fn, args, 0, NULL, 0, 0, &msg);
	}
	if (!ret && !h) {
		char *s = msg ? att_mem_string(a, msg, 4096) : NULL;

		fprintf(stderr, "fhook: %s: loading libfhook into process %d failed: %s\n", a->cmd,
			a->pid, s ? s : "dlopen returned NULL");
		free(s);
		ret = -ENOEXEC;
	}
	if (att_verbose())
		fprintf(stderr, "fhook: %s: dlopen of libfhook: %.2f ms in the process (%.2f ms "
			"since the thread was stopped)\n", a->cmd, a->times.call_ms,
			att_now_ms() - a->hijack_t0);
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
 * request, and att_end_loader() makes the sleep return 0, which ends it.  It
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
	long nr = att_regs_restarting(&t->regs);

	/* interrupted in it (it would restart) */
	return nr == SYS_clock_nanosleep || nr == SYS_nanosleep;
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
	double deadline = att_now_ms() + ATT_LOADER_WAIT_MS;
	char path[64], buf[32];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", a->pid, h->tid);
	while (!in_sleep(h)) {
		if (att_now_ms() > deadline || ptrace(PTRACE_CONT, h->tid, NULL, NULL))
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
			if (att_now_ms() > deadline)
				break;
			att_sleep_ms(0.05);
		}
		ptrace(PTRACE_INTERRUPT, h->tid, NULL, NULL);
		if (att_wait_stop(h))
			return -ESRCH;
	}
	return 0;
}

int att_start_loader(struct cli_attach *a)
{
	unsigned long args[4] = { 0, 0, a->sleep_fn, ATT_LOADER_SLEEP }, r = ~0UL, ptid = 0;
	struct att_thread *t = a->hijack, *h = &a->th[1];
	int ret, saved_errno = 0;
	unsigned long err_addr;
	const char *why;
	char buf[32];

	/* under a seccomp filter, a clone() may be what it kills for (as the control thread) */
	if (!att_status_field(t->tid, "Seccomp", buf, sizeof(buf)) || atoi(buf)) {
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
	ret = att_call(a, a->pcreate_fn, args, 4, &ptid, sizeof(ptid), 0, &r);
	if (!t->gone) {
		ptrace(PTRACE_SETOPTIONS, t->tid, NULL, NULL);
		put_errno(a, err_addr, saved_errno);
	}
	if (!ret && (int)r == 0 && att_mem_read(a, args[0], &ptid, sizeof(ptid)))
		ptid = 0;
	if (ret && !a->clone_tid)
		return ret;
	why = ret ? strerror(-ret) : (int)r ? strerror((int)r) : "no thread seen";
	if (!a->clone_tid)
		goto no_loader;
	if (att_verbose())
		fprintf(stderr, "fhook: %s: pthread_create: %.2f ms in the process (%.2f ms since the "
			"thread was stopped)\n", a->cmd, a->times.call_ms, att_now_ms() - a->hijack_t0);
	att_release_hijack(a);
	memset(h, 0, sizeof(*h));
	h->tid = a->clone_tid;
	h->loader = true;
	a->nr_th = 2;
	/* born stopped (PTRACE_EVENT_STOP), before it ran anything */
	if (att_wait_stop(h)) {
		why = "gone";
		goto lost;
	}
	/* it inherited the option: the control thread it starts is not to be ours */
	ptrace(PTRACE_SETOPTIONS, h->tid, NULL, NULL);
	h->sched_saved = fhook_boost_thread(h->tid, 100 * 1000, -20, false, &h->sched);
	a->hijack = h;
	if (loader_to_sleep(a, h)) {
		why = h->gone ? "gone" : "did not come to its sleep";
		/* detached all the same, where it is stopped: it is to free itself when it ends */
		if (!h->gone && ptid) {
			args[0] = ptid;
			att_call(a, a->pdetach_fn, args, 1, NULL, 0, 0, &r);
		}
		goto lost;
	}
	/*
	 * Detached in its sleep (an atomic store in its descriptor): lost from
	 * here on, it ends by itself after the sleep and leaves nothing behind.
	 * (Not at its birth: a call that lands in pthread_exit() needs what its
	 * start routine's caller sets up first.)  The landing: a command that
	 * dies in the call leaves the thread to end there, not to fault.
	 */
	args[0] = ptid;
	r = ~0UL;
	ret = ptid ? -EOPNOTSUPP : -ESRCH;
	if (ptid && a->land_fn)
		ret = att_call_land(a, a->pdetach_fn, args, 1, NULL, 0, 0);
	if (ret == -EOPNOTSUPP)
		ret = att_call(a, a->pdetach_fn, args, 1, NULL, 0, 0, &r) ?: (int)r ? -EINVAL : 0;
	if (ret) {
		why = "not detached";
		goto lost;
	}
	a->hijack_t0 = att_now_ms();
	a->by_loader = true;
	if (att_verbose())
		fprintf(stderr, "fhook: %s: loader thread %d started\n", a->cmd, h->tid);
	return 1;
lost:
	/* a thread of the program loads libfhook after all (att_stop_one_safe()) */
	if (att_verbose())
		fprintf(stderr, "fhook: %s: the loader thread %d: %s; a thread of the program "
			"loads libfhook\n", a->cmd, h->tid, why);
	att_release(h);
	a->hijack = NULL;
	a->nr_th = 0;
	return 0;
no_loader:
	if (att_verbose())
		fprintf(stderr, "fhook: %s: no loader thread (%s); libfhook is loaded on thread %d\n",
			a->cmd, why, t->tid);
	return 0;
}
