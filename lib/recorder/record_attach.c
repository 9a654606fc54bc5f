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

	if (!fhook_rec_shm) {
		fprintf(out, "fhook: record: this process is not being recorded\n");
		return -ENOENT;
	}
	fhook_ctl_unwatch();
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
	fhook_rec_free_events();
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
	if (!fhook_rec_shm)
		return false;
	if (ev_proc_start((int)fhook_rec_shm->tracer_pid) == fhook_rec_shm->tracer_start)
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
	if (rec_pending_fd != fhook_rec_fd && fhook_rec_fd_is_trace_memfd(rec_pending_fd))
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

	if (fd == fhook_rec_fd || !fhook_rec_fd_is_trace_memfd(fd)) {
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
	return fhook_rec_setup(argv[0], true, out);
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
