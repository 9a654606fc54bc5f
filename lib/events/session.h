/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recording session, the command's side: the memory shared with the
 * traced processes, and the drain that moves ring bytes to a sink as
 * recording blocks (lib/events/recfile.h) without decoding them.
 */
#ifndef FHOOK_EV_SESSION_H
#define FHOOK_EV_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <fhook/internal/events.h>

#include "recfile.h"
#include "recorder/evdesc.h"

/*
 * Where blocks go.  write() gets one unit of the stream as iovecs (the
 * file's header, or one block, header first) and returns 0 or a negative
 * errno; round(), if set, is called after each drain round, also one that
 * found nothing (a sink that keeps bytes back writes them in time).
 */
struct ev_sink {
	int (*write)(struct ev_sink *s, const struct iovec *iov, int n);
	int (*round)(struct ev_sink *s);
	/*
	 * After a write failed: the bytes the sink took but could not put in
	 * the output, from the start of the first unit not whole there (at
	 * the stream's offset *@at), malloc'd in *@bytes for the caller to
	 * free; their events are lost, not recorded.  Returns their length,
	 * or a negative errno.  NULL: a sink that keeps nothing back.
	 */
	long (*unwritten)(struct ev_sink *s, unsigned char **bytes, uint64_t *at);
	/*
	 * Put everything taken so far into the output, at the recording's
	 * end before its counts are made: 0 or a write's error.  NULL: a
	 * sink that writes as it takes.
	 */
	int (*flush)(struct ev_sink *s);
};

struct ev_session_opts {
	struct fhook_event *evs;
	int nr_evs;
	struct fhook_event_prog *prog;	/* symbols of the program's files, or NULL */
	char **callers;
	int nr_callers;
	bool follow;
	bool lossy;
	int clock;		/* EV_CLOCK_*, or -1: the best this machine trusts */
	uint64_t ring_size;	/* 0: the default */
	bool use_fd;		/* record into @fd, a memfd the (attached) process made */
	int fd;
	/* the recording's command line (RF_INFO): @argv, or process @pid's (-p) */
	char *const *argv;
	pid_t pid;
	const char *cmd;	/* the command's name, for its messages ("record", "trace") */
	bool flight;		/* a flight recorder: the rings are read at ev_session_dump() */
	/* and its duration trigger: a call of @trigger_func taking @trigger_ns or more */
	const char *trigger_func;
	uint64_t trigger_ns;
	/* or its event trigger: event @trigger_event (an index of @evs) matching the filter */
	int trigger_event;
	const struct ev_filter_tok *trigger_filter;
	int nr_trigger_filter;
};

struct ev_session;

/*
 * Create the shared memory, write the events into it, and set
 * FHOOK_EV_SHM for the program about to be started.  The recording's
 * first blocks (header, events, what the recording is) go to @sink at
 * once, its clock before the first data.
 */
int ev_session_new(const struct ev_session_opts *o, struct ev_sink *sink,
		   struct ev_session **out);

/*
 * One drain round: new processes, then every ring's new bytes.  With
 * @wait, first sleep until a producer kicks or @wait_ms pass.  Returns the
 * bytes moved, or a negative errno of the sink (the recording is then
 * stopped: producers drop and count).
 */
long ev_session_drain(struct ev_session *s, int wait_ms);

/* Stop recording at the user's end (a signal, the duration): producers stop waiting. */
void ev_session_stop(struct ev_session *s);

/*
 * A flight recorder's dump: what each ring holds that no earlier dump
 * wrote (its newest events, up to the ring's size) goes to the sink.
 * Returns the bytes written, or a negative errno of the sink.
 * ev_session_finish() dumps once more.
 */
long ev_session_dump(struct ev_session *s);

/*
 * How often the duration trigger fired so far, and how long the last
 * call that fired it took.
 */
uint32_t ev_session_trigger_fired(struct ev_session *s, uint64_t *took_ns);
/* No more firings (the trigger's count is done): the processes stop looking. */
void ev_session_trigger_off(struct ev_session *s);

/* A flight recorder's dumps so far, and the bytes of events they wrote. */
void ev_session_dumps(struct ev_session *s, uint32_t *dumps, uint64_t *bytes);

/* Counters so far (events written, lost, nmissed, waits). */
void ev_session_counts(struct ev_session *s, struct rf_end *out);

/* Drain the rest, write the final clock and the summary. */
int ev_session_finish(struct ev_session *s, uint32_t status, int err, struct rf_end *out);

/*
 * The processes that reported running untraced, or partly, with their
 * reasons: lines for the summary at exit ("fhook: @cmd: N processes ..."),
 * malloc'd; NULL if none did.
 */
char *ev_session_untraced(struct ev_session *s, const char *cmd);
/*
 * What the traced processes said of kprobe event @id (its index in the
 * options' evs): how many had its object (MOD, or SYM) when they looked,
 * and how many probes they placed (0 and 0 for an id past the first
 * EV_MAX_KP_EVENTS).  Numbers the processes wrote: for messages only.
 */
void ev_session_kprobe_counts(struct ev_session *s, int id, uint32_t *loaded, uint32_t *placed);

void ev_session_free(struct ev_session *s);

/* Write the recording's file header and the RF_EVENTS block alone (tests). */
int ev_write_block(struct ev_sink *sink, uint32_t type, const void *a, uint32_t alen,
		   const void *b, uint32_t blen);

#endif
