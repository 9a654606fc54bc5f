// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fprobe-event and kprobe-event grammars, their error messages and
 * their positions, after the kernel's trace_fprobe.c, trace_kprobe.c and
 * trace_probe.c (6.12): the same order of checks, so that a definition the
 * kernel refuses is refused here with the same message at the same column.
 *
 * A definition is split into words (argv) as the kernel's argv_split()
 * does; an error is logged against a word (the log index) and an offset in
 * it, and its position in the command is the offset plus the lengths of
 * the words before it plus one blank each.  An index past the last word
 * puts the caret one past the end of the command.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/ftrace.h>

#include "ev.h"

/* The kernel's ERRORS list: the messages users will search the web for. */
enum {
	E_BAD_MAXACT_TYPE, E_BAD_MAXACT, E_MAXACT_TOO_BIG, E_BAD_PROBE_ADDR,
	E_BAD_ADDR_SUFFIX, E_NO_GROUP_NAME, E_GROUP_TOO_LONG, E_BAD_GROUP_NAME,
	E_NO_EVENT_NAME, E_EVENT_TOO_LONG, E_BAD_EVENT_NAME, E_EVENT_EXIST,
	E_RETVAL_ON_PROBE, E_NO_RETVAL, E_BAD_STACK_NUM, E_BAD_ARG_NUM, E_BAD_VAR,
	E_BAD_REG_NAME, E_BAD_MEM_ADDR, E_BAD_IMM, E_IMMSTR_NO_CLOSE,
	E_FILE_ON_KPROBE, E_TOO_MANY_OPS, E_DEREF_NEED_BRACE, E_BAD_DEREF_OFFS,
	E_DEREF_OPEN_BRACE, E_COMM_CANT_DEREF, E_BAD_FETCH_ARG, E_ARRAY_NO_CLOSE,
	E_BAD_ARRAY_SUFFIX, E_BAD_ARRAY_NUM, E_ARRAY_TOO_BIG, E_BAD_TYPE,
	E_BAD_STRING, E_BAD_SYMSTRING, E_BAD_BITFIELD, E_ARG_NAME_TOO_LONG,
	E_NO_ARG_NAME, E_BAD_ARG_NAME, E_USED_ARG_NAME, E_ARG_TOO_LONG,
	E_NO_ARG_BODY, E_FAIL_REG_PROBE, E_NOSUP_BTFARG, E_NO_BTFARG,
	E_NO_BTF_ENTRY, E_BAD_VAR_ARGS, E_DOUBLE_ARGS, E_ARGS_2LONG,
	E_ARGIDX_2BIG, E_NO_PTR_STRCT, E_NOSUP_DAT_ARG, E_BAD_HYPHEN,
	E_NO_BTF_FIELD, E_BAD_TYPE4STR, E_NEED_STRING_TYPE, E_TOO_MANY_ARGS,
	E_BAD_RETPROBE, E_BAD_INSN_BNDRY, E_NOFENTRY_ARGS,
	E_NOT_FPROBE, E_NO_SUCH_EVENT,
};

static const char *const ev_err_text[] = {
	[E_BAD_MAXACT_TYPE]	= "Maxactive is only for function exit",
	[E_BAD_MAXACT]		= "Invalid maxactive number",
	[E_MAXACT_TOO_BIG]	= "Maxactive is too big",
	[E_BAD_PROBE_ADDR]	= "Invalid probed address or symbol",
	[E_BAD_ADDR_SUFFIX]	= "Invalid probed address suffix",
	[E_NO_GROUP_NAME]	= "Group name is not specified",
	[E_GROUP_TOO_LONG]	= "Group name is too long",
	[E_BAD_GROUP_NAME]	= "Group name must follow the same rules as C identifiers",
	[E_NO_EVENT_NAME]	= "Event name is not specified",
	[E_EVENT_TOO_LONG]	= "Event name is too long",
	[E_BAD_EVENT_NAME]	= "Event name must follow the same rules as C identifiers",
	[E_EVENT_EXIST]		= "Given group/event name is already used by another event",
	[E_RETVAL_ON_PROBE]	= "$retval is not available on probe",
	[E_NO_RETVAL]		= "This function returns 'void' type",
	[E_BAD_STACK_NUM]	= "Invalid stack number",
	[E_BAD_ARG_NUM]		= "Invalid argument number",
	[E_BAD_VAR]		= "Invalid $-variable specified",
	[E_BAD_REG_NAME]	= "Invalid register name",
	[E_BAD_MEM_ADDR]	= "Invalid memory address",
	[E_BAD_IMM]		= "Invalid immediate value",
	[E_IMMSTR_NO_CLOSE]	= "String is not closed with '\"'",
	[E_FILE_ON_KPROBE]	= "File offset is not available with kprobe",
	[E_TOO_MANY_OPS]	= "Dereference is too much nested",
	[E_DEREF_NEED_BRACE]	= "Dereference needs a brace",
	[E_BAD_DEREF_OFFS]	= "Invalid dereference offset",
	[E_DEREF_OPEN_BRACE]	= "Dereference brace is not closed",
	[E_COMM_CANT_DEREF]	= "$comm can not be dereferenced",
	[E_BAD_FETCH_ARG]	= "Invalid fetch argument",
	[E_ARRAY_NO_CLOSE]	= "Array is not closed",
	[E_BAD_ARRAY_SUFFIX]	= "Array has wrong suffix",
	[E_BAD_ARRAY_NUM]	= "Invalid array size",
	[E_ARRAY_TOO_BIG]	= "Array number is too big",
	[E_BAD_TYPE]		= "Unknown type is specified",
	[E_BAD_STRING]		= "String accepts only memory argument",
	[E_BAD_SYMSTRING]	= "Symbol String doesn't accept data/userdata",
	[E_BAD_BITFIELD]	= "Invalid bitfield",
	[E_ARG_NAME_TOO_LONG]	= "Argument name is too long",
	[E_NO_ARG_NAME]		= "Argument name is not specified",
	[E_BAD_ARG_NAME]	= "Argument name must follow the same rules as C identifiers",
	[E_USED_ARG_NAME]	= "This argument name is already used",
	[E_ARG_TOO_LONG]	= "Argument expression is too long",
	[E_NO_ARG_BODY]		= "No argument expression",
	[E_FAIL_REG_PROBE]	= "Failed to register probe event",
	[E_NOSUP_BTFARG]	= "BTF is not available or not supported",
	[E_NO_BTFARG]		= "This variable is not found at this probe point",
	[E_NO_BTF_ENTRY]	= "No BTF entry for this probe point",
	[E_BAD_VAR_ARGS]	= "$arg* must be an independent parameter without name etc.",
	[E_DOUBLE_ARGS]		= "$arg* can be used only once in the parameters",
	[E_ARGS_2LONG]		= "$arg* failed because the argument list is too long",
	[E_ARGIDX_2BIG]		= "$argN index is too big",
	[E_NO_PTR_STRCT]	= "This is not a pointer to union/structure.",
	[E_NOSUP_DAT_ARG]	= "Non pointer structure/union argument is not supported.",
	[E_BAD_HYPHEN]		= "Failed to parse single hyphen. Forgot '>'?",
	[E_NO_BTF_FIELD]	= "This field is not found.",
	[E_BAD_TYPE4STR]	= "This type does not fit for string.",
	[E_NEED_STRING_TYPE]	= "$comm and immediate-string only accepts string type",
	[E_TOO_MANY_ARGS]	= "Too many arguments are specified",
	[E_BAD_RETPROBE]	= "Retprobe address must be an function entry",
	[E_BAD_INSN_BNDRY]	= "Probe point is not an instruction boundary",
	[E_NOFENTRY_ARGS]	= "$arg* can be used only on function entry or exit",
	/* fhook's own: the kernel hands these to another dynamic event type */
	[E_NOT_FPROBE]		= "Only fprobe ('f') and kprobe ('p', 'r') events are supported",
	[E_NO_SUCH_EVENT]	= "No such event to remove",
};

