// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The flight recorder's event trigger: `--trigger 'EVENT if FILTER'`
 * fires when an EVENT whose fields match FILTER is recorded.  The command
 * compiled the filter (lib/events/filter.c) into a postfix program of
 * predicates (evdesc.h); it runs here on the arguments just fetched into
 * the record, for that one event only, so the other events pay nothing.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

#include "record.h"

struct fval {
	bool is_str, fault, sgn;
	long long n;
	const char *s;
};

/* Argument @i of @e, laid out in @args as record_fetch.c wrote it (@offs: where each starts). */
static struct fval field(const struct ev_desc_event *e, const unsigned char *args,
			 const uint16_t *offs, int i)
{
	const struct ev_desc_arg *a = &e->args[i];
	const unsigned char *p = args + offs[i];
	unsigned int size = fhook_ev_type_size(a->type);
	struct fval v = { 0 };

	if (fhook_ev_type_is_string(a->type)) {
		uint32_t len;

		memcpy(&len, p, 4);
		v.is_str = true;
		v.fault = !len || a->type == FHOOK_EVT_SYMSTR;
		v.s = (const char *)p + 4;
		return v;
	}
	v.fault = p[size * (a->count ? a->count : 1)];
	v.sgn = a->type >= FHOOK_EVT_S8 && a->type <= FHOOK_EVT_S64;
	switch (size) {
	case 1: v.n = v.sgn ? (long long)*(const int8_t *)p : (long long)*p; break;
	case 2: { uint16_t x; memcpy(&x, p, 2); v.n = v.sgn ? (long long)(int16_t)x : (long long)x; break; }
	case 4: { uint32_t x; memcpy(&x, p, 4); v.n = v.sgn ? (long long)(int32_t)x : (long long)x; break; }
	default: memcpy(&v.n, p, 8);
	}
	return v;
}

static bool compare(int op, const struct fval *f, const struct fval *c)
{
	if (f->fault)
		return false;
	if (f->is_str) {
		const char *want = c->s ? c->s : "";

		switch (op) {
		case EV_FOP_EQ: return !strcmp(f->s, want);
		case EV_FOP_NE: return strcmp(f->s, want) != 0;
		case EV_FOP_GLOB: return !fnmatch(want, f->s, 0);
		}
		return false;
	}
	if (op == EV_FOP_BAND)
		return (f->n & c->n) != 0;
	if (f->sgn) {
		switch (op) {
		case EV_FOP_EQ: return f->n == c->n;
		case EV_FOP_NE: return f->n != c->n;
		case EV_FOP_LT: return f->n < c->n;
		case EV_FOP_LE: return f->n <= c->n;
		case EV_FOP_GT: return f->n > c->n;
		case EV_FOP_GE: return f->n >= c->n;
		}
		return false;
	}
	switch (op) {
	case EV_FOP_EQ: return (unsigned long long)f->n == (unsigned long long)c->n;
	case EV_FOP_NE: return (unsigned long long)f->n != (unsigned long long)c->n;
	case EV_FOP_LT: return (unsigned long long)f->n < (unsigned long long)c->n;
	case EV_FOP_LE: return (unsigned long long)f->n <= (unsigned long long)c->n;
	case EV_FOP_GT: return (unsigned long long)f->n > (unsigned long long)c->n;
	case EV_FOP_GE: return (unsigned long long)f->n >= (unsigned long long)c->n;
	}
	return false;
}

bool fhook_rec_filter_match(const struct ev_desc_event *e, const unsigned char *args,
			    const uint16_t *offs)
{
	/* the parser proved the program: every operation finds its operands */
	struct fval st[EV_FILTER_MAX];
	int i, sp = 0;

	for (i = 0; i < e->nr_filter; i++) {
		const struct ev_filter_tok *t = &e->filter[i];

		switch (t->op) {
		case EV_FOP_FIELD:
			st[sp++] = field(e, args, offs, (int)t->v);
			break;
		case EV_FOP_NUM:
			st[sp++] = (struct fval){ .n = t->v };
			break;
		case EV_FOP_STR:
			st[sp++] = (struct fval){ .is_str = true, .s = t->s };
			break;
		case EV_FOP_NOT:
			st[sp - 1].n = !st[sp - 1].n;
			break;
		case EV_FOP_AND:
			st[sp - 2].n = st[sp - 2].n && st[sp - 1].n;
			sp--;
			break;
		case EV_FOP_OR:
			st[sp - 2].n = st[sp - 2].n || st[sp - 1].n;
			sp--;
			break;
		default:
			st[sp - 2] = (struct fval){ .n = compare(t->op, &st[sp - 2], &st[sp - 1]) };
			sp--;
		}
	}
	return sp == 1 && st[0].n;
}
