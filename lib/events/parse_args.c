// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fetch arguments of an event definition, after the kernel's
 * trace_probe.c (6.12): each "NAME=FETCHARG:TYPE" word checked in the
 * kernel's order, with its messages and positions, and compiled into a
 * typed fetch program (struct fhook_fetch_insn) that the recorder runs
 * in the traced process (lib/recorder/record_fetch.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_regs.h"
#include "parse.h"

/* find_fetch_type(): NULL means the default, x64; -1 for an unknown type */
static int find_fetch_type(const char *t)
{
	int i;

	if (!t)
		return FHOOK_EVT_X64;
	if (*t == 'b') {
		unsigned long bs;
		const char *slash = strchr(t, '/');

		if (!slash || ev_k_strtoul(slash + 1, 0, &bs))
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

/* The next instruction of a fetch program; NULL (logged) past its last. */
struct fhook_fetch_insn *ev_next_code(struct ev_ctx *c, struct fhook_fetch_insn **pcode,
				      struct fhook_fetch_insn *end)
{
	if (++*pcode == end) {
		ev_log_err(c, c->offset, E_TOO_MANY_OPS);
		return NULL;
	}
	return *pcode;
}

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
		if (!ev_use_dwarf(c)) {
			code->op = FHOOK_FOP_RETVAL;
			return 0;
		}
		return ev_parse_dw_arg(c, orig, pcode, end);
	}
	if (!strncmp(arg, "stack", 5)) {
		len = 5;
		if (!arg[len]) {
			code->op = FHOOK_FOP_STACKP;
			return 0;
		}
		if (isdigit((unsigned char)arg[len])) {
			if (ev_k_strtoul(arg + len, 10, &param))
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
		if (f && ev_use_dwarf(c))
			return ev_parse_dw_arg(c, orig, pcode, end);
		if (ev_k_strtoul(arg + 3, 10, &param))
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
		if (ev_use_dwarf(c) && !ev_query_dwarf(c))
			return ev_parse_dw_arg(c, orig, pcode, end);
		if (c->is_return) {
			slot = add_entry_arg(c, param - 1);
			if (slot < 0) {
				ev_log_err(c, c->offset, E_TOO_MANY_OPS);
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
	ev_log_err(c, c->offset, e);
	return -EINVAL;
}

/* The names of struct pt_regs' words, in its order (the arch's table, arch_regs.h). */
static const char *const reg_names[] = { FHOOK_PT_REGS_NAMES };

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
		return ev_k_strtoul(s, 0, imm);
	if (s[0] == '-')
		return ev_k_strtol(s, 0, (long *)imm);
	if (s[0] == '+')
		return ev_k_strtol(s + 1, 0, (long *)imm);
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
			ev_log_err(c, c->offset, E_BAD_REG_NAME);
			return -EINVAL;
		}
		code->op = FHOOK_FOP_REG;
		code->param = ret;
		ret = 0;
		break;
	case '@':
		if (isdigit((unsigned char)arg[1])) {
			if (ev_k_strtoul(arg + 1, 0, &param)) {
				ev_log_err(c, c->offset, E_BAD_MEM_ADDR);
				return -EINVAL;
			}
			code->op = FHOOK_FOP_IMM;
			code->param = param;
		} else if (arg[1] == '+') {
			ev_log_err(c, c->offset, E_FILE_ON_KPROBE);
			return -EINVAL;
		} else {
			/* resolved against the process's symbols when it registers */
			code->op = FHOOK_FOP_SYMBOL;
			code->data = strdup(arg + 1);
			if (!code->data)
				return -ENOMEM;
			if (!ev_next_code(c, &code, end))
				return -EINVAL;
			code->op = FHOOK_FOP_NOP;	/* the resolved address goes here */
		}
		if (!ev_next_code(c, &code, end))
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
			ev_log_err(c, c->offset, E_DEREF_NEED_BRACE);
			return -EINVAL;
		}
		*tmp = 0;
		if (ev_k_strtol(arg, 0, &offset)) {
			ev_log_err(c, c->offset, E_BAD_DEREF_OFFS);
			return -EINVAL;
		}
		c->offset += (tmp + 1 - arg) + (arg[0] != '-' ? 1 : 0);
		arg = tmp + 1;
		tmp = strrchr(arg, ')');
		if (!tmp) {
			ev_log_err(c, c->offset + strlen(arg), E_DEREF_OPEN_BRACE);
			return -EINVAL;
		}
		*tmp = 0;
		ret = parse_probe_arg(c, arg, &code, end);
		if (ret)
			return ret;
		if (code->op == FHOOK_FOP_COMM || code->op == FHOOK_FOP_DATA) {
			ev_log_err(c, c->offset, E_COMM_CANT_DEREF);
			return -EINVAL;
		}
		if (!ev_next_code(c, &code, end))
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
				ev_log_err(c, c->offset + 2 + len, E_IMMSTR_NO_CLOSE);
				return -EINVAL;
			}
			code->op = FHOOK_FOP_DATA;
			code->data = strndup(arg + 2, len - 1);
			if (!code->data)
				return -ENOMEM;
		} else {
			if (str_to_immediate(arg + 1, &param)) {
				ev_log_err(c, c->offset + 1, E_BAD_IMM);
				return -EINVAL;
			}
			code->op = FHOOK_FOP_IMM;
			code->param = param;
		}
		break;
	default:
		if (isalpha((unsigned char)arg[0]) || arg[0] == '_') {
			/* a parameter name: DWARF, where the kernel has BTF */
			if (!ev_use_dwarf(c)) {
				ev_log_err(c, c->offset, E_NOSUP_BTFARG);
				return -EINVAL;
			}
			ret = ev_parse_dw_arg(c, arg, pcode, end);
			code = *pcode;
		}
		break;
	}
	if (!ret && code->op == FHOOK_FOP_NOP) {
		ev_log_err(c, c->offset, E_BAD_FETCH_ARG);
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
		ev_log_err(c, c->offset, E_ARG_TOO_LONG);
		return -EINVAL;
	}
	if (len == 0) {
		ev_log_err(c, c->offset, E_NO_ARG_BODY);
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
				ev_log_err(c, c->offset + (t2 + strlen(t2) - arg), E_ARRAY_NO_CLOSE);
				goto out;
			}
			if (t3[1]) {
				ev_log_err(c, c->offset + (t3 + 1 - arg), E_BAD_ARRAY_SUFFIX);
				goto out;
			}
			*t3 = 0;
			if (ev_k_strtouint(t2, 0, &parg->count) || !parg->count) {
				ev_log_err(c, c->offset + (t2 - arg), E_BAD_ARRAY_NUM);
				goto out;
			}
			if (parg->count > FHOOK_EV_MAX_ARRAY_LEN) {
				ev_log_err(c, c->offset + (t2 - arg), E_ARRAY_TOO_BIG);
				goto out;
			}
		}
	}
	type_offs = t ? t - arg : 0;
	if (!strcmp(arg, "$comm") || !strcmp(arg, "$COMM") || !strncmp(arg, "\\\"", 2)) {
		if (parg->count || (t && strcmp(t, "string"))) {
			ev_log_err(c, c->offset + type_offs, E_NEED_STRING_TYPE);
			goto out;
		}
		parg->type = FHOOK_EVT_STRING;
	} else {
		parg->type = find_fetch_type(t);
	}
	if (parg->type < 0) {
		ev_log_err(c, c->offset + type_offs, E_BAD_TYPE);
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
					ev_log_err(c, c->offset, E_TOO_MANY_OPS);
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
					ev_log_err(c, c->offset, E_TOO_MANY_OPS);
					goto out;
				}
				code->op = FHOOK_FOP_DEREF;
				code->param = 0;
			} else if (!ev_dw_is_char_array(&c->last_type)) {
				ev_log_err(c, c->offset, E_BAD_TYPE4STR);
				goto out;
			}
		}
	}

	/* the store: what a string or a typed value may be fetched from */
	if (parg->type == FHOOK_EVT_SYMSTR) {
		if (code->op == FHOOK_FOP_IMM || code->op == FHOOK_FOP_COMM ||
		    code->op == FHOOK_FOP_DATA || code->op == FHOOK_FOP_STACKP) {
			ev_log_err(c, c->offset + type_offs, E_BAD_SYMSTRING);
			goto out;
		}
	} else if (fhook_ev_type_is_string(parg->type)) {
		if (!last_is_deref(code) && code->op != FHOOK_FOP_IMM &&
		    code->op != FHOOK_FOP_COMM && code->op != FHOOK_FOP_DATA) {
			ev_log_err(c, c->offset + type_offs, E_BAD_STRING);
			goto out;
		}
	}
	if (t && *t == 'b') {
		if (parse_bitfield(t, parg->type, &code, end)) {
			ev_log_err(c, c->offset + type_offs, E_BAD_BITFIELD);
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

	if (ev_is_good_name(arg)) {
		end = arg + strlen(arg);
	} else {
		end = strpbrk(arg, ":[");
		if (!end)
			end = arg + strlen(arg);
	}
	name = strndup(arg, end - arg);
	if (name && !ev_is_good_name(name)) {
		free(name);
		name = NULL;
	}
	if (!name && asprintf(&name, "arg%d", idx + 1) < 0)
		return NULL;
	return name;
}

int ev_traceprobe_parse_arg(struct ev_ctx *c, int i, const char *arg)
{
	struct fhook_event_arg *parg = &c->ev->args[i];
	const char *body = strchr(arg, '=');
	size_t k;
	int j;

	c->ev->nr_args++;
	if (body) {
		if (body - arg > FHOOK_EV_MAX_ARG_NAME_LEN) {
			ev_log_err(c, 0, E_ARG_NAME_TOO_LONG);
			return -EINVAL;
		}
		if (body == arg) {
			ev_log_err(c, 0, E_NO_ARG_NAME);
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
	if (!ev_is_good_name(parg->name)) {
		ev_log_err(c, 0, E_BAD_ARG_NAME);
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
	ev_log_err(c, 0, E_USED_ARG_NAME);
	return -EINVAL;
}
