// SPDX-License-Identifier: LGPL-2.1-or-later
/* A library built without fhook flags, unloaded under a probe (test_kprobe_gone). */
int gone_fn(int x)
{
	return x * 3 + 1;
}