/* the kernel has 128 bytes: a glob over C++ code meets functions whose names need more */
#define MAX_BTF_ARGS_LEN	2048
#define MAX_WORDS		(FHOOK_EV_MAX_TRACE_ARGS + 64)

struct ev_ctx {
	/* the log */
	char **argv;
	int argc;
	int index;
	struct fhook_event_error *err;
	bool logged;
	/* the parse */
	struct fhook_event_prog *prog;
	struct fhook_event *ev;
	bool is_return;
	bool kprobe;		/* a 'p' or 'r' event */
	bool fentry;		/* a kprobe on a function's first byte: $argN reads */
	int offset;		/* of the current sub-expression in its word */
	/* DWARF state, like the kernel's BTF fields of traceprobe_parse_context */
	bool fn_looked_up;
	int fn_status;		/* 0, or an E_* */
	struct ev_dw_func fn;
	bool have_type;
	int star, star_n;	/* $arg*'s word, and the words it became */
	/*
	 * Each rewritten word's name and how much shorter it is than the
	 * "$argN" it replaced (-1: a word of $arg*): a caret past the name
	 * points into what the user wrote.
	 */
	int *name_len, *shorter;
	int word_name_len, word_shorter;
	Dwarf_Die last_type;
	unsigned int last_bitoffs, last_bitsize;
};

static bool kprobe_at_addr(const struct fhook_event *ev)
{
	return ev->kprobe && !ev->module && isdigit((unsigned char)ev->symbol[0]);
}

/*
 * DWARF plays BTF's part: for fprobe events, and for kprobe events on a
 * function's entry or return by its name, as the kernel gives kprobes
 * BTF there.  Inside a function, or at an address, registers as they are.
 */
static bool use_dwarf(struct ev_ctx *c)
{
	if (!c->prog)
		return false;
	if (c->kprobe && (!(c->fentry || c->is_return) || !c->ev->symbol ||
			  kprobe_at_addr(c->ev)))
		return false;
	return ev_prog_dwarf(c->prog);
}

static void log_err(struct ev_ctx *c, int offset, int e)
{
	int i, len = 0, pos = 0;
	char *p;

	if (c->logged || !c->err)
		return;
	c->logged = true;
	for (i = 0; i < c->argc; i++) {
		if (i == c->index)
			pos = len;
		len += strlen(c->argv[i]) + 1;
	}
	if (c->index >= c->argc) {
		/* past the last word: one past the command's end */
		pos = len;
		offset = 0;
	}
	if (c->word_shorter < 0)
		offset = 0;
	else if (c->word_shorter && offset >= c->word_name_len)
		offset += c->word_shorter;
	p = c->err->command;
	*p = 0;
	for (i = 0; i < c->argc; i++) {
		size_t room = sizeof(c->err->command) - (p - c->err->command);

		p += snprintf(p, room, "%s%s", i ? " " : "", c->argv[i]);
		if (p >= c->err->command + sizeof(c->err->command))
			break;
	}
	c->err->msg = ev_err_text[e];
	c->err->pos = pos + offset;
}

static bool is_good_name(const char *name)
{
	if (!isalpha((unsigned char)*name) && *name != '_')
		return false;
	while (*++name)
		if (!isalnum((unsigned char)*name) && *name != '_')
			return false;
	return true;
}

