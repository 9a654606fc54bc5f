// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A recording started in this process: at start-up (FHOOK_EV_SHM), or
 * when `fhook trace -p` attached.  The trace buffer mapped, the process's
 * hooks set (fork, exec, dlopen), the events' probes registered (one
 * fprobe per symbol, the kprobe events' own), and at exit what they
 * missed counted for the command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/prctl.h>

#include <fhook/kallsyms.h>
#include <fhook/internal/attach.h>

#include "record.h"
#include "record_trigger.h"

/* Group the events by SYM, one probe each. */
static int build_probes(void)
{
	int i, j;

	fhook_rec_probes = calloc(fhook_rec_nr_events ? fhook_rec_nr_events : 1,
				  sizeof(*fhook_rec_probes));
	if (!fhook_rec_probes)
		return -ENOMEM;
	for (i = 0; i < fhook_rec_nr_events; i++) {
		struct ev_desc_event *e = &fhook_rec_events[i];
		struct rec_probe *p = NULL;

		fhook_rec_fast_prepare(e);
		if (e->unresolved || e->kprobe)
			continue;
		for (j = 0; j < fhook_rec_nr_probes; j++)
			if (!strcmp(fhook_rec_probes[j].symbol, e->symbol))
				p = &fhook_rec_probes[j];
		if (!p) {
			p = &fhook_rec_probes[fhook_rec_nr_probes++];
			p->inst = REC_CUR;
			p->symbol = e->symbol;
			p->first = e;
			p->entry = calloc(fhook_rec_nr_events, sizeof(*p->entry));
			p->ret = calloc(fhook_rec_nr_events, sizeof(*p->ret));
			p->ret_off = calloc(fhook_rec_nr_events, sizeof(*p->ret_off));
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
	for (j = 0; j < fhook_rec_nr_probes; j++) {
		struct rec_probe *p = &fhook_rec_probes[j];

		p->plain_entry = p->nr_entry == 1 && !p->entry[0]->nr_args ? (int)p->entry[0]->id : -1;
		p->plain_ret = p->nr_ret == 1 && !p->ret[0]->nr_args ? (int)p->ret[0]->id : -1;
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
	struct ev_desc_event *e = p->first;
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

/*
 * A probe of plain events only (`fhook record`'s every function, or an
 * entry and a return event without arguments) has its records written by
 * the trampolines (arch/shadow.h: graph records), when the clock is the
 * TSC with no base; fhook_rec_entry() and fhook_rec_exit() still take
 * whatever the trampolines leave to C.  Slot 0's only: the trampolines
 * compare with fhook_rec_g, slot 0's struct fhook_rec_global.
 */
static void rec_graph(struct rec_probe *p)
{
	if (REC_CUR != &fhook_rec_insts[0] || fhook_rec_clock != EV_CLOCK_TSC || rec_clock_base || fhook_rec_nr_callers || p->nr_saved ||
	    p->plain_entry < 0 || (p->nr_ret && p->plain_ret < 0))
		return;
	fprobe_graph_rec(&p->fp, (long)((char *)&fhook_rec_thr - (char *)__builtin_thread_pointer()),
			 (unsigned long)p->plain_entry << EV_TS_BITS,
			 p->nr_ret ? (unsigned long)p->plain_ret << EV_TS_BITS : 0);
}

/* Resolve the events' symbols and register their probes. */
int fhook_rec_arm(FILE *err)
{
	int i, ret;

	fhook_rec_deferred = false;
	ret = fhook_rec_read_desc(err);
	if (ret)
		return ret;
	for (i = 0; i < fhook_rec_nr_events; i++) {
		struct ev_desc_event *e = &fhook_rec_events[i];

		if (e->kprobe)
			continue;
		if (fhook_rec_resolve_symbols(e)) {
			fprintf(err, "fhook: %s: a symbol of event %u is not in this process\n", fhook_rec_cmd,
				e->id);
			e->unresolved = true;
		}
	}
	if (build_probes()) {
		fprintf(err, "fhook: %s: out of memory\n", fhook_rec_cmd);
		return -ENOMEM;
	}
	__atomic_store_n(&rec_disabled, 0, __ATOMIC_RELAXED);
	for (i = 0; i < fhook_rec_nr_probes; i++) {
		struct rec_probe *p = &fhook_rec_probes[i];

		p->fp.entry_handler = fhook_rec_entry;
		if (p->nr_ret) {
			p->fp.exit_handler = fhook_rec_exit;
			/* frames an exception, longjmp or cancellation removes get their exits */
			p->fp.flags |= FPROBE_FL_EXIT_ON_UNWIND;
		}
		if (p->first->nr_targets)
			ret = register_targets(p);
		else
			ret = register_fprobe(&p->fp, p->symbol, NULL);
		/* a child that exec'd another program may not have the function */
		if (ret && ret != -ENOENT) {
			fprintf(err, "fhook: %s: cannot probe %s: %s\n", fhook_rec_cmd, p->symbol,
				strerror(-ret));
			fhook_rec_untraced("cannot probe %s: %s", p->symbol, strerror(-ret));
		}
		p->registered = !ret;
		if (!ret)
			rec_graph(p);
	}
	fhook_rec_trigger_arm(fhook_rec_shm, err);
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
	char req[32];

	if (!attached && !fhook_rec_nr_probes && !fhook_rec_kprobes)
		return;
	snprintf(req, sizeof(req), "trace-stop\t%d", (int)REC_CUR->tracer);
	fhook_ctl_watch(REC_CUR->tracer, req);
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

	for (i = 0; i < sizeof(fhook_rec_cmd) - 1 && cmd[i] >= 'a' && cmd[i] <= 'z'; i++)
		;
	if (!i || cmd[i]) {
		strcpy(fhook_rec_cmd, "record");
		return;
	}
	memcpy(fhook_rec_cmd, cmd, i + 1);
}

/*
 * Start recording into the shared memory of descriptor @v (a number):
 * at start-up (FHOOK_EV_SHM), or when `fhook trace -p` attached (@attached;
 * messages then go to @err, the channel's reply).  0 or a negative errno.
 */
int __fhook_startup fhook_rec_setup(const char *v, bool attached, FILE *err)
{
	static bool once;
	struct ev_shm *shm;
	const char *why;
	int ret = 0;

	shm = fhook_rec_map_shm(v, &why);
	if (!shm) {
		fprintf(err, "fhook: record: FHOOK_EV_SHM=%s %s: this process is not traced\n",
			v, why);
		if (!attached)
			unsetenv("FHOOK_EV_SHM");
		return -EINVAL;
	}
	fhook_rec_shm = shm;
	REC_CUR->tracer = (pid_t)shm->tracer_pid;
	rec_set_cmd(shm->cmd);
	fhook_rec_ring_size = shm->ring_size;
	fhook_rec_mark = shm->ring_size / 2;
	fhook_rec_clock = shm->clock;
	rec_clock_base = shm->clock_base;
	fhook_rec_follow = shm->follow;
	/* cpu_id is at +4 of struct rseq */
	fhook_rec_has_rseq = &__rseq_size && __rseq_size;
	if (fhook_rec_has_rseq)
		rec_g.cpu_off = __rseq_offset + 4;
	else
		rec_g.cpu_off = (long)((char *)&fhook_rec_thr.last_cpu - (char *)__builtin_thread_pointer());
	if (!shm->follow) {
		/* programs this one starts are not traced; its own threads map rings later */
		if (!attached)
			unsetenv("FHOOK_EV_SHM");
		fcntl(fhook_rec_fd, F_SETFD, FD_CLOEXEC);
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
		fhook_rec_register_process();
	} else {
		fhook_rec_proc_seq = 0;
		fhook_rec_announce_pending = true;
	}
	fhook_rec_desc_state = 0;
	if (!once) {
		once = true;
		fhook_atfork(fhook_rec_atfork_prepare, fhook_rec_atfork_parent, fhook_rec_atfork_child);
		fhook_loader_notify(fhook_rec_objects_changed);
		/* a record is named by the object at its address: none takes another's */
		fhook_loader_keep_addresses();
		fhook_exec_notify(fhook_rec_exec);
	}
	/*
	 * A process none of whose objects has a patchable site (the shell and
	 * make of a test suite) has nothing to probe: it resolves no symbol
	 * and registers nothing until a dlopen() brings an object that has.
	 */
	fhook_rec_arming = true;
	if (fhook_objects_have_sites())
		ret = fhook_rec_arm(err);
	else
		fhook_rec_deferred = true;
	/* kprobe events need no site: any object, the executable's too, now */
	if (!ret && !fhook_rec_desc_state && fhook_rec_shm->desc_kprobes)
		ret = fhook_rec_read_desc(err);
	if (!ret && fhook_rec_kp_pending())
		fhook_rec_kp_arm(err);
	fhook_rec_arming = false;
	if (ret)
		return ret;
	rec_watch_tracer(attached);
	/*
	 * After the probes: thread-exit destructors run in the order their
	 * keys were made, and the return hooks report the frames a thread
	 * leaves behind from theirs; the ring is retired after that.
	 */
	if (!fhook_rec_have_key)
		fhook_rec_have_key = !pthread_key_create(&fhook_rec_ring_key, fhook_rec_thread_exit);
	return 0;
}

/*
 * The command started this program behind an emulator (FHOOK_EMULATOR,
 * cli/run.c): the kernel named the process after the emulator; the
 * program's own name goes back before any thread or event reads it.  Out
 * of the start-up path's pages: every other process passes it by.
 */
static void __attribute__((cold, noinline)) rec_emulated_comm(const char *v)
{
	char comm[16];

	snprintf(comm, sizeof(comm), "%s", v);
	prctl(PR_SET_NAME, comm);
	unsetenv("FHOOK_EMULATED_COMM");
}

__attribute__((constructor(210))) static void fhook_ev_preload(void)
{
	const char *v = secure_getenv("FHOOK_EMULATED_COMM");

	if (__builtin_expect(v != NULL, 0))
		rec_emulated_comm(v);
	v = secure_getenv("FHOOK_EV_SHM");
	if (v)
		fhook_rec_setup(v, false, stderr);
}

/* At exit, each recording's missed counts, and this thread's ring retired. */
__attribute__((destructor(210))) static void fhook_ev_preload_exit(void)
{
	struct rec_inst *in;
	long old;
	int i;

	for_each_rec_inst(in, old) {
		unsigned long missed = 0;

		for (i = 0; i < fhook_rec_nr_probes; i++)
			missed += fprobe_nmissed(&fhook_rec_probes[i].fp);
		for (i = 0; fhook_rec_kprobes && i < fhook_rec_nr_events; i++)
			missed += fhook_rec_kp_nmissed(&fhook_rec_kprobes[i]);
		__atomic_fetch_add(&fhook_rec_shm->nmissed, missed, __ATOMIC_RELAXED);
		if (fhook_rec_thr.ring)
			fhook_rec_retire_ring(fhook_rec_thr.ring);
	}
}
