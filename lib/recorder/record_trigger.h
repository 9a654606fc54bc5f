/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The flight recorder's triggers in the traced process (record_trigger.c, record_filter.c). */
#ifndef FHOOK_EVENTS_RECORD_TRIGGER_H
#define FHOOK_EVENTS_RECORD_TRIGGER_H

#include <stdio.h>

#include "evdesc.h"
#include "ring.h"
#include "core/core.h"

/* Probe @shm's trigger function, if it names one this process has; messages to @err. */
void fhook_rec_trigger_arm(struct ev_shm *shm, FILE *err) __hidden;
/* Remove that probe (a detach); waits for handlers in flight. */
void fhook_rec_trigger_disarm(void) __hidden;
/* Fire the trigger of the recording @shm: the command dumps (@took_ns: a slow call's time). */
void fhook_rec_trigger_fire(struct ev_shm *shm, uint64_t took_ns) __hidden;
/*
 * Does the event @e, whose arguments were just fetched into @args (each at
 * @offs[i]), match its trigger filter?
 */
bool fhook_rec_filter_match(const struct ev_desc_event *e, const unsigned char *args,
			    const uint16_t *offs) __hidden;

#endif /* FHOOK_EVENTS_RECORD_TRIGGER_H */
