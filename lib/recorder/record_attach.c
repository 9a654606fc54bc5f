// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook trace -p / fhook record -p: the attach channel's verbs of the
 * recorder (memfd, memfd-close, trace-start, trace-stop), and the end of
 * an attached recording.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fhook/internal/attach.h>

#include "record.h"
#include "record_trigger.h"

/*
 * End recording @in: every probe removed (unregister_fprobe waits until no
 * thread is in a handler), then the rings are retired for the command to
 * free, and the memory is unmapped.  Threads find out that their ring is
 * gone from the slot's rec_gen.  Another recording's probes and rings are
 * not touched: a probe of each on the same function are two ops at the
 * site, and removing one leaves the other's to run.
 */
static int rec_teardown(struct rec_inst *in)
{
	long old = rec_enter(in);
	unsigned long missed = 0;
	uint64_t rings_off;
	int i;

	fhook_ctl_unwatch(in->tracer);
	__atomic_store_n(&rec_disabled, REC_G_STOPPED, __ATOMIC_RELAXED);
	for (i = 0; i < fhook_rec_nr_probes; i++) {
		if (fhook_rec_probes[i].registered)
			unregister_fprobe(&fhook_rec_probes[i].fp);
		missed += fprobe_nmissed(&fhook_rec_probes[i].fp);
	}
	missed += fhook_rec_kp_disarm();
	/* (before the shared memory it writes to goes) */
	fhook_rec_trigger_disarm();
	__atomic_add_fetch(&rec_gen, 1, __ATOMIC_RELEASE);
	for (i = 0; i < EV_MAX_RINGS; i++) {
		if (!fhook_rec_maps[i])
			continue;
		__atomic_store_n(&fhook_rec_maps[i]->exited, 1, __ATOMIC_RELEASE);
		munmap(fhook_rec_maps[i], ev_ring_stride(fhook_rec_ring_size));
		fhook_rec_maps[i] = NULL;
	}
	__atomic_fetch_add(&fhook_rec_shm->nmissed, missed, __ATOMIC_RELAXED);
	rings_off = fhook_rec_shm->rings_off;
	munmap(fhook_rec_shm, rings_off);
	fhook_rec_shm = NULL;
	close(fhook_rec_fd);
	fhook_rec_fd = -1;
	fhook_rec_proc_seq = 0;
	fhook_rec_maps_hi = 0;
	fhook_rec_free_events();
	in->tracer = 0;
	rec_leave(old);
	return 0;
}

/*
 * The command a request came from, by its word at @at ("trace" or
 * "record"; a command that does not say is record): its messages name it.
 */
static const char *verb_cmd(int argc, char **argv, int at)
{
	return argc > at && !strcmp(argv[at], "trace") ? "trace" : "record";
}

static int say_full(const char *cmd, FILE *out)
{
	fprintf(out, "fhook: %s: process %d is being recorded or traced by %d fhook commands "
		"already, the most at once: stop one of them first\n", cmd, (int)getpid(),
		REC_MAX_INST);
	return -EBUSY;
}

static bool rec_tracer_alive(const struct rec_inst *in)
{
	return fhook_proc_start((int)in->shm->tracer_pid) == in->shm->tracer_start;
}

/*
 * The recordings whose command is gone (killed before the control thread
 * saw it: its pidfd is read every CTL_WATCH_MS) expire here: their probes
 * go, and their slot is free for a new command.  The recording of a
 * started program (fhook record -- PROG) is its command's until it exits.
 */
static void rec_expire(void)
{
	int i;

	for (i = 0; i < REC_MAX_INST; i++)
		if (fhook_rec_insts[i].shm && !rec_tracer_alive(&fhook_rec_insts[i]))
			rec_teardown(&fhook_rec_insts[i]);
}

static struct rec_inst *rec_free_slot(void)
{
	int i;

	for (i = 0; i < REC_MAX_INST; i++)
		if (!fhook_rec_insts[i].shm)
			return &fhook_rec_insts[i];
	return NULL;
}

static bool rec_fd_in_use(int fd)
{
	int i;

	for (i = 0; i < REC_MAX_INST; i++)
		if (fhook_rec_insts[i].shm && fhook_rec_insts[i].fd == fd)
			return true;
	return false;
}

/*
 * The memory each "memfd" request made, until its command's "trace-start"
 * takes it: a command killed between the two leaves it here, and a later
 * request closes it (if it is still ours: the program may have closed the
 * number and opened its own).  Each is its command's (the pid the request
 * gave; 0 from a command that gave none, closed at the next request).
 */
