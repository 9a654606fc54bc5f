// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The event description's parser (evdesc.h): linked into libfhook, whose
 * recorder parses what the command wrote into the shared memory, and into
 * the command, which reads it back from recordings (its writer is
 * evdesc_write.c, in the command alone).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "evdesc.h"

/* The longest word a line holds: a fetch instruction's data, as hex. */
#define DESC_WORD_MAX	(2 * FHOOK_EV_MAX_STRING_SIZE + 2)

struct desc_line {
	const char *p, *end;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Past the blanks to the next word; false at the end of the line. */
static bool desc_skip(struct desc_line *l)
{
	while (l->p < l->end && *l->p == ' ')
		l->p++;
	return l->p < l->end;
}

static bool desc_long(struct desc_line *l, long min, long max, long *out)
{
	unsigned long long v = 0, lim;
	bool neg, any = false;

	if (!desc_skip(l))
		return false;
	neg = *l->p == '-';
	l->p += neg;
	/* the largest magnitude in range: none below 0 when @min is not */
	if (neg)
		lim = min < 0 ? (unsigned long long)-(min + 1) + 1 : 0;
	else
		lim = max < 0 ? 0 : (unsigned long long)max;
	for (; l->p < l->end && *l->p >= '0' && *l->p <= '9'; l->p++) {
		unsigned int dig = (unsigned int)(*l->p - '0');

		/* checked before the multiplication, which would wrap */
		if (v > lim / 10 || (v == lim / 10 && dig > lim % 10))
			return false;
		v = v * 10 + dig;
		any = true;
	}
	if (!any || (l->p < l->end && *l->p != ' '))
		return false;
	*out = neg ? (long)(0 - v) : (long)v;
	return *out >= min && *out <= max;
}

static bool desc_int(struct desc_line *l, int min, int max, int *out)
{
	long v;

	if (!desc_long(l, min, max, &v))
		return false;
	*out = (int)v;
	return true;
}

static bool desc_hex(struct desc_line *l, unsigned long *out)
{
	unsigned long v = 0;
	bool any = false;
	int h;

	if (!desc_skip(l))
		return false;
	for (; l->p < l->end && (h = hexval(*l->p)) >= 0; l->p++) {
		if (v >> 60)
			return false;
		v = v << 4 | (unsigned long)h;
		any = true;
	}
	*out = v;
	return any && (l->p == l->end || *l->p == ' ');
}

/* The next word, malloc'd; NULL at the end, *@err on no memory or one too long. */
static char *desc_word(struct desc_line *l, bool rest, int *err)
{
	const char *s;
	size_t n;
	char *w;

	if (!desc_skip(l))
		return NULL;
	s = l->p;
	while (l->p < l->end && (rest || *l->p != ' '))
		l->p++;
	n = (size_t)(l->p - s);
	if (n > DESC_WORD_MAX) {
		*err = -EINVAL;
		return NULL;
	}
	w = strndup(s, n);
	if (!w)
		*err = -ENOMEM;
	return w;
}

/* A word that must be there: NULL (and *@err) when it is not. */
static char *desc_need(struct desc_line *l, bool rest, int *err)
{
	char *w = desc_word(l, rest, err);

	if (!w && !*err)
		*err = -EINVAL;
	return w;
}

/* "-" stands for none */
static int desc_opt(struct desc_line *l, bool rest, char **out)
{
	int err = 0;
	char *w = desc_need(l, rest, &err);

	if (!w)
		return err;
	if (!strcmp(w, "-")) {
		free(w);
		w = NULL;
	}
	*out = w;
	return 0;
}

static int parse_e(struct desc_line *l, struct ev_desc *d)
{
	struct ev_desc_event *e, *ne;
	int ret, nargs, i, err = 0;

	ne = realloc(d->evs, (d->nr_evs + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	d->evs = ne;
	e = &d->evs[d->nr_evs];
	memset(e, 0, sizeof(*e));
	d->nr_evs++;
	if (!desc_int(l, 0, INT_MAX, &i) || i != d->nr_evs - 1 || !desc_int(l, 0, 1, &ret) ||
	    !desc_int(l, 0, FHOOK_EV_MAX_TRACE_ARGS, &nargs) ||
	    !desc_int(l, 0, FHOOK_EV_MAX_ENTRY_ARGS, &e->nr_entry))
		return -EINVAL;
	e->id = (unsigned int)i;
	e->is_return = ret;
	for (i = 0; i < e->nr_entry; i++)
		if (!desc_int(l, 0, INT_MAX, &e->entry_args[i]))
			return -EINVAL;
	if (!desc_int(l, 0, FHOOK_EV_MAXACTIVE_MAX, &e->nr_maxactive))
		return -EINVAL;
	e->args = calloc(nargs ? nargs : 1, sizeof(*e->args));
	if (!e->args)
		return -ENOMEM;
	/* the arguments to come, while their A lines are read: -1 - how many */
	e->nr_args = nargs ? -nargs - 1 : 0;
	if (!(e->group = desc_need(l, false, &err)) || !(e->event = desc_need(l, false, &err)) ||
	    !(e->symbol = desc_need(l, false, &err)))
		return err;
	return desc_skip(l) ? -EINVAL : 0;
}

/* A string as hex bytes, or "-": decoded in place. */
static int unhex(char *w)
{
	size_t k, n = strlen(w);

	if (n % 2)
		return -EINVAL;
	for (k = 0; k < n / 2; k++) {
		int hi = hexval(w[2 * k]), lo = hexval(w[2 * k + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		w[k] = (char)(hi << 4 | lo);
	}
	w[n / 2] = 0;
	return 0;
}

static int parse_insn(struct desc_line *l, struct fhook_fetch_insn *in)
{
	int lsh, rsh, bs, err = 0;
	char *data;

	if (!desc_int(l, 0, INT_MAX, &in->op) || !desc_long(l, LONG_MIN, LONG_MAX, &in->param) ||
	    !desc_int(l, 0, 255, &lsh) || !desc_int(l, 0, 255, &rsh) || !desc_int(l, 0, 255, &bs))
		return -EINVAL;
	in->lshift = (unsigned char)lsh;
	in->rshift = (unsigned char)rsh;
	in->basesize = (unsigned char)bs;
	data = desc_need(l, false, &err);
	if (!data)
		return err;
	if (!strcmp(data, "-")) {
		free(data);
		return 0;
	}
	if (unhex(data)) {
		free(data);
		return -EINVAL;
	}
	in->data = data;
	return 0;
}

static int parse_a(struct desc_line *l, struct ev_desc_event *e)
{
	struct ev_desc_arg *a;
	int want = -e->nr_args - 1, done, i, r, err = 0;

	if (e->nr_args >= 0)
		return -EINVAL;	/* more A lines than the event has arguments */
	for (done = 0; done < want && e->args[done].name; done++)
		;
	if (done == want)
		return -EINVAL;
	a = &e->args[done];
	if (!desc_int(l, 0, FHOOK_EVT_NR - 1, &a->type) ||
	    !desc_int(l, 0, FHOOK_EV_MAX_ARRAY_LEN, &i))
		return -EINVAL;
	a->count = (unsigned int)i;
	a->name = desc_need(l, false, &err);
	if (!a->name)
		return err;
	if (!desc_int(l, 0, FHOOK_EV_FETCH_INSN_MAX, &a->nops))
		return -EINVAL;
	for (i = 0; i < a->nops; i++)
		if ((r = parse_insn(l, &a->code[i])))
			return r;
	if (desc_skip(l))
		return -EINVAL;
	if (done + 1 == want)
		e->nr_args = want;
	return 0;
}

/*
 * F: a filter, checked as a program: every operation has its operands,
 * and one truth value is left.
 */
static int parse_f(struct desc_line *l, struct ev_desc_event *e)
{
	int n, i, depth = 0, r;
	long v;

	if (e->filter || !desc_int(l, 1, EV_FILTER_MAX, &n))
		return -EINVAL;
	e->filter = calloc(n, sizeof(*e->filter));
	if (!e->filter)
		return -ENOMEM;
	e->nr_filter = n;
	for (i = 0; i < n; i++) {
		struct ev_filter_tok *t = &e->filter[i];

		if (!desc_int(l, 0, EV_FOP_NR - 1, &t->op) || !desc_long(l, LONG_MIN, LONG_MAX, &v))
			return -EINVAL;
		t->v = v;
		if ((r = desc_opt(l, false, &t->s)))
			return r;
		if (t->s && unhex(t->s))
			return -EINVAL;
		switch (t->op) {
		case EV_FOP_FIELD:
			if (v < 0 || v >= e->nr_args)
				return -EINVAL;
			depth++;
			break;
		case EV_FOP_NUM:
		case EV_FOP_STR:	/* (no string: "") */
			depth++;
			break;
		case EV_FOP_NOT:
			if (depth < 1)
				return -EINVAL;
			break;
		default:
			if (depth < 2)
				return -EINVAL;
			depth--;
		}
	}
	return depth == 1 && !desc_skip(l) ? 0 : -EINVAL;
}

static int parse_k(struct desc_line *l, struct ev_desc_event *e)
{
	long off;
	int r;

	if (e->kprobe || !desc_long(l, 0, LONG_MAX, &off) || !desc_hex(l, &e->link_addr))
		return -EINVAL;
	e->offset = (unsigned long)off;
	e->kprobe = true;
	if ((r = desc_opt(l, false, &e->module)))
		return r;
	return desc_opt(l, true, &e->path);
}

static int add_word(struct desc_line *l, char ***v, int *n)
{
	char **nv, *w;
	int err = 0;

	w = desc_need(l, true, &err);
	if (!w)
		return err;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv) {
		free(w);
		return -ENOMEM;
	}
	*v = nv;
	nv[(*n)++] = w;
	return 0;
}

static int parse_line(struct desc_line *l, struct ev_desc *d)
{
	struct ev_desc_event *e = d->nr_evs ? &d->evs[d->nr_evs - 1] : NULL;
	char kind = *l->p++;

	if (l->p < l->end && *l->p != ' ')
		return -EINVAL;
	switch (kind) {
	case 'E':
		if (e && e->nr_args < 0)
			return -EINVAL;	/* the last event's arguments are not all there */
		return parse_e(l, d);
	case 'A':
		return e ? parse_a(l, e) : -EINVAL;
	case 'K':
		return e ? parse_k(l, e) : -EINVAL;
	case 'F':
		/* after the event's arguments, which it names */
		return e && e->nr_args >= 0 ? parse_f(l, e) : -EINVAL;
	case 'T':
		return e ? add_word(l, (char ***)&e->targets, &e->nr_targets) : -EINVAL;
	case 'C':
		return add_word(l, &d->callers, &d->nr_callers);
	}
	return -EINVAL;
}

int ev_desc_parse(const char *text, size_t len, struct ev_desc *out)
{
	struct ev_desc d = { 0 };
	const char *p = text, *end = text + len;
	int r = 0;

	while (p < end && !r) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct desc_line l = { p, nl ? nl : end };

		if (l.p == l.end || memchr(l.p, 0, (size_t)(l.end - l.p)))
			r = -EINVAL;
		else
			r = parse_line(&l, &d);
		p = nl ? nl + 1 : end;
	}
	if (!r && d.nr_evs && d.evs[d.nr_evs - 1].nr_args < 0)
		r = -EINVAL;
	if (r) {
		/* an event cut short: its argument count as far as its lines came */
		if (d.nr_evs && d.evs[d.nr_evs - 1].nr_args < 0)
			d.evs[d.nr_evs - 1].nr_args = -d.evs[d.nr_evs - 1].nr_args - 1;
		ev_desc_free(&d);
		return r;
	}
	*out = d;
	return 0;
}

void ev_desc_free(struct ev_desc *d)
{
	int i, k, j;

	for (i = 0; i < d->nr_evs; i++) {
		struct ev_desc_event *e = &d->evs[i];

		for (k = 0; e->args && k < e->nr_args; k++) {
			for (j = 0; j < e->args[k].nops; j++)
				free(e->args[k].code[j].data);
			free(e->args[k].name);
		}
		free(e->args);
		free(e->group);
		free(e->event);
		free(e->symbol);
		free(e->module);
		free(e->path);
		for (k = 0; k < e->nr_targets; k++)
			free((char *)e->targets[k]);
		free(e->targets);
		for (k = 0; k < e->nr_filter; k++)
			free(e->filter[k].s);
		free(e->filter);
	}
	free(d->evs);
	for (i = 0; i < d->nr_callers; i++)
		free(d->callers[i]);
	free(d->callers);
	memset(d, 0, sizeof(*d));
}
