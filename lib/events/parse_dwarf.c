// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * DWARF arguments: where the kernel reads BTF (a function's parameters by
 * name, their types and struct fields, "$arg*" and "$argN" rewritten to
 * the parameters' names), fhook reads the program's DWARF (dwarf.c), with
 * the kernel's checks and messages.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/*
 * DWARF plays BTF's part: for fprobe events, and for kprobe events on a
 * function's entry or return by its name, as the kernel gives kprobes
 * BTF there.  Inside a function, or at an address, registers as they are.
 */
bool ev_use_dwarf(struct ev_ctx *c)
{
	if (!c->prog)
		return false;
	if (c->kprobe && (!(c->fentry || c->is_return) || !c->ev->symbol ||
			  kprobe_at_addr(c->ev)))
		return false;
	return ev_prog_dwarf(c->prog);
}

/* Look the probed function up once (the kernel's query_btf_context()). */
int ev_query_dwarf(struct ev_ctx *c)
{
	int r;

	if (!c->fn_looked_up) {
		c->fn_looked_up = true;
		if (!ev_use_dwarf(c))
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
			ev_log_err(c, c->offset + (p - s), E_BAD_HYPHEN);
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
			ev_log_err(c, c->offset, E_NO_PTR_STRCT);
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
				ev_log_err(c, c->offset, E_NO_PTR_STRCT);
				return -EINVAL;
			}
			if (!ev_dw_member(&type, field, &mtype, &fo, &bitsize)) {
				ev_log_err(c, c->offset, E_NO_BTF_FIELD);
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
		if (!ev_next_code(c, pcode, end))
			return -EINVAL;
		(*pcode)->op = FHOOK_FOP_DEREF;
		(*pcode)->param = bitoffs / 8;
		c->last_bitoffs = bitoffs % 8;
		c->last_type = type;
	} while (field);
	return 0;
}

/* A parameter name, "$argN" or "$retval", possibly followed by fields. */
int ev_parse_dw_arg(struct ev_ctx *c, char *varname, struct fhook_fetch_insn **pcode,
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
		ev_log_err(c, c->offset + (field - varname), E_NOSUP_DAT_ARG);
		return -EOPNOTSUPP;
	}
	if (!strcmp(varname, "$retval")) {
		code->op = FHOOK_FOP_RETVAL;
		e = ev_query_dwarf(c);
		if (!e) {
			if (c->fn.returns_void) {
				ev_log_err(c, c->offset, E_NO_RETVAL);
				return -ENOENT;
			}
			type = c->fn.ret_type;
			/* a float or double comes back in %xmm0, not %rax */
			if (ev_dw_is_sse(&type))
				code->param = 1;
			goto found;
		}
		if (field) {
			ev_log_err(c, c->offset + (field - varname), E_NO_BTF_ENTRY);
			return -ENOENT;
		}
		return 0;
	}
	e = ev_query_dwarf(c);
	if (e) {
		ev_log_err(c, c->offset, e);
		return -ENOENT;
	}
	if (!strncmp(varname, "$arg", 4)) {
		unsigned long n;

		if (ev_k_strtoul(varname + 4, 10, &n) || !n || n > (unsigned long)c->fn.nr_params) {
			ev_log_err(c, c->offset, E_ARGIDX_2BIG);
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
			ev_log_err(c, c->offset, E_NO_BTFARG);
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
				ev_log_err(c, c->offset, E_TOO_MANY_OPS);
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
		ev_log_err(c, 0, E_ARGS_2LONG);
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
int ev_expand_meta_args(struct ev_ctx *c, char **argv, int argc, char ***pnew, int *pnew_argc,
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
				ev_log_err(c, 0, E_BAD_VAR_ARGS);
				return -EINVAL;
			}
			continue;
		}
		c->index = i + 2;
		if (c->kprobe && !c->is_return && !c->fentry) {
			ev_log_err(c, 0, E_NOFENTRY_ARGS);
			return -EINVAL;
		}
		if (isdigit((unsigned char)argv[i][4])) {
			any = true;
			continue;
		}
		if (strcmp(argv[i], "$arg*")) {
			ev_log_err(c, 0, argv[i][4] == '*' ? E_BAD_VAR_ARGS : E_BAD_VAR);
			return -EINVAL;
		}
		if (star >= 0) {
			ev_log_err(c, 0, E_DOUBLE_ARGS);
			return -EINVAL;
		}
		star = i;
		any = true;
	}
	if (!any)
		return 0;
	e = ev_query_dwarf(c);
	if (e || !c->fn.nr_params) {
		if (star >= 0) {
			c->index = star + 2;
			ev_log_err(c, 0, e ? e : E_NOSUP_BTFARG);
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
			ev_log_err(c, 0, E_NO_BTFARG);
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
