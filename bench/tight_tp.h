/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LTTng-UST tracepoint of the tight loop: one event per call of tiny(). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER fhook_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tight_tp.h"

#if !defined(TIGHT_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TIGHT_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(fhook_bench, tiny,
	LTTNG_UST_TP_ARGS(int, x),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, x, x))
)

#endif /* TIGHT_TP_H */

#include <lttng/tracepoint-event.h>