/* kstrtoul()/kstrtol() semantics: whole string, base 0 or given, no '+' for unsigned */
static int k_strtoul(const char *s, int base, unsigned long *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int k_strtol(const char *s, int base, long *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s) || *s == '+')
		return -EINVAL;
	errno = 0;
	*out = strtol(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int k_strtouint(const char *s, int base, unsigned int *out)
{
	unsigned long v;

	if (k_strtoul(s, base, &v) || v > UINT_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- types ------------------------------------------------------------ */

/* find_fetch_type(): NULL means the default, x64; -1 for an unknown type */
static int find_fetch_type(const char *t)
{
	int i;

	if (!t)
		return FHOOK_EVT_X64;
	if (*t == 'b') {
		unsigned long bs;
		const char *slash = strchr(t, '/');

		if (!slash || k_strtoul(slash + 1, 0, &bs))
			return -1;
		switch (bs) {
		case 8: return FHOOK_EVT_U8;
		case 16: return FHOOK_EVT_U16;
		case 32: return FHOOK_EVT_U32;
		case 64: return FHOOK_EVT_U64;
		}
		return -1;
	}
	for (i = 0; i < FHOOK_EVT_NR; i++)
		if (!strcmp(t, fhook_ev_type_name(i)))
			return i;
	return -1;
}

/* ---- DWARF ("BTF") arguments ------------------------------------------ */

/* Look the probed function up once (the kernel's query_btf_context()). */
static int query_dwarf(struct ev_ctx *c)
{
	int r;

	if (!c->fn_looked_up) {
		c->fn_looked_up = true;
		if (!use_dwarf(c))
			c->fn_status = E_NOSUP_BTFARG;
		else if (c->ev->nr_targets != 1 && c->ev->is_glob)
			c->fn_status = E_NO_BTF_ENTRY;
		else if ((r = ev_dw_find_func(c->prog, c->ev->module,
					      c->ev->nr_targets == 1 ? c->ev->targets[0] :
					      c->ev->symbol, &c->fn)))
			/* the kernel's words for a function it has no BTF for at all */
			c->fn_status = r == -ENODATA ? E_NOSUP_BTFARG : E_NO_BTF_ENTRY;
		else
			c->fn_status = 0;
	}
	return c->fn_status;
}

/*
 * Split "a->b.c" at the first "->" or '.': returns 1 for "->", 0 for '.'
 * or the end, <0 (logged) for a lone '-'.
 */
static int split_next_field(struct ev_ctx *c, char *s, char **next)
{
	char *p = strpbrk(s, ".-");

	*next = NULL;
	if (!p)
		return 0;
	if (*p == '-') {
		if (p[1] != '>') {
			log_err(c, c->offset + (p - s), E_BAD_HYPHEN);
			return -EINVAL;
		}
		*p = 0;
		*next = p + 2;
		return 1;
	}
	*p = 0;
	*next = p + 1;
	return 0;
}

static struct fhook_fetch_insn *next_code(struct ev_ctx *c, struct fhook_fetch_insn **pcode,
					  struct fhook_fetch_insn *end)
{
	if (++*pcode == end) {
		log_err(c, c->offset, E_TOO_MANY_OPS);
		return NULL;
	}
	return *pcode;
}

/* Walk "->f.g->h" from the pointer type in c->last_type. */
static int parse_dw_field(struct ev_ctx *c, char *field, struct fhook_fetch_insn **pcode,
			  struct fhook_fetch_insn *end)
{
	Dwarf_Die type = c->last_type, su, mtype;
	unsigned long bitoffs;
	unsigned int bitsize;
	char *next;
	int is_ptr;

	do {
		if (!ev_dw_is_ptr(&type, &su) || !ev_dw_peel(&su) || !ev_dw_is_struct(&su)) {
			log_err(c, c->offset, E_NO_PTR_STRCT);
			return -EINVAL;
		}
		type = su;
		bitoffs = 0;
		do {
			unsigned long fo;

			is_ptr = split_next_field(c, field, &next);
			if (is_ptr < 0)
				return is_ptr;
			if (!ev_dw_is_struct(&type)) {
				log_err(c, c->offset, E_NO_PTR_STRCT);
				return -EINVAL;
			}
			if (!ev_dw_member(&type, field, &mtype, &fo, &bitsize)) {
				log_err(c, c->offset, E_NO_BTF_FIELD);
				return -ENOENT;
			}
			bitoffs += fo;
			c->last_bitsize = bitsize;
			type = mtype;
			ev_dw_peel(&type);
			if (next)
				c->offset += next - field;
			field = next;
		} while (!is_ptr && field);
		if (!next_code(c, pcode, end))
			return -EINVAL;
		(*pcode)->op = FHOOK_FOP_DEREF;
		(*pcode)->param = bitoffs / 8;
		c->last_bitoffs = bitoffs % 8;
		c->last_type = type;
	} while (field);
	return 0;
}

/* A parameter name, "$argN" or "$retval", possibly followed by fields. */
static int parse_dw_arg(struct ev_ctx *c, char *varname, struct fhook_fetch_insn **pcode,
			struct fhook_fetch_insn *end)
{
	struct fhook_fetch_insn *code = *pcode;
	char *field = NULL;
	Dwarf_Die type;
	int is_ptr, e, i, param = -1;

	is_ptr = split_next_field(c, varname, &field);
	if (is_ptr < 0)
		return is_ptr;
	if (!is_ptr && field) {
		log_err(c, c->offset + (field - varname), E_NOSUP_DAT_ARG);
		return -EOPNOTSUPP;
	}
	if (!strcmp(varname, "$retval")) {
		code->op = FHOOK_FOP_RETVAL;
		e = query_dwarf(c);
		if (!e) {
			if (c->fn.returns_void) {
				log_err(c, c->offset, E_NO_RETVAL);
				return -ENOENT;
			}
			type = c->fn.ret_type;
			/* a float or double comes back in %xmm0, not %rax */
			if (ev_dw_is_sse(&type))
				code->param = 1;
			goto found;
		}
		if (field) {
			log_err(c, c->offset + (field - varname), E_NO_BTF_ENTRY);
			return -ENOENT;
		}
		return 0;
	}
	e = query_dwarf(c);
	if (e) {
		log_err(c, c->offset, e);
		return -ENOENT;
	}
	if (!strncmp(varname, "$arg", 4)) {
		unsigned long n;

		if (k_strtoul(varname + 4, 10, &n) || !n || n > (unsigned long)c->fn.nr_params) {
			log_err(c, c->offset, E_ARGIDX_2BIG);
			return -ENOENT;
		}
		param = n - 1;
		ev_dw_param(&c->fn, param, &type);
	} else {
		for (i = 0; i < c->fn.nr_params; i++) {
			const char *name = ev_dw_param(&c->fn, i, &type);

			if (name && !strcmp(name, varname)) {
				param = i;
				break;
			}
		}
		if (param < 0) {
			log_err(c, c->offset, E_NO_BTFARG);
			return -ENOENT;
		}
	}
	/* by the ABI's classification: a double is in an SSE register, and later integers move up */
	{
		int loc = ev_dw_param_loc(&c->fn, param);

		if (loc >= 0)
			param = loc;
	}
	if (c->is_return) {
		struct fhook_event *ev = c->ev;

		for (i = 0; i < ev->nr_entry_args; i++)
			if (ev->entry_args[i] == param)
				break;
		if (i == ev->nr_entry_args) {
			if (i == FHOOK_EV_MAX_ENTRY_ARGS) {
				log_err(c, c->offset, E_TOO_MANY_OPS);
				return -E2BIG;
			}
			ev->entry_args[ev->nr_entry_args++] = param;
		}
		code->op = FHOOK_FOP_EDATA;
		code->param = i;
	} else {
		code->op = FHOOK_FOP_ARG;
		code->param = param;
	}
found:
	if (!ev_dw_peel(&type)) {
		/* void: nothing to walk, nothing to type */
		c->have_type = false;
		return 0;
	}
	c->have_type = true;
	c->last_type = type;
	c->last_bitoffs = 0;
	c->last_bitsize = 0;
	if (field) {
		c->offset += field - varname;
		return parse_dw_field(c, field, pcode, end);
	}
	return 0;
}

/* ---- fetch arguments -------------------------------------------------- */

static int add_entry_arg(struct ev_ctx *c, int param)
{
	struct fhook_event *ev = c->ev;
	int i;

	for (i = 0; i < ev->nr_entry_args; i++)
		if (ev->entry_args[i] == param)
			return i;
	if (i == FHOOK_EV_MAX_ENTRY_ARGS)
		return -E2BIG;
	ev->entry_args[ev->nr_entry_args++] = param;
	return i;
}

static int parse_probe_vars(struct ev_ctx *c, char *orig, struct fhook_fetch_insn **pcode,
			    struct fhook_fetch_insn *end)
{
	struct fhook_fetch_insn *code = *pcode;
	char *arg = orig + 1;
	unsigned long param;
	int e = E_BAD_VAR, len;

	if (!strncmp(arg, "retval", 6)) {
		if (!c->is_return) {
			e = E_RETVAL_ON_PROBE;
			goto inval;
		}
		if (!use_dwarf(c)) {
			code->op = FHOOK_FOP_RETVAL;
			return 0;
		}
		return parse_dw_arg(c, orig, pcode, end);
	}
	if (!strncmp(arg, "stack", 5)) {
		len = 5;
		if (!arg[len]) {
			code->op = FHOOK_FOP_STACKP;
			return 0;
		}
		if (isdigit((unsigned char)arg[len])) {
			if (k_strtoul(arg + len, 10, &param))
				goto inval;
			if (param > FHOOK_EV_PARAM_MAX_STACK) {
				e = E_BAD_STACK_NUM;
				goto inval;
			}
			code->op = FHOOK_FOP_STACK;
			code->param = param;
			return 0;
		}
		goto inval;
	}
	if (!strcmp(arg, "comm") || !strcmp(arg, "COMM")) {
		code->op = FHOOK_FOP_COMM;
		return 0;
	}
	if (!strncmp(arg, "arg", 3)) {
		char *f = strpbrk(arg, ".-");
		int slot;

		/* "$argN->field": a DWARF walk from parameter N */
		if (f && use_dwarf(c))
			return parse_dw_arg(c, orig, pcode, end);
		if (k_strtoul(arg + 3, 10, &param))
			goto inval;
		if (!param || param > FHOOK_EV_PARAM_MAX_STACK) {
			e = E_BAD_ARG_NUM;
			goto inval;
		}
		/* a kprobe inside a function: the registers no longer hold them */
		if (c->kprobe && !c->is_return && !c->fentry) {
			e = E_NOFENTRY_ARGS;
			goto inval;
		}
		/* with DWARF, the parameter must exist and gives the type */
		if (use_dwarf(c) && !query_dwarf(c))
			return parse_dw_arg(c, orig, pcode, end);
		if (c->is_return) {
			slot = add_entry_arg(c, param - 1);
			if (slot < 0) {
				log_err(c, c->offset, E_TOO_MANY_OPS);
				return slot;
			}
			code->op = FHOOK_FOP_EDATA;
			code->param = slot;
		} else {
			code->op = FHOOK_FOP_ARG;
			code->param = param - 1;
		}
		return 0;
	}
inval:
	log_err(c, c->offset, e);
	return -EINVAL;
}

/* The names of struct pt_regs' words, in its order (the kernel's x86-64 table). */
static const char *const reg_names[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8",
	"ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
};

_Static_assert(sizeof(reg_names) / sizeof(reg_names[0]) * sizeof(long) ==
	       sizeof(struct pt_regs), "a name for every word of struct pt_regs");

/* regs_query_register_offset(), as an index of words; -EINVAL for no such name */
static int reg_offset(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++)
		if (!strcmp(name, reg_names[i]))
			return (int)i;
	return -EINVAL;
}

static int str_to_immediate(const char *s, unsigned long *imm)
{
	if (isdigit((unsigned char)s[0]))
		return k_strtoul(s, 0, imm);
	if (s[0] == '-')
		return k_strtol(s, 0, (long *)imm);
	if (s[0] == '+')
		return k_strtol(s + 1, 0, (long *)imm);
	return -EINVAL;
}

static int parse_probe_arg(struct ev_ctx *c, char *arg, struct fhook_fetch_insn **pcode,
			   struct fhook_fetch_insn *end)
{
	struct fhook_fetch_insn *code = *pcode;
	int deref = FHOOK_FOP_DEREF;
	unsigned long param;
	long offset = 0;
	char *tmp;
	int ret = 0;

	switch (arg[0]) {
	case '$':
		ret = parse_probe_vars(c, arg, pcode, end);
		code = *pcode;
		break;
	case '%':
		/* fprobes take no registers: the kernel's regs_query_register_offset() fails */
		ret = c->kprobe ? reg_offset(arg + 1) : -EINVAL;
		if (ret < 0) {
			log_err(c, c->offset, E_BAD_REG_NAME);
			return -EINVAL;
		}
		code->op = FHOOK_FOP_REG;
		code->param = ret;
		ret = 0;
		break;
	case '@':
		if (isdigit((unsigned char)arg[1])) {
			if (k_strtoul(arg + 1, 0, &param)) {
				log_err(c, c->offset, E_BAD_MEM_ADDR);
				return -EINVAL;
			}
			code->op = FHOOK_FOP_IMM;
			code->param = param;
		} else if (arg[1] == '+') {
			log_err(c, c->offset, E_FILE_ON_KPROBE);
			return -EINVAL;
		} else {
			/* resolved against the process's symbols when it registers */
			code->op = FHOOK_FOP_SYMBOL;
			code->data = strdup(arg + 1);
			if (!code->data)
				return -ENOMEM;
			if (!next_code(c, &code, end))
				return -EINVAL;
			code->op = FHOOK_FOP_NOP;	/* the resolved address goes here */
		}
		if (!next_code(c, &code, end))
			return -EINVAL;
		*pcode = code;
		code->op = FHOOK_FOP_DEREF;
		code->param = offset;
		break;
	case '+':
	case '-':
		if (arg[1] == 'u') {
			deref = FHOOK_FOP_UDEREF;
			arg[1] = arg[0];
			arg++;
		}
		if (arg[0] == '+')
			arg++;	/* kstrtol() refuses '+' */
		tmp = strchr(arg, '(');
		if (!tmp) {
			log_err(c, c->offset, E_DEREF_NEED_BRACE);
			return -EINVAL;
		}
		*tmp = 0;
		if (k_strtol(arg, 0, &offset)) {
			log_err(c, c->offset, E_BAD_DEREF_OFFS);
			return -EINVAL;
		}
		c->offset += (tmp + 1 - arg) + (arg[0] != '-' ? 1 : 0);
		arg = tmp + 1;
		tmp = strrchr(arg, ')');
		if (!tmp) {
			log_err(c, c->offset + strlen(arg), E_DEREF_OPEN_BRACE);
			return -EINVAL;
		}
		*tmp = 0;
		ret = parse_probe_arg(c, arg, &code, end);
		if (ret)
			return ret;
		if (code->op == FHOOK_FOP_COMM || code->op == FHOOK_FOP_DATA) {
			log_err(c, c->offset, E_COMM_CANT_DEREF);
			return -EINVAL;
		}
		if (!next_code(c, &code, end))
			return -EINVAL;
		*pcode = code;
		code->op = deref;
		code->param = offset;
		/* the DWARF type does not follow a raw dereference */
		c->have_type = false;
		break;
	case '\\':
		if (arg[1] == '"') {
			size_t len = strlen(arg + 2);

			if (!len || arg[2 + len - 1] != '"') {
				log_err(c, c->offset + 2 + len, E_IMMSTR_NO_CLOSE);
				return -EINVAL;
			}
			code->op = FHOOK_FOP_DATA;
			code->data = strndup(arg + 2, len - 1);
			if (!code->data)
				return -ENOMEM;
		} else {
			if (str_to_immediate(arg + 1, &param)) {
				log_err(c, c->offset + 1, E_BAD_IMM);
				return -EINVAL;
			}
			code->op = FHOOK_FOP_IMM;
			code->param = param;
		}
		break;
	default:
		if (isalpha((unsigned char)arg[0]) || arg[0] == '_') {
			/* a parameter name: DWARF, where the kernel has BTF */
			if (!use_dwarf(c)) {
				log_err(c, c->offset, E_NOSUP_BTFARG);
				return -EINVAL;
			}
			ret = parse_dw_arg(c, arg, pcode, end);
			code = *pcode;
		}
		break;
	}
	if (!ret && code->op == FHOOK_FOP_NOP) {
		log_err(c, c->offset, E_BAD_FETCH_ARG);
		return -EINVAL;
	}
	return ret;
}

/* "b<width>@<offset>/<size>" */
static int parse_bitfield(const char *bf, int type, struct fhook_fetch_insn **pcode,
			  struct fhook_fetch_insn *end)
{
	unsigned long bw, bo, bits = fhook_ev_type_size(type) * 8;
	char *tail;

	if (*bf != 'b')
		return 0;
	bw = strtoul(bf + 1, &tail, 0);
	if (bw == 0 || *tail != '@')
		return -EINVAL;
	bf = tail + 1;
	bo = strtoul(bf, &tail, 0);
	if (tail == bf || *tail != '/')
		return -EINVAL;
	if (++*pcode == end)
		return -EINVAL;
	(*pcode)->op = FHOOK_FOP_MOD_BF;
	(*pcode)->lshift = bits - (bw + bo);
	(*pcode)->rshift = bits - bw;
	(*pcode)->basesize = bits / 8;
	return bits < bw + bo ? -EINVAL : 0;
}

static bool last_is_deref(const struct fhook_fetch_insn *code)
{
	return code->op == FHOOK_FOP_DEREF || code->op == FHOOK_FOP_UDEREF;
}

static int parse_probe_arg_body(struct ev_ctx *c, const char *argv, struct fhook_event_arg *parg)
{
	struct fhook_fetch_insn *code, *end;
	char *arg, *t = NULL, *t2, *t3;
	int ret = -EINVAL, type_offs, len;

	len = strlen(argv);
	if (len > FHOOK_EV_MAX_ARGSTR_LEN) {
		log_err(c, c->offset, E_ARG_TOO_LONG);
		return -EINVAL;
	}
	if (len == 0) {
		log_err(c, c->offset, E_NO_ARG_BODY);
		return -EINVAL;
	}
	arg = strdup(argv);
	parg->comm = strdup(argv);
	if (!arg || !parg->comm) {
		free(arg);
		return -ENOMEM;
	}

	/* the type */
	t = strchr(arg, ':');
	if (t) {
		*t++ = 0;
		t2 = strchr(t, '[');
		if (t2) {
			*t2++ = 0;
			t3 = strchr(t2, ']');
			if (!t3) {
				log_err(c, c->offset + (t2 + strlen(t2) - arg), E_ARRAY_NO_CLOSE);
				goto out;
			}
			if (t3[1]) {
				log_err(c, c->offset + (t3 + 1 - arg), E_BAD_ARRAY_SUFFIX);
				goto out;
			}
			*t3 = 0;
			if (k_strtouint(t2, 0, &parg->count) || !parg->count) {
				log_err(c, c->offset + (t2 - arg), E_BAD_ARRAY_NUM);
				goto out;
			}
			if (parg->count > FHOOK_EV_MAX_ARRAY_LEN) {
				log_err(c, c->offset + (t2 - arg), E_ARRAY_TOO_BIG);
				goto out;
			}
		}
	}
	type_offs = t ? t - arg : 0;
	if (!strcmp(arg, "$comm") || !strcmp(arg, "$COMM") || !strncmp(arg, "\\\"", 2)) {
		if (parg->count || (t && strcmp(t, "string"))) {
			log_err(c, c->offset + type_offs, E_NEED_STRING_TYPE);
			goto out;
		}
		parg->type = FHOOK_EVT_STRING;
	} else {
		parg->type = find_fetch_type(t);
	}
	if (parg->type < 0) {
		log_err(c, c->offset + type_offs, E_BAD_TYPE);
		goto out;
	}

	/* the fetch program */
	code = parg->code;
	end = &parg->code[FHOOK_EV_FETCH_INSN_MAX - 1];
	c->have_type = false;
	ret = parse_probe_arg(c, arg, &code, end);
	if (ret)
		goto out;
	ret = -EINVAL;

	/* DWARF gives the type when none is written, and finds char pointers */
	if (c->have_type) {
		if (!t) {
			parg->type = ev_dw_fetch_type(&c->last_type);
			if (c->last_bitsize) {
				unsigned int bits = fhook_ev_type_size(parg->type) * 8;

				if (++code == end) {
					log_err(c, c->offset, E_TOO_MANY_OPS);
					goto out;
				}
				code->op = FHOOK_FOP_MOD_BF;
				code->lshift = bits - (c->last_bitsize + c->last_bitoffs);
				code->rshift = bits - c->last_bitsize;
				code->basesize = bits / 8;
			}
		} else if (strstr(t, "string")) {
			Dwarf_Die target;

			if (ev_dw_is_ptr(&c->last_type, &target) && ev_dw_peel(&target) &&
			    ev_dw_is_char(&target)) {
				/* the string is where the pointer points */
				if (++code == end) {
					log_err(c, c->offset, E_TOO_MANY_OPS);
					goto out;
				}
				code->op = FHOOK_FOP_DEREF;
				code->param = 0;
			} else if (!ev_dw_is_char_array(&c->last_type)) {
				log_err(c, c->offset, E_BAD_TYPE4STR);
				goto out;
			}
		}
	}

	/* the store: what a string or a typed value may be fetched from */
	if (parg->type == FHOOK_EVT_SYMSTR) {
		if (code->op == FHOOK_FOP_IMM || code->op == FHOOK_FOP_COMM ||
		    code->op == FHOOK_FOP_DATA || code->op == FHOOK_FOP_STACKP) {
			log_err(c, c->offset + type_offs, E_BAD_SYMSTRING);
			goto out;
		}
	} else if (fhook_ev_type_is_string(parg->type)) {
		if (!last_is_deref(code) && code->op != FHOOK_FOP_IMM &&
		    code->op != FHOOK_FOP_COMM && code->op != FHOOK_FOP_DATA) {
			log_err(c, c->offset + type_offs, E_BAD_STRING);
			goto out;
		}
	}
	if (t && *t == 'b') {
		if (parse_bitfield(t, parg->type, &code, end)) {
			log_err(c, c->offset + type_offs, E_BAD_BITFIELD);
			goto out;
		}
	}
	code[1].op = FHOOK_FOP_END;
	end->op = FHOOK_FOP_END;
	ret = 0;
out:
	free(arg);
	return ret;
}

static const char *const reserved_names[] = {
	"common_type", "common_flags", "common_preempt_count", "common_pid",
	"common_tgid", "__probe_ip", "__probe_ret_ip", "__probe_func",
};

static char *generate_arg_name(const char *arg, int idx)
{
	const char *end;
	char *name;

	if (is_good_name(arg)) {
		end = arg + strlen(arg);
	} else {
		end = strpbrk(arg, ":[");
		if (!end)
			end = arg + strlen(arg);
	}
	name = strndup(arg, end - arg);
	if (name && !is_good_name(name)) {
		free(name);
		name = NULL;
	}
	if (!name && asprintf(&name, "arg%d", idx + 1) < 0)
		return NULL;
	return name;
}

static int parse_probe_arg(struct ev_ctx *c, char *arg, struct fhook_fetch_insn **pcode,
			   struct fhook_fetch_insn *end);

static int traceprobe_parse_arg(struct ev_ctx *c, int i, const char *arg)
{
	struct fhook_event_arg *parg = &c->ev->args[i];
	const char *body = strchr(arg, '=');
	size_t k;
	int j;

	c->ev->nr_args++;
	if (body) {
		if (body - arg > FHOOK_EV_MAX_ARG_NAME_LEN) {
			log_err(c, 0, E_ARG_NAME_TOO_LONG);
			return -EINVAL;
		}
		if (body == arg) {
			log_err(c, 0, E_NO_ARG_NAME);
			return -EINVAL;
		}
		parg->name = strndup(arg, body - arg);
		body++;
	} else {
		parg->name = generate_arg_name(arg, i);
		body = arg;
	}
	if (!parg->name)
		return -ENOMEM;
	if (!is_good_name(parg->name)) {
		log_err(c, 0, E_BAD_ARG_NAME);
		return -EINVAL;
	}
	for (k = 0; k < sizeof(reserved_names) / sizeof(reserved_names[0]); k++)
		if (!strcmp(parg->name, reserved_names[k]))
			goto used;
	for (j = 0; j < i; j++)
		if (!strcmp(parg->name, c->ev->args[j].name))
			goto used;
	c->offset = body - arg;
	return parse_probe_arg_body(c, body, parg);
used:
	log_err(c, 0, E_USED_ARG_NAME);
	return -EINVAL;
}

/* ---- the definition --------------------------------------------------- */

static int parse_event_name(struct ev_ctx *c, const char *name, int offset, bool allow_empty)
{
	struct fhook_event *ev = c->ev;
	const char *slash, *event = name;
	size_t len;

	slash = strchr(event, '/');
	if (!slash)
		slash = strchr(event, '.');
	if (slash) {
		if (slash == event) {
			log_err(c, offset, E_NO_GROUP_NAME);
			return -EINVAL;
		}
		if (slash - event + 1 > FHOOK_EV_MAX_EVENT_NAME_LEN) {
			log_err(c, offset, E_GROUP_TOO_LONG);
			return -EINVAL;
		}
		memcpy(ev->group, event, slash - event);
		ev->group[slash - event] = 0;
		if (!is_good_name(ev->group)) {
			log_err(c, offset, E_BAD_GROUP_NAME);
			return -EINVAL;
		}
		offset += slash - event + 1;
		event = slash + 1;
	}
	len = strlen(event);
	if (len == 0) {
		if (slash && allow_empty)
			return 0;	/* "GRP/": the default event name */
		log_err(c, offset, E_NO_EVENT_NAME);
		return -EINVAL;
	}
	if (len >= FHOOK_EV_MAX_EVENT_NAME_LEN) {
		log_err(c, offset, E_EVENT_TOO_LONG);
		return -EINVAL;
	}
	if (!is_good_name(event)) {
		log_err(c, offset, E_BAD_EVENT_NAME);
		return -EINVAL;
	}
	strcpy(ev->event, event);
	return 0;
}

static int split_words(char *buf, char **argv, int max)
{
	int argc = 0;
	char *p = buf;

	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (argc == max)
			return -E2BIG;
		argv[argc++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = 0;
	}
	return argc;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* "$argN" or "$argN:TYPE": N, or 0 for anything else ("$arg1->f", "$argx") */
static unsigned long plain_argn(const char *arg, const char **type)
{
	char *end;
	unsigned long n;

	if (strncmp(arg, "$arg", 4) || !isdigit((unsigned char)arg[4]))
		return 0;
	n = strtoul(arg + 4, &end, 10);
	if (*end && *end != ':')
		return 0;
	*type = end;
	return n;
}

/* Put parameter @k's name and @type at @abuf + *@used: the word, or NULL (logged). */
static char *param_word(struct ev_ctx *c, int k, const char *type, char *abuf, int *used)
{
	Dwarf_Die t;
	const char *name = ev_dw_param(&c->fn, k, &t);
	int w;

	if (name)
		w = snprintf(abuf + *used, MAX_BTF_ARGS_LEN - *used, "%s%s", name, type);
	else	/* a parameter without a name (C++'s unused ones): by its number */
		w = snprintf(abuf + *used, MAX_BTF_ARGS_LEN - *used, "$arg%d%s", k + 1, type);
	if (w + 1 > MAX_BTF_ARGS_LEN - *used) {
		log_err(c, 0, E_ARGS_2LONG);
		return NULL;
	}
	*used += w + 1;
	return abuf + *used - w - 1;
}

/*
 * With DWARF for the function, $arg* becomes every parameter by name and
 * $argN (or $argN:TYPE) the Nth one's name, as Linux 6.12 rewrites them
 * with BTF (traceprobe_expand_meta_args()): the definition then lists
 * "file=file", not "arg1=$arg1".  Without it $argN stays a register read
 * and $arg* is refused.  "$argN->field" is left for the DWARF walk.
 */
static int expand_meta_args(struct ev_ctx *c, char **argv, int argc, char ***pnew, int *pnew_argc,
			    char *abuf)
{
	int i, j, k, n = 0, star = -1, used_len = 0, e;
	bool any = false;
	const char *type;
	char **nargv;

	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "$arg", 4)) {
			/* "x=$arg*", "+0($arg*)": not a word of its own */
			if (strstr(argv[i], "$arg*")) {
				c->index = i + 2;
				log_err(c, 0, E_BAD_VAR_ARGS);
				return -EINVAL;
			}
			continue;
		}
		c->index = i + 2;
		if (c->kprobe && !c->is_return && !c->fentry) {
			log_err(c, 0, E_NOFENTRY_ARGS);
			return -EINVAL;
		}
		if (isdigit((unsigned char)argv[i][4])) {
			any = true;
			continue;
		}
		if (strcmp(argv[i], "$arg*")) {
			log_err(c, 0, argv[i][4] == '*' ? E_BAD_VAR_ARGS : E_BAD_VAR);
			return -EINVAL;
		}
		if (star >= 0) {
			log_err(c, 0, E_DOUBLE_ARGS);
			return -EINVAL;
		}
		star = i;
		any = true;
	}
	if (!any)
		return 0;
	e = query_dwarf(c);
	if (e || !c->fn.nr_params) {
		if (star >= 0) {
			c->index = star + 2;
			log_err(c, 0, e ? e : E_NOSUP_BTFARG);
			return -ENOENT;
		}
		return 0;
	}
	n = argc + (star >= 0 ? c->fn.nr_params - 1 : 0);
	nargv = calloc(n + 1, sizeof(*nargv));
	c->name_len = calloc(n + 1, sizeof(int));
	c->shorter = calloc(n + 1, sizeof(int));
	if (!nargv || !c->name_len || !c->shorter) {
		free(nargv);
		return -ENOMEM;
	}
	for (i = 0, j = 0; i < argc; i++) {
		unsigned long idx;

		c->index = i + 2;
		if (i == star) {
			for (k = 0; k < c->fn.nr_params; k++) {
				c->shorter[j] = -1;
				if (!(nargv[j++] = param_word(c, k, "", abuf, &used_len)))
					goto fail;
			}
			continue;
		}
		idx = plain_argn(argv[i], &type);
		if (!idx || idx > FHOOK_EV_PARAM_MAX_STACK) {
			/* "$arg0", "$arg1->f", "x=...": parsed as they are */
			nargv[j++] = argv[i];
			continue;
		}
		if (idx > (unsigned long)c->fn.nr_params) {
			log_err(c, 0, E_NO_BTFARG);
			goto fail;
		}
		if (!(nargv[j] = param_word(c, idx - 1, type, abuf, &used_len)))
			goto fail;
		c->name_len[j] = strlen(nargv[j]) - strlen(type);
		c->shorter[j] = (type - argv[i]) - c->name_len[j];
		j++;
	}
	c->star = star;
	c->star_n = star >= 0 ? c->fn.nr_params : 1;
	*pnew = nargv;
	*pnew_argc = n;
	return 0;
fail:
	free(nargv);
	return -EINVAL;
}

