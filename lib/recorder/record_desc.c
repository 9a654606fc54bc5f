// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The event descriptions the command wrote into the shared memory
 * (evdesc.h): the events, their fetch programs, their kprobes' places, the
 * callers to filter on.  Parsed into fhook_rec_events when a process first
 * needs them, and freed when an attached recording ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/kallsyms.h>

#include "record.h"


/*
 * The descriptions the command wrote (evdesc.h): the events as parsed,
 * and the callers found in this process.
 */
static int parse_desc(const char *text, size_t len)
{
	struct ev_desc d;
	int i, r;

	r = ev_desc_parse(text, len, &d);
	if (r)
		return r;
	fhook_rec_events = d.evs;
	fhook_rec_nr_events = d.nr_evs;
	d.evs = NULL;
	d.nr_evs = 0;
	for (i = 0; i < d.nr_callers; i++) {
		unsigned long addr = kallsyms_lookup_name(d.callers[i]), size = 0, off;
		struct rec_range *nc;

		if (!addr || !kallsyms_lookup_size_offset(addr, &size, &off)) {
			fprintf(stderr, "fhook: %s: no caller '%s' in this process\n",
				fhook_rec_cmd, d.callers[i]);
			continue;
		}
		nc = realloc(fhook_rec_callers, (fhook_rec_nr_callers + 1) * sizeof(*nc));
		if (!nc) {
			r = -ENOMEM;
			break;
		}
		fhook_rec_callers = nc;
		nc[fhook_rec_nr_callers].start = addr;
		nc[fhook_rec_nr_callers++].end = addr + size;
	}
	ev_desc_free(&d);
	return r;
}

/*
 * The event descriptions the command wrote, parsed when the probes are
 * first built: a process none of whose objects has a site (a suite's
 * shell, make, rm) never needs them, and parsing costs it sscanf()'s and
 * malloc()'s pages.
 */
int fhook_rec_read_desc(FILE *err)
{
	char *desc;

	if (fhook_rec_desc_state)
		return fhook_rec_desc_state < 0 ? -EINVAL : 0;
	desc = strndup((char *)fhook_rec_shm + fhook_rec_shm->desc_off, fhook_rec_shm->desc_len);
	if (!desc || parse_desc(desc, strlen(desc))) {
		fprintf(err, "fhook: %s: bad event descriptions\n", fhook_rec_cmd);
		fhook_rec_untraced("bad event descriptions");
		free(desc);
		fhook_rec_free_events();
		fhook_rec_desc_state = -1;
		return -EINVAL;
	}
	free(desc);
	fhook_rec_desc_state = 1;
	return 0;
}

void fhook_rec_free_events(void)
{
	struct ev_desc d = { .evs = fhook_rec_events, .nr_evs = fhook_rec_nr_events };
	int i;

	ev_desc_free(&d);
	fhook_rec_events = NULL;
	for (i = 0; fhook_rec_kprobes && i < fhook_rec_nr_events; i++)
		free(fhook_rec_kprobes[i].many);
	fhook_rec_nr_events = 0;
	free(fhook_rec_kprobes);
	fhook_rec_kprobes = NULL;
	for (i = 0; i < fhook_rec_nr_probes; i++) {
		free(fhook_rec_probes[i].entry);
		free(fhook_rec_probes[i].ret);
		free(fhook_rec_probes[i].ret_off);
	}
	free(fhook_rec_probes);
	fhook_rec_probes = NULL;
	fhook_rec_nr_probes = 0;
	free(fhook_rec_callers);
	fhook_rec_callers = NULL;
	fhook_rec_nr_callers = 0;
}
