// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Event filters, the kernel's grammar (Documentation/trace/events.rst,
 * "Event filtering"): predicates FIELD OP VALUE on an event's fields,
 * joined by && and ||, grouped by parentheses, negated by '!'.  Numeric
 * fields take ==, !=, <, <=, >, >= and &; string fields ==, != and ~ (a
 * glob).  A string VALUE may be quoted ("..." or '...') or a bare word.
 * Compiled into the postfix program the recorder runs (evdesc.h); errors
 * in the kernel's words, with the position of the offending character.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

struct fparse {
	const struct fhook_event *ev;
	const char *s, *p;
	struct ev_filter_tok *out;
	int n;
	const char *err;
	int pos;
	int depth;		/* parentheses open */
};

/* Parentheses in parentheses: each a recursion of the parser, bounded. */
#define FILTER_MAX_DEPTH	EV_FILTER_MAX

static bool fail(struct fparse *f, const char *at, const char *msg)
{
	if (!f->err) {
		f->err = msg;
		f->pos = (int)(at - f->s);
	}
	return false;
}

static void skip(struct fparse *f)
{
	while (isspace((unsigned char)*f->p))
		f->p++;
}

static bool emit(struct fparse *f, int op, long long v, const char *s, size_t len)
{
	struct ev_filter_tok *t;

	if (f->n == EV_FILTER_MAX)
		return fail(f, f->p, "Too many terms in predicate expression");
	t = &f->out[f->n];
	t->op = op;
	t->v = v;
	t->s = NULL;
	if (s && !(t->s = strndup(s, len)))
		return fail(f, f->p, "Out of memory");
	f->n++;
	return true;
}

static const struct {
	const char *text;
	int op;
} ops[] = {
	/* longest first: "<=" before "<" */
	{ "==", EV_FOP_EQ }, { "!=", EV_FOP_NE }, { "<=", EV_FOP_LE }, { ">=", EV_FOP_GE },
	{ "<", EV_FOP_LT }, { ">", EV_FOP_GT }, { "&", EV_FOP_BAND }, { "~", EV_FOP_GLOB },
};

/* FIELD OP VALUE */
static bool pred(struct fparse *f)
{
	const char *name = f->p, *at;
	const struct fhook_event_arg *a = NULL;
	size_t len, i;
	int op = -1, k;
	bool str, sgn;

	while (isalnum((unsigned char)*f->p) || *f->p == '_')
		f->p++;
	len = (size_t)(f->p - name);
	if (!len)
		return fail(f, name, "Missing field name and/or value");
	for (k = 0; k < f->ev->nr_args; k++)
		if (strlen(f->ev->args[k].name) == len && !strncmp(f->ev->args[k].name, name, len))
			a = &f->ev->args[k];
	if (!a)
		return fail(f, name, "Field not found");
	skip(f);
	at = f->p;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(f->p, ops[i].text, strlen(ops[i].text))) {
			op = ops[i].op;
			f->p += strlen(ops[i].text);
			break;
		}
	if (op < 0)
		return fail(f, at, "Invalid operator");
	str = fhook_ev_type_is_string(a->type);
	sgn = a->type >= FHOOK_EVT_S8 && a->type <= FHOOK_EVT_S64;
	/* (the recorder compares integers: a float's bits are no number to compare) */
	if (a->count || a->type == FHOOK_EVT_SYMSTR || a->type == FHOOK_EVT_F32 ||
	    a->type == FHOOK_EVT_F64 ||
	    (str && op != EV_FOP_EQ && op != EV_FOP_NE && op != EV_FOP_GLOB) ||
	    (!str && op == EV_FOP_GLOB))
		return fail(f, at, "Illegal operation for field type");
	if (!emit(f, EV_FOP_FIELD, a - f->ev->args, NULL, 0))
		return false;
	skip(f);
	at = f->p;
	if (str) {
		const char *v = f->p;

		if (*v == '"' || *v == '\'') {
			const char *end = strchr(v + 1, *v);

			if (!end)
				return fail(f, v, "Missing matching quote");
			f->p = end + 1;
			if (!emit(f, EV_FOP_STR, 0, v + 1, (size_t)(end - v - 1)))
				return false;
		} else {
			while (*f->p && !isspace((unsigned char)*f->p) && *f->p != ')' &&
			       *f->p != '&' && *f->p != '|')
				f->p++;
			if (f->p == v)
				return fail(f, v, "Missing field name and/or value");
			if (!emit(f, EV_FOP_STR, 0, v, (size_t)(f->p - v)))
				return false;
		}
	} else {
		char *end;
		long long v;

		/* as the kernel reads it: signed for a signed field, else unsigned, no '-' */
		if (!sgn && *f->p == '-')
			return fail(f, at, "Illegal integer value");
		errno = 0;
		v = sgn ? strtoll(f->p, &end, 0) : (long long)strtoull(f->p, &end, 0);
		if (end == f->p)
			return fail(f, at, *f->p ? "Invalid value (did you forget quotes)?" :
					   "Missing field name and/or value");
		if (errno || (*end && !isspace((unsigned char)*end) && *end != ')' &&
			      *end != '&' && *end != '|'))
			return fail(f, at, "Illegal integer value");
		f->p = end;
		if (!emit(f, EV_FOP_NUM, v, NULL, 0))
			return false;
	}
	return emit(f, op, 0, NULL, 0);
}

