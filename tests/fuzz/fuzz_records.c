// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the record decoder of `fhook trace`: the bytes a
 * traced process writes into its ring (which a buggy or hostile program
 * could corrupt) are drained, decoded and printed in one of the three
 * formats.  Nothing the ring holds may crash the command.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fhook/events.h>

#include "../../lib/events/ring.h"

static const char *specs[] = {
	"f:g/e1 foo $arg1 s=$arg2:string $arg3:u8[4] $arg4:symbol $arg5:b4@2/8 $arg6:s16",
	"f:g/e2 foo%return $retval:x32 c=$comm",
	"f bar +8($arg1):ustring $stack2 \\\"lit\\\" \\7",
};
#define NR_SPECS (sizeof(specs) / sizeof(specs[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fhook_event evs[NR_SPECS];
	static int nr_evs = -1;
	static FILE *devnull;
	static const char *fmts[] = { "text", "json", "chrome" };
	struct fhook_trace *t;
	struct ev_shm *shm;
	struct ev_ring *r;
	size_t n;

	if (nr_evs < 0) {
		struct fhook_event_error err;
		unsigned int i;

		nr_evs = 0;
		for (i = 0; i < NR_SPECS; i++)
			if (!fhook_event_parse(specs[i], NULL, &evs[nr_evs], &err))
				nr_evs++;
		devnull = fopen("/dev/null", "w");
	}
	if (size < 1)
		return 0;
	t = fhook_trace_new(evs, nr_evs, NULL, NULL, 0, false, fmts[data[0] % 3], devnull);
	if (!t)
		return 0;
	shm = fhook_trace_shm(t);
	r = &shm->rings[0];
	n = size - 1 < EV_RING_SIZE ? size - 1 : EV_RING_SIZE;
	memcpy(r->data, data + 1, n);
	r->pid = r->tid = 1;
	memcpy(r->comm, "fuzz", 5);
	r->head = n;
	r->state = EV_SLOT_READY;
	shm->nr_rings = 1;
	fhook_trace_drain(t);
	fhook_trace_print(t, false);
	fhook_trace_free(t);
	return 0;
}
