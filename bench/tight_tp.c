// SPDX-License-Identifier: LGPL-2.1-or-later
/* The tracepoint provider of tight_tp.h, linked into build/bench/tight_lttng. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "tight_tp.h"
