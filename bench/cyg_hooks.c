// SPDX-License-Identifier: LGPL-2.1-or-later
/* Empty -finstrument-functions hooks, built without instrumentation. */
void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void *fn, void *site)
{
	__asm__ volatile("");
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	__asm__ volatile("");
}
