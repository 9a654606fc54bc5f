/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event description: the one text form in which the command hands its
 * compiled events on, to the traced processes (in the shared memory:
 * ring.h) and to whoever reads the recording (its RF_EVENTS block:
 * docs/recording-format.md).  ev_desc_write() is its only writer (in the
 * command), ev_desc_parse() its only parser (in each traced process, and
 * in the readers: lib/events/decode.c).  One line each:
 *
 *   E id is_return nr_args nr_entry [entry_arg...] maxactive group event symbol
 *   K offset link_addr module|- path|-   a kprobe event's place (path: the rest of the line)
 *   T symbol                             the symbols a C++ name of an fprobe event matched
 *   A type count name nops [op param lshift rshift basesize data|-]...
 *   F n [op value string|-]...           the trigger's filter on the event (postfix)
 *   C symbol                             a caller the events are filtered on
 *
 * K, T, A and F lines belong to the E line before them, A lines in
 * argument order.  Numbers are decimal but link_addr (hex); a fetch instruction's
 * data is hex bytes, "-" for none.  The parser uses no sscanf(): a traced
 * process pays only for the code it runs (vfscanf and the locale tables
 * are pages of libc it would fault in for this alone).
 */
#ifndef FHOOK_RECORDER_EVDESC_H
#define FHOOK_RECORDER_EVDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <fhook/internal/events.h>

struct ev_desc_arg {
	char *name;
	int type;			/* FHOOK_EVT_* */
	unsigned int count;		/* array length, 0: scalar */
	int nops;
	struct fhook_fetch_insn code[FHOOK_EV_FETCH_INSN_MAX];
	unsigned int fast_size;		/* the recorder's own: its bytes, if @e->fast_len */
};

/*
 * A filter on an event's fields (the kernel's event filter, "len > 4096
 * && name ~ "*.so""), compiled by the command into a postfix program of
 * predicates: FIELD VALUE OP, joined by AND, OR, NOT.
 */
enum ev_filter_op {
	EV_FOP_FIELD,		/* the value of argument @v */
	EV_FOP_NUM,		/* the number @v */
	EV_FOP_STR,		/* the string @s */
	EV_FOP_EQ, EV_FOP_NE, EV_FOP_LT, EV_FOP_LE, EV_FOP_GT, EV_FOP_GE,
	EV_FOP_BAND,		/* (field & value) != 0 */
	EV_FOP_GLOB,		/* a string field matches the glob @s */
	EV_FOP_AND, EV_FOP_OR, EV_FOP_NOT,
	EV_FOP_NR
};

#define EV_FILTER_MAX	64	/* tokens of one filter */

struct ev_filter_tok {
	int op;			/* EV_FOP_* */
	long long v;
	char *s;
};

struct ev_desc_event {
	unsigned int id;		/* its index */
	bool is_return;
	int nr_args;
	struct ev_desc_arg *args;
	int nr_entry;			/* entry arguments a return event shows */
	int entry_args[FHOOK_EV_MAX_ENTRY_ARGS];
	int nr_maxactive;
	char *group, *event, *symbol;
	const char **targets;		/* a C++ name: the symbols the command matched */
	int nr_targets;
	/* a 'p' or 'r' event: symbol (or address) + offset, in module if set */
	bool kprobe;
	char *module;
	unsigned long offset;
	char *path;			/* the file SYM is in, as the command found it, or NULL */
	unsigned long link_addr;	/* and its link-time address there */
	/* a filter whose match fires the flight recorder's trigger */
	int nr_filter;
	struct ev_filter_tok *filter;
	/* the recorder's own, not in the text: a symbol not found in the process */
	bool unresolved;
	/*
	 * ... and the bytes of its arguments when each is read from the
	 * registers, the entry's slots or an immediate (no memory, no
	 * string, no array, no filter): written straight into the ring.
	 */
	unsigned int fast_len;
};

struct ev_desc {
	struct ev_desc_event *evs;
	int nr_evs;
	char **callers;
	int nr_callers;
};

/*
 * Parse @len bytes of @text into @out: 0, -EINVAL for text that is not a
 * description (nothing is kept), -ENOMEM.  Bounds are checked as for any
 * file: a recording is read whoever wrote it.
 */
int ev_desc_parse(const char *text, size_t len, struct ev_desc *out);
void ev_desc_free(struct ev_desc *d);
/* Write @d to @out: 0, or -EIO when @out failed. */
int ev_desc_write(FILE *out, const struct ev_desc *d);

#endif /* FHOOK_RECORDER_EVDESC_H */