static int check_symbol(struct ev_ctx *c)
{
	struct fhook_event *ev = c->ev;
	const struct ev_sym *s;

	if (!c->prog)
		return 0;
	if (ev->is_glob) {
		if (ev_prog_match_glob(c->prog, ev->symbol) > 0)
			return 0;
	} else {
		s = ev_prog_find(c->prog, ev->symbol, true, NULL);
		if (s && s->site)
			return 0;
	}
	/* beyond the kernel: a C++ name as written in the source */
	if (ev->nr_targets > 0)
		return 0;
	c->index = 1;
	log_err(c, 0, E_BAD_PROBE_ADDR);
	return -ENOENT;
}

/* @SYM[+-off] must name a symbol of the program */
static int check_mem_symbols(struct ev_ctx *c, char **argv)
{
	struct fhook_event *ev = c->ev;
	int i, j;

	if (!c->prog)
		return 0;
	for (i = 0; i < ev->nr_args; i++) {
		for (j = 0; ev->args[i].code[j].op != FHOOK_FOP_END; j++) {
			struct fhook_fetch_insn *in = &ev->args[i].code[j];
			char name[512];
			size_t n;

			if (in->op != FHOOK_FOP_SYMBOL)
				continue;
			n = strcspn(in->data, "+-");
			if (n >= sizeof(name))
				n = sizeof(name) - 1;
			memcpy(name, in->data, n);
			name[n] = 0;
			if (!ev_prog_find(c->prog, name, false, NULL)) {
				/* the kernel fails registration at the probe point */
				c->index = 1;
				log_err(c, 0, E_BAD_PROBE_ADDR);
				return -ENOENT;
			}
			if (in->data[n]) {
				long off;

				if (k_strtol(in->data + n + (in->data[n] == '+'), 0, &off)) {
					c->index = i + 2;
					log_err(c, 0, E_BAD_MEM_ADDR);
					return -EINVAL;
				}
			}
		}
	}
	(void)argv;
	return 0;
}

