// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The caller-redirect module's replacement as a plain shared object, for `fhook patch
 * -p PID` on a memcg server that was started without fhook (make demo):
 *
 *   fhook patch -p PID --func __memory_events_show --caller memory_events_show \
 *       --with memcg_patch.so:__memory_events_show_new
 *
 * seq_printf comes from the server (built with -rdynamic), as a module's
 * symbols come from the kernel.
 */
#include "memcg.h"

void __memory_events_show_new(struct seq_file *m, atomic_long_t *events)
{
	seq_printf(m, "This is from __memory_events_show_new\n");
	seq_printf(m, "low %lu\n", atomic_long_read(&events[MEMCG_LOW]));
	seq_printf(m, "high %lu\n", atomic_long_read(&events[MEMCG_HIGH]));
	seq_printf(m, "max %lu\n", atomic_long_read(&events[MEMCG_MAX]));
	seq_printf(m, "oom %lu\n", atomic_long_read(&events[MEMCG_OOM]));
	seq_printf(m, "oom_kill %lu\n", atomic_long_read(&events[MEMCG_OOM_KILL]));
}