static bool expr(struct fparse *f);

/* '!' unary | '(' expr ')' | pred */
static bool unary(struct fparse *f)
{
	int nots = 0;
	bool ok;

	/* '!'s counted, not recursed into: a filter of them cannot exhaust the stack */
	for (skip(f); *f->p == '!' && f->p[1] != '='; skip(f)) {
		f->p++;
		nots++;
	}
	if (*f->p == '(') {
		const char *open = f->p++;

		if (f->depth == FILTER_MAX_DEPTH)
			return fail(f, open, "Too many '('");
		f->depth++;
		ok = expr(f);
		f->depth--;
		if (!ok)
			return false;
		skip(f);
		if (*f->p != ')')
			return fail(f, open, "Too many '('");
		f->p++;
	} else if (!pred(f)) {
		return false;
	}
	while (nots--)
		if (!emit(f, EV_FOP_NOT, 0, NULL, 0))
			return false;
	return true;
}

/* sub (tok sub)*, each tok an @op after its operands */
static bool chain(struct fparse *f, bool (*sub)(struct fparse *), const char *tok, int op)
{
	if (!sub(f))
		return false;
	for (;;) {
		skip(f);
		if (strncmp(f->p, tok, 2))
			return true;
		f->p += 2;
		if (!sub(f) || !emit(f, op, 0, NULL, 0))
			return false;
	}
}

static bool and_expr(struct fparse *f)
{
	return chain(f, unary, "&&", EV_FOP_AND);
}

/* the lowest: || */
static bool expr(struct fparse *f)
{
	return chain(f, and_expr, "||", EV_FOP_OR);
}

int ev_filter_compile(const struct fhook_event *ev, const char *filter,
		      struct ev_filter_tok *toks, const char **err, int *pos)
{
	struct fparse f = { .ev = ev, .s = filter, .p = filter, .out = toks };
	int i;

	skip(&f);
	if (!*f.p) {
		fail(&f, f.p, "Meaningless filter expression");
	} else if (expr(&f)) {
		skip(&f);
		if (*f.p == ')')
			fail(&f, f.p, "Too few '('");
		else if (*f.p)
			fail(&f, f.p, "Meaningless filter expression");
	}
	if (f.err) {
		for (i = 0; i < f.n; i++)
			free(toks[i].s);
		*err = f.err;
		*pos = f.pos;
		return -1;
	}
	return f.n;
}
