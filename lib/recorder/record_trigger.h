/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The flight recorder's duration trigger, in the traced process (record_trigger.c). */
#ifndef FHOOK_EVENTS_RECORD_TRIGGER_H
#define FHOOK_EVENTS_RECORD_TRIGGER_H

#include <stdio.h>

#include "ring.h"
#include "core/core.h"

/* Probe @shm's trigger function, if it names one this process has; messages to @err. */
void fhook_rec_trigger_arm(struct ev_shm *shm, FILE *err) __hidden;
/* Remove that probe (a detach); waits for handlers in flight. */
void fhook_rec_trigger_disarm(void) __hidden;

#endif /* FHOOK_EVENTS_RECORD_TRIGGER_H */
