// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The event description (lib/recorder/evdesc.c, evdesc_write.c) and the
 * event filter's compiler (lib/events/filter.c), without a program: a
 * description written and parsed back the same, numbers out of a field's
 * range refused (a recording's RF_EVENTS is anyone's text, and the
 * recorder's filter stack holds EV_FILTER_MAX values), filters nested
 * deeper than the compiler goes refused rather than a crash, and numbers
 * read as the kernel reads them for the field's type.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "recorder/evdesc.h"
#include "events/filter.h"

static int parse(const char *text)
{
	struct ev_desc d;
	int r = ev_desc_parse(text, strlen(text), &d);

	if (!r)
		ev_desc_free(&d);
	return r;
}

static void case_round_trip(void)
{
	static const char text[] =
		"E 0 0 2 0 0 g e1 foo\n"
		"K 0 401000 - /bin/x\n"
		"A 3 0 n 1 1 0 0 0 0 -\n"
		"A 14 0 s 1 1 1 0 0 0 -\n"
		"F 7 0 0 - 1 4096 - 7 0 - 0 1 - 2 0 2a2e736f 10 0 - 11 0 -\n"
		"E 1 1 0 1 0 0 g e2 foo\n"
		"T _Z3fooi\n"
		"C main\n";
	struct ev_desc d;
	char *out = NULL;
	size_t len = 0;
	FILE *m;
	int r;

	r = ev_desc_parse(text, strlen(text), &d);
	CHECK_EQ(r, 0, "round_trip_parse");
	if (r)
		return;
	CHECK_EQ(d.nr_evs, 2, "round_trip_events");
	CHECK_EQ(d.evs[0].nr_filter, 7, "round_trip_filter");
	CHECK(d.evs[0].filter[4].s && !strcmp(d.evs[0].filter[4].s, "*.so"), "round_trip_glob",
	      "%s", d.evs[0].filter[4].s ? d.evs[0].filter[4].s : "(null)");
	m = open_memstream(&out, &len);
	r = m ? ev_desc_write(m, &d) : -ENOMEM;
	if (m)
		fclose(m);
	CHECK(!r && out && !strcmp(out, text), "round_trip_write", "%s", out ? out : "(null)");
	free(out);
	ev_desc_free(&d);
}

/* A line with one number out of its range: refused, whatever its digits. */
static void case_ranges(void)
{
	static const struct {
		const char *name, *text;
	} bad[] = {
		/* a negative count whose magnitude is 2^64 - 1: not the count 1 */
		{ "filter_count_negative",
		  "E 0 0 1 0 0 g e foo\nA 3 0 n 0\nF -18446744073709551615 0 0 -\n" },
		{ "filter_count_over", "E 0 0 1 0 0 g e foo\nA 3 0 n 0\nF 65 0 0 -\n" },
		/* 2^64 + 4 would wrap to 4 */
		{ "param_wraps", "E 0 0 1 0 0 g e foo\nA 3 0 n 1 1 18446744073709551620 0 0 0 -\n" },
		{ "nargs_negative", "E 0 0 -1 0 0 g e foo\n" },
		{ "param_over_long", "E 0 0 1 0 0 g e foo\nA 3 0 n 1 1 9223372036854775808 0 0 0 -\n" },
		{ "offset_negative", "E 0 0 0 0 0 g e foo\nK -5 0 - -\n" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(parse(bad[i].text), -EINVAL, bad[i].name);
	CHECK_EQ(parse("E 0 0 1 0 0 g e foo\nA 3 0 n 1 1 -9223372036854775808 0 0 0 -\n"), 0,
		 "param_long_min");
	CHECK_EQ(parse("E 0 0 1 0 0 g e foo\nA 3 0 n 1 1 9223372036854775807 0 0 0 -\n"), 0,
		 "param_long_max");
}

/* The stack the recorder evaluates on holds EV_FILTER_MAX: a program the parser took fits. */
static void case_filter_depth(void)
{
	char *text;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int i;

	if (!m)
		return;
	/* 65 pushes and 64 ANDs: 129 tokens, a stack of 65 (the count as -(2^64 - 129)) */
	fprintf(m, "E 0 0 1 0 0 g e foo\nA 3 0 n 0\nF -18446744073709551487");
	for (i = 0; i < 65; i++)
		fprintf(m, " 1 1 -");
	for (i = 0; i < 64; i++)
		fprintf(m, " 11 0 -");
	fputc('\n', m);
	fclose(m);
	CHECK_EQ(parse(text), -EINVAL, "filter_too_long");
	free(text);
}

static struct fhook_event_arg args[] = {
	{ .name = "len", .type = FHOOK_EVT_U64 },
	{ .name = "off", .type = FHOOK_EVT_S64 },
	{ .name = "ratio", .type = FHOOK_EVT_F64 },
};
static struct fhook_event ev = { .args = args, .nr_args = 3 };

static int compile(const char *filter, const char **err, int *pos)
{
	struct ev_filter_tok toks[EV_FILTER_MAX];
	int n = ev_filter_compile(&ev, filter, toks, err, pos), i;

	for (i = 0; i < n; i++)
		free(toks[i].s);
	return n;
}

/* A string of @n copies of @a, then @mid, then @n copies of @b. */
static char *nest(int n, const char *a, const char *mid, const char *b)
{
	size_t la = strlen(a), lm = strlen(mid), lb = strlen(b);
	char *s = malloc(n * (la + lb) + lm + 1), *p = s;
	int i;

	if (!s)
		exit(2);
	for (i = 0; i < n; i++, p += la)
		memcpy(p, a, la);
	memcpy(p, mid, lm);
	p += lm;
	for (i = 0; i < n; i++, p += lb)
		memcpy(p, b, lb);
	*p = 0;
	return s;
}

static void case_filter_nesting(void)
{
	const char *err = NULL;
	char *s;
	int pos = -1, n;

	s = nest(64, "(", "len > 1", ")");
	CHECK_EQ(compile(s, &err, &pos), 3, "nest_64");
	free(s);
	s = nest(65, "(", "len > 1", ")");
	n = compile(s, &err, &pos);
	CHECK(n < 0 && !strcmp(err, "Too many '('") && pos == 64, "nest_65",
	      "%d %s at %d", n, n < 0 ? err : "", pos);
	free(s);
	/* deep enough to exhaust a stack the parser recursed on */
	s = nest(1000000, "(", "len > 1", ")");
	n = compile(s, &err, &pos);
	CHECK(n < 0 && !strcmp(err, "Too many '('"), "nest_deep", "%d", n);
	free(s);
	s = nest(1000000, "!", "len > 1", "");
	n = compile(s, &err, &pos);
	CHECK(n < 0 && !strcmp(err, "Too many terms in predicate expression"), "not_deep",
	      "%d", n);
	free(s);
	n = compile("!!len > 1 && !(len < 9)", &err, &pos);
	CHECK_EQ(n, 10, "nots");
}

/* Numbers as the kernel reads them for the field: signed or not; no float fields. */
static void case_filter_numbers(void)
{
	static const struct {
		const char *name, *filter, *err;
		int pos;
	} bad[] = {
		{ "unsigned_negative", "len > -1", "Illegal integer value", 6 },
		{ "signed_over", "off > 0xffffffffffffffff", "Illegal integer value", 6 },
		{ "float_field", "ratio > 1", "Illegal operation for field type", 6 },
	};
	const char *err;
	size_t i;
	int pos, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		pos = -1;
		n = compile(bad[i].filter, &err, &pos);
		CHECK(n < 0 && !strcmp(err, bad[i].err) && pos == bad[i].pos, bad[i].name,
		      "%d %s at %d", n, n < 0 ? err : "", pos);
	}
	CHECK_EQ(compile("len > 0xffffffffffffffff", &err, &pos), 3, "unsigned_max");
	CHECK_EQ(compile("off > -9223372036854775808", &err, &pos), 3, "signed_min");
}

static const struct check_case cases[] = {
	CHECK_CASE(round_trip),
	CHECK_CASE(ranges),
	CHECK_CASE(filter_depth),
	CHECK_CASE(filter_nesting),
	CHECK_CASE(filter_numbers),
};

int main(void)
{
	return check_run_cases(cases);
}
