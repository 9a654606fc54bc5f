// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The decoder's names of a recording's functions, without report or
 * replay (tests/cli/test_cxxnames.sh):
 *
 *   cxxnames_dec short|full|no FILE   the function of each entry event as
 *                                     dec_symbolize() names it in that mode
 *                                     (dec_set_demangle()), each once, in
 *                                     the order of their first call
 *   cxxnames_dec match GLOB FILE      the same (short names), of the
 *                                     functions dec_name_match() says GLOB
 *                                     names
 *
 * Exit status 0, 1 when the recording cannot be read, 2 for bad usage.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/decode.h"

struct seen {
	struct dec *d;
	const char *glob;	/* NULL: every function */
	const char **raw;	/* the functions printed, by their symbol */
	size_t nr, cap;
};

static int on_event(void *ctx, const struct dec_event *ev)
{
	struct seen *s = ctx;
	struct dec_sym sym;
	size_t i;

	if (ev->def->is_return || !ev->ip || !dec_symbolize(s->d, ev->thr, ev->ip, &sym))
		return 0;
	for (i = 0; i < s->nr; i++)
		if (s->raw[i] == sym.raw)
			return 0;
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		const char **n = realloc(s->raw, cap * sizeof(*n));

		if (!n)
			return -1;
		s->raw = n;
		s->cap = cap;
	}
	s->raw[s->nr++] = sym.raw;
	if (!s->glob || dec_name_match(s->d, sym.raw, s->glob))
		printf("%s\n", sym.name);
	return 0;
}

int main(int argc, char **argv)
{
	struct seen s = { 0 };
	enum dec_demangle mode = DEC_DEMANGLE_SHORT;
	bool truncated;
	int ret;

	if (argc == 4 && !strcmp(argv[1], "match"))
		s.glob = argv[2];
	else if (argc == 3 && !strcmp(argv[1], "full"))
		mode = DEC_DEMANGLE_FULL;
	else if (argc == 3 && !strcmp(argv[1], "no"))
		mode = DEC_DEMANGLE_NO;
	else if (argc != 3 || strcmp(argv[1], "short")) {
		fprintf(stderr, "usage: cxxnames_dec short|full|no FILE\n"
			"       cxxnames_dec match GLOB FILE\n");
		return 2;
	}
	s.d = dec_new();
	if (!s.d)
		return 1;
	dec_set_demangle(s.d, mode);
	ret = dec_read_file(s.d, argv[argc - 1], &truncated);
	if (!ret)
		ret = dec_flush(s.d, on_event, &s);
	if (ret)
		fprintf(stderr, "cxxnames_dec: %s: cannot read it (%d)\n", argv[argc - 1], ret);
	free(s.raw);
	dec_free(s.d);
	return ret ? 1 : 0;
}
