// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The in-process end of `fhook ... -p PID`: fhook_attach_ctl(), which the
 * command calls on a thread it stopped with ptrace (cli/attach/), the
 * same requests served by the control thread (ctl_thread.c), and the table
 * of verbs the layers above register (core never calls up: they come to
 * it).  See docs/attach.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fhook/internal/attach.h>

#include "core.h"

#define CTL_MAX_VERBS	16
#define CTL_MAX_ARGS	64

static const struct fhook_attach_verb *ctl_verbs[CTL_MAX_VERBS];
static int ctl_nr_verbs;
static pthread_mutex_t ctl_lock __fhook_startup_data = PTHREAD_MUTEX_INITIALIZER;
static char *ctl_reply;
static char ctl_oom[] = "error\nfhook: out of memory\n";

int __fhook_startup fhook_attach_register(const struct fhook_attach_verb *verb)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&ctl_lock);
	if (ctl_nr_verbs < CTL_MAX_VERBS) {
		ctl_verbs[ctl_nr_verbs++] = verb;
		ret = 0;
	}
	pthread_mutex_unlock(&ctl_lock);
	return ret;
}

static int ctl_hello(int argc, char **argv, FILE *out)
{
	fprintf(out, "proto %d\npid %d\n", FHOOK_ATTACH_PROTO, (int)getpid());
	return 0;
}

static const struct fhook_attach_verb hello_verb = { "hello", ctl_hello };

/* Run one request; its output after the status line. */
static char *ctl_run(const char *req)
{
	char *line = strdup(req), *argv[CTL_MAX_ARGS], *save, *tok, *body = NULL, *reply;
	size_t body_len = 0;
	int argc = 0, i, ret = -EINVAL;
	FILE *out;

	if (!line)
		return NULL;
	line[strcspn(line, "\n")] = 0;
	for (tok = strtok_r(line, "\t", &save); tok && argc < CTL_MAX_ARGS;
	     tok = strtok_r(NULL, "\t", &save))
		argv[argc++] = tok;
	out = open_memstream(&body, &body_len);
	if (!out) {
		free(line);
		return NULL;
	}
	if (!argc) {
		fprintf(out, "empty request\n");
	} else if (!strcmp(argv[0], hello_verb.name)) {
		ret = ctl_hello(argc - 1, argv + 1, out);
	} else {
		for (i = 0; i < ctl_nr_verbs; i++)
			if (!strcmp(ctl_verbs[i]->name, argv[0]))
				break;
		if (i == ctl_nr_verbs)
			fprintf(out, "unknown request '%s'\n", argv[0]);
		else
			ret = ctl_verbs[i]->fn(argc - 1, argv + 1, out);
	}
	fclose(out);
	free(line);
	if (asprintf(&reply, "%s%s", ret ? "error\n" : "ok\n", body ? body : "") < 0)
		reply = NULL;
	free(body);
	return reply;
}

/* One request, as fhook_attach_ctl() runs it; the reply malloc'd, NULL without memory. */
char *fhook_ctl_serve(const char *req)
{
	unsigned int old;
	char *reply;

	/* our own calls into libc (malloc...) are no program calls: no handler sees them */
	old = fhook_internal_enter();
	pthread_mutex_lock(&ctl_lock);
	reply = ctl_run(req);
	pthread_mutex_unlock(&ctl_lock);
	fhook_internal_leave(old);
	return reply;
}

const char *fhook_attach_ctl(const char *req)
{
	int saved_errno = errno;
	unsigned int old;
	char *reply = fhook_ctl_serve(req);

	old = fhook_internal_enter();
	pthread_mutex_lock(&ctl_lock);
	free(ctl_reply);
	ctl_reply = reply;
	pthread_mutex_unlock(&ctl_lock);
	/* a process attached to once serves the later requests from a thread */
	fhook_ctl_thread_start();
	fhook_internal_leave(old);
	errno = saved_errno;
	return reply ? reply : ctl_oom;
}