/* "MAXACTIVE" of "r16:..." / "f16:...", ending at @event's ':' */
static int parse_maxactive(struct ev_ctx *c, const char *event)
{
	const char *argv0 = c->argv[0];
	size_t len = event ? (size_t)(event - &argv0[1] - 1) : strlen(&argv0[1]);
	char num[FHOOK_EV_MAX_EVENT_NAME_LEN];

	if (len > FHOOK_EV_MAX_EVENT_NAME_LEN - 1) {
		log_err(c, 1, E_BAD_MAXACT);
		return -EINVAL;
	}
	memcpy(num, &argv0[1], len);
	num[len] = 0;
	if (k_strtouint(num, 0, &c->ev->maxactive) || !c->ev->maxactive) {
		log_err(c, 1, E_BAD_MAXACT);
		return -EINVAL;
	}
	if (c->ev->maxactive > FHOOK_EV_MAXACTIVE_MAX) {
		log_err(c, 1, E_MAXACT_TOO_BIG);
		return -EINVAL;
	}
	return 0;
}

/* sanitize_event_name(): anything but a C identifier character becomes '_' */
static void sanitize_event_name(char *p)
{
	for (; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
}

/* A kprobe event at an address: its symbol is the number as written. */
/*
 * "p[:[GRP/][EVENT]] [MOD:]SYM[+OFFS]|ADDR" and "r[MAXACTIVE][:...]
 * [MOD:]SYM[+0]": the kernel's __trace_kprobe_create() up to the fetch
 * arguments, in its order of checks.  MOD is the file name or the path of
 * an object, and is split at the last ':' (a library's name may hold '+'
 * or '-': "libstdc++.so.6:SYM").
 */
static int parse_kprobe_head(struct ev_ctx *c)
{
	struct fhook_event *ev = c->ev;
	char **argv = c->argv, *sym, *base, *colon, *off;
	const char *event;
	unsigned long addr;
	long offset = 0;

	ev->kprobe = c->kprobe = true;
	ev->is_return = argv[0][0] == 'r';
	if (c->argc < 2) {
		c->index = 1;
		log_err(c, 0, E_BAD_PROBE_ADDR);
		return -EINVAL;
	}
	event = strchr(&argv[0][1], ':');
	if (event)
		event++;
	if (isdigit((unsigned char)argv[0][1])) {
		if (!ev->is_return) {
			log_err(c, 1, E_BAD_MAXACT_TYPE);
			return -EINVAL;
		}
		if (parse_maxactive(c, event))
			return -EINVAL;
	}

	c->index = 1;
	if (!k_strtoul(argv[1], 0, &addr)) {
		ev->symbol = strdup(argv[1]);
		if (!ev->symbol)
			return -ENOMEM;
	} else {
		sym = strdup(argv[1]);
		if (!sym)
			return -ENOMEM;
		ev->symbol = sym;
		off = strchr(sym, '%');
		if (off) {
			if (strcmp(off, "%return")) {
				log_err(c, off - sym, E_BAD_ADDR_SUFFIX);
				return -EINVAL;
			}
			*off = 0;
			ev->is_return = true;
		}
		colon = strrchr(sym, ':');
		base = colon ? colon + 1 : sym;
		/* a glob's '-' is a range's ("[a-z]*"): only '+' starts its offset */
		off = has_glob(base) ? strchr(base, '+') : strpbrk(base, "+-");
		if (off) {
			if (k_strtol(off + (*off == '+'), 0, &offset) || offset < 0 ||
			    offset > UINT_MAX) {
				log_err(c, 0, E_BAD_PROBE_ADDR);
				return -EINVAL;
			}
			*off = 0;
		}
		if (!*base || colon == sym) {
			log_err(c, 0, E_BAD_PROBE_ADDR);
			return -EINVAL;
		}
		if (colon) {
			*colon = 0;
			ev->module = sym;
			ev->symbol = strdup(base);
			if (!ev->symbol)
				return -ENOMEM;
		}
		ev->offset = offset;
		if (ev->is_return && offset) {
			log_err(c, 0, E_BAD_RETPROBE);
			return -EINVAL;
		}
		/* beyond the kernel: a glob probes every function it names, at its entry */
		ev->is_glob = has_glob(ev->symbol);
		if (ev->is_glob && offset) {
			log_err(c, off - sym, E_BAD_PROBE_ADDR);
			return -EINVAL;
		}
		c->fentry = !ev->is_return && !offset;
	}
	c->is_return = ev->is_return;

	c->index = 0;
	strcpy(ev->group, FHOOK_EV_KPROBE_GROUP);
	if (event && parse_event_name(c, event, event - argv[0], true))
		return -EINVAL;
	if (!ev->event[0]) {
		if (kprobe_at_addr(ev))
			snprintf(ev->event, sizeof(ev->event), "%c_0x%lx",
				 ev->is_return ? 'r' : 'p', addr);
		else
			snprintf(ev->event, sizeof(ev->event), "%c_%s%s%s_%lu",
				 ev->is_return ? 'r' : 'p', ev->module ? ev->module : "",
				 ev->module ? ":" : "", ev->symbol, ev->offset);
		sanitize_event_name(ev->event);
	}
	return 0;
}

/*
 * The kprobe's function must be in the program: the kernel checks the
 * symbol when the event is defined.  A MOD the program does not load at
 * start is an object it may dlopen: resolved when that comes, as the
 * kernel defers a probe on a module not loaded yet.
 */
static int check_kprobe_symbol(struct ev_ctx *c)
{
	struct fhook_event *ev = c->ev;
	const struct ev_sym *s;
	int file = 0, r;

	if (!c->prog || kprobe_at_addr(ev))
		return 0;
	if (ev->is_glob) {
		int skipped;

		r = ev_prog_kprobe_glob(c->prog, ev->module, ev->symbol, &file, &skipped);
		/* a MOD the program does not load at start: matched when it comes */
		if (r > 0 || (r == -ENOENT && ev->module))
			return 0;
		c->index = 1;
		log_err(c, 0, E_BAD_PROBE_ADDR);
		return -ENOENT;
	}
	s = ev_prog_find_in(c->prog, ev->module, ev->symbol, true, &file);
	if (!s) {
		if (ev->module && !ev_prog_has_mod(c->prog, ev->module))
			return 0;
		c->index = 1;
		log_err(c, 0, E_BAD_PROBE_ADDR);
		return -ENOENT;
	}
	if (ev->offset && c->prog->insn_check) {
		r = c->prog->insn_check(c->prog->files[file].path, s->addr, s->size,
					s->addr + ev->offset);
		if (r == -EILSEQ) {
			c->index = 1;
			log_err(c, 0, E_BAD_INSN_BNDRY);
			return -EINVAL;
		}
	}
	return 0;
}

int fhook_event_parse(const char *spec, struct fhook_event_prog *prog,
		      struct fhook_event *ev, struct fhook_event_error *err)
{
	char *buf, *argv[MAX_WORDS], **args, **new_argv = NULL, abuf[MAX_BTF_ARGS_LEN];
	struct ev_ctx c = { .err = err, .prog = prog, .ev = ev, .argv = argv, .star = -1 };
	const char *event = NULL, *pct;
	int argc, nargs, i, ret = -EINVAL, new_argc = 0;

	memset(ev, 0, sizeof(*ev));
	if (err)
		memset(err, 0, sizeof(*err) - sizeof(err->command) + 1);
	buf = strdup(spec);
	if (!buf)
		return -ENOMEM;
	argc = split_words(buf, argv, MAX_WORDS);
	if (argc < 0) {
		/* more words than any definition may have */
		c.argc = MAX_WORDS;
		c.index = FHOOK_EV_MAX_TRACE_ARGS + 2;
		log_err(&c, 0, E_TOO_MANY_ARGS);
		goto out;
	}
	c.argc = argc;
	if (!argc) {
		log_err(&c, 0, E_NOT_FPROBE);
		goto out;
	}
	if (argv[0][0] == '-') {
		ev->is_remove = true;
		strcpy(ev->group, FHOOK_EV_DEFAULT_GROUP);
		if (argv[0][1] != ':' || argc != 1) {
			log_err(&c, argv[0][1] != ':' ? 1 : 0, E_NOT_FPROBE);
			goto out;
		}
		ret = parse_event_name(&c, argv[0] + 2, 2, false);
		goto out;
	}
	if (argv[0][0] == 'p' || argv[0][0] == 'r') {
		ret = parse_kprobe_head(&c);
		if (ret)
			goto out;
		ret = -EINVAL;
		goto fetchargs;
	}
	if (argv[0][0] != 'f') {
		log_err(&c, 0, E_NOT_FPROBE);
		goto out;
	}
	if (argc < 2) {
		c.index = 1;
		log_err(&c, 0, E_BAD_PROBE_ADDR);
		goto out;
	}

	/* MAXACTIVE */
	event = strchr(&argv[0][1], ':');
	if (event)
		event++;
	if (isdigit((unsigned char)argv[0][1]) && parse_maxactive(&c, event))
		goto out;

	/* SYM[%return]; a $retval among the arguments makes it a return event */
	c.index = 1;
	pct = strchr(argv[1], '%');
	if (pct) {
		if (strcmp(pct, "%return")) {
			log_err(&c, pct - argv[1], E_BAD_ADDR_SUFFIX);
			goto out;
		}
		ev->is_return = true;
		ev->symbol = strndup(argv[1], pct - argv[1]);
	} else {
		ev->symbol = strdup(argv[1]);
		for (i = 2; i < argc; i++) {
			const char *r = strstr(argv[i], "$retval");

			if (r && !isalnum((unsigned char)r[7]) && r[7] != '_') {
				ev->is_return = true;
				break;
			}
		}
	}
	if (!ev->symbol) {
		ret = -ENOMEM;
		goto out;
	}
	ev->is_glob = has_glob(ev->symbol);
	/*
	 * Not a symbol: a C++ name or glob ("ns::Class::*", "make_box<int>",
	 * "make_box*"), the symbols it stands for (lib/events/prog.c: by
	 * their names, never their return types).
	 */
	if (c.prog && !(ev->is_glob ? ev_prog_match_glob(c.prog, ev->symbol) > 0 :
				      ev_prog_find(c.prog, ev->symbol, true, NULL) != NULL)) {
		ret = ev_prog_match_cxx(c.prog, ev->symbol, ev->is_glob, &ev->targets);
		if (ret < 0)
			goto out;
		ev->nr_targets = ret;
		ret = -EINVAL;
	}
	if (!ev->is_return && ev->maxactive) {
		c.index = 0;
		log_err(&c, 1, E_BAD_MAXACT_TYPE);
		goto out;
	}
	c.is_return = ev->is_return;

	/* [GRP/][EVENT] */
	c.index = 0;
	strcpy(ev->group, FHOOK_EV_DEFAULT_GROUP);
	if (event && parse_event_name(&c, event, event - argv[0], true))
		goto out;
	if (!ev->event[0]) {
		snprintf(ev->event, sizeof(ev->event), "%s__%s", ev->symbol,
			 ev->is_return ? "exit" : "entry");
		sanitize_event_name(ev->event);
	}

	/* FETCHARGS */
fetchargs:
	args = argv + 2;
	nargs = argc - 2;
	ret = expand_meta_args(&c, args, nargs, &new_argv, &new_argc, abuf);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (new_argv) {
		args = new_argv;
		nargs = new_argc;
	}
	if (nargs > FHOOK_EV_MAX_TRACE_ARGS) {
		c.index = 2;
		log_err(&c, 0, E_TOO_MANY_ARGS);
		goto out;
	}
	ev->args = calloc(nargs ? nargs : 1, sizeof(*ev->args));
	if (!ev->args) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nargs; i++) {
		/* an expanded $arg* logs against the word it came from */
		c.index = i + 2;
		if (new_argv && c.star >= 0 && i >= c.star)
			c.index = i < c.star + c.star_n ? c.star + 2 : i - c.star_n + 3;
		if (new_argv) {
			c.word_name_len = c.name_len[i];
			c.word_shorter = c.shorter[i];
		}
		c.offset = 0;
		ret = traceprobe_parse_arg(&c, i, args[i]);
		if (ret)
			goto out;
	}
	c.word_shorter = 0;
	ret = ev->kprobe ? check_kprobe_symbol(&c) : check_symbol(&c);
	if (!ret)
		ret = check_mem_symbols(&c, argv);
out:
	free(new_argv);
	free(c.name_len);
	free(c.shorter);
	free(buf);
	if (ret) {
		if (err && !c.logged)
			log_err(&c, 0, E_FAIL_REG_PROBE);
		fhook_event_free(ev);
	}
	return ret;
}

