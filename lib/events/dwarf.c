// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * DWARF in the role BTF plays for the kernel's probe events: parameter
 * names and types of the probed function, struct members for "->" and
 * ".", and the fetch type a value gets when none is written.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <errno.h>
#include <string.h>

#include "ev.h"

struct find_arg {
	const char *name;
	Dwarf_Die *out;
	bool found;
};

static int find_cb(Dwarf_Die *die, void *arg)
{
	struct find_arg *fa = arg;
	const char *name = dwarf_diename(die);
	Dwarf_Attribute at;

	/* a C++ function is found by its symbol: the linkage name, maybe on its declaration */
	if ((!name || strcmp(name, fa->name)) &&
	    (!dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	     !(name = dwarf_formstring(&at)) || strcmp(name, fa->name)))
		return DWARF_CB_OK;
	/* the definition, not a declaration or an abstract inline copy only */
	if (dwarf_hasattr(die, DW_AT_declaration))
		return DWARF_CB_OK;
	*fa->out = *die;
	fa->found = true;
	return DWARF_CB_ABORT;
}

int ev_dw_find_func(struct fhook_event_prog *prog, const char *mod, const char *name,
		    struct ev_dw_func *fn)
{
	struct find_arg fa = { .name = name, .out = &fn->die };
	Dwarf_Attribute at;
	Dwarf_Die child;
	int i;

