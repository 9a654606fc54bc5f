// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A glob whose arguments are $arg*: one definition per function it
 * matches, each with that function's parameters.  One event over many
 * functions has one argument list, and each function has its own; so
 * `p libfoo.so:foo_* $arg*` becomes `p libfoo.so:foo_open $arg*`,
 * `p libfoo.so:foo_read $arg*`, ..., named per function as the kernel
 * names a definition without a name (p_MOD_SYM_0, SYM__entry), or
 * EVENT_SYM under a name the user gave.  A function without debug
 * information gets the event without arguments, and the command says
 * how many did.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evcli.h"
#include "../lib/events/ev.h"

#define GLOB_MAX_WORDS	256

struct glob_spec {
	char *words[GLOB_MAX_WORDS];
	int nr;
	char kind;			/* 'f', 'p' or 'r' */
	const char *head_kind;		/* "f", "r4", ... up to the ':' */
	size_t head_kind_len;
	char group[64], event[64];	/* from ":GRP/EVENT"; empty: not given */
	bool has_group;
	const char *mod;		/* p/r: MOD of "MOD:GLOB" */
	char *glob;
	bool is_return_suffix;		/* f: GLOB%return */
	int star;			/* the word that is $arg* */
	int file, skipped, total;	/* p/r: the file, what the glob left out of how many */
	bool has_retval;		/* a word fetches $retval */
};

static int split_words(char *s, struct glob_spec *g)
{
	char *save = NULL, *w;

	g->nr = 0;
	for (w = strtok_r(s, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (g->nr == GLOB_MAX_WORDS)
			return -E2BIG;
		g->words[g->nr++] = w;
	}
	return 0;
}

/* Does word @w fetch $retval ("$retval", "r=$retval", "$retval:u32")? */
static bool is_retval_word(const char *w)
{
	const char *eq = strchr(w, '=');

	if (eq)
		w = eq + 1;
	return !strncmp(w, "$retval", 7) && !isalnum((unsigned char)w[7]) && w[7] != '_';
}

/* Is @spec (split into @g, in @buf) a glob with $arg* this file expands? */
static bool glob_with_star(struct glob_spec *g)
{
	char *head = g->words[0], *colon, *slash, *target;
	int i;

	if (g->nr < 2)
		return false;
	g->star = -1;
	for (i = 2; i < g->nr; i++)
		if (!strcmp(g->words[i], "$arg*"))
			g->star = i;
	g->has_retval = false;
	for (i = 2; i < g->nr; i++)
		g->has_retval |= is_retval_word(g->words[i]);
	g->kind = head[0];
	if (g->kind != 'f' && g->kind != 'p' && g->kind != 'r')
		return false;
	colon = strchr(head, ':');
	g->head_kind = head;
	g->head_kind_len = colon ? (size_t)(colon - head) : strlen(head);
	g->group[0] = g->event[0] = 0;
	g->has_group = false;
	if (colon) {
		const char *ev = colon + 1;

		slash = strpbrk(ev, "/.");
		if (slash) {
			if ((size_t)(slash - ev) >= sizeof(g->group))
				return false;
			memcpy(g->group, ev, slash - ev);
			g->group[slash - ev] = 0;
			g->has_group = true;
			ev = slash + 1;
		}
		if (strlen(ev) >= sizeof(g->event))
			return false;
		strcpy(g->event, ev);
	}
	target = g->words[1];
	g->mod = NULL;
	g->is_return_suffix = false;
	if (g->kind == 'f') {
		char *pct = strchr(target, '%');

		if (pct) {
			if (strcmp(pct, "%return"))
				return false;
			*pct = 0;
			g->is_return_suffix = true;
		}
	} else {
		char *c;

		if (strchr(target, '+'))
			return false;	/* an offset: the parser says why not */
		c = ev_mod_colon(target);
		if (c) {
			*c = 0;
			g->mod = target;
			target = c + 1;
		}
	}
	g->glob = target;
	if (!strpbrk(target, "*?["))
		return false;
	/* a kprobe's C++ glob always: the traced process cannot demangle */
	return g->star >= 0 || (g->kind != 'f' && ev_cxx_name(target));
}

/* The functions of a glob: the name a definition gives, the symbol DWARF knows. */
struct name_list {
	char **v, **sym;
	int nr, cap;
};

static int names_add(struct name_list *l, const char *name, const char *sym)
{
	if (l->nr == l->cap) {
		int cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->v, cap * sizeof(*v)), **y;

		if (!v)
			return -ENOMEM;
		l->v = v;
		y = realloc(l->sym, cap * sizeof(*y));
		if (!y)
			return -ENOMEM;
		l->sym = y;
		l->cap = cap;
	}
	l->v[l->nr] = strdup(name);
	l->sym[l->nr] = strdup(sym);
	if (!l->v[l->nr] || !l->sym[l->nr]) {
		free(l->v[l->nr]);
		free(l->sym[l->nr]);
		return -ENOMEM;
	}
	l->nr++;
	return 0;
}