void fhook_event_free(struct fhook_event *ev)
{
	int i, j;

	if (!ev)
		return;
	for (i = 0; i < ev->nr_args; i++) {
		free(ev->args[i].name);
		free(ev->args[i].comm);
		for (j = 0; j < FHOOK_EV_FETCH_INSN_MAX; j++)
			free(ev->args[i].code[j].data);
	}
	free(ev->args);
	free(ev->symbol);
	free(ev->module);
	ev->module = NULL;
	for (i = 0; i < ev->nr_targets; i++)
		free(ev->targets[i]);
	free(ev->targets);
	ev->targets = NULL;
	ev->nr_targets = 0;
	ev->args = NULL;
	ev->symbol = NULL;
	ev->nr_args = 0;
}

int fhook_event_snprint(char *buf, size_t size, const struct fhook_event *ev)
{
	size_t n = 0;
	int i;

#define OUT(...) do {								\
		int w = snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, __VA_ARGS__); \
		if (w > 0)							\
			n += w;							\
	} while (0)
	if (ev->is_remove) {
		OUT("-:%s/%s", ev->group, ev->event);
		return n;
	}
	if (ev->kprobe) {
		/* as the kernel shows one: a return probe is 'r', an offset only if not 0 */
		OUT("%c", ev->is_return ? 'r' : 'p');
		if (ev->is_return && ev->maxactive)
			OUT("%u", ev->maxactive);
		OUT(":%s/%s %s%s%s", ev->group, ev->event, ev->module ? ev->module : "",
		    ev->module ? ":" : "", ev->symbol);
		if (ev->offset)
			OUT("+%lu", ev->offset);
	} else {
		OUT("f");
		if (ev->is_return && ev->maxactive)
			OUT("%u", ev->maxactive);
		OUT(":%s/%s %s%s", ev->group, ev->event, ev->symbol,
		    ev->is_return ? "%return" : "");
	}
	for (i = 0; i < ev->nr_args; i++)
		OUT(" %s=%s", ev->args[i].name, ev->args[i].comm);
#undef OUT
	return n;
}

void fhook_event_print_error(FILE *f, const struct fhook_event_error *err)
{
	fprintf(f, "fhook: error: %s\n  Command: %s\n%*s^\n", err->msg ? err->msg : "unknown error",
		err->command, 11 + err->pos, "");
}
