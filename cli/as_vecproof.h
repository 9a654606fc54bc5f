/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FHOOK_CLI_AS_VECPROOF_H
#define FHOOK_CLI_AS_VECPROOF_H

/*
 * Add to the object at @path the note of its functions that leave the
 * vector registers alone (lib/arch/x86_64/vecnote.h).  0 also when there
 * is nothing to add; the object is unchanged unless it returns 0.
 */
int as_vecproof(const char *path);

#endif
