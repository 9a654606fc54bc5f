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

#include "parse.h"

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
	[E_NON_UNIQ_SYMBOL]	= "The symbol is not unique",
	/* fhook's own: the kernel hands these to another dynamic event type */
	[E_NOT_FPROBE]		= "Only fprobe ('f') and kprobe ('p', 'r') events are supported",
	[E_NO_SUCH_EVENT]	= "No such event to remove",
};

#define MAX_WORDS		(FHOOK_EV_MAX_TRACE_ARGS + 64)

void ev_log_err(struct ev_ctx *c, int offset, int e)
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

bool ev_is_good_name(const char *name)
{
	if (!isalpha((unsigned char)*name) && *name != '_')
		return false;
	while (*++name)
		if (!isalnum((unsigned char)*name) && *name != '_')
			return false;
	return true;
}

/* kstrtoul()/kstrtol() semantics: whole string, base 0 or given, no '+' for unsigned */
int ev_k_strtoul(const char *s, int base, unsigned long *out)
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

int ev_k_strtol(const char *s, int base, long *out)
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

int ev_k_strtouint(const char *s, int base, unsigned int *out)
{
	unsigned long v;

	if (ev_k_strtoul(s, base, &v) || v > UINT_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

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
			ev_log_err(c, offset, E_NO_GROUP_NAME);
			return -EINVAL;
		}
		if (slash - event + 1 > FHOOK_EV_MAX_EVENT_NAME_LEN) {
			ev_log_err(c, offset, E_GROUP_TOO_LONG);
			return -EINVAL;
		}
		memcpy(ev->group, event, slash - event);
		ev->group[slash - event] = 0;
		if (!ev_is_good_name(ev->group)) {
			ev_log_err(c, offset, E_BAD_GROUP_NAME);
			return -EINVAL;
		}
		offset += slash - event + 1;
		event = slash + 1;
	}
	len = strlen(event);
	if (len == 0) {
		if (slash && allow_empty)
			return 0;	/* "GRP/": the default event name */
		ev_log_err(c, offset, E_NO_EVENT_NAME);
		return -EINVAL;
	}
	if (len >= FHOOK_EV_MAX_EVENT_NAME_LEN) {
		ev_log_err(c, offset, E_EVENT_TOO_LONG);
		return -EINVAL;
	}
	if (!ev_is_good_name(event)) {
		ev_log_err(c, offset, E_BAD_EVENT_NAME);
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
	ev_log_err(c, 0, E_BAD_PROBE_ADDR);
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
				ev_log_err(c, 0, E_BAD_PROBE_ADDR);
				return -ENOENT;
			}
			if (in->data[n]) {
				long off;

				if (ev_k_strtol(in->data + n + (in->data[n] == '+'), 0, &off)) {
					c->index = i + 2;
					ev_log_err(c, 0, E_BAD_MEM_ADDR);
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
		ev_log_err(c, 1, E_BAD_MAXACT);
		return -EINVAL;
	}
	memcpy(num, &argv0[1], len);
	num[len] = 0;
	if (ev_k_strtouint(num, 0, &c->ev->maxactive) || !c->ev->maxactive) {
		ev_log_err(c, 1, E_BAD_MAXACT);
		return -EINVAL;
	}
	if (c->ev->maxactive > FHOOK_EV_MAXACTIVE_MAX) {
		ev_log_err(c, 1, E_MAXACT_TOO_BIG);
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
 * an object, and is split at the last ':' that is not half of a C++ "::"
 * (a library's name may hold '+' or '-': "libstdc++.so.6:SYM",
 * "libgeo.so:geo::scale(double,int)").
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
		ev_log_err(c, 0, E_BAD_PROBE_ADDR);
		return -EINVAL;
	}
	event = strchr(&argv[0][1], ':');
	if (event)
		event++;
	if (isdigit((unsigned char)argv[0][1])) {
		if (!ev->is_return) {
			ev_log_err(c, 1, E_BAD_MAXACT_TYPE);
			return -EINVAL;
		}
		if (parse_maxactive(c, event))
			return -EINVAL;
	}

	c->index = 1;
	if (!ev_k_strtoul(argv[1], 0, &addr)) {
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
				ev_log_err(c, off - sym, E_BAD_ADDR_SUFFIX);
				return -EINVAL;
			}
			*off = 0;
			ev->is_return = true;
		}
		colon = ev_mod_colon(sym);
		base = colon ? colon + 1 : sym;
		/* a glob's '-' is a range's ("[a-z]*"): only '+' starts its offset */
		off = has_glob(base) ? strchr(base, '+') : strpbrk(base, "+-");
		if (off) {
			if (ev_k_strtol(off + (*off == '+'), 0, &offset) || offset < 0 ||
			    offset > UINT_MAX) {
				ev_log_err(c, 0, E_BAD_PROBE_ADDR);
				return -EINVAL;
			}
			*off = 0;
		}
		if (!*base || colon == sym) {
			ev_log_err(c, 0, E_BAD_PROBE_ADDR);
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
			ev_log_err(c, 0, E_BAD_RETPROBE);
			return -EINVAL;
		}
		/* beyond the kernel: a glob probes every function it names, at its entry */
		ev->is_glob = has_glob(ev->symbol);
		if (ev->is_glob && offset) {
			ev_log_err(c, off - sym, E_BAD_PROBE_ADDR);
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
 * A C++ name in a kprobe event ("p geo::scale(double,int)"): the one
 * function it names in its file, found before the arguments ask DWARF for
 * it, and probed by its symbol (the traced process cannot demangle).
 */
static int kprobe_cxx_target(struct ev_ctx *c)
{
	struct fhook_event *ev = c->ev;
	char *mangled = NULL;
	int file, r;

	if (!c->prog || kprobe_at_addr(ev) || ev->is_glob || !ev_cxx_name(ev->symbol) ||
	    ev_prog_find_in(c->prog, ev->module, ev->symbol, true, &file))
		return 0;
	r = ev_prog_kprobe_cxx(c->prog, ev->module, ev->symbol, &file, &mangled);
	if (r == -ENOMEM)
		return r;
	if (r > 1) {
		/* the kernel's answer to a symbol of several functions */
		c->index = 1;
		ev_log_err(c, 0, E_NON_UNIQ_SYMBOL);
		return -EINVAL;
	}
	if (r != 1)
		return 0;	/* check_kprobe_symbol() says why */
	ev->targets = calloc(1, sizeof(*ev->targets));
	if (!ev->targets) {
		free(mangled);
		return -ENOMEM;
	}
	ev->targets[0] = mangled;
	ev->nr_targets = 1;
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
		ev_log_err(c, 0, E_BAD_PROBE_ADDR);
		return -ENOENT;
	}
	s = ev_prog_find_in(c->prog, ev->module, ev->symbol, true, &file);
	if (!s && ev->nr_targets == 1)
		s = ev_prog_find_in(c->prog, ev->module, ev->targets[0], true, &file);
	if (!s) {
		/* (a C++ name is resolved here or never: the process cannot demangle) */
		if (ev->module && !ev_prog_has_mod(c->prog, ev->module) &&
		    !ev_cxx_name(ev->symbol))
			return 0;
		c->index = 1;
		ev_log_err(c, 0, E_BAD_PROBE_ADDR);
		return -ENOENT;
	}
	if (ev->offset && c->prog->insn_check) {
		r = c->prog->insn_check(c->prog->files[file].path, s->addr, s->size,
					s->addr + ev->offset);
		if (r == -EILSEQ) {
			c->index = 1;
			ev_log_err(c, 0, E_BAD_INSN_BNDRY);
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
		ev_log_err(&c, 0, E_TOO_MANY_ARGS);
		goto out;
	}
	c.argc = argc;
	if (!argc) {
		ev_log_err(&c, 0, E_NOT_FPROBE);
		goto out;
	}
	if (argv[0][0] == '-') {
		ev->is_remove = true;
		strcpy(ev->group, FHOOK_EV_DEFAULT_GROUP);
		if (argv[0][1] != ':' || argc != 1) {
			ev_log_err(&c, argv[0][1] != ':' ? 1 : 0, E_NOT_FPROBE);
			goto out;
		}
		ret = parse_event_name(&c, argv[0] + 2, 2, false);
		goto out;
	}
	if (argv[0][0] == 'p' || argv[0][0] == 'r') {
		ret = parse_kprobe_head(&c);
		if (!ret)
			ret = kprobe_cxx_target(&c);
		if (ret)
			goto out;
		ret = -EINVAL;
		goto fetchargs;
	}
	if (argv[0][0] != 'f') {
		ev_log_err(&c, 0, E_NOT_FPROBE);
		goto out;
	}
	if (argc < 2) {
		c.index = 1;
		ev_log_err(&c, 0, E_BAD_PROBE_ADDR);
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
			ev_log_err(&c, pct - argv[1], E_BAD_ADDR_SUFFIX);
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
		ev_log_err(&c, 1, E_BAD_MAXACT_TYPE);
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
	ret = ev_expand_meta_args(&c, args, nargs, &new_argv, &new_argc, abuf);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (new_argv) {
		args = new_argv;
		nargs = new_argc;
	}
	if (nargs > FHOOK_EV_MAX_TRACE_ARGS) {
		c.index = 2;
		ev_log_err(&c, 0, E_TOO_MANY_ARGS);
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
		ret = ev_traceprobe_parse_arg(&c, i, args[i]);
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
			ev_log_err(&c, 0, E_FAIL_REG_PROBE);
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
