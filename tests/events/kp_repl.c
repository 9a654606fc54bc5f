// SPDX-License-Identifier: LGPL-2.1-or-later
/* A replacement for kp_prog's kp_add (fhook patch), built without fhook's flags. */
long kp_add_v2(long a, long b)
{
	return 1000 * a + b;
}
