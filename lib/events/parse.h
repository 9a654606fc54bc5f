/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event grammar's internals, shared by its files: the parse of one
 * definition (struct ev_ctx) and its error log.
 *
 *   parse.c         the definition, the error log, kstrto*() as the kernel's
 *   parse_args.c    fetch arguments: a word into a typed fetch program
 *   parse_dwarf.c   DWARF ("BTF") arguments: parameters by name, fields, $arg*
 */
#ifndef FHOOK_EV_PARSE_H
#define FHOOK_EV_PARSE_H

#include <stdbool.h>
#include <ctype.h>

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
	E_NON_UNIQ_SYMBOL, E_NOT_FPROBE, E_NO_SUCH_EVENT,
};

/* the kernel has 128 bytes: a glob over C++ code meets functions whose names need more */
#define MAX_BTF_ARGS_LEN	2048

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

/* parse.c */
void ev_log_err(struct ev_ctx *c, int offset, int e);
bool ev_is_good_name(const char *name);
int ev_k_strtoul(const char *s, int base, unsigned long *out);
int ev_k_strtol(const char *s, int base, long *out);
int ev_k_strtouint(const char *s, int base, unsigned int *out);

/* parse_args.c */
struct fhook_fetch_insn *ev_next_code(struct ev_ctx *c, struct fhook_fetch_insn **pcode,
				      struct fhook_fetch_insn *end);
int ev_traceprobe_parse_arg(struct ev_ctx *c, int i, const char *arg);

/* parse_dwarf.c */
bool ev_use_dwarf(struct ev_ctx *c);
int ev_query_dwarf(struct ev_ctx *c);
int ev_parse_dw_arg(struct ev_ctx *c, char *varname, struct fhook_fetch_insn **pcode,
		    struct fhook_fetch_insn *end);
int ev_expand_meta_args(struct ev_ctx *c, char **argv, int argc, char ***pnew, int *pnew_argc,
			char *abuf);

static inline bool kprobe_at_addr(const struct fhook_event *ev)
{
	return ev->kprobe && !ev->module && isdigit((unsigned char)ev->symbol[0]);
}

#endif /* FHOOK_EV_PARSE_H */
