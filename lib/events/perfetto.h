/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `fhook replay --format perfetto`: the decoded events written as a
 * Perfetto trace (a Trace protobuf, i.e. a stream of TracePackets), with
 * TrackEvent slices for entry/exit pairs and instants for the rest.
 *
 * The writer streams: it keeps one output buffer (about 1 MiB, more only
 * for the time of a single larger packet) and tables of the names it has
 * interned, which grow with the distinct names and threads, never with
 * the number of events.
 *
 * Not thread-safe: one writer is fed from one thread.
 */
#ifndef FHOOK_EV_PERFETTO_H
#define FHOOK_EV_PERFETTO_H

#include "decode.h"

struct pf_writer;

/*
 * @name_of: returns the function name for ev->ip (never NULL; e.g. "0x1234"
 * when unknown).  The string only needs to live until the next call.  It is
 * also called for the value of a SYMSTR argument, with a copy of the event
 * whose ip is that value.
 */
typedef const char *(*pf_name_fn)(void *ctx, const struct dec_event *ev);

/*
 * A writer to @fd (not closed by it).  Returns NULL with errno set
 * (EINVAL: no @name_of; ENOMEM).
 */
struct pf_writer *pf_new(int fd, pf_name_fn name_of, void *ctx);

/*
 * Add one event; events come in time order.  Returns 0 or a negative errno:
 * a write error or -ENOMEM.  An error sticks: later calls return it, and the
 * file keeps only the packets written whole before it.
 */
int pf_event(struct pf_writer *w, const struct dec_event *ev);

/* Flush and free @w.  Returns 0 or the first error (-errno). */
int pf_finish(struct pf_writer *w);

#endif
