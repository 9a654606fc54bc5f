/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The functions a kprobe glob leaves out (nokprobe.c), for libfhook and
 * the command alike.
 */
#ifndef FHOOK_NOKPROBE_H
#define FHOOK_NOKPROBE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Why function @name of the object at @object (a path or file name; NULL:
 * the executable) is never probed by a glob, or NULL when it may be.
 */
const char *fhook_nokprobe(const char *object, const char *name)
	__attribute__((visibility("hidden")));
/*
 * Is @object libc or the loader, whose functions fhook runs: why, for a
 * function found at the address of one of them under another name.
 */
const char *fhook_nokprobe_libc(const char *object) __attribute__((visibility("hidden")));
/* Is @name one of the libc and loader functions fhook runs? */
bool fhook_nokprobe_name(const char *name) __attribute__((visibility("hidden")));
/* Is @name the cold part of a function (foo.cold): entered by a jump, never a call? */
bool fhook_nokprobe_cold(const char *name) __attribute__((visibility("hidden")));
/* Why a return probe (r GLOB) leaves out function @name, or NULL. */
const char *fhook_noretprobe(const char *name) __attribute__((visibility("hidden")));
/* The names, in order (for tests): how many, and the @i-th. */
size_t fhook_nokprobe_count(void) __attribute__((visibility("hidden")));
const char *fhook_nokprobe_at(size_t i) __attribute__((visibility("hidden")));

#endif
