/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event filters, compiled by the command for the recorder (filter.c). */
#ifndef FHOOK_EV_FILTER_H
#define FHOOK_EV_FILTER_H

#include <fhook/internal/events.h>

#include "recorder/evdesc.h"

/*
 * Compile @filter against the arguments of @ev into @toks (room for
 * EV_FILTER_MAX): how many tokens (their strings malloc'd), or -1 with
 * *@err (the kernel's message) and *@pos (its offset in @filter).
 */
int ev_filter_compile(const struct fhook_event *ev, const char *filter,
		      struct ev_filter_tok *toks, const char **err, int *pos);

#endif /* FHOOK_EV_FILTER_H */