static void names_free(struct name_list *l)
{
	while (l->nr--) {
		free(l->v[l->nr]);
		free(l->sym[l->nr]);
	}
	free(l->v);
	free(l->sym);
}

static bool names_have(const struct name_list *l, const char *name)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->v[i], name))
			return true;
	return false;
}

static int name_seen(const char *name, void *arg)
{
	struct name_list *l = arg;

	/* a function of several files (an f glob's) once */
	return names_have(l, name) ? 0 : names_add(l, name, name);
}

static int cxx_seen(const char *written, const char *mangled, void *arg)
{
	return names_add(arg, written, mangled);
}

/*
 * The functions the glob probes, as the parser and the recorder match
 * them (lib/events/prog.c): an f glob the sited functions of every file,
 * a kprobe glob the functions of one file (MOD, or the executable), one
 * name per address, without those fhook runs itself.
 */
static int glob_functions(struct fhook_event_prog *prog, struct glob_spec *g,
			  struct name_list *out)
{
	int r;

	g->skipped = 0;
	if (g->kind == 'f') {
		r = ev_prog_match_glob_each(prog, g->glob, name_seen, out);
		/* no symbol by that name: C++ names, as the parser takes them */
		if (!r)
			r = ev_prog_cxx_glob_each(prog, g->glob, cxx_seen, out);
	} else if (ev_cxx_name(g->glob)) {
		r = g->total = ev_prog_kprobe_cxx_glob_each(prog, g->mod, g->glob, &g->file,
							    &g->skipped, cxx_seen, out);
		if (r == -ENOENT)
			return -ENOENT;	/* the caller says why */
	} else {
		r = g->total = ev_prog_kprobe_glob_each(prog, g->mod, g->glob, &g->file,
							&g->skipped, name_seen, out);
	}
	/* (a MOD not loaded at start: the parser defers it, as written) */
	return r == -ENOENT ? 0 : r < 0 ? r : 0;
}

/*
 * The event name the parser gives definition @name of the glob (the
 * kernel's: 63 characters at most, anything but a C identifier's
 * characters made '_'), into @ev.
 */
