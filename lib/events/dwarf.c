// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * DWARF in the role BTF plays for the kernel's probe events: parameter
 * names and types of the probed function, struct members for "->" and
 * ".", and the fetch type a value gets when none is written.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch_regs.h"
#include "ev.h"

struct ev_dw_def {
	const char *name;	/* DWARF's string: lives as long as the file's Dwarf */
	Dwarf_Off off;		/* the definition's DIE */
};

struct defs_build {
	struct ev_dw_def *v;
	size_t nr, cap;
	bool oom;
};

static int defs_add(struct defs_build *b, const char *name, Dwarf_Die *die)
{
	if (b->nr == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		struct ev_dw_def *v = realloc(b->v, cap * sizeof(*v));

		if (!v) {
			b->oom = true;
			return DWARF_CB_ABORT;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->nr].name = name;
	b->v[b->nr].off = dwarf_dieoffset(die);
	b->nr++;
	return DWARF_CB_OK;
}

static int defs_cb(Dwarf_Die *die, void *arg)
{
	struct defs_build *b = arg;
	const char *name = dwarf_diename(die), *link;
	Dwarf_Attribute at;

	/* the definition, not a declaration or an abstract inline copy only */
	if (dwarf_hasattr(die, DW_AT_declaration))
		return DWARF_CB_OK;
	if (name && defs_add(b, name, die) != DWARF_CB_OK)
		return DWARF_CB_ABORT;
	/* a C++ function is found by its symbol: the linkage name, maybe on its declaration */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) && (link = dwarf_formstring(&at)) &&
	    (!name || strcmp(link, name)))
		return defs_add(b, link, die);
	return DWARF_CB_OK;
}

static int def_cmp(const void *a, const void *b)
{
	const struct ev_dw_def *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	/* the first definition in the file wins a name's ties, as the old walk did */
	return r ? r : (x->off > y->off) - (x->off < y->off);
}

/*
 * Index @f's function definitions once: a glob's thousands of functions
 * each look theirs up, which a walk over every unit would make quadratic.
 */
static void defs_build(struct ev_file *f)
{
	struct defs_build b = { 0 };
	Dwarf_Off off = 0, next;
	size_t hsize;

	f->defs_built = true;
	while (!b.oom && !dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (dwarf_offdie(f->dw, off + hsize, &cu))
			dwarf_getfuncs(&cu, defs_cb, &b, 0);
		off = next;
	}
	if (b.oom) {
		free(b.v);
		return;
	}
	qsort(b.v, b.nr, sizeof(*b.v), def_cmp);
	f->defs = b.v;
	f->nr_defs = b.nr;
}

static bool defs_find(struct ev_file *f, const char *name, Dwarf_Die *out)
{
	size_t lo = 0, hi;

	if (!f->defs_built)
		defs_build(f);
	hi = f->nr_defs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(f->defs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nr_defs && !strcmp(f->defs[lo].name, name) &&
	       dwarf_offdie(f->dw, f->defs[lo].off, out) != NULL;
}

int ev_dw_find_func(struct fhook_event_prog *prog, const char *mod, const char *name,
		    struct ev_dw_func *fn)
{
	Dwarf_Attribute at;
	Dwarf_Die child;
	bool found = false;
	int i, file = -1;

	ev_prog_dwarf(prog);
	/* the file whose symbol it is, where there is one: its DWARF or none */
	if (ev_prog_find_in(prog, mod, name, true, &file)) {
		struct ev_file *f = &prog->files[file];

		if (!f->dw)
			return -ENODATA;
		found = defs_find(f, name, &fn->die);
	}
	for (i = 0; i < prog->nr_files && !found && file < 0; i++) {
		struct ev_file *f = &prog->files[i];

		if (!f->dw || (mod && !ev_file_is(f, mod)))
			continue;
		found = defs_find(f, name, &fn->die);
	}
	if (!found)
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
 * register (0 to FHOOK_NR_REG_ARGS - 1), a stack slot (FHOOK_NR_REG_ARGS
 * and up) or FHOOK_EV_ARG_XMM + n; -1 when an aggregate before it mixes
 * classes (its eightbytes are not followed).  AAPCS64 (aarch64) passes
 * scalars and integer aggregates of up to 16 bytes the same way, with
 * eight registers of each kind; its aggregates of floating-point
 * members and its larger ones (by reference) are not followed.
 */
int ev_dw_param_loc(struct ev_dw_func *fn, int i)
{
	int ints = 0, sse = 0, stack = 0, k, words, cls;
	Dwarf_Die type;

	/* a struct returned in memory: its address may take the first register */
	if (FHOOK_ABI_SRET_TAKES_ARG && !fn->returns_void &&
	    classify(&fn->ret_type, &words) == CLS_MEM)
		ints = 1;
	for (k = 0; k <= i; k++) {
		int loc;

		if (!ev_dw_param(fn, k, &type) && !type.addr && k == i)
			memset(&type, 0, sizeof(type));
		cls = classify(&type, &words);
		if (cls == CLS_MIXED)
			return -1;
		if (cls == CLS_INT && ints + words <= FHOOK_NR_REG_ARGS) {
			loc = ints;
			ints += words;
		} else if (cls == CLS_SSE && sse + words <= 8) {
			loc = FHOOK_EV_ARG_XMM + sse;
			sse += words;
		} else {
			loc = FHOOK_NR_REG_ARGS + stack;
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
