// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A server with the memcg functions the caller-selective redirect module
 * patches, over real counters.
 *
 * It reads one request per line on stdin and answers on stdout, each
 * answer followed by a line "--end--" (so a client can talk to the running
 * process):
 *
 *   cat memory.events         memory_events_show()
 *   cat memory.events.local   memory_events_local_show()
 *   event low|high|max|oom|oom_kill
 *                             count an event in the cgroup "task" (and,
 *                             hierarchically, in its parent)
 *   load PATH.so              dlopen a module (its constructor is module_init)
 *   unload                    dlclose it (its destructor is module_exit)
 *   quit
 *
 * __memory_events_show, memory_events_show and memory_events_local_show are
 * the kernel's (mm/memcontrol.c); they are built traceable.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcg.h"

#define noinline __attribute__((noinline, noclone))

static struct mem_cgroup root_mem_cgroup = { .name = "/" };
static struct mem_cgroup task_memcg = { .name = "task", .parent = &root_mem_cgroup };

void seq_printf(struct seq_file *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(m->out, fmt, ap);
	va_end(ap);
}

static struct mem_cgroup *mem_cgroup_from_seq(struct seq_file *m)
{
	return m->private;
}

/* mm/memcontrol.c, as in Linux 6.x */
static noinline void __memory_events_show(struct seq_file *m, atomic_long_t *events)
{
	seq_printf(m, "low %lu\n", atomic_long_read(&events[MEMCG_LOW]));
	seq_printf(m, "high %lu\n", atomic_long_read(&events[MEMCG_HIGH]));
	seq_printf(m, "max %lu\n", atomic_long_read(&events[MEMCG_MAX]));
	seq_printf(m, "oom %lu\n", atomic_long_read(&events[MEMCG_OOM]));
	seq_printf(m, "oom_kill %lu\n", atomic_long_read(&events[MEMCG_OOM_KILL]));
}

static noinline int memory_events_show(struct seq_file *m, void *v)
{
	struct mem_cgroup *memcg = mem_cgroup_from_seq(m);

	__memory_events_show(m, memcg->memory_events);
	return 0;
}

static noinline int memory_events_local_show(struct seq_file *m, void *v)
{
	struct mem_cgroup *memcg = mem_cgroup_from_seq(m);

	__memory_events_show(m, memcg->memory_events_local);
	return 0;
}

/* memcg_memory_event(): local to the cgroup, hierarchical up to the root */
static void memcg_memory_event(struct mem_cgroup *memcg, enum memcg_memory_event event)
{
	atomic_long_inc(&memcg->memory_events_local[event]);
	for (; memcg; memcg = memcg->parent)
		atomic_long_inc(&memcg->memory_events[event]);
}

static const char *const event_names[MEMCG_NR_MEMORY_EVENTS] = {
	"low", "high", "max", "oom", "oom_kill",
};

int main(void)
{
	struct seq_file m = { .out = stdout, .private = &task_memcg };
	void *module = NULL;
	char line[4096];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "cat memory.events")) {
			memory_events_show(&m, NULL);
		} else if (!strcmp(line, "cat memory.events.local")) {
			memory_events_local_show(&m, NULL);
		} else if (!strncmp(line, "event ", 6)) {
			int i;

			for (i = 0; i < MEMCG_NR_MEMORY_EVENTS; i++)
				if (!strcmp(line + 6, event_names[i]))
					break;
			if (i < MEMCG_NR_MEMORY_EVENTS)
				memcg_memory_event(&task_memcg, i);
			else
				fprintf(stderr, "memcg: no event '%s'\n", line + 6);
		} else if (!strncmp(line, "load ", 5)) {
			if (module)
				fprintf(stderr, "memcg: a module is already loaded\n");
			else if (!(module = dlopen(line + 5, RTLD_NOW | RTLD_LOCAL)))
				fprintf(stderr, "memcg: %s\n", dlerror());
		} else if (!strcmp(line, "unload")) {
			if (module && dlclose(module))
				fprintf(stderr, "memcg: %s\n", dlerror());
			module = NULL;
		} else if (!strcmp(line, "quit")) {
			break;
		} else if (line[0]) {
			fprintf(stderr, "memcg: unknown request '%s'\n", line);
		}
		fflush(stderr);
		printf("--end--\n");
	}
	if (module)
		dlclose(module);
	return 0;
}
