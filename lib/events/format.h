/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoded events as text: the kernel's trace format, JSON lines, Chrome
 * trace-event JSON, a depth-indented call graph, and Perfetto's protobuf
 * trace.  Written to a file descriptor through one buffer; numbers are
 * formatted without printf and symbols come from the decoder's cache, so
 * a recording replays at millions of events per second.
 */
#ifndef FHOOK_EV_FORMAT_H
#define FHOOK_EV_FORMAT_H

#include <stdint.h>

#include "decode.h"

enum {
	FMT_TEXT,
	FMT_JSON,
	FMT_CHROME,
	FMT_GRAPH,
	FMT_PERFETTO,
};

struct fmt_out;

/* The FMT_* of a --format name, or -1. */
int fmt_by_name(const char *name);

struct call_filter;
struct calls;

/* @flt: which calls to write (lib/events/calls.h), NULL: all; kept by reference. */
struct fmt_out *fmt_new(int fmt, int fd, struct dec *d, const struct call_filter *flt);
/*
 * The calls @f reads through: with -t, calls_prepass() over the recording
 * first (calls_need_prepass()), then fmt_rewind() to a decoder of it anew.
 */
struct calls *fmt_calls(struct fmt_out *f);
void fmt_rewind(struct fmt_out *f, struct dec *d);
/* Format one event (a dec_emit_fn).  Returns 0 or a negative errno of the write. */
int fmt_event(void *f, const struct dec_event *ev);
/* A dec_end_fn: a thread's events are over (a whole recording is read). */
int fmt_thread_end(void *f, const struct dec_thread *thr);
/*
 * A live trace's round of events is formatted: what is ready is written
 * now, not when the buffer fills; in the graph, the complete lines held
 * and the entries other threads' lines have waited behind too long.
 */
int fmt_round_end(struct fmt_out *f);
/* Events formatted so far. */
uint64_t fmt_count(const struct fmt_out *f);
/*
 * The end: calls still open are closed (unfinished), the output's syntax
 * closed and flushed; frees @f.  Returns 0 or a negative errno.
 */
int fmt_finish(struct fmt_out *f);

#endif