static struct rec_pending {
	int fd;
	pid_t pid;
} rec_pending[REC_MAX_INST] = { [0 ... REC_MAX_INST - 1] = { .fd = -1 } };

static void close_pending(bool all_unnamed)
{
	int i;

	for (i = 0; i < REC_MAX_INST; i++) {
		struct rec_pending *p = &rec_pending[i];

		if (p->fd < 0 || (p->pid && fhook_proc_start(p->pid)) || (!p->pid && !all_unnamed))
			continue;
		if (!rec_fd_in_use(p->fd) && fhook_rec_fd_is_trace_memfd(p->fd))
			close(p->fd);
		p->fd = -1;
	}
}

static void forget_pending(int fd)
{
	int i;

	for (i = 0; i < REC_MAX_INST; i++)
		if (rec_pending[i].fd == fd)
			rec_pending[i].fd = -1;
}

/* memfd CMD [PID]: memory for a new recording by command PID */
static int verb_memfd(int argc, char **argv, FILE *out)
{
	const char *cmd = verb_cmd(argc, argv, 0);
	pid_t pid = argc > 1 ? atoi(argv[1]) : 0;
	int fd, i;

	rec_expire();
	close_pending(true);
	/* refused before the command starts anything (its -o file included) */
	if (!rec_free_slot())
		return say_full(cmd, out);
	for (i = 0; i < REC_MAX_INST && rec_pending[i].fd >= 0; i++)
		;
	if (i == REC_MAX_INST)
		return say_full(cmd, out);
	fd = memfd_create("fhook-trace", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		fprintf(out, "fhook: %s: memfd_create: %s\n", cmd, strerror(errno));
		return -errno;
	}
	rec_pending[i].fd = fd;
	rec_pending[i].pid = pid > 0 ? pid : 0;
	fprintf(out, "%d\n", fd);
	return 0;
}

/* The command could not use the memory after all: close it, if it is ours. */
static int verb_memfd_close(int argc, char **argv, FILE *out)
{
	int fd = argc == 1 ? atoi(argv[0]) : -1;

	if (rec_fd_in_use(fd) || !fhook_rec_fd_is_trace_memfd(fd)) {
		fprintf(out, "fhook: record: descriptor %d is not an unused fhook memory\n", fd);
		return -EINVAL;
	}
	close(fd);
	forget_pending(fd);
	return 0;
}

/* trace-start FD [CMD]: record into the memory of FD, in a slot of its own */
static int verb_trace_start(int argc, char **argv, FILE *out)
{
	struct rec_inst *in;
	long old;
	int ret;

	if (argc != 1 && argc != 2) {
		fprintf(out, "fhook: record: bad request\n");
		return -EINVAL;
	}
	rec_expire();
	in = rec_free_slot();
	if (!in)
		return say_full(verb_cmd(argc, argv, 1), out);
	forget_pending(atoi(argv[0]));
	old = rec_enter(in);
	strcpy(fhook_rec_cmd, "record");
	ret = fhook_rec_setup(argv[0], true, out);
	rec_leave(old);
	return ret;
}

/*
 * trace-stop [PID]: end the recording of command PID; without PID (a
 * command that does not say), the one recording there is.
 */
static int verb_trace_stop(int argc, char **argv, FILE *out)
{
	pid_t pid = argc > 0 ? atoi(argv[0]) : 0;
	struct rec_inst *in = NULL;
	int i, n = 0;

	for (i = 0; i < REC_MAX_INST; i++) {
		if (!fhook_rec_insts[i].shm)
			continue;
		n++;
		if (!pid || fhook_rec_insts[i].tracer == pid)
			in = &fhook_rec_insts[i];
	}
	if (!in || (!pid && n > 1)) {
		if (pid)
			fprintf(out, "fhook: record: process %d is not being recorded by process %d\n",
				(int)getpid(), (int)pid);
		else if (n)
			fprintf(out, "fhook: record: process %d is recorded by %d commands: "
				"trace-stop names its command\n", (int)getpid(), n);
		else
			fprintf(out, "fhook: record: this process is not being recorded\n");
		return -ENOENT;
	}
	rec_teardown(in);
	/* what goes on (the control thread's message when it stopped a command's gone) */
	fprintf(out, "recordings left: %d\n", n - 1);
	return 0;
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
