// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library loaded after kpgone_a.so went, likely at its address: the
 * same layout, other first bytes (test_kprobe_gone).
 */
int gone_fn(int x)
{
	return x - 7;
}
