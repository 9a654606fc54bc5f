// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fetch types of fprobe events: what both the traced process (which
 * copies values of these sizes) and the command (which parses and prints
 * them) need.
 */
#include <stdbool.h>

#include <fhook/internal/events.h>

static const struct {
	const char *name;
	unsigned char size;
} ev_types[FHOOK_EVT_NR] = {
	[FHOOK_EVT_U8] = { "u8", 1 },	[FHOOK_EVT_U16] = { "u16", 2 },
	[FHOOK_EVT_U32] = { "u32", 4 },	[FHOOK_EVT_U64] = { "u64", 8 },
	[FHOOK_EVT_S8] = { "s8", 1 },	[FHOOK_EVT_S16] = { "s16", 2 },
	[FHOOK_EVT_S32] = { "s32", 4 },	[FHOOK_EVT_S64] = { "s64", 8 },
	[FHOOK_EVT_X8] = { "x8", 1 },	[FHOOK_EVT_X16] = { "x16", 2 },
	[FHOOK_EVT_X32] = { "x32", 4 },	[FHOOK_EVT_X64] = { "x64", 8 },
	[FHOOK_EVT_CHAR] = { "char", 1 }, [FHOOK_EVT_SYMBOL] = { "symbol", 8 },
	[FHOOK_EVT_STRING] = { "string", 4 }, [FHOOK_EVT_USTRING] = { "ustring", 4 },
	[FHOOK_EVT_SYMSTR] = { "symstr", 4 },
	[FHOOK_EVT_F32] = { "f32", 4 }, [FHOOK_EVT_F64] = { "f64", 8 },
};

unsigned int fhook_ev_type_size(int type)
{
	return type >= 0 && type < FHOOK_EVT_NR ? ev_types[type].size : 0;
}

bool fhook_ev_type_is_string(int type)
{
	return type == FHOOK_EVT_STRING || type == FHOOK_EVT_USTRING || type == FHOOK_EVT_SYMSTR;
}

const char *fhook_ev_type_name(int type)
{
	return type >= 0 && type < FHOOK_EVT_NR ? ev_types[type].name : "?";
}
