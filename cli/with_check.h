/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FHOOK_CLI_WITH_CHECK_H
#define FHOOK_CLI_WITH_CHECK_H

#include <stddef.h>

/*
 * Is @name in the shared object @lib a function fhook may send calls to
 * (STT_FUNC or STT_GNU_IFUNC, in an executable section)?  Reads the file
 * only.  0 if so, or if @lib does not export it (dlsym will say); else a
 * negative errno with the reason in @why.
 */
int lp_check_with(const char *lib, const char *name, char *why, size_t size);

#endif
