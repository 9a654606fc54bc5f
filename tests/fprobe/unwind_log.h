/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the FPROBE_FL_EXIT_ON_UNWIND tests: an fprobe on a list of
 * named functions whose handlers log "E name" on entry, "X name" on a
 * return and "U name" on a frame removed without a return (NULL regs),
 * so that a test compares the whole sequence with the one it expects.
 * The exit also checks that it got its own call's entry data and return
 * address ("!" in the log if not).
 */
#ifndef FHOOK_TEST_UNWIND_LOG_H
#define FHOOK_TEST_UNWIND_LOG_H

#include <string.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>
#include <fhook/kallsyms.h>

#define UL_MAX_FUNCS 32

static const char *ul_names[UL_MAX_FUNCS];
static unsigned long ul_sites[UL_MAX_FUNCS];
static int ul_nr;
static char ul_log[16384];
static unsigned long ul_len;

struct ul_call {
	unsigned long ip, ret_ip;
};

static void ul_reset(void)
{
	__atomic_store_n(&ul_len, 0, __ATOMIC_SEQ_CST);
	ul_log[0] = 0;
}

static void ul_put(char kind, unsigned long ip, bool bad)
{
	const char *name = "?";
	char item[64];
	unsigned long n, at;
	int i;

	for (i = 0; i < ul_nr; i++)
		if (ul_sites[i] == ip)
			name = ul_names[i];
	n = (unsigned long)snprintf(item, sizeof(item), "%s%c %s", bad ? "!" : "", kind, name);
	at = __atomic_fetch_add(&ul_len, n + 1, __ATOMIC_RELAXED);
	if (at + n + 2 >= sizeof(ul_log))
		return;
	if (at)
		ul_log[at - 1] = ',';
	memcpy(ul_log + at, item, n);
	ul_log[at + n] = 0;
}

static int ul_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	struct ul_call *c = (struct ul_call *)data;

	c->ip = ip;
	c->ret_ip = ret_ip;
	ul_put('E', ip, false);
	return 0;
}

static void ul_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	struct ul_call *c = (struct ul_call *)data;

	ul_put(fregs ? 'X' : 'U', ip, c->ip != ip || c->ret_ip != ret_ip);
}

/* Probe the functions named in @names (NULL-terminated) with @flags. */
static int ul_register(struct fprobe *fp, const char *const *names, unsigned int flags)
{
	int i;

	for (ul_nr = 0; names[ul_nr] && ul_nr < UL_MAX_FUNCS; ul_nr++) {
		ul_names[ul_nr] = names[ul_nr];
		ul_sites[ul_nr] = ftrace_location(kallsyms_lookup_name(names[ul_nr]));
	}
	memset(fp, 0, sizeof(*fp));
	fp->entry_handler = ul_entry;
	fp->exit_handler = ul_exit;
	fp->entry_data_size = sizeof(struct ul_call);
	fp->flags = flags;
	i = register_fprobe_syms(fp, (const char **)names, ul_nr);
	return i;
}

/* Every "E f" has exactly one later "X f" or "U f" (a bracket check). */
static bool ul_balanced(const char *log)
{
	const char *stack[256];
	int depth = 0;
	char buf[sizeof(ul_log)], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", log);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (tok[0] == 'E') {
			if (depth == 256)
				return false;
			stack[depth++] = tok + 2;
		} else if (tok[0] == 'X' || tok[0] == 'U') {
			if (!depth || strcmp(stack[--depth], tok + 2))
				return false;
		} else {
			return false;
		}
	}
	return depth == 0;
}

#endif
