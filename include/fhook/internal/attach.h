/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verbs of the attach channel (<fhook/attach.h>): the layers above
 * core register theirs with core's table (lib/core/control.c), from their
 * constructors.  Not installed, not part of the API.
 */
#ifndef FHOOK_INTERNAL_ATTACH_H
#define FHOOK_INTERNAL_ATTACH_H

#include <stdio.h>

#include <fhook/attach.h>

/*
 * @fn gets the request's words after the verb and writes its output to
 * @out; it returns 0 or a negative errno, having written the reason to @out.
 */
struct fhook_attach_verb {
	const char *name;
	int (*fn)(int argc, char **argv, FILE *out);
};

/*
 * The control thread (lib/core/ctl_thread.c, docs/attach.md): a process
 * that has been attached to once serves later requests on a Unix socket
 * in the abstract namespace, "\0" FHOOK_CTL_SOCK_PREFIX "PID", from a
 * thread named FHOOK_CTL_THREAD_NAME.  Each request and each reply is a
 * NUL-terminated string, the ones fhook_attach_ctl() takes and returns; on
 * connecting, the command first gets an "ok" reply (the ptrace permission
 * proven) or an "error" one and the end of the connection.
 */
#define FHOOK_CTL_SOCK_PREFIX	"fhook-ctl-"
#define FHOOK_CTL_THREAD_NAME	"fhook-ctl"
#define FHOOK_CTL_REQ_MAX	(64 << 10)

/* 0, or -ENOSPC when the table is full. */
int fhook_attach_register(const struct fhook_attach_verb *verb)
	__attribute__((visibility("hidden")));

#endif /* FHOOK_INTERNAL_ATTACH_H */