	ev_prog_dwarf(prog);
	for (i = 0; i < prog->nr_files && !fa.found; i++) {
		Dwarf *dw = prog->files[i].dw;
		Dwarf_Off off = 0, next;
		size_t hsize;

		if (!dw || (mod && !ev_file_is(&prog->files[i], mod)))
			continue;
		while (!fa.found && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
			Dwarf_Die cu;

			if (dwarf_offdie(dw, off + hsize, &cu))
				dwarf_getfuncs(&cu, find_cb, &fa, 0);
			off = next;
		}
	}
	if (!fa.found)
		return -ENOENT;
	fn->nr_params = 0;
	if (dwarf_child(&fn->die, &child) == 0) {
		do {
			if (dwarf_tag(&child) == DW_TAG_formal_parameter)
				fn->nr_params++;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	fn->returns_void = !dwarf_attr_integrate(&fn->die, DW_AT_type, &at) ||
			   !dwarf_formref_die(&at, &fn->ret_type);
	return 0;
}

const char *ev_dw_param(struct ev_dw_func *fn, int i, Dwarf_Die *type)
{
	Dwarf_Attribute at;
	Dwarf_Die child;
	int n = 0;

	if (dwarf_child(&fn->die, &child))
		return NULL;
	do {
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		if (n++ != i)
			continue;
		if (!dwarf_attr_integrate(&child, DW_AT_type, &at) || !dwarf_formref_die(&at, type))
			memset(type, 0, sizeof(*type));
		return dwarf_diename(&child);
	} while (dwarf_siblingof(&child, &child) == 0);
	return NULL;
}

bool ev_dw_peel(Dwarf_Die *type)
{
	Dwarf_Die t;

	if (!type->addr)
		return false;
	if (dwarf_peel_type(type, &t) != 0)
		return false;
	*type = t;
	return dwarf_tag(type) != DW_TAG_unspecified_type;
}

static bool target_of(Dwarf_Die *t, Dwarf_Die *target)
{
	Dwarf_Attribute at;

	if (!dwarf_attr_integrate(t, DW_AT_type, &at) || !dwarf_formref_die(&at, target)) {
		memset(target, 0, sizeof(*target));	/* void */
		return false;
	}
	return true;
}

bool ev_dw_is_ptr(Dwarf_Die *t, Dwarf_Die *target)
{
	if (!t->addr || dwarf_tag(t) != DW_TAG_pointer_type)
		return false;
	target_of(t, target);
	return true;
}

bool ev_dw_is_struct(Dwarf_Die *t)
{
	int tag = t->addr ? dwarf_tag(t) : 0;

	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_class_type;
}

bool ev_dw_is_char(Dwarf_Die *t)
{
	Dwarf_Attribute at;
	Dwarf_Word enc;

	if (!t->addr || dwarf_tag(t) != DW_TAG_base_type || dwarf_bytesize(t) != 1)
		return false;
	if (!dwarf_attr(t, DW_AT_encoding, &at) || dwarf_formudata(&at, &enc))
		return false;
	return enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char;
}

bool ev_dw_is_char_array(Dwarf_Die *t)
{
	Dwarf_Die elem;

	if (!t->addr || dwarf_tag(t) != DW_TAG_array_type)
		return false;
	if (!target_of(t, &elem) || !ev_dw_peel(&elem))
		return false;
	return ev_dw_is_char(&elem);
}

bool ev_dw_member(Dwarf_Die *su, const char *name, Dwarf_Die *mtype,
		  unsigned long *bitoffs, unsigned int *bitsize)
{
	Dwarf_Die child;

	if (dwarf_child(su, &child))
		return false;
	do {
		Dwarf_Attribute at;
		Dwarf_Word loc = 0, bs = 0, dbo;
		const char *mname;
		Dwarf_Die t;

		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		if (dwarf_attr(&child, DW_AT_data_member_location, &at))
			dwarf_formudata(&at, &loc);
		mname = dwarf_diename(&child);
		if (!target_of(&child, &t))
			continue;
		if (!mname) {
			/* an anonymous struct or union: its members are ours */
			Dwarf_Die inner = t;
			unsigned long io;

			if (ev_dw_peel(&inner) && ev_dw_is_struct(&inner) &&
			    ev_dw_member(&inner, name, mtype, &io, bitsize)) {
				*bitoffs = loc * 8 + io;
				return true;
			}
			continue;
		}
		if (strcmp(mname, name))
			continue;
		*mtype = t;
		*bitoffs = loc * 8;
		*bitsize = 0;
		if (dwarf_attr(&child, DW_AT_bit_size, &at) && !dwarf_formudata(&at, &bs) && bs) {
			*bitsize = bs;
			if (dwarf_attr(&child, DW_AT_data_bit_offset, &at) &&
			    !dwarf_formudata(&at, &dbo))
				*bitoffs = dbo;
		}
		return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

int ev_dw_fetch_type(Dwarf_Die *t)
{
	Dwarf_Attribute at;
	Dwarf_Word enc = 0;
	int size, tag;

	if (!t->addr)
		return FHOOK_EVT_X64;
	tag = dwarf_tag(t);
	size = dwarf_bytesize(t);
	if (tag == DW_TAG_base_type) {
		if (dwarf_attr(t, DW_AT_encoding, &at))
			dwarf_formudata(&at, &enc);
		if (enc == DW_ATE_float)
			return size == 4 ? FHOOK_EVT_F32 : size == 8 ? FHOOK_EVT_F64 : FHOOK_EVT_X64;
		bool sign = enc == DW_ATE_signed || enc == DW_ATE_signed_char;

		switch (size) {
		case 1: return sign ? FHOOK_EVT_S8 : FHOOK_EVT_U8;
		case 2: return sign ? FHOOK_EVT_S16 : FHOOK_EVT_U16;
		case 4: return sign ? FHOOK_EVT_S32 : FHOOK_EVT_U32;
		case 8: return sign ? FHOOK_EVT_S64 : FHOOK_EVT_U64;
		}
	}
	if (tag == DW_TAG_enumeration_type) {
		switch (size) {
		case 1: return FHOOK_EVT_U8;
		case 2: return FHOOK_EVT_U16;
		case 4: return FHOOK_EVT_U32;
		}
		return FHOOK_EVT_U64;
	}
	return FHOOK_EVT_X64;
}

enum { CLS_NONE, CLS_INT, CLS_SSE, CLS_MEM, CLS_MIXED };

/* Does an aggregate hold floating-point members, integer ones, or both? */
static void members_kind(Dwarf_Die *t, bool *has_float, bool *has_int, int depth)
{
	Dwarf_Die child, mt;
	Dwarf_Attribute at;

	if (depth > 8 || dwarf_child(t, &child))
		return;
	do {
		Dwarf_Word enc = 0;

		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		if (!dwarf_attr_integrate(&child, DW_AT_type, &at) || !dwarf_formref_die(&at, &mt) ||
		    dwarf_peel_type(&mt, &mt))
			continue;
		switch (dwarf_tag(&mt)) {
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_class_type:
			members_kind(&mt, has_float, has_int, depth + 1);
			break;
		case DW_TAG_array_type:
			/* an array of floats or of integers: its element decides */
			if (dwarf_attr_integrate(&mt, DW_AT_type, &at) && dwarf_formref_die(&at, &mt) &&
			    !dwarf_peel_type(&mt, &mt) && dwarf_tag(&mt) == DW_TAG_base_type &&
			    dwarf_attr(&mt, DW_AT_encoding, &at) && !dwarf_formudata(&at, &enc) &&
			    enc == DW_ATE_float)
				*has_float = true;
			else
				*has_int = true;
			break;
		case DW_TAG_base_type:
			if (dwarf_attr(&mt, DW_AT_encoding, &at) && !dwarf_formudata(&at, &enc) &&
			    enc == DW_ATE_float)
				*has_float = true;
			else
				*has_int = true;
			break;
		default:
			*has_int = true;
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The ABI class of a value of @t and the eightbytes it takes. */
static int classify(Dwarf_Die *type, int *words)
{
	Dwarf_Attribute at;
	Dwarf_Word enc = 0;
	Dwarf_Die t = *type;
	int size, tag;

	*words = 1;
	if (!t.addr || dwarf_peel_type(&t, &t))
		return CLS_INT;
	tag = dwarf_tag(&t);
	size = dwarf_bytesize(&t);
	if (size > 0)
		*words = (size + 7) / 8;
	switch (tag) {
	case DW_TAG_base_type:
		if (dwarf_attr(&t, DW_AT_encoding, &at))
			dwarf_formudata(&at, &enc);
		if (enc == DW_ATE_float)
			return size <= 8 ? CLS_SSE : CLS_MEM;	/* long double: x87, in memory */
		if (enc == DW_ATE_complex_float)
			return size <= 16 ? CLS_SSE : CLS_MEM;
		return CLS_INT;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type: {
		bool f = false, i = false;

		if (size > 16 || size <= 0)
			return CLS_MEM;
		members_kind(&t, &f, &i, 0);
		return f && i ? CLS_MIXED : f ? CLS_SSE : CLS_INT;
	}
	default:
		return CLS_INT;	/* pointers, enums, references */
	}
}

/*
 * Where the SysV x86-64 ABI passes parameter @i of @fn: an integer
 * register (0-5), a stack slot (6 and up) or FHOOK_EV_ARG_XMM + n; -1 when
 * an aggregate before it mixes classes (its eightbytes are not followed).
 */
int ev_dw_param_loc(struct ev_dw_func *fn, int i)
{
	int ints = 0, sse = 0, stack = 0, k, words, cls;
	Dwarf_Die type;

	/* a struct returned in memory: its address goes in %rdi first */
	if (!fn->returns_void && classify(&fn->ret_type, &words) == CLS_MEM)
		ints = 1;
	for (k = 0; k <= i; k++) {
		int loc;

		if (!ev_dw_param(fn, k, &type) && !type.addr && k == i)
			memset(&type, 0, sizeof(type));
		cls = classify(&type, &words);
		if (cls == CLS_MIXED)
			return -1;
		if (cls == CLS_INT && ints + words <= 6) {
			loc = ints;
			ints += words;
		} else if (cls == CLS_SSE && sse + words <= 8) {
			loc = FHOOK_EV_ARG_XMM + sse;
			sse += words;
		} else {
			loc = 6 + stack;
			stack += words;
		}
		if (k == i)
			return loc;
	}
	return -1;
}

/* Is @t (peeled) a floating-point type returned in %xmm0? */
bool ev_dw_is_sse(Dwarf_Die *t)
{
	int words;

	return classify(t, &words) == CLS_SSE;
}
