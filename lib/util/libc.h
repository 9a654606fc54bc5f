/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libc's own sigaction(), pthread_sigmask() and dlopen(), for the code
 * below the interposers (lib/arch, lib/util).  libfhook interposes those
 * for the program (lib/core: SIGTRAP kept deliverable, loads and unloads
 * seen), and with -Bsymbolic-functions a call from inside the library
 * reaches its interposer too: an arch file would call up into core, and
 * a dlopen() of capstone would be an event for every ops, taken under
 * ftrace_lock.  These go to libc directly, and say so where they are used.
 */
#ifndef FHOOK_UTIL_LIBC_H
#define FHOOK_UTIL_LIBC_H

#include <signal.h>

#define __util_hidden __attribute__((visibility("hidden")))

int fhook_libc_sigaction(int sig, const struct sigaction *act, struct sigaction *old) __util_hidden;
/* The mask as given, SIGTRAP included: the caller decides (see text_poke.c). */
int fhook_libc_sigmask(int how, const sigset_t *set, sigset_t *old) __util_hidden;
void *fhook_libc_dlopen(const char *file, int mode) __util_hidden;

#endif /* FHOOK_UTIL_LIBC_H */
