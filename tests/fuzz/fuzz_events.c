// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the fprobe-event parser: every input is a
 * definition, parsed against the known test program (symbols and DWARF)
 * and, when accepted, printed back in dynamic_events form.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/internal/events.h>

static struct fhook_event_prog *prog;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fhook_event_error err;
	struct fhook_event ev;
	char *spec, line[8192];

	if (!prog) {
		const char *p = getenv("FHOOK_FUZZ_PROG");

		prog = fhook_event_prog_open(p ? p : "build/tests/events/prog", NULL, 0);
	}
	spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = 0;
	if (!fhook_event_parse(spec, prog, &ev, &err)) {
		fhook_event_snprint(line, sizeof(line), &ev);
		fhook_event_free(&ev);
	}
	free(spec);
	return 0;
}