static void glob_event_name(const struct glob_spec *g, const char *name, bool to_return,
			    char ev[FHOOK_EV_MAX_EVENT_NAME_LEN])
{
	char *p;

	if (g->event[0])
		snprintf(ev, FHOOK_EV_MAX_EVENT_NAME_LEN, "%s_%s", g->event, name);
	else if (g->kind == 'f')
		snprintf(ev, FHOOK_EV_MAX_EVENT_NAME_LEN, "%s__%s", name,
			 to_return ? "exit" : "entry");
	else
		snprintf(ev, FHOOK_EV_MAX_EVENT_NAME_LEN, "%c_%s%s%s_0", g->kind,
			 g->mod ? g->mod : "", g->mod ? ":" : "", name);
	for (p = ev; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
}

/*
 * Names cut at 63 characters make two functions of a glob one event
 * (overloads differ at their end: "ns::Widget::process(Widget const&,
 * int)" and "(..., long)"), which the parser refuses as the kernel's
 * EVENT_EXIST: the second and later alike get "_2", "_3"... in place of
 * their last characters.  0, or 1 when @ev was changed.
 */
static int glob_event_unique(char (*used)[FHOOK_EV_MAX_EVENT_NAME_LEN], int nr,
			     char ev[FHOOK_EV_MAX_EVENT_NAME_LEN])
{
	char base[FHOOK_EV_MAX_EVENT_NAME_LEN], suf[16];
	int i, n = 1, changed = 0;
	size_t keep;

	memcpy(base, ev, sizeof(base));
	for (i = 0; i < nr; i++) {
		if (strcmp(used[i], ev))
			continue;
		snprintf(suf, sizeof(suf), "_%d", ++n);
		keep = strlen(base);
		if (keep > FHOOK_EV_MAX_EVENT_NAME_LEN - 1 - strlen(suf))
			keep = FHOOK_EV_MAX_EVENT_NAME_LEN - 1 - strlen(suf);
		snprintf(ev, FHOOK_EV_MAX_EVENT_NAME_LEN, "%.*s%s", (int)keep, base, suf);
		changed = 1;
		i = -1;		/* and the new name may be taken too */
	}
	return changed;
}

/*
 * One function's definition: @name in place of the glob, @with_args or no
 * $arg*, and without $retval when the function returns nothing (still a
 * return event: an f definition without %return gets it).
 */
static char *glob_one(const struct glob_spec *g, const char *name, bool with_args,
		      bool no_retval, const char *evname)
{
	char *s = NULL, *p;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);

	int i;

	if (!m)
		return NULL;
	fprintf(m, "%.*s", (int)g->head_kind_len, g->head_kind);
	if (g->has_group || g->event[0] || evname) {
		fputc(':', m);
		if (g->has_group)
			fprintf(m, "%s/", g->group);
		if (evname) {
			fputs(evname, m);
		} else if (g->event[0]) {
			/* EVENT_SYM: a C identifier of 63 characters at most, as the kernel wants */
			char ev[64];

			snprintf(ev, sizeof(ev), "%s_%s", g->event, name);
			for (p = ev; *p; p++)
				if (!isalnum((unsigned char)*p) && *p != '_')
					*p = '_';
			fputs(ev, m);
		}
	}
	fprintf(m, " %s%s%s%s", g->mod ? g->mod : "", g->mod ? ":" : "", name,
		g->is_return_suffix || (no_retval && g->kind == 'f') ? "%return" : "");
	for (i = 2; i < g->nr; i++)
		if ((i != g->star || with_args) && !(no_retval && is_retval_word(g->words[i])))
			fprintf(m, " %s", g->words[i]);
	if (fclose(m)) {
		free(s);
		return NULL;
	}
	return s;
}

