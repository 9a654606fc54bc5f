// SPDX-License-Identifier: GPL-2.0
/*
 * The same client under another module name, so that the test can ask
 * for a second redirect of the same target and see the IPMODIFY -EBUSY.
 */
#include "fhook_memevents.c"
