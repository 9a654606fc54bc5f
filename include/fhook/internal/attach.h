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

/* 0, or -ENOSPC when the table is full. */
int fhook_attach_register(const struct fhook_attach_verb *verb)
	__attribute__((visibility("hidden")));

#endif /* FHOOK_INTERNAL_ATTACH_H */
