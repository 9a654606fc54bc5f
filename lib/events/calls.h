/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calls from decoded events: what every view of a recording reads.
 *
 * The decoder gives events, each with its depth on its thread; here an
 * entry and its exit become one call, whatever probed it (a site's entry
 * and exit, a kprobe's 'p' and 'r'), and several events of one entry (a
 * function traced whole and also probed for its arguments) or of one
 * exit are the same call.  A call still open when its thread's events end
 * (exit(), a thread still running, a killed process) ends at that
 * thread's last event and is marked unfinished.
 *
 * The filter set (-F, -N, -D, -t, --tid, --time-range) is applied here, so
 * every view shows the same calls: a hidden call is as if it had not been
 * traced (its time is its caller's own time), and depths count the shown
 * calls only.
 */
#ifndef FHOOK_EV_CALLS_H
#define FHOOK_EV_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "decode.h"

struct call_filter {
	const char **only;	/* -F: only these functions and the calls under them */
	int nr_only;
	const char **hide;	/* -N: not these functions nor the calls under them */
	int nr_hide;
	uint32_t max_depth;	/* -D: calls less deep than this (below an -F function), 0: all */
	uint64_t min_time;	/* -t: calls that took at least this long (ns) */
	uint32_t *tids;		/* --tid: only these threads */
	int nr_tids;
	/* --time-range: calls that start in [lo, hi]; relative to the first event when set */
	bool have_range, lo_rel, hi_rel;
	uint64_t lo, hi;
};

struct call {
	const struct dec_thread *thr;
	uint64_t ip;		/* the function's address as recorded */
	uint64_t start, end;	/* ns; end is set at the exit */
	uint64_t child;		/* the time of the shown calls it made */
	uint32_t depth;		/* shown calls open below it on its thread */
	bool unfinished;	/* no exit: ends at its thread's last event */
	bool unwound;		/* left by an exception, longjmp or cancellation */
	bool shown;		/* at the exit: false when -t hides it */
	void *priv[2];		/* the view's, from its enter to its exit */
	/*
	 * At the enter only: the nearest shown call it was made from, NULL
	 * when none (later the frames below may have moved).
	 */
	const struct call *up;
};

/*
 * What a view is told, in time order per thread.  Pointers are valid only
 * during the callback; a non-zero return stops the reading and is returned.
 */
struct call_view {
	/* a shown call starts: its first entry event */
	int (*enter)(void *ctx, struct call *c, const struct dec_event *ev);
	/* another entry event of the same call, right after it */
	int (*enter_more)(void *ctx, struct call *c, const struct dec_event *ev);
	/* the call ends: its first exit event, NULL when unfinished (c->end is set) */
	int (*exit)(void *ctx, struct call *c, const struct dec_event *ev);
	/* another exit event of the same call, right after it */
	int (*exit_more)(void *ctx, struct call *c, const struct dec_event *ev);
	/* an event of no call (an entry without exit events, an exit without an entry) */
	int (*event)(void *ctx, const struct dec_event *ev, uint32_t depth);
	/* a thread's events are over: nothing more of it follows */
	int (*thread_end)(void *ctx, const struct dec_thread *thr);
};

struct calls;

/*
 * @flt may be NULL; it is used as it is (keep it alive).  @d names the
 * functions for the filters.  Views that write calls out as they start
 * (every format of replay) set @times_first: with -t, calls_prepass()
 * must then see the whole recording once before calls_event() does.
 */
struct calls *calls_new(struct dec *d, const struct call_filter *flt,
			const struct call_view *view, void *ctx);
void calls_free(struct calls *cs);

/* Does -t need calls_prepass()?  (Only views that write calls as they start.) */
bool calls_need_prepass(const struct calls *cs);
/* A dec_emit_fn: learn the duration of every call (the first pass). */
int calls_prepass(void *cs, const struct dec_event *ev);
/* After the first pass: the decoder @d reads the recording again. */
void calls_rewind(struct calls *cs, struct dec *d);

/* A dec_emit_fn: one event. */
int calls_event(void *cs, const struct dec_event *ev);
/*
 * A dec_end_fn: @thr's events are over (the whole recording is read):
 * its open calls are closed, unfinished, and the view told.
 */
int calls_thread_end(void *cs, const struct dec_thread *thr);
/* The end: every call still open is closed, unfinished.  Returns a view's error. */
int calls_finish(struct calls *cs);

/* Exits that closed no call (their entry was not recorded). */
uint64_t calls_unpaired(const struct calls *cs);
/* Shown calls that never ended. */
uint64_t calls_unfinished(const struct calls *cs);

/* Parse a duration: "500" (ns), "2.5us", "10ms", "1s"; false if it is none. */
bool calls_parse_duration(const char *s, uint64_t *out);
/*
 * Parse --time-range A~B (either may be empty): a duration with a unit is
 * counted from the recording's first event, a bare number is a time as
 * replay prints it (seconds).  Returns false when malformed.
 */
bool calls_parse_range(struct call_filter *flt, const char *s);
/* Parse --tid TID[,TID...] into @flt (added to what is there). */
bool calls_parse_tids(struct call_filter *flt, const char *s);

#endif