/* Add @s to @c's definitions at @at (the strings @c owns go to c->spec_mem). */
static int specs_put(struct cli_ev *c, char ***specs, int *nr, char *s, bool owned)
{
	char **v = realloc(*specs, (*nr + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	*specs = v;
	v[(*nr)++] = s;
	if (owned) {
		char **m = realloc(c->spec_mem, (c->nr_spec_mem + 1) * sizeof(*m));

		if (!m)
			return -ENOMEM;
		c->spec_mem = m;
		m[c->nr_spec_mem++] = s;
	}
	return 0;
}

int cli_ev_glob_args(struct cli_ev *c)
{
	char **specs = NULL;
	int nr = 0, i, k, ret = 0;

	for (i = 0; i < c->nr_specs && !ret; i++) {
		struct name_list names = { 0 };
		struct glob_spec g;
		char *buf = strdup(c->specs[i]);
		char (*used)[FHOOK_EV_MAX_EVENT_NAME_LEN] = NULL;
		int without = 0, voids = 0;

		if (!buf) {
			ret = -ENOMEM;
			break;
		}
		if (split_words(buf, &g) || !glob_with_star(&g) ||
		    (ret = glob_functions(c->prog, &g, &names)) || !names.nr) {
			if (ret == -ENOENT) {
				fprintf(stderr, "fhook: %s: %s: C++ names are matched when the "
					"command starts, and %s is not loaded then: name its "
					"functions by their symbols (_Z...)\n", c->cmd, c->specs[i],
					g.mod);
				names_free(&names);
				free(buf);
				free(specs);
				return 1;
			}
			/* as written: the parser takes it, or says why not */
			free(buf);
			names_free(&names);
			if (!ret)
				ret = specs_put(c, &specs, &nr, c->specs[i], false);
			continue;
		}
		used = calloc(names.nr, sizeof(*used));
		if (!used)
			ret = -ENOMEM;
		/*
		 * Each definition looks its function up in every file: read their
		 * tables whole once (a binary search each) rather than scan an
		 * unread one per definition.
		 */
		if (names.nr > 8)
			for (k = 0; k < c->prog->nr_files; k++)
				ev_file_load(&c->prog->files[k]);
		for (k = 0; k < names.nr && !ret; k++) {
			struct ev_dw_func fn;
			bool dw = !ev_dw_find_func(c->prog, g.kind == 'f' ? NULL : g.mod,
						   names.sym[k], &fn);
			/* a function without parameters has none to show either */
			bool args = dw && fn.nr_params > 0;
			bool no_ret = dw && fn.returns_void && g.has_retval;
			char *one;
			int renamed;

			glob_event_name(&g, names.v[k], g.is_return_suffix ||
					(no_ret && g.kind == 'f'), used[k]);
			renamed = glob_event_unique(used, k, used[k]);
			one = glob_one(&g, names.v[k], args, no_ret,
				       renamed || g.event[0] ? used[k] : NULL);

			if (!one) {
				ret = -ENOMEM;
				break;
			}
			without += !dw;
			voids += no_ret;
			ret = specs_put(c, &specs, &nr, one, true);
			if (ret)
				free(one);
		}
		if (!ret && without && g.star >= 0)
			fprintf(stderr, "fhook: %s: %s: $arg* names the parameters of %d of %d "
				"functions; the other %d have no debug information (their "
				"events have no arguments)\n", c->cmd, c->specs[i],
				names.nr - without, names.nr, without);
		if (!ret && voids)
			fprintf(stderr, "fhook: %s: %s: %d of %d functions return void: their "
				"events have no $retval\n", c->cmd, c->specs[i], voids, names.nr);
		if (!ret && g.kind != 'f')
			cli_ev_say_left_out(c, g.mod, g.glob, g.file, g.skipped, g.total);
		names_free(&names);
		free(used);
		free(buf);
	}
	if (ret) {
		free(specs);
		fprintf(stderr, "fhook: %s: %s\n", c->cmd, strerror(-ret));
		return 1;
	}
	free(c->specs);
	c->specs = specs;
	c->nr_specs = nr;
	return 0;
}

static int overload_say(const char *written, const char *mangled, void *arg)
{
	int *n = arg;

	(void)mangled;
	fprintf(stderr, "%s%s", (*n)++ ? ", " : "", written);
	return 0;
}

void cli_ev_say_overloads(struct cli_ev *c, const char *spec)
{
	struct glob_spec g;
	char *buf = strdup(spec), *sym, *p, *colon = NULL;
	int file, skipped, n = 0;

	if (!buf || split_words(buf, &g) || g.nr < 2)
		goto out;
	sym = g.words[1];
	colon = ev_mod_colon(sym);
	if (colon)
		*colon = 0;
	/* and the offset ends it ("p geo::scale+4"), as the parser splits it */
	p = strpbrk(colon ? colon + 1 : sym, "+-");
	if (p)
		*p = 0;
	fprintf(stderr, "fhook: %s: %s names several functions: ", c->cmd, colon ? colon + 1 : sym);
	ev_prog_kprobe_cxx_glob_each(c->prog, colon ? sym : NULL, colon ? colon + 1 : sym, &file,
				     &skipped, overload_say, &n);
	fprintf(stderr, "; name one with its parameters, or each with a glob\n");
out:
	free(buf);
}
